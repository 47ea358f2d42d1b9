//! Output parsers: the number each workload reports, read from its captured output.

use regex::Regex;

use super::model::Parser;

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
    let mut lines = out.lines().skip_while(|l| !(l.contains("bits/sec") || l.contains("Bytes/sec")));
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

/// Parse a workload's output with a suite's parser; `wall_s` answers WallTime.
pub fn parse(parser: &Parser, out: &str, wall_s: f64) -> Result<f64, String> {
    let (v, what) = match parser {
        Parser::Hackbench => (parse_hackbench(out), "no 'Time: X' line"),
        Parser::Tbench => (parse_tbench(out), "no 'Throughput X MB/sec' line"),
        Parser::Netperf => (parse_netperf(out), "no netperf result line"),
        Parser::Schbench => (parse_schbench(out), "no '99.0th' wakeup latency"),
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
    fn tbench_output() {
        assert_eq!(parse_tbench(TBENCH), Some(623.467));
        assert_eq!(parse_tbench("failed to connect\n"), None);
    }

    #[test]
    fn netperf_output() {
        assert_eq!(parse_netperf(NETPERF_UDP), Some(269.32));
        assert_eq!(parse_netperf(NETPERF_TCP), Some(1438.29));
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
