//! CLI validation: bad input gets one line on stderr and exit code 2, before anything loads.
//! Runs the real binary on this host (whose kernel has no sched_ext).

use std::process::Command;

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_scx_sis")).args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn assert_usage_error(args: &[&str], needle: &str) {
    let (code, _out, err) = run(args);
    assert_eq!(code, 2, "{args:?}: exit code; stderr: {err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "{args:?}: one line, got {err:?}");
    assert!(lines[0].starts_with("scx_sis: error: "), "{args:?}: {err}");
    assert!(lines[0].contains(needle), "{args:?}: {err} should mention {needle}");
}

#[test]
fn invalid_options() {
    assert_usage_error(&["--bogus"], "--bogus");
    assert_usage_error(&["--slice-us", "0"], "slice-us");
    assert_usage_error(&["--slice-us", "1000000"], "slice-us");
    assert_usage_error(&["--slice-us", "abc"], "slice-us");
    assert_usage_error(&["--sis-mode", "fast"], "sis-mode");
    assert_usage_error(&["--steal", "maybe"], "steal");
    assert_usage_error(&["--oracle-every", "3"], "oracle-every");
    assert_usage_error(&["--oracle-every", "131072"], "oracle-every");
    assert_usage_error(&["--balance-every", "0"], "balance-every");
    assert_usage_error(&["--balance-every", "65"], "balance-every");
    assert_usage_error(&["--stats", "0"], "stats");
    assert_usage_error(&["--stats", "x"], "stats");
    assert_usage_error(&["--monitor=-1"], "monitor");
    #[cfg(feature = "bench")]
    assert_usage_error(&["bench", "--runs", "lots"], "runs");
}

/// Built with --no-default-features: a scheduler without the benchmark harness, and no word
/// of it in --help.
#[cfg(not(feature = "bench"))]
#[test]
fn lean_build_has_no_bench() {
    assert_usage_error(&["bench"], "bench");
    let (code, out, _) = run(&["--help"]);
    assert_eq!(code, 0);
    assert!(!out.to_lowercase().contains("bench"), "--help mentions bench: {out}");
}

#[test]
fn kernel_without_sched_ext() {
    if std::path::Path::new("/sys/kernel/sched_ext").exists() {
        eprintln!("this kernel has sched_ext: the no-sched_ext case cannot be shown here");
        return;
    }
    assert_usage_error(&[], "no sched_ext");
    assert_usage_error(&["--partial", "--sis-mode", "linear"], "no sched_ext");
}

#[test]
fn help_and_version_succeed() {
    let (code, out, _) = run(&["--help"]);
    assert_eq!(code, 0);
    for opt in [
        "--slice-us",
        "--sis-mode",
        "--no-builtin-idle",
        "--steal",
        "--steal-scope",
        "--oracle-every",
        "--partial",
        "--stats",
        "--monitor",
        "--stats-out",
        "--help-stats",
    ] {
        assert!(out.contains(opt), "--help documents {opt}");
    }
    #[cfg(feature = "bench")]
    assert!(out.contains("bench"), "--help documents bench");
    let (code, out, _) = run(&["--version"]);
    assert_eq!((code, out.trim()), (0, concat!("scx_sis ", env!("CARGO_PKG_VERSION"))));
    let (code, out, _) = run(&["--help-stats"]);
    assert_eq!(code, 0);
    for field in ["recall_pct", "probes_per_scan", "oracle_checks", "missed_idle", "steals", "fp_removed"] {
        assert!(out.contains(field), "--help-stats describes {field}");
    }
}
