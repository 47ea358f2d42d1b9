//! Output parsers: the number each workload reports, read from its captured output.

use regex::Regex;

use super::model::Parser;

/// The line the workload probes (fairness.rs, gbbench.rs) end with and their suites' regex
/// parser reads.
pub const METRIC_RE: &str = r"^metric: ([-+0-9.eE]+)$";

/// The line a workload that measures a window of its own (fairness.rs) prints the system's
/// counters over that window on, as JSON (`SystemDelta`).
pub const WINDOW_SYSTEM: &str = "window system: ";

/// The last `WINDOW_SYSTEM` line's counters.
pub fn window_system(out: &str) -> Option<super::model::SystemDelta> {
    out.lines().filter_map(|l| l.strip_prefix(WINDOW_SYSTEM)).filter_map(|j| serde_json::from_str(j).ok()).next_back()
}

fn num(tok: &str) -> Option<f64> {
    tok.trim().parse::<f64>().ok().filter(|v| v.is_finite())
}

/// hackbench: `Time: 0.185` (last one if several).
pub fn parse_hackbench(out: &str) -> Option<f64> {
    out.lines().filter_map(|l| l.trim().strip_prefix("Time:")).filter_map(num).next_back()
}

/// tbench: `Throughput 623.467 MB/sec  2 clients  2 procs  max_latency=8.406 ms`.
pub fn parse_tbench(out: &str) -> Option<f64> {
    out.lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            (it.next() == Some("Throughput")).then(|| it.next().and_then(num)).flatten()
        })
        .next_back()
}

/// netperf *_STREAM (classic output): the throughput is the last column of the first numeric
/// line after the units header (`... 10^6bits/sec`); for UDP_STREAM that is the sender's line.
pub fn parse_netperf(out: &str) -> Option<f64> {
    // the units line: *_STREAM's "10^6bits/sec" (or Bytes/sec), *_RR's "per sec"
    let mut lines =
        out.lines().skip_while(|l| !(l.contains("bits/sec") || l.contains("Bytes/sec") || l.contains("per sec")));
    lines.next()?;
    for l in lines {
        let toks: Vec<&str> = l.split_whitespace().collect();
        if toks.len() >= 3 && toks.iter().all(|t| num(t).is_some()) {
            return num(toks[toks.len() - 1]);
        }
    }
    None
}

/// schbench: the `* 99.0th: N` line of the last `Wakeup Latencies percentiles` block
/// (older versions print `*99.0000th: N` under `Latency percentiles (usec)`).
pub fn parse_schbench(out: &str) -> Option<f64> {
    let mut in_wakeup = false;
    let mut last = None;
    for l in out.lines() {
        let t = l.trim();
        if t.starts_with("Wakeup Latencies") || t.starts_with("Latency percentiles") {
            in_wakeup = true;
            continue;
        }
        if t.contains("Latencies") || t.starts_with("RPS") || t.starts_with("Request") {
            in_wakeup = false;
            continue;
        }
        if in_wakeup {
            let t = t.trim_start_matches('*').trim_start();
            if let Some(rest) = t.strip_prefix("99.0th:").or_else(|| t.strip_prefix("99.0000th:")) {
                if let Some(v) = rest.split_whitespace().next().and_then(num) {
                    last = Some(v);
                }
            }
        }
    }
    last
}

/// What a cyclictest histogram (`-h US`: one row per microsecond, one column per thread) says
/// about wakeup latency, all threads together, in microseconds.
#[derive(Clone, Debug, PartialEq)]
pub struct WakeLatencies {
    pub threads: usize,
    /// Wakeups measured, the ones beyond the histogram included.
    pub samples: u64,
    /// Wakeups at or beyond the histogram's last row.
    pub overflows: u64,
    /// The median: half the wakeups came this soon or sooner (within the rows: p99 is).
    pub p50_us: f64,
    pub p99_us: f64,
    /// p99 lies beyond the histogram: `p99_us` is then the max, an upper bound.
    pub p99_overflowed: bool,
    pub avg_us: f64,
    pub max_us: f64,
}

/// Per-thread numbers of a `# NAME: N N ...` summary line of cyclictest, if `line` is one.
fn cyclictest_summary(line: &str, name: &str) -> Option<Result<Vec<u64>, String>> {
    let rest = line.strip_prefix("# ")?.strip_prefix(name)?.strip_prefix(':')?;
    let vals: Option<Vec<u64>> = rest.split_whitespace().map(|t| t.parse().ok()).collect();
    Some(vals.filter(|v| !v.is_empty()).ok_or_else(|| format!("bad '# {name}:' line: {line:?}")))
}

/// cyclictest `-q -h US` output: the rows after `# Histogram` (`BUCKET COUNT...`; all-zero rows
/// may be left out), then `# Total:` (counts in the rows), `# Avg Latencies:`, `# Max
/// Latencies:` and `# Histogram Overflows:`, one number per thread. p99 is the nearest rank over
/// all samples, overflows included: when it falls beyond the rows, it is reported as the max.
pub fn cyclictest_latencies(out: &str) -> Result<WakeLatencies, String> {
    let (mut rows, mut in_rows) = (Vec::<(u64, Vec<u64>)>::new(), false);
    let (mut total, mut avg, mut max, mut over) = (None, None, None, None);
    for line in out.lines().map(str::trim) {
        // cyclictest turns SCHED_OTHER into SCHED_FIFO when given a priority (even -p 0 after
        // --policy=other): that would measure the RT class, not the scheduler under test
        if line.contains("defaulting realtime priority") || line.contains("setting policy to SCHED_FIFO") {
            return Err(format!("cyclictest ran its threads real-time ({line:?}): not a fair-class wakeup"));
        }
        if line == "# Histogram" {
            (rows, in_rows) = (vec![], true);
            continue;
        }
        for (name, slot) in [
            ("Total", &mut total),
            ("Avg Latencies", &mut avg),
            ("Max Latencies", &mut max),
            ("Histogram Overflows", &mut over),
        ] {
            if let Some(v) = cyclictest_summary(line, name) {
                *slot = Some(v?);
                in_rows = false;
            }
        }
        if in_rows && !line.starts_with('#') {
            let nums: Option<Vec<u64>> = line.split_whitespace().map(|t| t.parse().ok()).collect();
            match nums {
                Some(v) if v.len() >= 2 => rows.push((v[0], v[1..].to_vec())),
                _ => return Err(format!("bad histogram row {line:?}")),
            }
        }
    }
    let total = total.ok_or("no '# Total:' line (no histogram: was cyclictest run with -h, to the end?)")?;
    let (avg, max, over) = match (avg, max, over) {
        (Some(a), Some(m), Some(o)) => (a, m, o),
        _ => return Err("no '# Avg Latencies:', '# Max Latencies:' or '# Histogram Overflows:' line".into()),
    };
    let threads = total.len();
    if [avg.len(), max.len(), over.len()].iter().any(|&n| n != threads) {
        return Err(format!("the summary lines disagree on the number of threads ({threads} in '# Total:')"));
    }
    let mut sums = vec![0u64; threads];
    for (i, (bucket, counts)) in rows.iter().enumerate() {
        if counts.len() != threads {
            return Err(format!("histogram row {bucket} has {} columns for {threads} threads", counts.len()));
        }
        if i > 0 && rows[i - 1].0 >= *bucket {
            return Err(format!("histogram rows out of order at {bucket}"));
        }
        sums.iter_mut().zip(counts).for_each(|(s, c)| *s += c);
    }
    if sums != total {
        return Err(format!("histogram rows add up to {sums:?}, '# Total:' says {total:?} (output cut short?)"));
    }
    let per_thread: Vec<u64> = total.iter().zip(&over).map(|(t, o)| t + o).collect();
    let samples: u64 = per_thread.iter().sum();
    if samples == 0 {
        return Err("cyclictest measured no wakeup".into());
    }
    let max_us = *max.iter().max().unwrap() as f64;
    // nearest rank: the smallest latency with at least pct% of the samples at or below it
    let in_rows = |pct: u64| {
        let rank = (samples * pct).div_ceil(100);
        let mut seen = 0;
        rows.iter().find_map(|(bucket, counts)| {
            seen += counts.iter().sum::<u64>();
            (seen >= rank).then_some(*bucket as f64)
        })
    };
    let p99_in_rows = in_rows(99);
    let weighted: u64 = avg.iter().zip(&per_thread).map(|(a, n)| a * n).sum();
    Ok(WakeLatencies {
        threads,
        samples,
        overflows: over.iter().sum(),
        p50_us: in_rows(50).unwrap_or(max_us),
        p99_us: p99_in_rows.unwrap_or(max_us),
        p99_overflowed: p99_in_rows.is_none(),
        avg_us: weighted as f64 / samples as f64,
        max_us,
    })
}

/// First capture group of `re` (or its whole match) in the last line that matches, as a number.
pub fn parse_regex(re: &Regex, out: &str) -> Option<f64> {
    out.lines()
        .filter_map(|l| {
            let c = re.captures(l)?;
            let m = c.get(1).or_else(|| c.get(0))?;
            num(m.as_str())
        })
        .next_back()
}

/// The units of work a run did, read from its output: hackbench messages (groups x senders x
/// receivers x loops, from its header lines), tbench operations (the sum of its operation table),
/// netperf *_RR transactions (rate x elapsed). None for other workloads.
pub fn work_done(parser: &Parser, out: &str, value: f64) -> Option<f64> {
    match parser {
        Parser::Hackbench => hackbench_messages(out),
        Parser::Tbench => tbench_operations(out),
        Parser::Netperf => netperf_rr_transactions(out, value),
        _ => None,
    }
}

/// `Running in process mode with 2 groups using 40 file descriptors each (== 80 tasks)` and
/// `Each sender will pass 200 messages of 100 bytes`: every sender passes that many to each
/// receiver of its group (half the descriptors are senders, half receivers).
fn hackbench_messages(out: &str) -> Option<f64> {
    let words_after = |key: &str| -> Option<Vec<f64>> {
        let l = out.lines().find(|l| l.contains(key))?;
        Some(l.split_whitespace().filter_map(num).collect())
    };
    let head = words_after("groups using")?;
    let (groups, fds) = (*head.first()?, *head.get(1)?);
    let loops = *words_after("Each sender will pass")?.first()?;
    let half = (fds / 2.0).floor();
    Some(groups * half * half * loops)
}

/// The `Count` column of tbench's operation table, summed.
fn tbench_operations(out: &str) -> Option<f64> {
    let mut lines = out.lines().skip_while(|l| !l.trim_start().starts_with("Operation"));
    lines.next()?;
    let mut sum = None;
    for l in lines.skip_while(|l| l.trim_start().starts_with("---")) {
        let toks: Vec<&str> = l.split_whitespace().collect();
        match toks.get(1).and_then(|t| num(t)) {
            Some(c) if toks.len() >= 4 => sum = Some(sum.unwrap_or(0.0) + c),
            _ => break,
        }
    }
    sum
}

/// netperf *_RR: transactions = the rate (`value`) x the elapsed seconds of the result line.
fn netperf_rr_transactions(out: &str, value: f64) -> Option<f64> {
    let mut lines = out.lines().skip_while(|l| !l.contains("per sec"));
    lines.next()?;
    lines
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|t| t.len() >= 3 && t.iter().all(|x| num(x).is_some()))
        .and_then(|t| num(t[t.len() - 2]))
        .map(|elapsed| value * elapsed)
}

/// Parse a workload's output with a suite's parser; `wall_s` answers WallTime.
pub fn parse(parser: &Parser, out: &str, wall_s: f64) -> Result<f64, String> {
    let (v, what) = match parser {
        Parser::Hackbench => (parse_hackbench(out), "no 'Time: X' line"),
        Parser::Tbench => (parse_tbench(out), "no 'Throughput X MB/sec' line"),
        Parser::Netperf => (parse_netperf(out), "no netperf result line"),
        Parser::Schbench => (parse_schbench(out), "no '99.0th' wakeup latency"),
        Parser::Cyclictest | Parser::CyclictestP50 => match cyclictest_latencies(out) {
            Ok(l) => (Some(if *parser == Parser::Cyclictest { l.p99_us } else { l.p50_us }), ""),
            Err(e) => return Err(format!("cannot read the result: {e}")),
        },
        Parser::Regex(re) => {
            let re = Regex::new(re).map_err(|e| format!("bad --metric regex: {e}"))?;
            (parse_regex(&re, out), "no line matches the --metric regex")
        }
        Parser::WallTime => (Some(wall_s), ""),
    };
    v.ok_or_else(|| format!("cannot read the result: {what}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    // Captured from the real tools on the development host (rt-tests hackbench 2.40,
    // dbench 4.00 tbench against tbench_srv on 127.0.0.1).
    const HACKBENCH: &str = include_str!("testdata/hackbench-p-g2.txt");
    const TBENCH: &str = include_str!("testdata/tbench-2.txt");
    // netperf 2.7.0 (Debian non-free) against netserver on 127.0.0.1, the bench's own commands.
    const NETPERF_UDP: &str = include_str!("testdata/netperf-udp.txt");
    const NETPERF_TCP: &str = include_str!("testdata/netperf-tcp.txt");
    const SCHBENCH: &str = include_str!("testdata/schbench.txt");
    const SCHBENCH_OLD: &str = include_str!("testdata/schbench-old.txt");
    const SCHBENCH_INTERVALS: &str = include_str!("testdata/schbench-intervals.txt");

    #[test]
    fn hackbench_output() {
        assert_eq!(parse_hackbench(HACKBENCH), Some(0.185));
        assert_eq!(parse_hackbench("Time: 1.5\nTime: 2.25\n"), Some(2.25));
        assert_eq!(parse_hackbench("Running in process mode\n"), None);
        assert_eq!(parse(&Parser::Hackbench, HACKBENCH, 9.0), Ok(0.185));
        assert!(parse(&Parser::Hackbench, "", 9.0).unwrap_err().contains("Time"));
    }

    #[test]
    fn window_counters_line() {
        let out = "hog pid=1\nwindow system: {\"ctxt\":10,\"idle_pct\":2.5,\"migrations\":7}\nmetric: 1.0\n";
        let d = window_system(out).unwrap();
        assert_eq!((d.ctxt, d.migrations, d.run_delay_ns), (10, Some(7), None));
        assert_eq!(window_system("window system: {not json\nmetric: 1.0\n"), None);
        assert_eq!(window_system("metric: 1.0\n"), None);
    }

    #[test]
    fn work_done_per_workload() {
        // 2 groups x 20 senders x 20 receivers x 200 messages
        assert_eq!(work_done(&Parser::Hackbench, HACKBENCH, 0.185), Some(160_000.0));
        let tb = work_done(&Parser::Tbench, TBENCH, 623.467).unwrap();
        assert_eq!(tb, 343_849.0);
        let rr = include_str!("testdata/netperf-tcp-rr.txt");
        assert_eq!(work_done(&Parser::Netperf, rr, 31837.91), Some(31837.91));
        assert_eq!(work_done(&Parser::Netperf, include_str!("testdata/netperf-tcp.txt"), 1.0), None);
        assert_eq!(work_done(&Parser::Hackbench, "Time: 1.0\n", 1.0), None);
        assert_eq!(work_done(&Parser::WallTime, "", 1.0), None);
    }

    #[test]
    fn tbench_output() {
        assert_eq!(parse_tbench(TBENCH), Some(623.467));
        assert_eq!(parse_tbench("failed to connect\n"), None);
    }

    #[test]
    fn netperf_output() {
        assert_eq!(parse_netperf(NETPERF_UDP), Some(269.32));
        assert_eq!(parse_netperf(NETPERF_TCP), Some(1438.29));
        assert_eq!(parse_netperf(include_str!("testdata/netperf-tcp-rr.txt")), Some(31837.91));
        assert_eq!(parse_netperf(include_str!("testdata/netperf-udp-rr.txt")), Some(32799.65));
        assert_eq!(parse_netperf("establish control: are you sure there is a netserver listening\n"), None);
    }

    #[test]
    fn schbench_output() {
        // The last wakeup block's p99 (the final summary), not the request latency's.
        assert_eq!(parse_schbench(SCHBENCH), Some(37440.0));
        // interval blocks first (54720 in the first), the final summary last
        assert_eq!(parse_schbench(SCHBENCH_INTERVALS), Some(53312.0));
        assert_eq!(parse_schbench(SCHBENCH_OLD), Some(74112.0));
        assert_eq!(parse_schbench("setting worker threads to 8\n"), None);
    }

    // cyclictest 2.40 (rt-tests), SCHED_OTHER threads beside 2 CPU hogs on the 2-CPU dev host:
    // p99 inside the histogram, and (a 100 us histogram) beyond it.
    const CYCLICTEST: &str = include_str!("testdata/cyclictest-t2-h2000.txt");
    const CYCLICTEST_OVER: &str = include_str!("testdata/cyclictest-t2-h100.txt");

    #[test]
    fn cyclictest_histogram() {
        let l = cyclictest_latencies(CYCLICTEST).unwrap();
        // 2825 + 2829 in the rows, 18 + 24 beyond: rank ceil(0.99 * 5696) = 5640 is reached
        // exactly at 1380 us (5637 below it); without the overflows it would be lower
        assert_eq!((l.threads, l.samples, l.overflows), (2, 5696, 42));
        assert_eq!((l.p99_us, l.p99_overflowed, l.max_us), (1380.0, false, 32154.0));
        // per-thread averages 136 and 130 weighted by 2843 and 2853 samples
        assert!((l.avg_us - 132.9947).abs() < 1e-3, "{}", l.avg_us);
        assert_eq!(parse(&Parser::Cyclictest, CYCLICTEST, 9.0), Ok(1380.0));
        // the median: rank 2848 is reached at 65 us (2370 below it)
        assert_eq!(l.p50_us, 65.0);
        assert_eq!(parse(&Parser::CyclictestP50, CYCLICTEST, 9.0), Ok(65.0));

        // 263 of 5798 beyond 100 us: p99 is out of the rows, reported as the max
        let o = cyclictest_latencies(CYCLICTEST_OVER).unwrap();
        assert_eq!((o.samples, o.overflows), (5798, 263));
        assert_eq!((o.p99_us, o.p99_overflowed), (105878.0, true));
    }

    #[test]
    fn cyclictest_bad_output() {
        let err = |out: &str| cyclictest_latencies(out).unwrap_err();
        assert!(err("").contains("no '# Total:'"));
        assert!(err("Usage:\ncyclictest <options>\n").contains("no '# Total:'"));
        assert!(parse(&Parser::Cyclictest, "garbage\n", 1.0).unwrap_err().starts_with("cannot read the result"));
        // cut short in the middle of the rows
        assert!(err(&CYCLICTEST[..CYCLICTEST.len() / 2]).contains("no '# Total:'"));
        // a row lost
        let lost = CYCLICTEST.replacen("000080 000018\t000050\n", "", 1);
        assert_ne!(lost, CYCLICTEST);
        assert!(err(&lost).contains("add up to"), "{}", err(&lost));
        assert!(err(&CYCLICTEST.replacen("000080 000018\t", "000080 x\t", 1)).contains("bad histogram row"));
        assert!(err(&CYCLICTEST.replacen("# Max Latencies: 32154", "# Max Latencies: ?", 1)).contains("bad"));
        assert!(
            err(&CYCLICTEST.replacen("# Max Latencies: 32154 31847", "# Max Latencies: 32154", 1)).contains("disagree")
        );
        // -p after --policy=other: cyclictest measured SCHED_FIFO threads
        assert!(err(&format!("defaulting realtime priority to 3\n{CYCLICTEST}")).contains("real-time"));
        let none = "# Histogram\n000000 000000\n# Total: 000000000\n# Avg Latencies: 00000\n\
                    # Max Latencies: 00000\n# Histogram Overflows: 00000\n";
        assert!(err(none).contains("no wakeup"));
    }

    #[test]
    fn regex_and_wall_time() {
        let re = Regex::new(r"ops/s: ([0-9.]+)").unwrap();
        assert_eq!(parse_regex(&re, "x\nops/s: 12.5\nops/s: 13.5\n"), Some(13.5));
        let re = Regex::new(r"[0-9]+\.[0-9]+").unwrap();
        assert_eq!(parse_regex(&re, "took 3.25 s"), Some(3.25));
        assert_eq!(parse(&Parser::WallTime, "", 1.5), Ok(1.5));
        assert!(parse(&Parser::Regex("(".into()), "", 1.5).unwrap_err().contains("bad --metric"));
        assert!(parse(&Parser::Regex("zz([0-9]+)".into()), "x", 1.5).is_err());
    }
}
