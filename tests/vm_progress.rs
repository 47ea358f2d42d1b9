//! The VM tests' stall checker (tests/vm/guest/progress.c), on the host: a worker stopped for a
//! known time shows as the longest pause and the 99.9th percentile, while the 99th stays at one
//! ordinary cycle. `soak` judges scx_sis by these quantiles, so they must be right.

use std::path::Path;
use std::process::{Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

fn field(line: &str, key: &str) -> f64 {
    let pat = format!("{key}=");
    let v = line
        .split_whitespace()
        .find_map(|w| w.strip_prefix(pat.as_str()))
        .unwrap_or_else(|| panic!("no {key} in '{line}'"));
    v.parse().unwrap_or_else(|_| panic!("{key}={v} is not a number"))
}

fn signal(sig: &str, pid: &str) {
    let ok = Command::new("kill").args([sig, pid]).status().expect("kill").success();
    assert!(ok, "kill {sig} {pid}");
}

/// One worker, stopped for 300 ms after 600 ms, run 600 ms more: its summary line.
fn stopped_worker(spin_sleep: &[&str]) -> String {
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = dir.path().join("progress");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vm/guest/progress.c");
    let cc = Command::new("cc").args(["-O2", "-Wall", "-o"]).arg(&bin).arg(&src).status();
    assert!(cc.expect("cc").success(), "cc {}", src.display());

    let pidfile = dir.path().join("pids");
    let child =
        Command::new(&bin).arg("1").arg(&pidfile).args(spin_sleep).stdout(Stdio::piped()).spawn().expect("progress");
    let t0 = Instant::now();
    let worker = loop {
        if let Ok(s) = std::fs::read_to_string(&pidfile) {
            if s.ends_with('\n') {
                break s.trim().to_string();
            }
        }
        assert!(t0.elapsed() < Duration::from_secs(10), "no worker pid");
        sleep(Duration::from_millis(10));
    };
    sleep(Duration::from_millis(600));
    signal("-STOP", &worker);
    sleep(Duration::from_millis(300));
    signal("-CONT", &worker);
    sleep(Duration::from_millis(600));
    signal("-TERM", &child.id().to_string());
    let out = child.wait_with_output().expect("progress output");
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines().next().expect("a summary line").to_string()
}

/// The stop is the longest pause and the 99.9th percentile; the 99th is an ordinary cycle of
/// at least `cycle_min` ms.
fn check(line: &str, cycle_min: f64) {
    assert_eq!(field(line, "alive"), 1.0, "{line}");
    let (max, p99, p999, cycles) =
        (field(line, "max_gap_ms"), field(line, "p99_ms"), field(line, "p999_ms"), field(line, "cycles"));
    // ~1.2 s of 10 ms cycles, however loaded the host
    assert!((30.0..=200.0).contains(&cycles), "cycles: {line}");
    assert!((300.0..1000.0).contains(&max), "the stop is the longest pause: {line}");
    // the top cycle is more than 0.1% of ~120: the 99.9th percentile is its bucket (1/8 octave)
    assert!(p999 >= 300.0 && p999 <= max * 1.13, "p999 is the stop's bucket: {line}");
    // the 99th is the second-longest cycle: a sleep and a spin, with room for a busy host
    assert!((cycle_min..100.0).contains(&p99), "p99 is an ordinary cycle: {line}");
}

#[test]
fn a_stopped_worker_is_the_tail_not_the_99th_percentile() {
    // 2 ms spin, 8 ms sleep: a cycle is about 10 ms, its longest gap the sleep
    check(&stopped_worker(&["2000", "8000"]), 8.0);
}

#[test]
fn a_stop_ending_a_spin_window_counts_in_it() {
    // spinning only: 10 ms windows, the stop ends one
    check(&stopped_worker(&[]), 0.0);
}
