//! `scx_sis top` without a terminal: recorded stats replies (tests/fixtures/top-*.jsonl, written
//! by `scx_sis top --json` in the VM test `top`, one per kernel) -> model -> every view rendered
//! into ratatui's TestBackend at 80x24 and 200x60.
//!
//! The recordings ran without the group balancer. top-gb-7.3.jsonl is top-7.3.jsonl with the gb
//! fields filled in by hand as the stats server serializes them (`gb_stats_shape` checks that):
//! partitions 0-3 and 4-7 (one per LLC, the default), groups /sys/fs/cgroup/gbtest/a on 0 and b
//! on 1 as in the VM test `gb`, loads and counters varying per reply.

use std::collections::BTreeMap;

use ratatui::backend::TestBackend;
use ratatui::Terminal;
use serde_json::Value;

use scx_sis::group::{GbGroupMetrics, GbPartMetrics, GbSample};
use scx_sis::knobs::Knob;
use scx_sis::overload::StealMode;
use scx_sis::stats::{Counters, Metrics, Samples};
use scx_sis::tui::model::{control_key, Conn, Model, Sample, View, ROWS};
use scx_sis::tui::view::{self, GB_OFF};
use scx_stats::prelude::ToJson;

const FIXTURES: &[&str] = &["top-7.3.jsonl", "top-6.12.jsonl"];
const GB_FIXTURE: &str = "top-gb-7.3.jsonl";
const SIZES: &[(u16, u16)] = &[(80, 24), (200, 60)];

fn load(name: &str) -> Vec<Sample> {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let v: Vec<Sample> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert!(v.len() >= 3, "{path}: want >= 3 replies");
    v
}

fn model_of(samples: &[Sample]) -> Model {
    let mut m = Model::new("/var/run/scx/root/stats", 1.0, false);
    for s in samples {
        m.update_sample(s).unwrap();
    }
    m
}

fn screen(m: &Model, w: u16, h: u16) -> String {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| view::render(f, m)).unwrap();
    let buf = t.backend().buffer();
    let mut out = String::new();
    for y in 0..h {
        for x in 0..w {
            out.push_str(buf[(x, y)].symbol());
        }
        out.push('\n');
    }
    out
}

fn u(v: &Value, k: &str) -> u64 {
    v[k].as_u64().unwrap_or_else(|| panic!("field {k} missing"))
}

#[test]
fn stats_json_to_model() {
    for f in FIXTURES {
        let samples = load(f);
        let m = model_of(&samples);
        let last = samples.last().unwrap();
        let (st, dt) = (&last.stats, last.dt);
        assert_eq!(m.samples, samples.len() as u64);
        assert_eq!(m.conn, Conn::Connected);
        // overview values: rates from the raw counters over the reply's interval
        let row = |label: &str| m.row_value(ROWS.iter().position(|r| r.label == label).unwrap()).unwrap();
        assert!((row("scans/s") - u(st, "scans") as f64 / dt).abs() < 1e-6, "{f}");
        assert!((row("steals/s") - u(st, "steals") as f64 / dt).abs() < 1e-6, "{f}");
        assert_eq!(row("success %"), st["success_pct"].as_f64().unwrap());
        assert_eq!(row("overloaded CPUs"), u(st, "overloaded") as f64);
        assert!(u(st, "scans") > 0, "{f}: the recording was taken under load");
        // each history holds one value per reply
        assert!(m.history.iter().all(|h| h.len() == samples.len()));

        // per LLC: the LLC counters add up to the machine-wide ones in every reply. The loader
        // reads the two maps one after the other from a running scheduler, and under TCG it can
        // be preempted in between for a vCPU turn (100 ms): within 15% + 20.
        for s in &samples {
            let llcs = s.stats["llcs"].as_object().unwrap();
            for key in ["scans", "scan_success", "probes", "steals"] {
                let sum: u64 = llcs.values().map(|l| u(l, key)).sum();
                let all = u(&s.stats, key);
                assert!(sum.abs_diff(all) <= all * 15 / 100 + 20, "{f}: {key}: LLCs sum {sum} vs {all}");
            }
        }
        let llcs = st["llcs"].as_object().unwrap();
        let rows = m.llc_rows();
        assert_eq!(rows.len(), llcs.len());
        assert!(rows.len() >= 2, "{f}: the VM has 2 LLCs");
        let fw: u64 = rows.iter().map(|r| r.filter_weight).sum();
        let idle: u64 = rows.iter().map(|r| r.true_idle).sum();
        assert_eq!(fw, u(st, "filter_weight"));
        assert!(idle.abs_diff(u(st, "true_idle")) <= 2, "{f}: sampled twice, a CPU or two may move");
        for r in &rows {
            assert_eq!(r.load + r.true_idle, r.nr_cpus, "{f}: load = CPUs not idle");
        }

        // per CPU: every CPU of cpu_state in the grid once, grouped by LLC
        let nr_cpus = u(st, "nr_cpus") as usize;
        let cells: usize = m.cpu_grid().iter().map(|(_, _, c)| c.len()).sum();
        assert_eq!(cells, st["cpu_state"].as_str().unwrap().len());
        assert_eq!(cells, nr_cpus);
    }
}

#[test]
fn every_view_renders_at_both_sizes() {
    for f in FIXTURES {
        let mut m = model_of(&load(f));
        let st: Metrics = m.latest.clone().unwrap();
        for &(w, h) in SIZES {
            m.view = View::Overview;
            let s = screen(&m, w, h);
            for r in ROWS {
                assert!(s.contains(r.label), "{f} {w}x{h}: overview lacks {}:\n{s}", r.label);
            }
            let scans = m.row_value(6).unwrap();
            assert!(s.contains(&format!("{scans:.0}")) || scans >= 1e4, "{f} {w}x{h}: scans/s value:\n{s}");
            assert!(s.contains("1 overview") && s.contains("q quit"), "{f} {w}x{h}: keys at the bottom:\n{s}");
            assert!(s.contains(&format!("steal={}", st.steal_mode)), "{f} {w}x{h}: knobs:\n{s}");

            m.view = View::Llc;
            let s = screen(&m, w, h);
            for (id, l) in &st.llcs {
                let line = s
                    .lines()
                    .find(|line| line.starts_with(&format!("{id} ")))
                    .unwrap_or_else(|| panic!("{f} {w}x{h}: no row for LLC {id}:\n{s}"));
                assert!(line.contains(&l.cpus), "{f}: LLC {id} row lacks its CPUs {}: {line}", l.cpus);
                assert!(line.contains(&format!("{}/{}", l.filter_weight, l.true_idle)), "{f}: {line}");
            }

            m.view = View::Cpu;
            let s = screen(&m, w, h);
            let cells = s.lines().flat_map(|l| l.match_indices(|c| ".BOF-".contains(c))).count();
            // cells plus the 4 legend markers
            assert!(cells >= st.nr_cpus as usize + 4, "{f} {w}x{h}: {cells} state chars:\n{s}");
            for id in st.llcs.keys() {
                assert!(s.contains(&format!("LLC {id} (CPUs")), "{f} {w}x{h}:\n{s}");
            }

            // recorded without the group balancer
            m.view = View::Gb;
            let s = screen(&m, w, h);
            assert!(s.contains(GB_OFF), "{f} {w}x{h}: gb off:\n{s}");
            assert!(s.contains("| group balancer |") && s.contains("4 gb"), "{f} {w}x{h}:\n{s}");

            m.view = View::Help;
            let s = screen(&m, w, h);
            assert!(s.contains("keys") && s.contains("Ctrl-C"), "{f} {w}x{h}:\n{s}");
            assert!(s.contains("group balancer: partitions") && !s.contains("does not exist"), "{f} {w}x{h}:\n{s}");
        }
    }
}

#[test]
fn waiting_screen() {
    let mut m = Model::new("/var/run/scx/root/stats", 1.0, false);
    m.disconnected("/var/run/scx/root/stats: No such file or directory");
    m.disconnected("/var/run/scx/root/stats: No such file or directory");
    for &(w, h) in SIZES {
        let s = screen(&m, w, h);
        assert!(s.contains("no scx_sis running - retrying"), "{w}x{h}:\n{s}");
        assert!(s.contains("retrying (2)"), "{w}x{h}: attempts:\n{s}");
    }
    // a scheduler that detaches: the last numbers stay, the header says it is gone
    let mut m = model_of(&load(FIXTURES[0]));
    m.disconnected("connection closed");
    let s = screen(&m, 80, 24);
    assert!(s.contains("no scx_sis running - retrying (1)") && s.contains("scans/s"), "{s}");
    // and it comes back
    m.update_sample(&load(FIXTURES[0])[0]).unwrap();
    assert!(screen(&m, 80, 24).contains("live, every"));
}

#[test]
fn reply_of_another_version() {
    // a field it lacks reads as 0, one it has extra is ignored
    let mut st = load(FIXTURES[0])[1].stats.clone();
    st.as_object_mut().unwrap().remove("llcs");
    st.as_object_mut().unwrap().remove("scans");
    st["new_counter"] = 5.into();
    let mut m = Model::new("x", 1.0, false);
    m.update(&st, 1.0).unwrap();
    let scans = ROWS.iter().position(|r| r.label == "scans/s").unwrap();
    assert_eq!(m.row_value(scans), Some(0.0));
    assert!(m.llc_rows().is_empty());
    screen(&m, 80, 24);
}

#[test]
fn tiny_terminal_does_not_panic() {
    let mut m = model_of(&load(FIXTURES[0]));
    let mut gb = model_of(&load(GB_FIXTURE));
    for v in [View::Overview, View::Llc, View::Cpu, View::Gb, View::Help] {
        m.view = v;
        gb.view = v;
        for (w, h) in [(1, 1), (10, 3), (40, 8)] {
            screen(&m, w, h);
            screen(&gb, w, h);
        }
    }
}

/// The gb fields as the stats server sends them (`Metrics::to_json`, as its reader does), and
/// the gb fixture in exactly that shape.
#[test]
fn gb_stats_shape() {
    let a = GbGroupMetrics {
        path: "/sys/fs/cgroup/gbtest/a".into(),
        cgid: 1234,
        part: 0,
        load: 2.5,
        in_part_pct: 96.0,
        by_part_mcpu: [(0, 2400), (1, 100)].into(),
        moves: 1,
    };
    let p0 = GbPartMetrics {
        cpus: "0-3".into(),
        nr_cpus: 4,
        load: 3.25,
        group_load: 2.5,
        nr_groups: 1,
        groups: [(0, a)].into(),
    };
    let gb = GbSample { enabled: true, parts: [(0, p0)].into(), ..Default::default() };
    let zero: Counters = [0; scx_sis::bpf_intf::sis_stat_SIS_NR_STATS as usize];
    let st = Metrics::from_counters(&zero, Samples { gb, ..Default::default() }).to_json().unwrap();
    assert_eq!(st["gb_enabled"], 1);
    let want = serde_json::json!({"0": {
        "cpus": "0-3", "nr_cpus": 4, "load": 3.25, "group_load": 2.5, "nr_groups": 1,
        "groups": {"0": {
            "path": "/sys/fs/cgroup/gbtest/a", "cgid": 1234, "part": 0, "load": 2.5,
            "in_part_pct": 96.0, "by_part_mcpu": {"0": 2400, "1": 100}, "moves": 1,
        }},
    }});
    assert_eq!(st["gb_parts"], want);

    // the fixture: every gb field of a reply, and gb_parts unchanged by a parse and serialize
    let gb_keys: Vec<&String> = st.as_object().unwrap().keys().filter(|k| k.starts_with("gb_")).collect();
    assert_eq!(gb_keys.len(), 9, "{gb_keys:?}");
    for s in load(GB_FIXTURE) {
        for k in &gb_keys {
            assert!(s.stats.get(k.as_str()).is_some(), "{GB_FIXTURE}: no {k}");
        }
        let parts: BTreeMap<u32, GbPartMetrics> = serde_json::from_value(s.stats["gb_parts"].clone()).unwrap();
        assert_eq!(serde_json::to_value(&parts).unwrap(), s.stats["gb_parts"]);
    }
}

#[test]
fn gb_view() {
    let samples = load(GB_FIXTURE);
    let mut m = model_of(&samples);
    let last = samples.last().unwrap();
    let (st, dt) = (&last.stats, last.dt);
    // rates per second over the reply's interval
    let r = m.gb_rates().unwrap();
    for (v, k) in [
        (r.wake_prev, "gb_wake_prev"),
        (r.wake_part, "gb_wake_part"),
        (r.wake_elsewhere, "gb_wake_elsewhere"),
        (r.move_idle, "gb_move_idle"),
        (r.move_swap, "gb_move_swap"),
        (r.steal_pref, "gb_steal_pref"),
    ] {
        assert!((v - u(st, k) as f64 / dt).abs() < 1e-9, "{k}");
    }
    let parts = st["gb_parts"].as_object().unwrap();
    assert_eq!(parts.len(), 2);
    m.view = View::Gb;
    for &(w, h) in SIZES {
        let s = screen(&m, w, h);
        assert!(!s.contains(GB_OFF), "{w}x{h}:\n{s}");
        assert!(
            s.contains(&format!(
                "wake/s  prev {:.0}  part {:.0}  elsewhere {:.0}",
                r.wake_prev, r.wake_part, r.wake_elsewhere
            )),
            "{w}x{h}:\n{s}"
        );
        assert!(
            s.contains(&format!(
                "move/s  idle {:.1}  swap {:.1}    steal-pref/s {:.1}",
                r.move_idle, r.move_swap, r.steal_pref
            )),
            "{w}x{h}:\n{s}"
        );
        let lines: Vec<&str> = s.lines().collect();
        for (id, p) in parts {
            // the partition's row, then its groups' rows
            let i = lines
                .iter()
                .position(|l| l.split_whitespace().take(2).eq([id.as_str(), p["cpus"].as_str().unwrap()]))
                .unwrap_or_else(|| panic!("{w}x{h}: no row for partition {id}:\n{s}"));
            let cells: Vec<&str> = lines[i].split_whitespace().collect();
            let load = format!("{:.2}/{}", p["load"].as_f64().unwrap(), u(p, "nr_cpus"));
            let group_load = format!("{:.2}", p["group_load"].as_f64().unwrap());
            assert_eq!(cells[2..], [load.as_str(), group_load.as_str()], "{w}x{h}: {}", lines[i]);
            let groups = p["groups"].as_object().unwrap();
            assert_eq!(groups.len(), 1);
            for (k, g) in groups.values().enumerate() {
                let cells: Vec<&str> = lines[i + 1 + k].split_whitespace().collect();
                // load on each partition, * on the one it prefers (this one)
                let by_part: Vec<String> = parts
                    .keys()
                    .map(|q| {
                        let l = u(&g["by_part_mcpu"], q) as f64 / 1000.0;
                        format!("{l:.2}{}", if q == id { "*" } else { "" })
                    })
                    .collect();
                let mut want = vec![
                    g["path"].as_str().unwrap().to_string(),
                    format!("{:.2}", g["load"].as_f64().unwrap()),
                    format!("{:.1}", g["in_part_pct"].as_f64().unwrap()),
                    u(g, "moves").to_string(),
                ];
                want.extend(by_part);
                assert_eq!(cells, want, "{w}x{h}: group row {}", lines[i + 1 + k]);
            }
        }
    }
    // narrower: a path keeps its end
    let s = screen(&m, 64, 24);
    assert!(s.contains("…") && s.contains("gbtest/a ") && s.contains("gbtest/b "), "{s}");
}

#[test]
fn control_keys() {
    let m: Metrics = model_of(&load(FIXTURES[0])).latest.unwrap();
    let mut on = m.clone();
    on.steal_mode = "on".into();
    assert_eq!(control_key('s', &on), Some(Knob::Steal(StealMode::Off)));
    on.steal_mode = "off".into();
    assert_eq!(control_key('s', &on), Some(Knob::Steal(StealMode::On)));
    on.sis_mode = "full".into();
    assert_eq!(control_key('m', &on).unwrap().to_string(), "sis-mode=linear");
    on.sis_mode = "linear".into();
    assert_eq!(control_key('m', &on).unwrap().to_string(), "sis-mode=filter");
    on.slice_us = 3000;
    assert_eq!(control_key('+', &on), Some(Knob::SliceUs(6000)));
    on.slice_us = 150;
    assert_eq!(control_key('-', &on), Some(Knob::SliceUs(100)));
    on.oracle_every = 64;
    assert_eq!(control_key('o', &on), Some(Knob::OracleEvery(0)));
    assert_eq!(control_key('x', &on), None);
}
