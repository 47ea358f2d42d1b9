//! The `scx_sis_bench` command line and what it turns into: the variants (columns) and the
//! suites (tables) of a session.

use std::path::{Path, PathBuf};

use anyhow::Result;

use super::model::{Skipped, Suite, Variant, VariantKind, BASELINE};
use super::usage;
use super::workloads::{self, Scale};

/// Run workloads under the fair class (EEVDF) and sched_ext schedulers, alternating run by run,
/// and compare (mmtests style: Amean for times, Hmean for rates, *x%* = significant by Welch's
/// t-test at 95%). Needs root and a sched_ext kernel; attaches and detaches the schedulers itself.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct BenchArgs {
    /// Comma-separated suites: hackbench, tbench, netperf (= netperf-udp,netperf-tcp), schbench,
    /// wakelat (cyclictest wakeup p99 beside one CPU hog per CPU: schbench's stand-in; its
    /// median comes from the same runs as wakelat-p50), pipelat (a pipe round trip beside one
    /// hog per CPU, pinned and unpinned: sync wakeups' latency; median as pipelat-p50),
    /// fairness (= fair-nice1,fair-nice8,fair-spread,fair-odd,fair-fork,fair-sleep),
    /// cgroups (= cg-weight,cg-threads,cg-nested,cg-wide,cg-deep), cg-full (with a
    /// --variant of a small --max-cgroups), gb-sysbench (one
    /// cgroup per LLC under /sys/fs/cgroup/scx_sis_gb; compare with
    /// --variant "gb=--gb-parent /sys/fs/cgroup/scx_sis_gb"),
    /// idle-scale (host-only, alone: the idle search over synthetic LLCs of 8-256 CPUs per
    /// --sis-mode, through BPF_PROG_TEST_RUN; --runs = trials per cell; no sched_ext needed),
    /// cg-scale (host-only, alone: what a cgroup's depth, 1-16 levels, costs a wakeup's and a
    /// sleep's cpu.weight books, the same way).
    /// [default: hackbench,tbench,netperf,schbench,wakelat; only the --cmd ones if --cmd is given]
    #[arg(long, value_name = "LIST")]
    pub suite: Option<String>,

    /// Measured runs per variant and parameter.
    #[arg(long, default_value_t = 5, value_name = "N")]
    pub runs: usize,

    /// Warm-up runs per variant and parameter (interleaved too; not in the statistics).
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub warmup: usize,

    /// Run in blocks of N rounds: each scheduler attaches once per block and runs every suite and
    /// parameter of those rounds, blocks start with the next scheduler in turn. Fewer attach/detach
    /// transitions (the parallel rig's risk) than the default, which attaches for every run. [default: 0 = off]
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub block: usize,

    /// Also time the sched_ext programs (the kernel's BPF run-time statistics, on for the whole
    /// session): BPF ns per call and per unit of work in the system section. Costs each program
    /// call two clock reads, so leave it off for throughput figures.
    #[arg(long)]
    pub bpf_time: bool,

    /// Also time runqueue locks (tracing programs, attached for the whole session, under every
    /// column alike): per unit of work, the time and count of taking another CPU's rq lock
    /// (remote) and the time on the CPU's own, as seen on raw_spin_rq_lock_nested; and every
    /// contended wait for an rq lock from any caller (the spinlock's slow path), with the kernel
    /// paths that waited, in the system section. Costs every rq lock two programs, so leave it
    /// off for throughput figures.
    #[arg(long)]
    pub lock_time: bool,

    /// Run each workload (and its server) N cgroup levels deep, the cpu controller on at each
    /// level, as a systemd login session's tasks are (user.slice/user-1000.slice/session-2.scope:
    /// 3): a wakeup's cost per level, the fair class's and the scheduler's. The cg-* suites place
    /// their own tasks. [default: 0 = where the bench runs]
    #[arg(long, default_value_t = 0, value_name = "N", value_parser = clap::value_parser!(u32).range(0..=16))]
    pub cgroup_depth: u32,

    /// Results directory [default: bench-results/<date-time>].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// Tiny sizes (smoke test): hackbench groups 1,2 with 20 loops, 1-2 s network runs.
    #[arg(long)]
    pub quick: bool,

    /// An scx_sis variant, NAME=OPTIONS (repeatable), e.g. "nofilter=--sis-mode linear".
    #[arg(long, value_name = "NAME=OPTIONS")]
    pub variant: Vec<String>,

    /// Another sched_ext scheduler on PATH, BINARY or NAME=BINARY [OPTIONS] (repeatable),
    /// e.g. scx_bpfland or "lowlat=scx_bpfland -m performance".
    #[arg(long, value_name = "[NAME=]BINARY")]
    pub peer: Vec<String>,

    /// Leave out the plain `scx_sis` column (default options); keep only --variant/--peer.
    #[arg(long)]
    pub no_default_variant: bool,

    /// A custom workload, NAME=COMMAND run with sh -c (repeatable); measured by --metric or
    /// by its wall time.
    #[arg(long, value_name = "NAME=COMMAND")]
    pub cmd: Vec<String>,

    /// Regex whose first capture group (or whole match) in the --cmd output is the metric.
    #[arg(long, value_name = "REGEX", requires = "cmd")]
    pub metric: Option<String>,

    /// The --metric is a rate (higher is better; Hmean) rather than a time.
    #[arg(long, requires = "metric")]
    pub higher_is_better: bool,

    /// hackbench groups, comma-separated [default: 1,2,4,.. up to the CPU count].
    #[arg(long, value_name = "LIST")]
    pub hackbench_groups: Option<String>,

    /// hackbench loops (-l) [default: 100; 20 with --quick].
    #[arg(long, value_name = "N")]
    pub hackbench_loops: Option<u32>,

    /// Seconds per tbench/netperf/schbench/wakelat run [default: 5, netperf 3, pipelat 3; 2/1 with --quick].
    #[arg(long, value_name = "SECS")]
    pub duration: Option<u32>,

    /// Seconds to wait for a scheduler to attach or detach (single-threaded TCG, 8 vCPUs, another
    /// VM beside it: 11-20 s, now and then more).
    #[arg(long, default_value_t = 60, value_name = "SECS")]
    pub attach_timeout: u64,

    /// The scx_sis binary run for the scx_sis columns [default: scx_sis beside this binary, else
    /// on PATH]; e.g. to compare against another build.
    #[arg(long, value_name = "PATH")]
    pub scx_sis_bin: Option<PathBuf>,

    /// Print the plan (variants, suites, commands, number of runs) and exit; attaches nothing.
    #[arg(long)]
    pub dry_run: bool,

    /// Rebuild table.txt and the plots from DIR/results.json (no runs) and print the table.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["dry_run"])]
    pub report: Option<PathBuf>,

    /// Pool sessions of one plan, a boot each (bench/parallel.sh --boots): each boot's change
    /// against EEVDF, a t-test across boots, how far the boot alone moves each column, and the
    /// host's steal time over each boot; printed, nothing run.
    #[arg(long, value_name = "DIR", num_args = 1.., conflicts_with_all = ["dry_run", "report"])]
    pub pool: Vec<PathBuf>,
}

/// Split an option string like a POSIX shell would (whitespace, '...', "...", backslash).
pub fn split_args(s: &str) -> Result<Vec<String>, String> {
    shlex::split(s).ok_or_else(|| format!("unbalanced quotes or a trailing \\ in {s:?}"))
}

fn check_name(name: &str, what: &str, taken: &[Variant]) -> Result<()> {
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || "-_.+".contains(c)) {
        return Err(usage(format!("{what} name '{name}' must be non-empty letters, digits, - _ . +")));
    }
    if name.eq_ignore_ascii_case(BASELINE) {
        return Err(usage(format!("{what} name '{name}' is reserved for the baseline (the fair class)")));
    }
    if taken.iter().any(|v| v.name == name) {
        return Err(usage(format!("{what} name '{name}' is used twice (give each --variant/--peer its own NAME=)")));
    }
    Ok(())
}

/// The columns: EEVDF first, then scx_sis (unless --no-default-variant), --variant, --peer.
pub fn build_variants(args: &BenchArgs, peer_lookup: &dyn Fn(&str) -> Option<PathBuf>) -> Result<Vec<Variant>> {
    let mut vs = vec![Variant::fair()];
    if !args.no_default_variant {
        vs.push(Variant { name: "scx_sis".into(), kind: VariantKind::ScxSis { args: vec![] } });
    }
    for spec in &args.variant {
        let Some((name, opts)) = spec.split_once('=') else {
            return Err(usage(format!(
                "--variant '{spec}': expected NAME=OPTIONS, e.g. \"nofilter=--sis-mode linear\""
            )));
        };
        let name = name.trim();
        check_name(name, "--variant", &vs)?;
        let a = split_args(opts).map_err(|e| usage(format!("--variant '{spec}': {e}")))?;
        vs.push(Variant { name: name.into(), kind: VariantKind::ScxSis { args: a } });
    }
    for spec in &args.peer {
        let (name, rest) = match spec.split_once('=') {
            Some((n, r)) if !n.contains(char::is_whitespace) => (Some(n.trim().to_string()), r),
            _ => (None, spec.as_str()),
        };
        let words = split_args(rest).map_err(|e| usage(format!("--peer '{spec}': {e}")))?;
        let Some((bin, a)) = words.split_first() else {
            return Err(usage(format!("--peer '{spec}': no scheduler binary given")));
        };
        let path = peer_lookup(bin).ok_or_else(|| {
            usage(format!(
                "--peer {bin}: not found on PATH (install the scx schedulers, e.g. the scx package, or give its path)"
            ))
        })?;
        let name = name.unwrap_or_else(|| {
            Path::new(bin).file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or(bin.clone())
        });
        check_name(&name, "--peer", &vs)?;
        vs.push(Variant {
            name,
            kind: VariantKind::Peer { binary: path.to_string_lossy().into_owned(), args: a.to_vec() },
        });
    }
    if vs.len() < 2 {
        return Err(usage("nothing to compare: --no-default-variant needs at least one --variant or --peer"));
    }
    Ok(vs)
}

/// The suites to run (and the ones skipped for a missing optional tool).
pub fn build_suites(args: &BenchArgs, nproc: usize) -> Result<(Vec<Suite>, Vec<Skipped>)> {
    let groups = match &args.hackbench_groups {
        None => None,
        Some(s) => Some(
            s.split(',')
                .map(|g| g.trim().parse::<u32>().ok().filter(|&g| g > 0))
                .collect::<Option<Vec<u32>>>()
                .ok_or_else(|| usage(format!("--hackbench-groups '{s}': expected positive integers like 1,2,4")))?,
        ),
    };
    let sc = Scale {
        nproc,
        quick: args.quick,
        hackbench_groups: groups,
        hackbench_loops: args.hackbench_loops,
        duration_s: args.duration,
    };
    let list = match (&args.suite, args.cmd.is_empty()) {
        (Some(s), _) => s.clone(),
        (None, true) => workloads::DEFAULT_SUITES.to_string(),
        (None, false) => String::new(),
    };
    let mut skipped = vec![];
    let mut suites = workloads::resolve(&list, &sc, &mut skipped).map_err(usage)?;
    if let Some(re) = &args.metric {
        regex::Regex::new(re).map_err(|e| usage(format!("--metric: bad regex: {e}")))?;
    }
    for spec in &args.cmd {
        let Some((name, command)) = spec.split_once('=') else {
            return Err(usage(format!("--cmd '{spec}': expected NAME=COMMAND")));
        };
        let name = name.trim();
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)) {
            return Err(usage(format!("--cmd name '{name}' must be letters, digits, - _ .")));
        }
        if suites.iter().any(|s| s.name == name) || workloads::BUILTIN.contains(&name) {
            return Err(usage(format!("--cmd name '{name}' clashes with a suite name")));
        }
        if command.trim().is_empty() {
            return Err(usage(format!("--cmd '{spec}': empty command")));
        }
        suites.push(workloads::custom(name, command, args.metric.as_deref(), args.higher_is_better));
    }
    if suites.is_empty() {
        let why = skipped.iter().map(|k| format!("{}: {}", k.suite, k.reason)).collect::<Vec<_>>().join("; ");
        return Err(usage(format!("no suite can run here ({why})")));
    }
    Ok((suites, skipped))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::statistics;
    use clap::Parser;

    #[derive(clap::Parser, Debug)]
    pub struct Cli {
        #[command(flatten)]
        bench: BenchArgs,
    }

    pub fn args(a: &[&str]) -> BenchArgs {
        Cli::try_parse_from(std::iter::once("bench").chain(a.iter().copied())).unwrap().bench
    }

    pub fn is_usage(e: &anyhow::Error) -> bool {
        scx_sis::error::as_usage(e).is_some()
    }

    #[test]
    fn cgroup_depth_is_bounded() {
        assert_eq!(args(&[]).cgroup_depth, 0);
        assert_eq!(args(&["--cgroup-depth", "3"]).cgroup_depth, 3);
        for bad in ["17", "x"] {
            let e = Cli::try_parse_from(["bench", "--cgroup-depth", bad]).unwrap_err();
            assert_eq!(e.kind(), clap::error::ErrorKind::ValueValidation, "{bad}: {e}");
        }
        assert!(Cli::try_parse_from(["bench", "--cgroup-depth", "-1"]).is_err());
    }

    #[test]
    fn shell_split() {
        assert_eq!(split_args("--sis-mode linear").unwrap(), ["--sis-mode", "linear"]);
        assert_eq!(split_args(" -a 'b c' \"d \\\"e\" f\\ g ''").unwrap(), ["-a", "b c", "d \"e", "f g", ""]);
        assert!(split_args("'x").is_err());
        assert_eq!(split_args("").unwrap(), Vec::<String>::new());
        // what the plan shows splits back into the same words
        let words = ["-m", "a b", "it's", "", "x\"y"].map(String::from);
        let shown = Variant { name: "v".into(), kind: VariantKind::ScxSis { args: words.to_vec() } }.describe();
        assert_eq!(split_args(&shown).unwrap()[1..], words);
    }

    #[test]
    fn variants_from_args() {
        let a = args(&[
            "--variant",
            "nofilter=--sis-mode linear",
            "--variant",
            "nosteal=--steal off",
            "--peer",
            "scx_bpfland",
            "--peer",
            "lowlat=scx_bpfland -m performance",
        ]);
        let found = |b: &str| (b == "scx_bpfland").then(|| PathBuf::from("/usr/bin/scx_bpfland"));
        let vs = build_variants(&a, &found).unwrap();
        let names: Vec<&str> = vs.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(names, ["EEVDF", "scx_sis", "nofilter", "nosteal", "scx_bpfland", "lowlat"]);
        assert_eq!(vs[2].kind, VariantKind::ScxSis { args: vec!["--sis-mode".into(), "linear".into()] });
        assert_eq!(
            vs[5].kind,
            VariantKind::Peer { binary: "/usr/bin/scx_bpfland".into(), args: vec!["-m".into(), "performance".into()] }
        );
        assert_eq!(vs[5].describe(), "/usr/bin/scx_bpfland -m performance");

        let a = args(&["--no-default-variant", "--variant", "x=--slice-us 1000"]);
        let vs = build_variants(&a, &found).unwrap();
        assert_eq!(vs.iter().map(|v| v.name.as_str()).collect::<Vec<_>>(), ["EEVDF", "x"]);

        for bad in [
            vec!["--variant", "nofilter"],
            vec!["--variant", "EEVDF=--x"],
            vec!["--variant", "a b=--x"],
            vec!["--variant", "scx_sis=--x"],
            vec!["--peer", "scx_nonexistent"],
            vec!["--peer", "scx_bpfland", "--peer", "scx_bpfland"],
            vec!["--no-default-variant"],
        ] {
            let e = build_variants(&args(&bad), &found).unwrap_err();
            assert!(is_usage(&e), "{bad:?}: {e}");
        }
        let e = build_variants(&args(&["--peer", "scx_nonexistent"]), &found).unwrap_err();
        assert!(e.to_string().contains("scx_nonexistent: not found on PATH"), "{e}");
    }

    #[test]
    fn suites_from_args() {
        let (s, _) = build_suites(&args(&["--suite", "hackbench", "--quick"]), 8).unwrap();
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].params.len(), 2);
        let (s, _) =
            build_suites(&args(&["--suite", "hackbench", "--hackbench-groups", "1,3", "--hackbench-loops", "7"]), 8)
                .unwrap();
        assert_eq!(s[0].params[1].command.join(" "), "hackbench -p -g 3 -l 7");
        // --cmd alone: only the custom suite
        let (s, _) = build_suites(&args(&["--cmd", "sleepy=sleep 0.1"]), 8).unwrap();
        assert_eq!(s.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["sleepy"]);
        let (s, _) = build_suites(
            &args(&[
                "--cmd",
                "ops=echo ops: 5",
                "--metric",
                "ops: (\\d+)",
                "--higher-is-better",
                "--suite",
                "hackbench",
            ]),
            8,
        )
        .unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[1].direction, statistics::Direction::HigherIsBetter);
        for bad in [
            vec!["--suite", "nope"],
            vec!["--cmd", "noequals"],
            vec!["--cmd", "hackbench=true"],
            vec!["--cmd", "x=true", "--metric", "("],
            vec!["--suite", "hackbench", "--hackbench-groups", "1,x"],
        ] {
            let e = build_suites(&args(&bad), 8).unwrap_err();
            assert!(is_usage(&e), "{bad:?}: {e}");
        }
        // --metric needs --cmd (clap)
        assert!(Cli::try_parse_from(["bench", "--metric", "x"]).is_err());
    }
}
