//! The suite catalogue: the built-in suites (hackbench, tbench, netperf, schbench, and wakelat
//! in wakelat.rs) sized to the machine, custom `--cmd` suites, and the expansion of a --suite
//! list.
//!
//! The tools the suites need are in `tools`, the output parsers in `parsers`, the process
//! executor in `executor`, `Scale` in `model`; their items are re-exported here under their old
//! paths.

use super::model::{Param, Parser, Server, Skipped, Suite};
use super::statistics::Direction;

pub use super::executor::{Executor, Measurement, ProcessExecutor};
pub use super::model::Scale;
pub use super::parsers::{parse, parse_hackbench, parse_netperf, parse_regex, parse_schbench, parse_tbench};
pub use super::tools::{check_tools, optional, which};

/// Built-in suite names accepted by --suite (`netperf` means both netperf suites).
pub const BUILTIN: &[&str] = &[
    "hackbench",
    // hackbench over sockets (no -p)
    "hackbench-socket",
    "tbench",
    "netperf",
    "netperf-udp",
    "netperf-tcp",
    // request/response round trips: TCP_RR and UDP_RR
    "netperf-rr",
    "schbench",
    // schbench's stand-in: cyclictest wakeup p99 beside one hog per CPU (wakelat.rs)
    "wakelat",
    // a pipe round trip (two sync wakeups) beside one hog per CPU (pipelat.rs)
    "pipelat",
    // a pipe ping-pong between two processes and between two threads (perf bench sched pipe)
    "pipe",
    // `fairness` = every fair-* suite (fairness.rs)
    "fairness",
    "fair-nice1",
    "fair-nice8",
    "fair-spread",
    "fair-odd",
    "fair-fork",
    "fair-sleep",
    // `cgroups` = every cg-* suite (fairness.rs): cgroup cpu.weight
    "cgroups",
    "cg-weight",
    "cg-threads",
    "cg-nested",
    "cg-wide",
    "cg-deep",
    // not in `cgroups`: fills a running scx_sis's cgroup map (fairness.rs)
    "cg-full",
    // group balancer: sysbench memory, one cgroup per LLC (gbbench.rs)
    "gb-sysbench",
    // cg-wide with the cgroups as groups of the balancer's bench parent (fairness.rs)
    "gb-wide",
];
/// wakelat is one row (about 7 s a run): cheap, and on Debian, where schbench is skipped, the
/// only wakeup latency measured.
pub const DEFAULT_SUITES: &str = "hackbench,tbench,netperf,schbench,wakelat";

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
    hackbench_over(sc, true)
}

/// hackbench over pipes (`-p`) or Unix sockets (its default).
pub fn hackbench_over(sc: &Scale, pipes: bool) -> Suite {
    let groups = sc.hackbench_groups.clone().unwrap_or_else(|| if sc.quick { vec![1, 2] } else { pow2_upto(sc.nproc) });
    let loops = sc.hackbench_loops.unwrap_or(if sc.quick { 20 } else { 100 });
    let (name, title, flag) = if pipes {
        ("hackbench", "hackbench-process-pipes", "-p ")
    } else {
        ("hackbench-socket", "hackbench-process-sockets", "")
    };
    Suite {
        name: name.into(),
        title: title.into(),
        metric: format!("time (hackbench {flag}-l {loops}; rows: groups of 40 tasks)"),
        unit: "s".into(),
        direction: Direction::LowerIsBetter,
        ideal: None,
        parser: Parser::Hackbench,
        server: None,
        timeout_s: 300,
        params: groups
            .iter()
            .map(|g| {
                let mut command = s(&["hackbench", "-g", &g.to_string(), "-l", &loops.to_string()]);
                if pipes {
                    command.insert(1, "-p".into());
                }
                Param { label: g.to_string(), command }
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
        ideal: None,
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

/// netperf against the bench's netserver on 127.0.0.1: test `test` for `l` seconds, then the
/// test's own options.
fn netperf_cmd(test: &str, l: u32, test_opts: &[&str]) -> Vec<String> {
    let port = NETSERVER_PORT.to_string();
    let l = l.to_string();
    let mut v = s(&["netperf", "-4", "-H", "127.0.0.1", "-p", &port, "-t", test, "-l", &l, "--"]);
    v.extend(test_opts.iter().map(|o| o.to_string()));
    v
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
        ideal: None,
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
                command: netperf_cmd(test, l, &["-m", &m.to_string(), "-M", &m.to_string()]),
            })
            .collect(),
    }
}

/// Request/response round trips of one byte, TCP_RR and UDP_RR: a wakeup each way per
/// transaction, so the rate is the scheduler's wakeup path more than the network stack.
pub fn netperf_rr(sc: &Scale) -> Suite {
    let l = sc.duration_s.unwrap_or(if sc.quick { 1 } else { 3 });
    Suite {
        name: "netperf-rr".into(),
        title: "netperf-rr".into(),
        metric: format!("transactions (netperf -t TCP_RR/UDP_RR -l {l} -- -r 1,1 on 127.0.0.1; rows: protocol)"),
        unit: "trans/sec".into(),
        direction: Direction::HigherIsBetter,
        ideal: None,
        parser: Parser::Netperf,
        server: Some(Server {
            command: s(&["netserver", "-D", "-4", "-L", "127.0.0.1", "-p", &NETSERVER_PORT.to_string()]),
            port: NETSERVER_PORT,
        }),
        timeout_s: l as u64 + 120,
        params: ["TCP_RR", "UDP_RR"]
            .iter()
            .map(|t| Param { label: t.to_lowercase().replace("_rr", ""), command: netperf_cmd(t, l, &["-r", "1,1"]) })
            .collect(),
    }
}

/// perf bench sched pipe: one task wakes the other through a pipe and blocks, a wakeup each
/// way per round trip. Rows: the pair as two processes, and as two threads of one (`-T`). The
/// two differ in whether a switch between them changes the address space; under TCG that
/// flushes the whole soft TLB (QEMU, every CR3 write), which on hardware keeps kernel entries.
pub fn pipe(sc: &Scale) -> Suite {
    let loops = if sc.quick { 2000 } else { 10000 }.to_string();
    Suite {
        name: "pipe".into(),
        title: "perf-bench-sched-pipe".into(),
        metric: format!("time per round trip (perf bench sched pipe -l {loops}; rows: processes, threads)"),
        unit: "usecs/op".into(),
        direction: Direction::LowerIsBetter,
        ideal: None,
        parser: Parser::Regex(r"([0-9.]+) usecs/op".into()),
        server: None,
        timeout_s: 300,
        params: [("processes", None), ("threads", Some("-T"))]
            .iter()
            .map(|(label, flag)| {
                let mut command = s(&["perf", "bench", "sched", "pipe", "-l", &loops]);
                command.extend(flag.map(String::from));
                Param { label: label.to_string(), command }
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
        ideal: None,
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
        ideal: None,
        parser,
        server: None,
        timeout_s: 3600,
        params: vec![Param { label: name.to_string(), command: vec!["sh".into(), "-c".into(), command.into()] }],
    }
}

/// Expand the --suite list into suites, the ones whose optional tools are missing going to
/// `skipped`. Err(message) for an unknown name or a missing mandatory tool.
pub fn resolve(list: &str, sc: &Scale, skipped: &mut Vec<Skipped>) -> Result<Vec<Suite>, String> {
    let mut out: Vec<Suite> = Vec::new();
    for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let suites = match name {
            "hackbench" => vec![hackbench(sc)],
            "hackbench-socket" => vec![hackbench_over(sc, false)],
            "netperf-rr" => vec![netperf_rr(sc)],
            "tbench" => vec![tbench(sc)],
            "netperf" => vec![netperf(sc, "udp"), netperf(sc, "tcp")],
            "netperf-udp" => vec![netperf(sc, "udp")],
            "netperf-tcp" => vec![netperf(sc, "tcp")],
            "schbench" => vec![schbench(sc)],
            "pipe" => vec![pipe(sc)],
            super::gbbench::NAME => vec![super::gbbench::suite(sc)],
            super::wakelat::NAME => {
                let exe = std::env::current_exe().unwrap_or_else(|_| "scx_sis".into());
                vec![super::wakelat::suite(sc, &exe)]
            }
            super::pipelat::NAME => {
                let exe = std::env::current_exe().unwrap_or_else(|_| "scx_sis".into());
                vec![super::pipelat::suite(sc, &exe)]
            }
            other => super::fairness::resolve(other, sc).ok_or_else(|| {
                format!("unknown suite '{other}' (known: {}; or use --cmd NAME=COMMAND)", BUILTIN.join(", "))
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

#[cfg(test)]
mod tests {
    use super::*;

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
        let hs = hackbench_over(&q, false);
        assert_eq!(
            (hs.name.as_str(), hs.params[1].command.join(" ")),
            ("hackbench-socket", "hackbench -g 2 -l 20".into())
        );
        let rr = netperf_rr(&q);
        assert_eq!(rr.params.iter().map(|p| p.label.as_str()).collect::<Vec<_>>(), ["tcp", "udp"]);
        assert_eq!(rr.params[1].command.join(" "), "netperf -4 -H 127.0.0.1 -p 12865 -t UDP_RR -l 1 -- -r 1,1");
        let udp = netperf(&sc, "udp");
        assert_eq!(udp.params[0].label, "send-64");
        assert_eq!(udp.direction, Direction::HigherIsBetter);
        assert_eq!(
            udp.params[0].command.join(" "),
            "netperf -4 -H 127.0.0.1 -p 12865 -t UDP_STREAM -l 3 -- -m 64 -M 64"
        );
        assert_eq!(netperf(&sc, "tcp").params[0].label, "64");
        assert_eq!(tbench(&sc).params[3].command.join(" "), "tbench -t 5 8 127.0.0.1");
        let pp = pipe(&sc);
        assert_eq!(pp.params.iter().map(|p| p.label.as_str()).collect::<Vec<_>>(), ["processes", "threads"]);
        assert_eq!(pp.params[1].command.join(" "), "perf bench sched pipe -l 10000 -T");
        assert_eq!(pp.direction, Direction::LowerIsBetter);
        let out = "# Running 'sched/pipe' benchmark:\n# Executed 10000 pipe operations between two threads\n\n     Total time: 1.410 [sec]\n\n     141.059100 usecs/op\n           7089 ops/sec\n";
        assert_eq!(parse(&pp.parser, out, 0.0), Ok(141.0591));
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
        // wakelat runs this binary's hidden probe around cyclictest (rt-tests: mandatory)
        let w = resolve("wakelat", &sc, &mut skipped).unwrap();
        assert_eq!((w.len(), w[0].params[0].command[1].as_str()), (1, "__wakelat"));
    }

    #[test]
    fn process_executor_runs_and_fails_clearly() {
        use std::sync::atomic::AtomicBool;
        use std::sync::Arc;
        let dir = tempfile::tempdir().unwrap();
        let mut ex = ProcessExecutor { abort: Arc::new(AtomicBool::new(false)), cgroup: None };
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
        // a cgroup it cannot enter fails the run: nothing runs outside the depth asked for
        ex.cgroup = Some(dir.path().join("no-such-cgroup"));
        let suite = custom("echo", "echo 'ops: 42'", Some(r"ops: (\d+)"), true);
        let e = ex.run(&suite, &suite.params[0], &dir.path().join("cg.txt")).unwrap_err();
        assert!(e.contains("starting") && e.contains("No such file"), "{e}");
        let raw = std::fs::read_to_string(dir.path().join("cg.txt")).unwrap();
        assert!(raw.contains("(cgroup: ") && raw.contains("no-such-cgroup"), "{raw}");
    }
}
