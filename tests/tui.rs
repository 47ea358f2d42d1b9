//! `scx_sis top` without a terminal: recorded stats replies (tests/fixtures/top-*.jsonl, written
//! by `scx_sis top --json` in the VM test `top`, one per kernel) -> model -> every view rendered
//! into ratatui's TestBackend at 80x24 and 200x60.

use ratatui::backend::TestBackend;
use ratatui::Terminal;
use serde_json::Value;

use scx_sis::knobs::Knob;
use scx_sis::overload::StealMode;
use scx_sis::stats::Metrics;
use scx_sis::tui::model::{control_key, Conn, Model, Sample, View, ROWS};
use scx_sis::tui::view;

const FIXTURES: &[&str] = &["top-7.3.jsonl", "top-6.12.jsonl"];
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

            m.view = View::Help;
            let s = screen(&m, w, h);
            assert!(s.contains("keys") && s.contains("Ctrl-C"), "{f} {w}x{h}:\n{s}");
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
    assert_eq!(m.row_value(6), Some(0.0));
    assert!(m.llc_rows().is_empty());
    screen(&m, 80, 24);
}

#[test]
fn tiny_terminal_does_not_panic() {
    let mut m = model_of(&load(FIXTURES[0]));
    for v in [View::Overview, View::Llc, View::Cpu, View::Help] {
        m.view = v;
        for (w, h) in [(1, 1), (10, 3), (40, 8)] {
            screen(&m, w, h);
        }
    }
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
