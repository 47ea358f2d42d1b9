//! scx_sis_bench: the command line → one benchmark session (`session::run`), or one of the
//! workloads the suites run as child processes of this binary (hidden `__fairness`,
//! `__gbbench`, `__wakelat`, `__pipelat`).

use std::process::ExitCode;

use anyhow::Result;
use clap::Parser;
use scx_sis::error::main_with;
use scx_sis_bench::{fairness, gbbench, pipelat, wakelat, BenchArgs};

/// scx_sis_bench: A/B benchmark: run workloads alternately under the kernel's fair scheduler
/// and under scx_sis (variants and peer schedulers too), hot-swapping between runs; prints an
/// mmtests-style comparison and writes JSON, CSV and plots.
#[derive(Debug, Parser)]
#[command(name = "scx_sis_bench", version, args_conflicts_with_subcommands = true)]
struct Opts {
    #[command(flatten)]
    bench: BenchArgs,

    #[command(subcommand)]
    workload: Option<Workload>,
}

#[derive(Debug, clap::Subcommand)]
enum Workload {
    /// One fairness workload of the fair-* and cg-* suites (internal).
    #[command(name = "__fairness", hide = true)]
    Fairness(fairness::ProbeArgs),
    /// The gb-sysbench workload (internal).
    #[command(name = "__gbbench", hide = true)]
    GbBench(gbbench::ProbeArgs),
    /// The wakelat workload: CPU hogs around cyclictest (internal).
    #[command(name = "__wakelat", hide = true)]
    WakeLat(wakelat::ProbeArgs),
    /// The pipelat workload: a pipe round trip beside CPU hogs (internal).
    #[command(name = "__pipelat", hide = true)]
    PipeLat(pipelat::ProbeArgs),
}

fn run(opts: Opts) -> Result<()> {
    match &opts.workload {
        None => scx_sis_bench::run(&opts.bench),
        Some(Workload::Fairness(a)) => fairness::probe(a),
        Some(Workload::GbBench(a)) => gbbench::probe(a),
        Some(Workload::WakeLat(a)) => wakelat::probe(a),
        Some(Workload::PipeLat(a)) => pipelat::probe(a),
    }
}

fn main() -> ExitCode {
    main_with("scx_sis_bench", run)
}
