//! The `wakelat` suite of `scx_sis_bench`: how soon a woken normal task runs when every CPU is
//! busy ("bounded latency" in the guide). It stands in for schbench's wakeup p99, as
//! schbench is not packaged by Debian: cyclictest (rt-tests, installed for hackbench anyway)
//! with one SCHED_OTHER thread per CPU, unpinned, each waking every millisecond, beside one
//! nice-0 CPU hog per CPU. The metric is p99 of all the threads' wakeup latencies.
//!
//! Each run is `scx_sis_bench __wakelat --hogs N --warmup W -- cyclictest ...` (hidden subcommand): it
//! forks the hogs (fairness.rs's, killed on every way out), runs cyclictest, and prints its
//! output without the histogram's all-zero rows (HIST_US rows otherwise, megabytes per run) and a
//! summary line; the suite's parser reads p99 from that histogram.
//!
//! The median comes from the same runs: `derive_p50` reads each run's saved histogram again
//! into a second suite, `wakelat-p50`, so both figures get their mean, CV and t without a
//! second cyclictest (a session's own results, `--report` and `--pool` of one that lacks it).

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};

use super::fairness::Hogs;
use super::model::{Param, Parser, Results, Scale, Suite};
use super::parsers::{cyclictest_latencies, parse};
use super::statistics::Direction;
use scx_sis::error::usage_err;

pub const NAME: &str = "wakelat";
/// The median of the same runs (`derive_p50`).
pub const P50_NAME: &str = "wakelat-p50";

/// Histogram rows (1 us each): a saturated 8-vCPU TCG guest wakes in tens of ms, and p99 must
/// stay inside the rows (beyond them only the max is known); 800 KB per thread.
pub const HIST_US: u32 = 100_000;
const INTERVAL_US: u32 = 1000;

#[derive(clap::Args, Debug, Clone)]
pub struct ProbeArgs {
    /// CPU hogs (nice 0, unpinned) running beside the command.
    #[arg(long)]
    pub hogs: usize,
    /// Seconds the hogs run before the command starts.
    #[arg(long, default_value_t = 1.0)]
    pub warmup: f64,
    /// The cyclictest command line.
    #[arg(last = true, required = true, value_name = "CYCLICTEST")]
    pub command: Vec<String>,
}

/// No -p: given after --policy=other, even -p 0 makes cyclictest's threads SCHED_FIFO.
pub fn cyclictest_command(threads: usize, secs: u32) -> Vec<String> {
    let (t, i, d, h) = (threads.to_string(), INTERVAL_US.to_string(), secs.to_string(), HIST_US.to_string());
    ["cyclictest", "--policy=other", "-t", &t, "-i", &i, "-D", &d, "-q", "-m", "-h", &h].map(String::from).to_vec()
}

/// The suite; `exe` is the scx_sis binary that runs the probe.
pub fn suite(sc: &Scale, exe: &Path) -> Suite {
    let n = sc.nproc.max(1);
    let secs = sc.duration_s.unwrap_or(if sc.quick { 2 } else { 5 });
    let warm: f64 = if sc.quick { 0.5 } else { 1.0 };
    let mut command = vec![
        exe.to_string_lossy().into_owned(),
        "__wakelat".into(),
        "--hogs".into(),
        n.to_string(),
        "--warmup".into(),
        warm.to_string(),
        "--".into(),
    ];
    command.extend(cyclictest_command(n, secs));
    Suite {
        name: NAME.into(),
        title: "wakelat-cyclictest-under-hogs".into(),
        metric: format!(
            "p99 wakeup latency of {n} SCHED_OTHER cyclictest threads (-i {INTERVAL_US}) beside {n} CPU hogs, \
             unpinned; {secs} s after {warm} s (rows: hogs+threads)"
        ),
        unit: "usec".into(),
        direction: Direction::LowerIsBetter,
        ideal: None,
        parser: Parser::Cyclictest,
        server: None,
        timeout_s: secs as u64 + warm.ceil() as u64 + 120,
        params: vec![Param { label: format!("{n}+{n}"), command }],
    }
}

/// Add the medians read again from the runs of a suite that keeps them beside its p99 (wakelat's
/// histograms, pipelat's summary line) to a session that ran it and lacks them. True when
/// something was added.
pub fn derive_p50(res: &mut Results, dir: &Path) -> bool {
    let wake = derive_from(
        res,
        dir,
        NAME,
        P50_NAME,
        Parser::CyclictestP50,
        ("p99 wakeup latency", "median (p50) wakeup latency"),
    );
    let pipe = derive_from(
        res,
        dir,
        super::pipelat::NAME,
        super::pipelat::P50_NAME,
        Parser::Regex(super::pipelat::P50_RE.into()),
        ("p99 round trip", "median (p50) round trip"),
    );
    wake || pipe
}

/// The runs whose figure is another run's output read again: not runs of their own.
pub fn is_derived(suite: &str) -> bool {
    suite == P50_NAME || suite == super::pipelat::P50_NAME
}

/// Add suite `p50` to a session that ran `base` and lacks it: each `base` run's median, read
/// from its saved output under `dir` (`RunRecord::raw`), as a run of that suite, right after
/// `base`. Counters stay with the p99 runs (one table of them is enough). False, and nothing
/// added, when there is no `base` suite, the median is there already, or no output is readable
/// (a session copied without its `raw/`).
fn derive_from(res: &mut Results, dir: &Path, base: &str, p50: &str, parser: Parser, metric: (&str, &str)) -> bool {
    let Some(at) = res.suites.iter().position(|s| s.name == base) else { return false };
    if res.suites.iter().any(|s| s.name == p50) {
        return false;
    }
    let b = &res.suites[at];
    let suite = Suite {
        name: p50.into(),
        title: format!("{}-p50", b.title),
        metric: b.metric.replacen(metric.0, metric.1, 1),
        parser,
        ..b.clone()
    };
    let mut derived = vec![];
    for r in res.runs.iter().filter(|r| r.suite == base) {
        let mut d = r.clone();
        d.suite = p50.into();
        (d.telemetry, d.telemetry_error, d.system, d.window, d.work) = (None, None, None, None, None);
        if r.ok {
            let text = r.raw.as_ref().and_then(|raw| std::fs::read_to_string(dir.join(raw)).ok());
            match text.map(|t| parse(&suite.parser, &t, r.wall_s.unwrap_or(0.0))) {
                Some(Ok(v)) => d.value = Some(v),
                Some(Err(e)) => (d.ok, d.value, d.error) = (false, None, Some(e)),
                None => (d.ok, d.value, d.error) = (false, None, Some("its output is not there".into())),
            }
        }
        derived.push(d);
    }
    if !derived.iter().any(|d| d.value.is_some()) {
        return false;
    }
    res.suites.insert(at + 1, suite);
    res.runs.extend(derived);
    true
}

/// A histogram row with no sample: digits only, every count 0.
fn is_empty_row(line: &str) -> bool {
    let mut toks = line.split_whitespace();
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    let bucket = toks.next().is_some_and(digits);
    let mut counts = toks.peekable();
    bucket && counts.peek().is_some() && counts.all(|t| digits(t) && t.bytes().all(|b| b == b'0'))
}

/// `out` without the histogram's all-zero rows, and how many were left out.
pub fn without_empty_rows(out: &str) -> (String, usize) {
    let mut kept = String::with_capacity(out.len().min(1 << 20));
    let mut dropped = 0;
    for line in out.lines() {
        if is_empty_row(line) {
            dropped += 1;
        } else {
            kept.push_str(line);
            kept.push('\n');
        }
    }
    (kept, dropped)
}

/// Entry of `scx_sis_bench __wakelat`.
pub fn probe(a: &ProbeArgs) -> Result<()> {
    if !(0.0..=600.0).contains(&a.warmup) {
        return Err(usage_err(format!("__wakelat --warmup {}: expected 0..=600", a.warmup)));
    }
    let mut hogs = Hogs::default();
    for _ in 0..a.hogs {
        hogs.spawn(0, None)?;
    }
    std::thread::sleep(Duration::from_secs_f64(a.warmup));
    let mut cmd = Command::new(&a.command[0]);
    cmd.args(&a.command[1..]).stdin(Stdio::null());
    // a probe killed by hand must not leave cyclictest behind
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    let out = cmd.output().with_context(|| format!("starting {}", a.command[0]));
    drop(hogs);
    let out = out?;
    // warnings (stderr) first, as cyclictest prints them before it starts
    let text = format!("{}{}", String::from_utf8_lossy(&out.stderr), String::from_utf8_lossy(&out.stdout));
    let (kept, dropped) = without_empty_rows(&text);
    println!("$ {}", a.command.join(" "));
    print!("{kept}");
    if !out.status.success() {
        bail!("{} failed ({})", a.command[0], out.status);
    }
    let l = cyclictest_latencies(&text).map_err(|e| anyhow!(e))?;
    println!(
        "wakelat: p99 {:.0} us{}, avg {:.0} us, max {:.0} us; {} wakeups of {} threads beside {} hogs, {} beyond \
         the histogram ({dropped} all-zero histogram rows not shown)",
        l.p99_us,
        if l.p99_overflowed { " (beyond the histogram: the max)" } else { "" },
        l.avg_us,
        l.max_us,
        l.samples,
        l.threads,
        a.hogs,
        l.overflows
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parsers::parse;

    const CYCLICTEST: &str = include_str!("testdata/cyclictest-t2-h2000.txt");

    fn scale(quick: bool, duration_s: Option<u32>) -> Scale {
        Scale { nproc: 8, quick, hackbench_groups: None, hackbench_loops: None, duration_s }
    }

    #[test]
    fn suite_commands() {
        let s = suite(&scale(false, None), Path::new("/x/scx_sis"));
        assert_eq!(
            s.params[0].command.join(" "),
            "/x/scx_sis __wakelat --hogs 8 --warmup 1 -- cyclictest --policy=other -t 8 -i 1000 -D 5 -q -m -h 100000"
        );
        assert_eq!(
            (s.params[0].label.as_str(), s.direction, &s.parser),
            ("8+8", Direction::LowerIsBetter, &Parser::Cyclictest)
        );
        let q = suite(&scale(true, Some(3)), Path::new("/x/scx_sis"));
        assert_eq!(q.params[0].command[2..7].join(" "), "--hogs 8 --warmup 0.5 --");
        assert!(q.params[0].command.join(" ").contains(" -D 3 "));
        // no priority: cyclictest would make the threads SCHED_FIFO
        assert!(!cyclictest_command(2, 1).iter().any(|w| w == "-p" || w.starts_with("--priority")));
    }

    #[test]
    fn empty_rows_left_out() {
        assert!(is_empty_row("000123 000000\t000000"));
        assert!(!is_empty_row("000123 000000\t000001"));
        assert!(!is_empty_row("000123"));
        assert!(!is_empty_row("# Total: 000000000 000000000"));
        let (kept, dropped) = without_empty_rows(CYCLICTEST);
        assert!(dropped > 1000 && kept.len() < CYCLICTEST.len() / 2, "{dropped}");
        assert_eq!(kept.lines().count() + dropped, CYCLICTEST.lines().count());
        assert_eq!(cyclictest_latencies(&kept), cyclictest_latencies(CYCLICTEST));
    }

    /// The median is derived from the p99 runs' histograms, once, and only where they are.
    #[test]
    fn p50_from_the_same_runs() {
        use crate::model::RunRecord;
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("raw/wakelat")).unwrap();
        std::fs::write(dir.path().join("raw/wakelat/a.txt"), CYCLICTEST).unwrap();
        let run = |seq, ok, raw: &str| RunRecord {
            seq,
            suite: NAME.into(),
            param: "8+8".into(),
            variant: "EEVDF".into(),
            ok,
            value: ok.then_some(1380.0),
            raw: Some(raw.into()),
            ..Default::default()
        };
        let mut res = Results {
            suites: vec![suite(&scale(false, None), Path::new("/x/scx_sis"))],
            runs: vec![run(1, true, "raw/wakelat/a.txt"), run(2, false, "raw/wakelat/b.txt")],
            ..Default::default()
        };
        // no histogram readable: nothing added
        assert!(!derive_p50(&mut res.clone(), &dir.path().join("elsewhere")));
        assert!(derive_p50(&mut res, dir.path()));
        assert_eq!(res.suites.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), [NAME, P50_NAME]);
        assert_eq!(res.suites[1].parser, Parser::CyclictestP50);
        assert!(res.suites[1].metric.starts_with("median (p50) wakeup latency"), "{}", res.suites[1].metric);
        let p50: Vec<_> = res.runs.iter().filter(|r| r.suite == P50_NAME).map(|r| (r.seq, r.ok, r.value)).collect();
        assert_eq!(p50, [(1, true, Some(65.0)), (2, false, None)]);
        // once
        assert!(!derive_p50(&mut res, dir.path()));
        assert_eq!(res.runs.len(), 4);
    }

    /// pipelat's median comes from its runs' saved output too.
    #[test]
    fn pipelat_p50_from_the_same_runs() {
        use crate::model::RunRecord;
        use crate::pipelat::{suite, NAME, P50_NAME};
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "pipelat: p99 900.0 us, p50 80.5 us, mean 1 us\n").unwrap();
        let run = RunRecord {
            seq: 1,
            suite: NAME.into(),
            param: "pinned".into(),
            variant: "EEVDF".into(),
            ok: true,
            value: Some(900.0),
            raw: Some("a.txt".into()),
            ..Default::default()
        };
        let mut res = Results {
            suites: vec![suite(&Scale { nproc: 2, ..scale(false, None) }, Path::new("/x"))],
            runs: vec![run],
            ..Default::default()
        };
        assert!(derive_p50(&mut res, dir.path()));
        assert_eq!(res.suites.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), [NAME, P50_NAME]);
        assert!(res.suites[1].metric.starts_with("median (p50) round trip"), "{}", res.suites[1].metric);
        let p50: Vec<_> = res.runs.iter().filter(|r| r.suite == P50_NAME).map(|r| r.value).collect();
        assert_eq!(p50, [Some(80.5)]);
        assert!(is_derived(P50_NAME) && !is_derived(NAME));
    }

    /// The real probe, briefly, on this host (no scheduler needed): hogs, then cyclictest.
    #[test]
    fn probe_runs_cyclictest() {
        let a = ProbeArgs { hogs: 1, warmup: 0.0, command: cyclictest_command(1, 1) };
        probe(&a).unwrap();
        let bad = ProbeArgs { hogs: 1, warmup: 0.0, command: vec!["false".into()] };
        assert!(probe(&bad).unwrap_err().to_string().contains("false failed"));
        let e = probe(&ProbeArgs { warmup: -1.0, ..a }).unwrap_err();
        assert!(e.downcast_ref::<scx_sis::error::UsageError>().is_some());
        assert!(parse(&Parser::Cyclictest, "wakelat: p99 5 us\n", 1.0).is_err());
    }
}
