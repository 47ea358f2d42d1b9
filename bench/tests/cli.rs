//! scx_sis_bench's command line and its workload helpers, run as the real binary on this host
//! (no sched_ext needed): bad input is one line and exit 2, and the hidden workload subcommands
//! the suites run do their job.

use std::path::Path;
use std::process::Command;

use scx_sis_bench::executor::{Executor, ProcessExecutor};
use scx_sis_bench::workloads::Scale;

const BIN: &str = env!("CARGO_BIN_EXE_scx_sis_bench");

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(BIN).args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn assert_usage_error(args: &[&str], needle: &str) {
    let (code, _, err) = run(args);
    assert_eq!(code, 2, "{args:?}: exit code; stderr: {err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "{args:?}: one line, got {err:?}");
    assert!(lines[0].starts_with("scx_sis_bench: error: "), "{args:?}: {err}");
    assert!(lines[0].contains(needle), "{args:?}: {err} should mention {needle}");
}

#[test]
fn invalid_options() {
    assert_usage_error(&["--runs", "lots"], "runs");
    assert_usage_error(&["--bogus"], "--bogus");
    assert_usage_error(&["__fairness", "nosuchcase"], "nosuchcase");
    assert_usage_error(&["__wakelat", "--hogs", "1", "--warmup", "601", "--", "true"], "warmup");
    assert_usage_error(&["--pool", "/nonexistent/boot-1"], "no results.json");
}

/// --help documents the session options and hides the workload subcommands.
#[test]
fn help_documents_the_session() {
    let (code, out, _) = run(&["--help"]);
    assert_eq!(code, 0);
    for opt in [
        "--suite",
        "--runs",
        "--variant",
        "--peer",
        "--scx-sis-bin",
        "--dry-run",
        "--bpf-time",
        "--lock-time",
        "--pool",
    ] {
        assert!(out.contains(opt), "--help documents {opt}");
    }
    assert!(!out.contains("__"), "--help shows a hidden workload: {out}");
}

/// `--suite wakelat`'s run on this host, scheduler aside: the suite's own command (hogs around
/// cyclictest through the hidden `__wakelat`) through the bench's executor and parser.
#[test]
fn wakelat_run_gives_a_p99() {
    let sc = Scale { nproc: 1, quick: true, hackbench_groups: None, hackbench_loops: None, duration_s: Some(1) };
    let suite = scx_sis_bench::wakelat::suite(&sc, Path::new(BIN));
    let dir = tempfile::tempdir().unwrap();
    let raw = dir.path().join("wakelat.txt");
    let mut ex = ProcessExecutor { abort: Default::default(), cgroup: None };
    let m = ex.run(&suite, &suite.params[0], &raw).unwrap_or_else(|e| panic!("{e}"));
    let out = std::fs::read_to_string(&raw).unwrap();
    assert!(m.value > 0.0 && out.contains("wakelat: p99") && out.len() < 100_000, "{out}");
}
