//! The `gb-sysbench` suite of `scx_sis_bench` (the group balancer proposal's scenario scaled to the
//! machine): one cgroup per partition (one per LLC, the group balancer's default), each running
//! `sysbench memory` with as many threads as the partition has CPUs (row `full`), or one
//! thread each (row `light`: groups that fit, where the balancer must cost nothing). The metric
//! is the total events/s; the run's output lists each cgroup's.
//!
//! The cgroups are children of GB_PARENT, which the suite creates (cpu controller on) so that a
//! variant `--variant "gb=--gb-parent /sys/fs/cgroup/scx_sis_gb"` can attach before the first
//! run. Each run is `scx_sis_bench __gbbench --threads N --secs T` (hidden subcommand).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};

use super::model::{Param, Parser, Scale, Suite};
use super::parsers::METRIC_RE;
use super::statistics::Direction;
use scx_sis::topology::Topology;

pub const NAME: &str = "gb-sysbench";
pub const GB_PARENT: &str = "/sys/fs/cgroup/scx_sis_gb";

#[derive(clap::Args, Debug, Clone)]
pub struct ProbeArgs {
    /// sysbench threads per cgroup (0: as many as the partition has CPUs).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Seconds of each sysbench run.
    #[arg(long, default_value_t = 5)]
    pub secs: u32,
}

/// Makes GB_PARENT, with the cpu controller enabled for it and for its children.
pub fn ensure_parent() -> Result<()> {
    let root = Path::new(GB_PARENT).parent().unwrap();
    let _ = std::fs::write(root.join("cgroup.subtree_control"), "+cpu");
    std::fs::create_dir_all(GB_PARENT).with_context(|| format!("creating {GB_PARENT}"))?;
    std::fs::write(Path::new(GB_PARENT).join("cgroup.subtree_control"), "+cpu")
        .with_context(|| format!("enabling the cpu controller in {GB_PARENT}"))?;
    Ok(())
}

pub fn suite(sc: &Scale) -> Suite {
    let exe = std::env::current_exe().unwrap_or_else(|_| "scx_sis".into());
    let secs = sc.duration_s.unwrap_or(if sc.quick { 2 } else { 5 });
    let run = |label: &str, threads: usize| Param {
        label: label.into(),
        command: vec![
            exe.to_string_lossy().into_owned(),
            "__gbbench".into(),
            "--threads".into(),
            threads.to_string(),
            "--secs".into(),
            secs.to_string(),
        ],
    };
    // best effort here, and only on cgroup2 (never a directory in a v1 tmpfs): the probe
    // reports a failure itself
    if scx_sis::group::cgroup_id(Path::new(GB_PARENT).parent().unwrap()).is_ok() {
        let _ = ensure_parent();
    }
    Suite {
        name: NAME.into(),
        title: "gb-sysbench-memory".into(),
        metric: format!(
            "total events/s of sysbench memory, one cgroup (child of {GB_PARENT}) per LLC; rows: full = threads per \
             cgroup = its LLC's CPUs, light = 1 thread per cgroup; {secs} s"
        ),
        unit: "events/s".into(),
        direction: Direction::HigherIsBetter,
        ideal: None,
        parser: Parser::Regex(METRIC_RE.into()),
        server: None,
        timeout_s: secs as u64 * 4 + 120,
        params: vec![run("full", 0), run("light", 1)],
    }
}

/// "Total operations: N (X per second)" of sysbench memory.
pub fn parse_events_per_sec(out: &str) -> Option<f64> {
    let line = out.lines().find(|l| l.trim_start().starts_with("Total operations:"))?;
    let inner = line.split('(').nth(1)?;
    inner.split_whitespace().next()?.parse().ok()
}

/// `scx_sis_bench __gbbench`: one cgroup per LLC running sysbench memory; prints each cgroup's
/// events/s and `metric: TOTAL`.
pub fn probe(a: &ProbeArgs) -> Result<()> {
    let topo = Topology::discover()?;
    ensure_parent()?;
    let mut kids: Vec<(PathBuf, std::process::Child)> = Vec::new();
    for (i, llc) in topo.llcs.iter().enumerate() {
        let dir = Path::new(GB_PARENT).join(format!("g{i}"));
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let threads = if a.threads == 0 { llc.cpus.len() } else { a.threads };
        let child = Command::new("sysbench")
            .args([
                "memory",
                &format!("--threads={threads}"),
                &format!("--time={}", a.secs),
                "--memory-total-size=100T",
                "run",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .context("starting sysbench")?;
        // all its threads move with it, and the ones it starts later are born there
        std::fs::write(dir.join("cgroup.procs"), child.id().to_string())
            .with_context(|| format!("moving sysbench into {}", dir.display()))?;
        kids.push((dir, child));
    }
    let mut total = 0.0;
    let mut failed = None;
    for (dir, child) in kids {
        let out = child.wait_with_output()?;
        let text = String::from_utf8_lossy(&out.stdout);
        match parse_events_per_sec(&text) {
            Some(eps) => {
                println!("{}: {eps:.1} events/s", dir.display());
                total += eps;
            }
            None => failed = Some(format!("{}: no events/s in sysbench's output", dir.display())),
        }
        let _ = std::fs::remove_dir(&dir);
    }
    if let Some(f) = failed {
        bail!(f);
    }
    println!("metric: {total:.1}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysbench_memory_output() {
        let out = "Total operations: 3394953 (3390560.25 per second)\n\n3315.38 MiB transferred (3311.09 MiB/sec)\n";
        assert_eq!(parse_events_per_sec(out), Some(3390560.25));
        assert_eq!(parse_events_per_sec("nothing"), None);
    }
}
