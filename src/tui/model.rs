//! What `scx_sis top` shows, as plain data: stats JSON (one scx_stats reply, a delta over `dt`
//! seconds) -> `Model`. Rendering (view.rs) is a pure function of the model.

use std::collections::VecDeque;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::knobs::{Knob, KnobName};
use crate::stats::{LlcMetrics, Metrics};

/// Samples kept for the sparklines: 5 minutes at the default 1 s.
/// One LLC of the per-CPU grid: its id (None: CPUs in no LLC), cpulist, (CPU, state) cells.
pub type GridRow = (Option<u32>, String, Vec<(usize, char)>);

pub const HISTORY: usize = 300;

/// One reply as recorded by `scx_sis top --json`: the interval and the stats delta over it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Sample {
    pub dt: f64,
    pub stats: serde_json::Value,
}

/// One overview row: a label, and how to get its value from a delta over `dt` seconds.
pub struct Row {
    pub label: &'static str,
    pub value: fn(&Metrics, f64) -> f64,
    /// decimals shown
    pub prec: usize,
    /// a fixed top for the sparkline (percentages); else the history's max
    pub max: Option<f64>,
}

fn per_s(v: u64, dt: f64) -> f64 {
    if dt > 0.0 {
        v as f64 / dt
    } else {
        0.0
    }
}

pub const ROWS: &[Row] = &[
    Row { label: "wake prev/s", value: |m, dt| per_s(m.wake_prev, dt), prec: 0, max: None },
    Row { label: "wake sync/s", value: |m, dt| per_s(m.wake_sync, dt), prec: 0, max: None },
    Row { label: "wake recent/s", value: |m, dt| per_s(m.wake_recent, dt), prec: 0, max: None },
    Row { label: "wake scan/s", value: |m, dt| per_s(m.wake_scan, dt), prec: 0, max: None },
    Row { label: "fork/exec/s", value: |m, dt| per_s(m.wake_fork_exec, dt), prec: 0, max: None },
    Row { label: "wake affine/s", value: |m, dt| per_s(m.wake_affine, dt), prec: 0, max: None },
    Row { label: "wake none/s", value: |m, dt| per_s(m.wake_none, dt), prec: 0, max: None },
    Row { label: "scans/s", value: |m, dt| per_s(m.scans, dt), prec: 0, max: None },
    Row { label: "success %", value: |m, _| m.success_pct, prec: 1, max: Some(100.0) },
    Row { label: "recall %", value: |m, _| m.recall_pct, prec: 1, max: Some(100.0) },
    Row { label: "probes/scan", value: |m, _| m.probes_per_scan, prec: 2, max: None },
    Row { label: "FP %", value: |m, _| m.fp_pct, prec: 1, max: Some(100.0) },
    Row { label: "resets/s", value: |m, dt| per_s(m.resets, dt), prec: 1, max: None },
    Row { label: "fail-prone/s", value: |m, dt| per_s(m.failprone_scans, dt), prec: 1, max: None },
    Row { label: "sib rescues/s", value: |m, dt| per_s(m.sibling_rescues, dt), prec: 1, max: None },
    Row { label: "steals/s", value: |m, dt| per_s(m.steals, dt), prec: 1, max: None },
    Row { label: "overloaded CPUs", value: |m, _| m.overloaded as f64, prec: 0, max: None },
];

/// One LLC's table row, rates per second.
#[derive(Clone, Debug, PartialEq)]
pub struct LlcRow {
    pub id: u32,
    pub cpus: String,
    pub nr_cpus: u64,
    pub filter_weight: u64,
    pub true_idle: u64,
    pub fp_pct: f64,
    pub scans_s: f64,
    pub success_pct: f64,
    pub recall_pct: f64,
    pub probes_per_scan: f64,
    pub overloaded: u64,
    pub steals_s: f64,
    pub load: u64,
}

impl LlcRow {
    fn new(id: u32, l: &LlcMetrics, dt: f64) -> Self {
        LlcRow {
            id,
            cpus: l.cpus.clone(),
            nr_cpus: l.nr_cpus,
            filter_weight: l.filter_weight,
            true_idle: l.true_idle,
            fp_pct: l.fp_pct,
            scans_s: per_s(l.scans, dt),
            success_pct: l.success_pct,
            recall_pct: l.recall_pct,
            probes_per_scan: l.probes_per_scan,
            overloaded: l.overloaded,
            steals_s: per_s(l.steals, dt),
            load: l.load,
        }
    }
}

/// The group balancer's counters, per second over the last interval.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GbRates {
    pub wake_prev: f64,
    pub wake_part: f64,
    pub wake_elsewhere: f64,
    pub move_idle: f64,
    pub move_swap: f64,
    pub steal_pref: f64,
}

impl GbRates {
    fn new(m: &Metrics, dt: f64) -> Self {
        GbRates {
            wake_prev: per_s(m.gb_wake_prev, dt),
            wake_part: per_s(m.gb_wake_part, dt),
            wake_elsewhere: per_s(m.gb_wake_elsewhere, dt),
            move_idle: per_s(m.gb_move_idle, dt),
            move_swap: per_s(m.gb_move_swap, dt),
            steal_pref: per_s(m.gb_steal_pref, dt),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Conn {
    Connected,
    /// No scx_sis answers (none running, detached, restarting): `why`, attempts so far.
    Waiting {
        why: String,
        attempts: u64,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum View {
    Overview,
    Llc,
    Cpu,
    Gb,
    Help,
}

pub struct Model {
    pub source: String,
    pub interval: f64,
    pub control: bool,
    pub view: View,
    pub conn: Conn,
    /// The latest reply, parsed.
    pub latest: Option<Metrics>,
    pub dt: f64,
    pub samples: u64,
    /// Per ROWS entry, oldest first.
    pub history: Vec<VecDeque<f64>>,
    /// Result of the last control key, shown in the status line.
    pub message: Option<String>,
}

impl Model {
    pub fn new(source: &str, interval: f64, control: bool) -> Self {
        Model {
            source: source.to_string(),
            interval,
            control,
            view: View::Overview,
            conn: Conn::Waiting { why: "not connected yet".into(), attempts: 0 },
            latest: None,
            dt: 0.0,
            samples: 0,
            history: ROWS.iter().map(|_| VecDeque::with_capacity(HISTORY)).collect(),
            message: None,
        }
    }

    /// Takes one stats reply (a delta over `dt` seconds).
    pub fn update(&mut self, stats: &serde_json::Value, dt: f64) -> Result<()> {
        let m: Metrics = serde_json::from_value(stats.clone()).context("parsing the stats reply")?;
        for (row, h) in ROWS.iter().zip(self.history.iter_mut()) {
            if h.len() == HISTORY {
                h.pop_front();
            }
            h.push_back((row.value)(&m, dt));
        }
        self.latest = Some(m);
        self.dt = dt;
        self.samples += 1;
        self.conn = Conn::Connected;
        Ok(())
    }

    pub fn update_sample(&mut self, s: &Sample) -> Result<()> {
        self.update(&s.stats, s.dt)
    }

    /// No scx_sis answered: keep the history (the numbers stay on screen greyed) and say so.
    pub fn disconnected(&mut self, why: &str) {
        let attempts = match &self.conn {
            Conn::Waiting { attempts, .. } => attempts + 1,
            Conn::Connected => 1,
        };
        self.conn = Conn::Waiting { why: why.to_string(), attempts };
    }

    /// Current value of overview row `i`.
    pub fn row_value(&self, i: usize) -> Option<f64> {
        self.history.get(i)?.back().copied()
    }

    pub fn llc_rows(&self) -> Vec<LlcRow> {
        match &self.latest {
            Some(m) => m.llcs.iter().map(|(id, l)| LlcRow::new(*id, l, self.dt)).collect(),
            None => vec![],
        }
    }

    /// The group balancer's counters as rates; None before the first reply.
    pub fn gb_rates(&self) -> Option<GbRates> {
        self.latest.as_ref().map(|m| GbRates::new(m, self.dt))
    }

    /// (LLC id, cpulist, [(cpu id, state char)]) per LLC; CPUs in no LLC (offline) last.
    pub fn cpu_grid(&self) -> Vec<GridRow> {
        let Some(m) = &self.latest else { return vec![] };
        let state: Vec<char> = m.cpu_state.chars().collect();
        let mut seen = vec![false; state.len()];
        let mut out = vec![];
        for (id, l) in &m.llcs {
            let cpus: Vec<(usize, char)> = crate::topology::parse_cpulist(&l.cpus)
                .unwrap_or_default()
                .into_iter()
                .filter(|c| *c < state.len())
                .map(|c| {
                    seen[c] = true;
                    (c, state[c])
                })
                .collect();
            out.push((Some(*id), l.cpus.clone(), cpus));
        }
        let rest: Vec<(usize, char)> =
            state.iter().enumerate().filter(|(c, _)| !seen[*c]).map(|(c, s)| (c, *s)).collect();
        if !rest.is_empty() {
            out.push((None, String::new(), rest));
        }
        out
    }

    /// Knobs as shown in the header: from the stats, so a change shows once applied.
    pub fn knobs_line(&self) -> String {
        match &self.latest {
            Some(m) => format!(
                "sis-mode={} steal={} steal-scope={} oracle-every={} slice-us={}",
                m.sis_mode, m.steal_mode, m.steal_scope, m.oracle_every, m.slice_us
            ),
            None => String::new(),
        }
    }
}

fn cycle<T: clap::ValueEnum + PartialEq + Clone>(cur: &str) -> T {
    let all = T::value_variants();
    let i = all.iter().position(|v| v.name() == cur).map_or(0, |i| (i + 1) % all.len());
    all[i].clone()
}

/// The knob change a control key asks for, from the current values in `m`.
pub fn control_key(key: char, m: &Metrics) -> Option<Knob> {
    use crate::idle_filter::SisMode;
    use crate::overload::{StealMode, StealScope};
    Some(match key {
        's' => Knob::Steal(if m.steal_mode == StealMode::Off.name() { StealMode::On } else { StealMode::Off }),
        'S' => Knob::Steal(StealMode::MapOnly),
        'm' => Knob::SisMode(cycle::<SisMode>(&m.sis_mode)),
        'c' => Knob::StealScope(cycle::<StealScope>(&m.steal_scope)),
        'o' => Knob::OracleEvery(match m.oracle_every {
            0 => 1,
            n if n >= 64 => 0,
            n => (n * 4).min(64) as u32,
        }),
        '+' => Knob::SliceUs((m.slice_us * 2).min(100_000)),
        '-' => Knob::SliceUs((m.slice_us / 2).max(100)),
        _ => return None,
    })
}
