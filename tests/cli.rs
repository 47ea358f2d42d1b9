//! CLI validation: bad input gets one line on stderr and exit code 2, before anything loads.
//! Runs the real binary on this host (whose kernel has no sched_ext).

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn run(args: &[&str]) -> (i32, String, String) {
    output(Command::new(env!("CARGO_BIN_EXE_scx_sis")).args(args))
}

fn root() -> bool {
    unsafe { libc::geteuid() == 0 }
}

/// Says that `test` did not run and why, past the harness's output capture (which hides what
/// a passing test prints): a skipped test must not read as a pass.
fn skip(test: &str, why: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "SKIP cli::{test}: {why}");
}

/// The uid and gid of nobody / nogroup on Debian, for the runs as an unprivileged user.
const NOBODY: u32 = 65534;

/// Runs as nobody (from root; std drops the supplementary groups too).
fn run_as_nobody(args: &[&str]) -> (i32, String, String) {
    output(Command::new(env!("CARGO_BIN_EXE_scx_sis")).args(args).uid(NOBODY).gid(NOBODY))
}

fn output(cmd: &mut Command) -> (i32, String, String) {
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn assert_usage_error(args: &[&str], needle: &str) {
    assert_one_line_error(args, run(args), needle);
}

fn assert_one_line_error(args: &[&str], (code, _out, err): (i32, String, String), needle: &str) {
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
    assert_usage_error(&["--wake-affine", "always"], "wake-affine");
    assert_usage_error(&["--oracle-every", "3"], "oracle-every");
    assert_usage_error(&["--oracle-every", "131072"], "oracle-every");
    assert_usage_error(&["--balance-every", "0"], "balance-every");
    assert_usage_error(&["--balance-every", "65"], "balance-every");
    assert_usage_error(&["--max-cgroups", "0"], "max-cgroups");
    assert_usage_error(&["--max-cgroups", "2000000"], "max-cgroups");
    assert_usage_error(&["--stats", "0"], "stats");
    assert_usage_error(&["--stats", "x"], "stats");
    assert_usage_error(&["--monitor=-1"], "monitor");
    assert_usage_error(&["--stats-group", "no-such-group-xyz"], "no group \"no-such-group-xyz\"");
    assert_usage_error(&["--stats-group", ""], "stats-group");
    assert_usage_error(&["--exit-dump-len=-1"], "exit-dump-len");
    assert_usage_error(&["--exit-dump-len", "lots"], "exit-dump-len");
    assert_usage_error(&["--exit-dump-len", "4194304"], "0..=2097152");
}

/// `--partitions` with CPU ids past the machine's: refused at once, before the system is
/// checked (this host has no sched_ext), without expanding the range.
#[test]
fn partitions_out_of_range() {
    let t0 = Instant::now();
    assert_usage_error(&["--partitions", "0-4000000000"], "CPU 4000000000 is out of range");
    assert_usage_error(&["--partitions", "0-18446744073709551615"], "CPU 18446744073709551615 is out of range");
    assert_usage_error(&["--partitions", "0-1;x"], "partition 1 (x)");
    assert!(t0.elapsed() < Duration::from_secs(10), "took {:?}", t0.elapsed());
}

/// The scheduler carries no benchmark harness (that is scx_sis_bench): no `bench` subcommand,
/// no hidden workload subcommands, and no word of it in --help.
#[test]
fn scheduler_has_no_bench() {
    for sub in ["bench", "__fairness", "__gbbench", "__wakelat"] {
        assert_usage_error(&[sub], sub);
    }
    let (code, out, _) = run(&["--help"]);
    assert_eq!(code, 0);
    assert!(!out.to_lowercase().contains("bench"), "--help mentions bench: {out}");
}

/// The preflight refusals, exit 2 and nothing attached: no sched_ext here, or, on a kernel
/// with it, not root (shown as nobody: root would attach).
#[test]
fn preflight_refusals() {
    if !Path::new("/sys/kernel/sched_ext").exists() {
        assert_usage_error(&[], "no sched_ext");
        assert_usage_error(&["--partial", "--sis-mode", "linear"], "no sched_ext");
        if root() {
            // the kernel is checked first, for anyone
            let args = ["--partial"];
            assert_one_line_error(&args, run_as_nobody(&args), "no sched_ext");
        }
        return;
    }
    let args = ["--partial", "--sis-mode", "linear"];
    let res = if root() { run_as_nobody(&args) } else { run(&args) };
    assert_one_line_error(&args, res, "must run as root");
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
        "--wake-affine",
        "--oracle-every",
        "--max-cgroups",
        "--partial",
        "--stats",
        "--monitor",
        "--stats-out",
        "--help-stats",
    ] {
        assert!(out.contains(opt), "--help documents {opt}");
    }
    for flag in ["--version", "-V"] {
        let (code, out, _) = run(&[flag]);
        assert_eq!(code, 0);
        assert_version(out.trim());
    }
    let (code, out, _) = run(&["--help-stats"]);
    assert_eq!(code, 0);
    for field in ["recall_pct", "probes_per_scan", "oracle_checks", "missed_idle", "steals", "fp_removed"] {
        assert!(out.contains(field), "--help-stats describes {field}");
    }
}

/// The hidden test knob inject-error: a bad value is refused like any knob's (before the socket
/// is tried, so with no scx_sis too), and `set --help` lists no such knob.
#[test]
fn set_inject_error_is_hidden() {
    assert_usage_error(&["set", "inject-error=2"], "invalid value \"2\" for inject-error: want 0 or 1");
    let (code, out, _) = run(&["set", "--help"]);
    assert_eq!(code, 0);
    assert!(out.contains("slice-us") && !out.contains("inject"), "set --help: {out}");
}

/// "scx_sis 0.1.0 (git 42b0f7f, x86_64-unknown-linux-gnu)": the hash is 7+ hex digits, with
/// "-dirty" for a tree with uncommitted changes, or "unknown" outside git.
fn assert_version(v: &str) {
    let rest =
        v.strip_prefix(concat!("scx_sis ", env!("CARGO_PKG_VERSION"), " (git ")).unwrap_or_else(|| panic!("{v}"));
    let (hash, rest) = rest.split_once(", ").unwrap_or_else(|| panic!("{v}"));
    let target = rest.strip_suffix(')').unwrap_or_else(|| panic!("{v}"));
    let h = hash.strip_suffix("-dirty").unwrap_or(hash);
    assert!(hash == "unknown" || (h.len() >= 7 && h.chars().all(|c| c.is_ascii_hexdigit())), "{v}: git hash {hash:?}");
    // the triple of the build: this test is built for the same one
    assert!(target.starts_with(&format!("{}-", std::env::consts::ARCH)), "{v}: target {target:?}");
    assert!(target.contains(std::env::consts::OS), "{v}: target {target:?}");
}

/// A stats socket in a directory anyone may search, that a client of `mode` cannot write:
/// 0600 against nobody when we are root, 0000 against ourselves otherwise (root ignores modes).
fn locked_socket(dir: &Path) -> (std::os::unix::net::UnixListener, std::path::PathBuf) {
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let p = dir.join("stats");
    let l = std::os::unix::net::UnixListener::bind(&p).unwrap();
    let mode = if root() { 0o600 } else { 0o000 };
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
    (l, p)
}

fn as_client(args: &[&str]) -> (i32, String, String) {
    if root() {
        run_as_nobody(args)
    } else {
        run(args)
    }
}

/// `--monitor` and `scx_sis top` on a stats socket they may not connect to: one line saying why
/// (root only unless --stats-group), exit 2, instead of waiting or a raw os error.
#[test]
fn stats_socket_permission_denied() {
    let dir = tempfile::tempdir().unwrap();
    let (_l, p) = locked_socket(dir.path());
    let want = format!(
        "cannot read the stats socket {}: permission denied (root only unless scx_sis runs with --stats-group)",
        p.display()
    );
    let sock = p.to_str().unwrap();
    for args in [
        vec!["--stats-socket", sock, "--monitor", "1"],
        // the check comes before the UI or the JSON loop starts
        vec!["top", "--json", "--count", "1", "--socket", sock],
    ] {
        assert_one_line_error(&args, as_client(&args), &want);
    }
}

/// A member of --stats-group's group reads the stats: a server launched as scx_sis launches it
/// (0660, group nogroup), `scx_sis top --json` as nobody gets a reply.
#[test]
fn stats_group_member_reads_the_stats() {
    if !root() {
        skip("stats_group_member_reads_the_stats", "needs root to run a client as another user");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let p = dir.path().join("stats");
    let group = scx_sis::access::Group { name: "nogroup".into(), gid: NOBODY };
    let server = scx_sis::stats_server::launch_server(&p, Some(&group)).unwrap();
    let hub = server.hub();
    std::thread::spawn(move || loop {
        let _ = hub.serve(|| Ok::<_, ()>(scx_sis::stats::Metrics { nr_cpus: 5, ..Default::default() }));
        std::thread::sleep(Duration::from_millis(20));
    });
    let args = ["top", "--json", "--count", "1", "-i", "0.2", "--socket", p.to_str().unwrap()];
    let (code, out, err) = run_as_nobody(&args);
    assert_eq!(code, 0, "{err}");
    let line: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(line["stats"]["nr_cpus"], 5, "{out}");
}

/// With no scx_sis running, --monitor says so on one line and waits for one (it is not an error:
/// a scheduler may be starting or restarting).
#[test]
fn monitor_without_scheduler_waits() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("stats");
    let mut child = Command::new(env!("CARGO_BIN_EXE_scx_sis"))
        .args(["--stats-socket", p.to_str().unwrap(), "--monitor", "0.5"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while start.elapsed() < Duration::from_millis(2500) {
        assert!(child.try_wait().unwrap().is_none(), "--monitor exited instead of waiting");
        std::thread::sleep(Duration::from_millis(100));
    }
    child.kill().unwrap();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "{err:?}");
    assert!(lines[0].contains(&format!("no scx_sis running ({} is not served) - retrying", p.display())), "{err}");
    assert!(out.stdout.is_empty());
}
