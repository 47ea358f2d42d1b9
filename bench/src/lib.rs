//! `scx_sis_bench`: A/B benchmarks of the fair class (EEVDF, nothing attached) against scx_sis
//! variants and other sched_ext schedulers, interleaved run by run, with an mmtests-style
//! comparison table, results.json, runs.csv and a PNG plot per suite.
//!
//! Its own crate, beside the scheduler's: it uses the scheduler's library (the BPF skeletons,
//! topology, usage errors), and the scheduler binary carries none of this.
//!
//! Layout, by responsibility:
//! - `cli`: the command line and the variants and suites it asks for;
//! - `host`: what is recorded about the machine, and whether it can attach schedulers;
//! - `plan`: the plan text (--dry-run); `session`: one session start to end (the entry, `run`);
//! - `workloads`: the suite catalogue (`fairness`, `gbbench`, `wakelat`, `pipelat`: suites run through
//!   hidden scx_sis_bench subcommands); `tools`: the programs the suites need; `parsers`: the
//!   numbers read from their output; `executor`: runs one workload as child processes;
//! - `sched`: attach/detach through sysfs, telemetry; `runner`: the interleaved loop over the
//!   `Controller`/`Executor` traits;
//! - `idle_scale`, `cg_scale`: the host-only `idle-scale` and `cg-scale` suites (the idle search
//!   over synthetic LLCs, the cgroup books over deep cgroups, through BPF_PROG_TEST_RUN; they run
//!   before and without the sched_ext preflight);
//! - `statistics` (means, Welch's t-test), `model` (what results.json holds), `report` (table,
//!   CSV, JSON), `plot` (PNG); `pool`: the verdict across boots (sessions of one plan pooled).

pub mod cg_scale;
pub mod cgroups;
pub mod cli;
pub mod executor;
pub mod fairness;
pub mod gbbench;
pub mod host;
pub mod idle_scale;
pub mod model;
pub mod parsers;
pub mod pipelat;
pub mod plan;
pub mod plot;
pub mod pool;
pub mod report;
pub mod rq_lock;
pub mod runner;
pub mod sched;
pub mod session;
pub mod statistics;
pub mod tools;
pub mod wakelat;
pub mod workloads;

pub use cli::{build_suites, build_variants, split_args, BenchArgs};
pub use session::run;

// bad input or an unfit system: the one usage error of scx_sis (exit code 2, one line)
use scx_sis::error::usage_err as usage;

/// A host-only suite's start: with --dry-run its `plan` printed and None; else, as root, the
/// results directory made (--out, or bench-results/<date-time>) and the plan said on stderr:
/// (the start time, the directory).
pub fn host_only_start(
    args: &BenchArgs,
    name: &str,
    plan: &str,
) -> anyhow::Result<Option<(String, std::path::PathBuf)>> {
    use anyhow::Context as _;
    if args.dry_run {
        print!("{plan}");
        return Ok(None);
    }
    // SAFETY: geteuid has no preconditions
    if unsafe { libc::geteuid() } != 0 {
        return Err(usage(format!(
            "--suite {name} loads BPF programs and runs them with BPF_PROG_TEST_RUN: run it as root"
        )));
    }
    let (created, stamp) = host::local_time();
    let out = args.out.clone().unwrap_or_else(|| std::path::PathBuf::from("bench-results").join(&stamp));
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    eprint!("{plan}");
    Ok(Some((created, out)))
}

/// Whether --suite asks for host-only suite `name`, which runs alone (nothing attached, no
/// variants: it measures the scheduler's BPF itself).
pub fn host_only_suite(args: &BenchArgs, name: &str) -> anyhow::Result<bool> {
    let Some(list) = &args.suite else { return Ok(false) };
    let names: Vec<&str> = list.split(',').map(str::trim).filter(|n| !n.is_empty()).collect();
    if !names.contains(&name) {
        return Ok(false);
    }
    if names.len() > 1 || !args.cmd.is_empty() {
        return Err(usage(format!(
            "--suite {name} runs alone (host-only, nothing attached): run the other suites separately"
        )));
    }
    if !args.variant.is_empty() || !args.peer.is_empty() {
        return Err(usage(format!(
            "--suite {name} measures the scheduler's BPF on the host: --variant and --peer do not apply"
        )));
    }
    Ok(true)
}
