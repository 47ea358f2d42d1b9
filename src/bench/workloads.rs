//! Built-in suites (hackbench, tbench, netperf, schbench), custom commands, output parsers and
//! the executor that runs one workload.

use std::fs::File;
use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use regex::Regex;

use super::model::{Param, Parser, Server, Skipped, Suite};
use super::statistics::Direction;

/// Built-in suite names accepted by --suite (`netperf` means both netperf suites).
pub const BUILTIN: &[&str] = &[
    "hackbench", "tbench", "netperf", "netperf-udp", "netperf-tcp", "schbench",
    // `fairness` = every fair-* suite (fairness.rs)
    "fairness", "fair-nice1", "fair-nice8", "fair-spread", "fair-fork", "fair-sleep",
];
pub const DEFAULT_SUITES: &str = "hackbench,tbench,netperf,schbench";

/// Sizes of the built-in suites.
#[derive(Clone, Debug)]
pub struct Scale {
    pub nproc: usize,
    pub quick: bool,
    /// hackbench groups (default: powers of two up to nproc; quick: 1, 2).
    pub hackbench_groups: Option<Vec<u32>>,
    /// hackbench -l (default 100, quick 20).
    pub hackbench_loops: Option<u32>,
    /// Seconds per tbench/netperf/schbench run (default 5, 3 for netperf; quick 2, 1).
    pub duration_s: Option<u32>,
}

/// 1, 2, 4, ... up to `max` (and `max` itself if it is no power of two).
pub fn pow2_upto(max: usize) -> Vec<u32> {
    let max = max.max(1) as u32;
    let mut v = Vec::new();
    let mut g = 1u32;
    while g <= max {
        v.push(g);
        g *= 2;
    }
    if *v.last().unwrap() != max {
        v.push(max);
    }
    v
}

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

pub fn hackbench(sc: &Scale) -> Suite {
    let groups = sc.hackbench_groups.clone().unwrap_or_else(|| if sc.quick { vec![1, 2] } else { pow2_upto(sc.nproc) });
    let loops = sc.hackbench_loops.unwrap_or(if sc.quick { 20 } else { 100 });
    Suite {
        name: "hackbench".into(),
        title: "hackbench-process-pipes".into(),
        metric: format!("time (hackbench -p -l {loops}; rows: groups of 40 tasks)"),
        unit: "s".into(),
        direction: Direction::LowerIsBetter,
        parser: Parser::Hackbench,
        server: None,
        timeout_s: 300,
        params: groups
            .iter()
            .map(|g| Param {
                label: g.to_string(),
                command: s(&["hackbench", "-p", "-g", &g.to_string(), "-l", &loops.to_string()]),
            })
            .collect(),
    }
}

pub const TBENCH_PORT: u16 = 7003;
pub const NETSERVER_PORT: u16 = 12865;

pub fn tbench(sc: &Scale) -> Suite {
    let clients = if sc.quick { vec![1, 2] } else { pow2_upto(sc.nproc) };
    let t = sc.duration_s.unwrap_or(if sc.quick { 2 } else { 5 });
    Suite {
        name: "tbench".into(),
        title: "tbench4-loopback".into(),
        metric: format!("throughput (tbench -t {t}; rows: clients)"),
        unit: "MB/sec".into(),
        direction: Direction::HigherIsBetter,
        parser: Parser::Tbench,
        server: Some(Server { command: s(&["tbench_srv"]), port: TBENCH_PORT }),
        timeout_s: t as u64 + 120,
        params: clients
            .iter()
            .map(|c| Param {
                label: c.to_string(),
                command: s(&["tbench", "-t", &t.to_string(), &c.to_string(), "127.0.0.1"]),
            })
            .collect(),
    }
}

/// `proto` is "udp" or "tcp".
pub fn netperf(sc: &Scale, proto: &str) -> Suite {
    let sizes: &[u32] = if sc.quick { &[64, 1024] } else { &[64, 256, 1024, 4096, 16384] };
    let l = sc.duration_s.unwrap_or(if sc.quick { 1 } else { 3 });
    let test = if proto == "udp" { "UDP_STREAM" } else { "TCP_STREAM" };
    Suite {
        name: format!("netperf-{proto}"),
        title: format!("netperf-{proto}"),
        metric: format!("throughput (netperf -t {test} -l {l} on 127.0.0.1; rows: message size)"),
        unit: "10^6bits/sec".into(),
        direction: Direction::HigherIsBetter,
        parser: Parser::Netperf,
        server: Some(Server {
            command: s(&["netserver", "-D", "-4", "-L", "127.0.0.1", "-p", &NETSERVER_PORT.to_string()]),
            port: NETSERVER_PORT,
        }),
        timeout_s: l as u64 + 120,
        params: sizes
            .iter()
            .map(|m| Param {
                label: if proto == "udp" { format!("send-{m}") } else { m.to_string() },
                command: s(&[
                    "netperf",
                    "-4",
                    "-H",
                    "127.0.0.1",
                    "-p",
                    &NETSERVER_PORT.to_string(),
                    "-t",
                    test,
                    "-l",
                    &l.to_string(),
                    "--",
                    "-m",
                    &m.to_string(),
                    "-M",
                    &m.to_string(),
                ]),
            })
            .collect(),
    }
}

pub fn schbench(sc: &Scale) -> Suite {
    let threads: Vec<u32> = if sc.quick {
        vec![2]
    } else {
        let mut v = vec![1, (sc.nproc / 2).max(1) as u32, sc.nproc as u32];
        v.dedup();
        v
    };
    let r = sc.duration_s.unwrap_or(if sc.quick { 2 } else { 5 });
    Suite {
        name: "schbench".into(),
        title: "schbench-wakeup-latency".into(),
        metric: format!("p99 wakeup latency (schbench -m 2 -r {r}; rows: workers per message thread)"),
        unit: "usec".into(),
        direction: Direction::LowerIsBetter,
        parser: Parser::Schbench,
        server: None,
        timeout_s: r as u64 + 120,
        params: threads
            .iter()
            .map(|t| Param {
                label: t.to_string(),
                command: s(&["schbench", "-m", "2", "-t", &t.to_string(), "-r", &r.to_string()]),
            })
            .collect(),
    }
}

/// `--cmd NAME=COMMAND`: one row, run with `sh -c`.
pub fn custom(name: &str, command: &str, metric: Option<&str>, higher_is_better: bool) -> Suite {
    let (parser, metric_name, unit, direction) = match metric {
        Some(re) => (
            Parser::Regex(re.to_string()),
            format!("metric /{re}/"),
            String::new(),
            if higher_is_better { Direction::HigherIsBetter } else { Direction::LowerIsBetter },
        ),
        None => (Parser::WallTime, "wall time".to_string(), "s".to_string(), Direction::LowerIsBetter),
    };
    Suite {
        name: name.to_string(),
        title: name.to_string(),
        metric: format!("{metric_name} of `{command}`"),
        unit,
        direction,
        parser,
        server: None,
        timeout_s: 3600,
        params: vec![Param { label: name.to_string(), command: vec!["sh".into(), "-c".into(), command.into()] }],
    }
}

/// The tools a suite needs, with the Debian package that has them.
fn tools(suite: &str) -> &'static [(&'static str, &'static str)] {
    match suite {
        "hackbench" => &[("hackbench", "rt-tests")],
        "tbench" => &[("tbench", "dbench"), ("tbench_srv", "dbench")],
        "netperf-udp" | "netperf-tcp" => &[("netperf", "netperf"), ("netserver", "netperf")],
        "schbench" => &[("schbench", "schbench")],
        _ => &[],
    }
}

/// Whether a missing tool skips the suite (reported) rather than stopping the session.
pub fn optional(suite: &str) -> bool {
    matches!(suite, "netperf-udp" | "netperf-tcp" | "schbench")
}

/// `Err(message)` naming the first tool of `suite` missing from PATH.
pub fn check_tools(suite: &str) -> Result<(), String> {
    for (tool, pkg) in tools(suite) {
        if which(tool).is_none() {
            let hint = match *pkg {
                "netperf" => "netperf is in Debian's non-free component: scripts/setup.sh installs it".to_string(),
                "schbench" => "schbench is not packaged by Debian; build it from source (kernel.org schbench.git) to run this suite".to_string(),
                p => format!("install it with `apt-get install {p}`"),
            };
            return Err(format!("{tool} not found on PATH: {hint}"));
        }
    }
    Ok(())
}

/// Expand the --suite list into suites, the ones whose optional tools are missing going to
/// `skipped`. Err(message) for an unknown name or a missing mandatory tool.
pub fn resolve(list: &str, sc: &Scale, skipped: &mut Vec<Skipped>) -> Result<Vec<Suite>, String> {
    let mut out: Vec<Suite> = Vec::new();
    for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let suites = match name {
            "hackbench" => vec![hackbench(sc)],
            "tbench" => vec![tbench(sc)],
            "netperf" => vec![netperf(sc, "udp"), netperf(sc, "tcp")],
            "netperf-udp" => vec![netperf(sc, "udp")],
            "netperf-tcp" => vec![netperf(sc, "tcp")],
            "schbench" => vec![schbench(sc)],
            other => super::fairness::resolve(other, sc).ok_or_else(|| {
                format!(
                    "unknown suite '{other}' (known: {}; or use --cmd NAME=COMMAND)",
                    BUILTIN.join(", ")
                )
            })?,
        };
        for s in suites {
            if out.iter().any(|o| o.name == s.name) || skipped.iter().any(|k| k.suite == s.name) {
                continue;
            }
            match check_tools(&s.name) {
                Ok(()) => out.push(s),
                Err(msg) if optional(&s.name) => skipped.push(Skipped { suite: s.name.clone(), reason: msg }),
                Err(msg) => return Err(msg),
            }
        }
    }
    Ok(out)
}

/// Full path of `prog` on PATH (or `prog` itself if it contains a '/' and exists).
pub fn which(prog: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let is_exe = |p: &Path| p.metadata().map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0).unwrap_or(false);
    if prog.contains('/') {
        let p = PathBuf::from(prog);
        return is_exe(&p).then_some(p);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(prog)).find(|p| is_exe(p))
}

// ---- parsers --------------------------------------------------------------------------------

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

// ---- executor -------------------------------------------------------------------------------

/// What one workload execution measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Measurement {
    pub value: f64,
    pub wall_s: f64,
}

/// Runs one parameter of a suite; the real one spawns processes, tests use a fake.
pub trait Executor {
    /// `raw`: where to keep the workload's output. Err(reason) marks the run failed.
    fn run(&mut self, suite: &Suite, param: &Param, raw: &Path) -> Result<Measurement, String>;
}

/// Spawns the workload (and its server) as child processes.
pub struct ProcessExecutor {
    pub abort: Arc<AtomicBool>,
}

fn spawn_group(argv: &[String], out: &File) -> std::io::Result<Child> {
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..]).stdin(Stdio::null()).stdout(out.try_clone()?).stderr(out.try_clone()?).process_group(0);
    // Die with the harness rather than outlive it.
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    cmd.spawn()
}

fn kill_group(child: &mut Child, sig: i32) {
    unsafe {
        libc::kill(-(child.id() as i32), sig);
    }
}

/// Stop a server: SIGTERM to its group, SIGKILL after 3 s.
fn stop_group(child: &mut Child) {
    kill_group(child, libc::SIGTERM);
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(3) {
        if let Ok(Some(_)) = child.try_wait() {
            kill_group(child, libc::SIGKILL); // leftovers of the group
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    kill_group(child, libc::SIGKILL);
    let _ = child.wait();
}

fn wait_port(port: u16, server: &mut Child, timeout: Duration) -> Result<(), String> {
    let addr: SocketAddr = ([127, 0, 0, 1], port).into();
    let t0 = Instant::now();
    loop {
        if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
            return Ok(());
        }
        if let Ok(Some(st)) = server.try_wait() {
            return Err(format!("server exited ({st}) before listening on port {port}"));
        }
        if t0.elapsed() > timeout {
            return Err(format!("server not listening on 127.0.0.1:{port} after {}s", timeout.as_secs()));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn last_line(s: &str) -> String {
    s.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim().chars().take(160).collect()
}

impl Executor for ProcessExecutor {
    fn run(&mut self, suite: &Suite, param: &Param, raw: &Path) -> Result<Measurement, String> {
        if let Some(dir) = raw.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
        }
        let mut out = File::create(raw).map_err(|e| format!("creating {}: {e}", raw.display()))?;
        let _ = writeln!(out, "$ {}", param.command.join(" "));
        let mut server = None;
        if let Some(srv) = &suite.server {
            let _ = writeln!(out, "(server: {})", srv.command.join(" "));
            let mut child = spawn_group(&srv.command, &out).map_err(|e| format!("starting {}: {e}", srv.command[0]))?;
            if let Err(e) = wait_port(srv.port, &mut child, Duration::from_secs(10)) {
                stop_group(&mut child);
                return Err(format!("{}: {e}", srv.command[0]));
            }
            server = Some(child);
        }
        let result = (|| {
            let t0 = Instant::now();
            let mut child =
                spawn_group(&param.command, &out).map_err(|e| format!("starting {}: {e}", param.command[0]))?;
            let status = loop {
                if let Some(st) = child.try_wait().map_err(|e| e.to_string())? {
                    break st;
                }
                if self.abort.load(Ordering::Relaxed) {
                    kill_group(&mut child, libc::SIGKILL);
                    let _ = child.wait();
                    return Err("interrupted".to_string());
                }
                if t0.elapsed() > Duration::from_secs(suite.timeout_s) {
                    kill_group(&mut child, libc::SIGKILL);
                    let _ = child.wait();
                    return Err(format!("{} timed out after {} s: killed", param.command[0], suite.timeout_s));
                }
                std::thread::sleep(Duration::from_millis(5));
            };
            let wall_s = t0.elapsed().as_secs_f64();
            let text = std::fs::read_to_string(raw).unwrap_or_default();
            if !status.success() {
                return Err(format!("{} failed ({status}): {}", param.command[0], last_line(&text)));
            }
            let value = parse(&suite.parser, &text, wall_s)?;
            Ok(Measurement { value, wall_s })
        })();
        if let Some(mut s) = server {
            stop_group(&mut s);
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Captured from the real tools on the development host (rt-tests hackbench 2.40,
    // dbench 4.00 tbench against tbench_srv on 127.0.0.1).
    const HACKBENCH: &str = include_str!("testdata/hackbench-p-g2.txt");
    const TBENCH: &str = include_str!("testdata/tbench-2.txt");
    // netperf 2.7 output formats (netperf is not installed here): see testdata/README.
    const NETPERF_UDP: &str = include_str!("testdata/netperf-udp.txt");
    const NETPERF_TCP: &str = include_str!("testdata/netperf-tcp.txt");
    const SCHBENCH: &str = include_str!("testdata/schbench.txt");
    const SCHBENCH_OLD: &str = include_str!("testdata/schbench-old.txt");

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
        assert_eq!(parse_netperf(NETPERF_UDP), Some(214.34));
        assert_eq!(parse_netperf(NETPERF_TCP), Some(4742.36));
        assert_eq!(parse_netperf("establish control: are you sure there is a netserver listening\n"), None);
    }

    #[test]
    fn schbench_output() {
        // The last wakeup block's p99 (the final summary), not the request latency's.
        assert_eq!(parse_schbench(SCHBENCH), Some(42.0));
        assert_eq!(parse_schbench(SCHBENCH_OLD), Some(1090.0));
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

    #[test]
    fn suites_scale_with_the_machine() {
        assert_eq!(pow2_upto(8), vec![1, 2, 4, 8]);
        assert_eq!(pow2_upto(6), vec![1, 2, 4, 6]);
        assert_eq!(pow2_upto(1), vec![1]);
        let sc = Scale { nproc: 8, quick: false, hackbench_groups: None, hackbench_loops: None, duration_s: None };
        let hb = hackbench(&sc);
        assert_eq!(hb.params.iter().map(|p| p.label.as_str()).collect::<Vec<_>>(), ["1", "2", "4", "8"]);
        assert_eq!(hb.params[2].command.join(" "), "hackbench -p -g 4 -l 100");
        let q = Scale { quick: true, ..sc.clone() };
        assert_eq!(hackbench(&q).params.len(), 2);
        assert_eq!(hackbench(&q).params[1].command.join(" "), "hackbench -p -g 2 -l 20");
        let udp = netperf(&sc, "udp");
        assert_eq!(udp.params[0].label, "send-64");
        assert_eq!(udp.direction, Direction::HigherIsBetter);
        assert_eq!(
            udp.params[0].command.join(" "),
            "netperf -4 -H 127.0.0.1 -p 12865 -t UDP_STREAM -l 3 -- -m 64 -M 64"
        );
        assert_eq!(netperf(&sc, "tcp").params[0].label, "64");
        assert_eq!(tbench(&sc).params[3].command.join(" "), "tbench -t 5 8 127.0.0.1");
        let c = custom("sleep", "sleep 1", None, false);
        assert_eq!((c.parser, c.direction), (Parser::WallTime, Direction::LowerIsBetter));
        let c = custom("ops", "x", Some("ops: (\\d+)"), true);
        assert_eq!(c.direction, Direction::HigherIsBetter);
    }

    #[test]
    fn resolve_suites() {
        let sc = Scale { nproc: 4, quick: true, hackbench_groups: None, hackbench_loops: None, duration_s: None };
        let mut skipped = vec![];
        assert!(resolve("bogus", &sc, &mut skipped).unwrap_err().contains("unknown suite 'bogus'"));
        // netperf/schbench are optional: skipped with a reason when missing, never an error.
        let mut skipped = vec![];
        let got = resolve("netperf,schbench", &sc, &mut skipped).unwrap();
        for s in &got {
            assert!(which(s.params[0].command[0].as_str()).is_some());
        }
        for k in &skipped {
            assert!(k.reason.contains("not found on PATH"), "{k:?}");
        }
        assert_eq!(got.len() + skipped.len(), 3);
    }

    #[test]
    fn process_executor_runs_and_fails_clearly() {
        let dir = tempfile::tempdir().unwrap();
        let mut ex = ProcessExecutor { abort: Arc::new(AtomicBool::new(false)) };
        let suite = custom("echo", "echo 'ops: 42'", Some(r"ops: (\d+)"), true);
        let m = ex.run(&suite, &suite.params[0], &dir.path().join("r/echo.txt")).unwrap();
        assert_eq!(m.value, 42.0);
        assert!(std::fs::read_to_string(dir.path().join("r/echo.txt")).unwrap().contains("ops: 42"));
        let suite = custom("bad", "echo oops; exit 3", None, false);
        let e = ex.run(&suite, &suite.params[0], &dir.path().join("bad.txt")).unwrap_err();
        assert!(e.contains("failed") && e.contains("oops"), "{e}");
        let mut suite = custom("slow", "sleep 5", None, false);
        suite.timeout_s = 0;
        let e = ex.run(&suite, &suite.params[0], &dir.path().join("slow.txt")).unwrap_err();
        assert!(e.contains("timed out"), "{e}");
    }
}
