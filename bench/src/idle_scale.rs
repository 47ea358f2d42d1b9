//! `scx_sis_bench --suite idle-scale`: the idle-CPU search at LLC sizes no VM here reaches,
//! measured on the host where the BPF really runs (JIT on), without sched_ext.
//!
//! What runs: the scheduler's own search, bpf/idle_filter.bpf.h, compiled into the host-test
//! object (bpf/sis_test.bpf.c) and called through BPF_PROG_TEST_RUN. The object is opened, sized
//! and filled the way the loader does it for a real machine (`Layout`, `set_layout_rodata!`,
//! `topology::write_maps`) for a synthetic topology of one LLC of N CPUs, SMT2, read from a
//! synthetic sysfs tree by `Topology::from_sysfs`; then every CPU starts idle and in the filter,
//! as after an attach (filter_init_cpu).
//!
//! One search: one sis_scan from a waker's CPU (`target`) over its LLC, as select_cpu calls it
//! once prev and the recent CPU are not idle: the wrap-around walk from the position after
//! target, its probes (each candidate examined: one CPU claimed or found busy, or one core
//! checked for a fully idle one), its claim of the CPU it returns, and its filter upkeep
//! (removing busy cores, resets). The oracle check a failed scan may get (sampled telemetry)
//! is not part of it.
//!
//! Steady state, per trial: a random pattern of the cell's number of idle CPUs (seeded,
//! reproducible, the same for every mode) is applied through the idle path (filter_cpu_idle /
//! filter_cpu_busy, i.e. ops.update_idle), then searches follow from random busy targets (any
//! CPU at 100% idle). A search that claims a CPU makes it busy (its update_idle(false)) and a
//! random busy CPU goes idle (a task blocks). Between searches the rest of the system moves
//! too: one random idle CPU turns busy (a wakeup that took its idle prev CPU: select_cpu's
//! claim_cpu, no scan) and one random busy CPU idles. So the idle count stays put while the
//! pattern keeps changing, and the filter sees the churn the scheduler's does: the idle path sets
//! bits, busy CPUs leave stale ones (claims that fill a core clear its bit only near
//! saturation), scans remove false positives. Without that background churn a filter's hidden idle
//! CPUs (behind a busy sibling's bit) would never change, and every search after them fail.
//! The first `warmup_per_cpu` * N searches of a trial are not counted.
//!
//! Measured per search: probes (scan_result.probes, the count the scheduler's stats keep as
//! scan_probes), whether it found a CPU, whether an idle CPU existed (recall = found / searches
//! with an idle CPU in the LLC), its path (idle-core search, fail-prone scan, plain scan), and
//! the time. Syscall programs take no BPF_PROG_TEST_RUN `repeat` (the kernel refuses it), so
//! the program reads bpf_ktime_get_ns() before and after sis_scan and twice more back to back:
//! that second interval is what the clock adds to the first, measured alongside every search;
//! its median per trial is the only thing subtracted. A sample over `DROP_NS` was preempted or
//! interrupted (no search comes near it: a linear walk of 256 CPUs takes a few µs) and is left
//! out of the mean; the count of those is reported.
//!
//! What it does not measure: contention. One thread searches, so the filter words and per-CPU
//! lines stay in its cache; the real scheduler's wakers on many CPUs share them. The claim is
//! the state of record's CAS (builtin_idle off), where the scheduler by default claims through
//! the kernel's idle mask (one atomic either way).

use std::fmt::Write as _;
use std::mem::MaybeUninit;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::{bail, Context, Result};
use clap::ValueEnum;
use libbpf_rs::skel::{OpenSkel, SkelBuilder};
use libbpf_rs::{OpenObject, ProgramInput};
use plotters::prelude::*;
use serde::{Deserialize, Serialize};

use super::cli::BenchArgs;
use super::host::host_info;
use super::model::HostInfo;
use super::statistics::{amean, stddev};
use super::{plot, usage};
use scx_sis::bpf_intf::{
    sis_stat_STAT_FILTER_CLAIM_CLEAR, sis_stat_STAT_FILTER_DROP, sis_stat_STAT_FILTER_RESET, sis_stat_STAT_FILTER_SET,
};
use scx_sis::idle_filter::SisMode;
use scx_sis::layout::Layout;
use scx_sis::maps::percpu_sum;
use scx_sis::sis_test_skel::*;
use scx_sis::test_intf::{bench_scan_args, cpu_args};
use scx_sis::topology::fixture::{write_sysfs, Shape};
use scx_sis::topology::{self, Topology};

pub const NAME: &str = "idle-scale";
pub const SIZES: [usize; 6] = [8, 16, 32, 64, 128, 256];
pub const IDLE_PCT: [u32; 5] = [0, 5, 25, 50, 100];
pub const MODES: [SisMode; 3] = [SisMode::Full, SisMode::Filter, SisMode::Linear];
const SMT: usize = 2;

/// Targets of the issue, for `full` mode.
pub const TARGET_PROBES_FOUND: f64 = 1.5;
pub const TARGET_PROBES_FAILED_BUSY: f64 = 2.0;
pub const TARGET_NS_RATIO: f64 = 1.3;
pub const TARGET_RECALL: f64 = 0.99;

/// Timed intervals above this are preemptions or interrupts, not searches.
pub const DROP_NS: u64 = 50_000;

/// Search paths, in `Cell::paths` order.
pub const PATHS: [&str; 3] = ["plain", "fail-prone", "idle-core"];

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Params {
    /// CPUs per LLC (one LLC, SMT2).
    pub sizes: Vec<usize>,
    pub idle_pct: Vec<u32>,
    /// `--sis-mode` names.
    pub modes: Vec<String>,
    /// Trials per cell, each from its own random idle pattern.
    pub trials: usize,
    /// Counted searches per trial.
    pub searches: usize,
    /// Uncounted searches per trial before them, per CPU of the LLC.
    pub warmup_per_cpu: usize,
    pub seed: u64,
}

impl Params {
    pub fn new(trials: usize, quick: bool) -> Self {
        Params {
            sizes: SIZES.to_vec(),
            idle_pct: IDLE_PCT.to_vec(),
            modes: MODES.iter().map(|m| mode_name(*m).to_string()).collect(),
            trials,
            searches: if quick { 200 } else { 1000 },
            warmup_per_cpu: 4,
            seed: 1,
        }
    }
}

pub fn mode_name(m: SisMode) -> &'static str {
    match m {
        SisMode::Full => "full",
        SisMode::Filter => "filter",
        SisMode::Linear => "linear",
    }
}

fn mode_of(name: &str) -> Result<SisMode> {
    SisMode::from_str(name, false).map_err(|e| anyhow::anyhow!("mode {name}: {e}"))
}

/// Idle CPUs of an LLC of `n` at `pct`%: rounded, but at least one above 0% (5% of 8 CPUs
/// would otherwise be the 0% cell again).
pub fn idle_cpus(n: usize, pct: u32) -> usize {
    if pct == 0 {
        return 0;
    }
    ((n * pct as usize + 50) / 100).clamp(1, n)
}

/// One cell: an LLC size, an idle fraction, a mode; counts summed over its trials.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    pub llc_cpus: usize,
    pub idle_pct: u32,
    pub idle_cpus: usize,
    pub mode: String,
    pub searches: u64,
    pub found: u64,
    pub probes_found: u64,
    pub probes_failed: u64,
    /// Searches while an idle CPU existed in the LLC.
    pub with_idle: u64,
    /// Of those, searches that found none.
    pub missed: u64,
    /// Per trial: mean ns per search, the clock's share subtracted.
    pub trial_ns: Vec<f64>,
    /// Mean over trials of the median clock share (two back-to-back reads), subtracted above.
    pub clock_ns: f64,
    /// Samples over DROP_NS, left out of trial_ns.
    pub dropped: u64,
    /// By path (PATHS): searches, found, probes.
    pub paths: Vec<PathStat>,
    /// Writes to the shared filter words over the counted searches and their churn (idle-path
    /// sets, cores cleared, resets): the cost the lazy clearing saves.
    #[serde(default)]
    pub filter_writes: u64,
    /// Of those, cores cleared by a claim outside the scan (near saturation only).
    #[serde(default)]
    pub claim_clears: u64,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PathStat {
    pub searches: u64,
    pub found: u64,
    pub probes: u64,
}

fn ratio(a: u64, b: u64) -> Option<f64> {
    (b > 0).then(|| a as f64 / b as f64)
}

impl Cell {
    pub fn failed(&self) -> u64 {
        self.searches - self.found
    }
    pub fn probes_per_search(&self) -> Option<f64> {
        ratio(self.probes_found + self.probes_failed, self.searches)
    }
    pub fn probes_per_found(&self) -> Option<f64> {
        ratio(self.probes_found, self.found)
    }
    pub fn probes_per_failed(&self) -> Option<f64> {
        ratio(self.probes_failed, self.failed())
    }
    /// Found / searches with an idle CPU; None when no search had one.
    pub fn recall(&self) -> Option<f64> {
        ratio(self.with_idle - self.missed, self.with_idle)
    }
    pub fn ns(&self) -> f64 {
        amean(&self.trial_ns)
    }
    /// Coefficient of variation of the trial means (NaN for one trial).
    pub fn ns_cv(&self) -> f64 {
        stddev(&self.trial_ns) / self.ns()
    }
}

/// Everything idle-scale.json holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub format: u32,
    pub created: String,
    pub host: HostInfo,
    pub command_line: Vec<String>,
    pub params: Params,
    pub cells: Vec<Cell>,
}

impl Report {
    pub fn cell(&self, n: usize, pct: u32, mode: &str) -> Option<&Cell> {
        self.cells.iter().find(|c| c.llc_cpus == n && c.idle_pct == pct && c.mode == mode)
    }
}

/// SplitMix64: a seeded, reproducible stream (no rand dependency for this).
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        let mut r = Rng(seed);
        r.next();
        r
    }
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// The topology of one LLC of `n` CPUs, SMT2, through the loader's sysfs parsing.
pub fn llc_topology(n: usize) -> Result<Topology> {
    // one directory per call: concurrent callers (the tests' threads) must not remove each other's
    static SEQ: AtomicUsize = AtomicUsize::new(0);
    let seq = SEQ.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("scx_sis-{NAME}-{}-{seq}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let res =
        write_sysfs(&dir, &Shape::new(n, SMT, n)).map_err(anyhow::Error::from).and_then(|_| Topology::from_sysfs(&dir));
    let _ = std::fs::remove_dir_all(&dir);
    let topo = res.with_context(|| format!("synthetic topology of {n} CPUs"))?;
    topo.check_limits().map_err(anyhow::Error::msg)?;
    Ok(topo)
}

pub(crate) fn run_prog<T: Copy>(prog: &mut libbpf_rs::ProgramMut, args: &mut T) -> Result<()> {
    // SAFETY: T is a plain-data struct from bpf/intf.h, the program's context
    let bytes = unsafe { std::slice::from_raw_parts_mut(args as *mut T as *mut u8, std::mem::size_of::<T>()) };
    let input = ProgramInput { context_in: Some(bytes), ..Default::default() };
    let ret = prog.test_run(input).context("BPF_PROG_TEST_RUN")?.return_value;
    if ret != 0 {
        bail!("BPF program returned {ret}");
    }
    Ok(())
}

/// The host-test object over one LLC, with a mirror of the idle state of record.
struct Llc<'a> {
    skel: SisTestSkel<'a>,
    n: usize,
    idle: Vec<bool>,
}

impl<'a> Llc<'a> {
    /// Opens, sizes and loads the object as the loader does, all CPUs allowed, then the attach
    /// state: every CPU idle and in the filter at core granule.
    fn load(obj: &'a mut MaybeUninit<OpenObject>, topo: &Topology, mode: SisMode) -> Result<Self> {
        let mut open = SisTestSkelBuilder::default().open(obj).context("opening the host-test BPF object")?;
        let layout = Layout::of(topo);
        let rodata = open.maps.rodata_data.as_mut().context("no .rodata")?;
        scx_sis::set_layout_rodata!(&mut *rodata, layout);
        // the host has no built-in idle mask: claims go through the state of record
        rodata.builtin_idle = false;
        open.maps.data_data.as_mut().context("no .data")?.sis_mode = mode.to_bpf();
        let missing = layout.size_maps(open.open_object_mut())?;
        if missing != ["llc_steals"] {
            bail!("host-test object: unexpected unsized maps {missing:?}");
        }
        scx_sis::group::size_maps(open.open_object_mut(), topo)?;
        let mut skel = open.load().context("loading the host-test BPF object (verifier)")?;
        topology::write_maps(topo, &skel.maps.cpu_topo_map, &skel.maps.llc_topo_map, &skel.maps.llc_cpus_map)?;
        let bss = skel.maps.bss_data.as_mut().context("no .bss")?;
        for c in &topo.cpus {
            bss.test_allowed[c.id / 64] |= 1u64 << (c.id % 64);
        }
        let mut a = cpu_args { cpu: 0, ret: 0 };
        run_prog(&mut skel.progs.test_init_cpus, &mut a)?;
        let n = topo.cpus.len();
        Ok(Llc { skel, n, idle: vec![true; n] })
    }

    /// Writes to the LLC's filter so far (bits set by the idle path, cores cleared for a false
    /// positive or by a claim that filled them, resets), and of those the cores cleared by claims
    /// outside the scan.
    fn filter_writes(&self) -> Result<(u64, u64)> {
        let m = &self.skel.maps.stats;
        let writes = percpu_sum(m, sis_stat_STAT_FILTER_SET)?
            + percpu_sum(m, sis_stat_STAT_FILTER_DROP)?
            + percpu_sum(m, sis_stat_STAT_FILTER_RESET)?;
        Ok((writes, percpu_sum(m, sis_stat_STAT_FILTER_CLAIM_CLEAR)?))
    }

    /// The idle path (ops.update_idle) of `cpu`.
    fn set_idle(&mut self, cpu: usize, idle: bool) -> Result<()> {
        let mut a = cpu_args { cpu: cpu as i32, ret: 0 };
        if idle {
            run_prog(&mut self.skel.progs.test_cpu_idle, &mut a)?;
        } else {
            run_prog(&mut self.skel.progs.test_cpu_busy, &mut a)?;
        }
        self.idle[cpu] = idle;
        Ok(())
    }

    /// A random CPU with the given state, or None.
    fn pick(&self, rng: &mut Rng, idle: bool) -> Option<usize> {
        let k = self.idle.iter().filter(|&&i| i == idle).count();
        if k == 0 {
            return None;
        }
        let r = rng.below(k);
        self.idle.iter().enumerate().filter(|(_, &i)| i == idle).nth(r).map(|(c, _)| c)
    }

    /// A fresh random pattern of `k` idle CPUs, applied through the idle path in random order.
    fn pattern(&mut self, rng: &mut Rng, k: usize) -> Result<()> {
        let mut order: Vec<usize> = (0..self.n).collect();
        for i in (1..self.n).rev() {
            order.swap(i, rng.below(i + 1));
        }
        let mut want = vec![false; self.n];
        for &c in &order[..k] {
            want[c] = true;
        }
        for i in (1..self.n).rev() {
            order.swap(i, rng.below(i + 1));
        }
        for c in order {
            if want[c] != self.idle[c] {
                self.set_idle(c, want[c])?;
            }
        }
        Ok(())
    }

    /// One search from a random busy CPU, its claim's churn, and the background churn.
    fn step(&mut self, rng: &mut Rng) -> Result<bench_scan_args> {
        let target = match self.pick(rng, false) {
            Some(c) => c,
            None => rng.below(self.n),
        };
        let with_idle = self.idle.contains(&true);
        let mut a: bench_scan_args = zeroed();
        a.target = target as i32;
        a.llc = 0;
        run_prog(&mut self.skel.progs.bench_scan, &mut a)?;
        if a.cpu >= 0 {
            let c = a.cpu as usize;
            if c >= self.n || !self.idle[c] {
                bail!("the scan claimed CPU {c}, which was not idle by record");
            }
            // the claim cleared its idle flag; its task running there is its update_idle(false)
            self.set_idle(c, false)?;
            let b = self.pick(rng, false).context("no busy CPU after a claim")?;
            self.set_idle(b, true)?;
        }
        if (a.missed != 0) != (a.cpu < 0 && with_idle) {
            bail!(
                "missed-idle check disagrees with the idle state: missed {} found {} idle existed {with_idle}",
                a.missed,
                a.cpu
            );
        }
        if let (Some(i), Some(b)) = (self.pick(rng, true), self.pick(rng, false)) {
            // a wakeup that took its idle prev: select_cpu's claim, then the CPU leaves idle
            let mut c = cpu_args { cpu: i as i32, ret: 0 };
            run_prog(&mut self.skel.progs.test_claim, &mut c)?;
            if c.ret == 0 {
                bail!("the claim of CPU {i}, idle by record, failed");
            }
            self.set_idle(i, false)?;
            self.set_idle(b, true)?;
        }
        Ok(a)
    }
}

fn zeroed<T: Copy>() -> T {
    // SAFETY: only used for plain-data C structs, for which all-zero is a valid value
    unsafe { std::mem::zeroed() }
}

/// Runs one cell on a freshly loaded object.
pub fn run_cell(topo: &Topology, pct: u32, mode: SisMode, p: &Params) -> Result<Cell> {
    let mut obj = MaybeUninit::uninit();
    let mut llc = Llc::load(&mut obj, topo, mode)?;
    let n = llc.n;
    let k = idle_cpus(n, pct);
    let mut cell = Cell {
        llc_cpus: n,
        idle_pct: pct,
        idle_cpus: k,
        mode: mode_name(mode).into(),
        paths: vec![PathStat::default(); PATHS.len()],
        ..Default::default()
    };
    let mut clock = vec![];
    for trial in 0..p.trials {
        // the same stream for every mode: the same patterns and targets until the modes diverge
        let mut rng = Rng::new(p.seed ^ ((n as u64) << 40) ^ ((pct as u64) << 24) ^ trial as u64);
        llc.pattern(&mut rng, k)?;
        for _ in 0..p.warmup_per_cpu * n {
            llc.step(&mut rng)?;
        }
        let (mut ns, mut kept, mut clk) = (0u64, 0u64, vec![]);
        let writes0 = llc.filter_writes()?;
        for _ in 0..p.searches {
            let with_idle = llc.idle.contains(&true);
            let a = llc.step(&mut rng)?;
            cell.searches += 1;
            if a.cpu >= 0 {
                cell.found += 1;
                cell.probes_found += a.probes as u64;
            } else {
                cell.probes_failed += a.probes as u64;
            }
            cell.with_idle += with_idle as u64;
            cell.missed += (a.missed != 0) as u64;
            let path = &mut cell.paths[if a.idle_core != 0 { 2 } else { a.fail_prone as usize }];
            path.searches += 1;
            path.found += (a.cpu >= 0) as u64;
            path.probes += a.probes as u64;
            if a.ns > DROP_NS || a.clock_ns > DROP_NS {
                cell.dropped += 1;
                continue;
            }
            ns += a.ns;
            kept += 1;
            clk.push(a.clock_ns);
        }
        let writes = llc.filter_writes()?;
        cell.filter_writes += writes.0 - writes0.0;
        cell.claim_clears += writes.1 - writes0.1;
        if kept == 0 {
            bail!("every timed search of a trial took over {DROP_NS} ns");
        }
        clk.sort_unstable();
        let median = clk[clk.len() / 2] as f64;
        cell.trial_ns.push(ns as f64 / kept as f64 - median);
        clock.push(median);
    }
    cell.clock_ns = amean(&clock);
    Ok(cell)
}

/// Runs every cell; `progress` gets each as it completes.
pub fn run_all(p: &Params, progress: &mut dyn FnMut(usize, usize, &Cell)) -> Result<Vec<Cell>> {
    let modes = p.modes.iter().map(|m| mode_of(m)).collect::<Result<Vec<_>>>()?;
    let total = p.sizes.len() * p.idle_pct.len() * modes.len();
    let mut cells = vec![];
    for &n in &p.sizes {
        let topo = llc_topology(n)?;
        for &pct in &p.idle_pct {
            for &m in &modes {
                let c = run_cell(&topo, pct, m, p)
                    .with_context(|| format!("{NAME}: {n} CPUs, {pct}% idle, {}", mode_name(m)))?;
                cells.push(c);
                progress(cells.len(), total, cells.last().unwrap());
            }
        }
    }
    Ok(cells)
}

fn opt(v: Option<f64>, prec: usize) -> String {
    v.map_or("-".into(), |v| format!("{v:.prec$}"))
}

fn mark(ok: bool) -> &'static str {
    if ok {
        "met"
    } else {
        "MISSED"
    }
}

/// ns per search at the largest LLC over that at the smallest, per mode and idle fraction.
pub fn ns_ratio(r: &Report, mode: &str, pct: u32) -> Option<f64> {
    let (lo, hi) = (*r.params.sizes.first()?, *r.params.sizes.last()?);
    Some(r.cell(hi, pct, mode)?.ns() / r.cell(lo, pct, mode)?.ns())
}

/// The mmtests-like text: one block per metric, rows LLC size x idle%, columns the modes; the
/// targets judged per cell in the `full` column.
pub fn format_table(r: &Report) -> String {
    let p = &r.params;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "# scx_sis bench --suite {NAME}: {} on {} ({}, {} CPUs), host BPF JIT, no sched_ext",
        r.created, r.host.kernel, r.host.cpu_model, r.host.nproc
    );
    let _ = writeln!(
        o,
        "# one search = one sis_scan (bpf/idle_filter.bpf.h) from a busy waker CPU over one LLC of N CPUs, SMT2;"
    );
    let _ = writeln!(
        o,
        "# per cell {} trials x {} searches (after {} per CPU of warm-up), a fresh random idle pattern per trial, seed {}",
        p.trials, p.searches, p.warmup_per_cpu, p.seed
    );
    let _ = writeln!(
        o,
        "# ns: bpf_ktime_get_ns() around the search minus the clock's own share (measured alongside, ~{:.0} ns); one thread, warm caches",
        amean(&r.cells.iter().map(|c| c.clock_ns).collect::<Vec<_>>())
    );
    let _ = writeln!(
        o,
        "# {} of {} timed searches dropped (over {} µs: preempted or interrupted)",
        r.cells.iter().map(|c| c.dropped).sum::<u64>(),
        r.cells.iter().map(|c| c.searches).sum::<u64>(),
        DROP_NS / 1000
    );
    let _ = writeln!(o, "# recall: searches that found a CPU / searches while an idle CPU existed");

    let header = |o: &mut String, title: &str| {
        let _ = writeln!(o, "\n{title}");
        let _ = write!(o, "{:>5} {:>6} {:>5}", "llc", "idle%", "idle");
        for m in &p.modes {
            let _ = write!(o, " {m:>18}");
        }
        o.push('\n');
    };
    type Metric<'a> = &'a dyn Fn(&Cell) -> String;
    type Target<'a> = &'a dyn Fn(&Cell) -> Option<bool>;
    let block = |o: &mut String, title: &str, val: Metric, target: Target| {
        header(o, title);
        for &n in &p.sizes {
            for &pct in &p.idle_pct {
                let _ = write!(o, "{n:>5} {pct:>6} {:>5}", idle_cpus(n, pct));
                for m in &p.modes {
                    let s = match r.cell(n, pct, m) {
                        Some(c) => {
                            let t = if m == "full" { target(c).map(mark).unwrap_or("") } else { "" };
                            format!("{} {t:<6}", val(c))
                        }
                        None => "-".into(),
                    };
                    let _ = write!(o, " {s:>18}");
                }
                o.push('\n');
            }
        }
    };
    block(
        &mut o,
        "ns per search, mean of trial means (CV of trials)",
        &|c| format!("{:.1} ({:>4.1}%)", c.ns(), c.ns_cv() * 100.0),
        &|_| None,
    );
    block(&mut o, "probes per search", &|c| opt(c.probes_per_search(), 2), &|_| None);
    block(
        &mut o,
        "filter writes per search (sets, cores cleared, resets; with the model's churn), of them by claims",
        &|c| format!("{} {}", opt(ratio(c.filter_writes, c.searches), 2), opt(ratio(c.claim_clears, c.searches), 2)),
        &|_| None,
    );
    block(
        &mut o,
        &format!("probes per successful search (target, full: <= {TARGET_PROBES_FOUND})"),
        &|c| opt(c.probes_per_found(), 2),
        &|c| c.probes_per_found().map(|v| v <= TARGET_PROBES_FOUND),
    );
    block(
        &mut o,
        &format!("probes per failed search (target, full at 0% idle: <= {TARGET_PROBES_FAILED_BUSY})"),
        &|c| opt(c.probes_per_failed(), 2),
        &|c| (c.idle_pct == 0).then(|| c.probes_per_failed().is_some_and(|v| v <= TARGET_PROBES_FAILED_BUSY)),
    );
    block(
        &mut o,
        &format!("recall % (target, full: >= {:.0}% wherever an idle CPU exists)", TARGET_RECALL * 100.0),
        &|c| opt(c.recall().map(|v| v * 100.0), 2),
        &|c| c.recall().map(|v| v >= TARGET_RECALL),
    );

    let _ = writeln!(o, "\nfull mode by search path: share of searches, probes per search, found %");
    let _ = write!(o, "{:>5} {:>6} {:>5}", "llc", "idle%", "idle");
    for path in PATHS {
        let _ = write!(o, " {path:>22}");
    }
    o.push('\n');
    for &n in &p.sizes {
        for &pct in &p.idle_pct {
            let Some(c) = r.cell(n, pct, "full") else { continue };
            let _ = write!(o, "{n:>5} {pct:>6} {:>5}", c.idle_cpus);
            for ps in &c.paths {
                let s = match ratio(ps.probes, ps.searches) {
                    Some(pr) => format!(
                        "{:>3.0}% {pr:>6.2} {:>5.1}%",
                        ps.searches as f64 * 100.0 / c.searches as f64,
                        ps.found as f64 * 100.0 / ps.searches as f64
                    ),
                    None => "-".into(),
                };
                let _ = write!(o, " {s:>22}");
            }
            o.push('\n');
        }
    }

    let (lo, hi) = (p.sizes.first().copied().unwrap_or(0), p.sizes.last().copied().unwrap_or(0));
    let _ = writeln!(
        o,
        "\nns per search at {hi} CPUs / at {lo} (target, full: <= {TARGET_NS_RATIO}; linear should grow with the LLC)"
    );
    let _ = write!(o, "{:>5} {:>6} {:>5}", "", "idle%", "");
    for m in &p.modes {
        let _ = write!(o, " {m:>18}");
    }
    o.push('\n');
    for &pct in &p.idle_pct {
        let _ = write!(o, "{:>5} {pct:>6} {:>5}", "", "");
        for m in &p.modes {
            let v = ns_ratio(r, m, pct);
            let t = if m == "full" { v.map(|v| mark(v <= TARGET_NS_RATIO)).unwrap_or("") } else { "" };
            let _ = write!(o, " {:>18}", format!("{} {t:<6}", opt(v, 2)));
        }
        o.push('\n');
    }

    let missed = missed_targets(r);
    let _ = writeln!(o, "\ntargets (full mode): {} missed", missed.len());
    for m in &missed {
        let _ = writeln!(o, "  MISSED {m}");
    }
    o
}

/// Every target the `full` cells miss, one line each.
pub fn missed_targets(r: &Report) -> Vec<String> {
    let mut out = vec![];
    for c in r.cells.iter().filter(|c| c.mode == "full") {
        let at = format!("{} CPUs, {}% idle ({} CPUs)", c.llc_cpus, c.idle_pct, c.idle_cpus);
        if let Some(v) = c.probes_per_found().filter(|&v| v > TARGET_PROBES_FOUND) {
            out.push(format!("probes per successful search {v:.2} > {TARGET_PROBES_FOUND} at {at}"));
        }
        if c.idle_pct == 0 {
            if let Some(v) = c.probes_per_failed().filter(|&v| v > TARGET_PROBES_FAILED_BUSY) {
                out.push(format!("probes per failed search {v:.2} > {TARGET_PROBES_FAILED_BUSY} at {at}"));
            }
        }
        if let Some(v) = c.recall().filter(|&v| v < TARGET_RECALL) {
            out.push(format!("recall {:.2}% < {:.0}% at {at}", v * 100.0, TARGET_RECALL * 100.0));
        }
    }
    for &pct in &r.params.idle_pct {
        if let Some(v) = ns_ratio(r, "full", pct).filter(|&v| v > TARGET_NS_RATIO) {
            out.push(format!("ns per search at the largest LLC / smallest {v:.2} > {TARGET_NS_RATIO} at {pct}% idle"));
        }
    }
    out
}

pub fn to_csv(r: &Report) -> String {
    let mut o = String::from(
        "llc_cpus,idle_pct,idle_cpus,mode,searches,found,with_idle,missed,probes_per_search,probes_per_found,\
         probes_per_failed,recall,ns_per_search,ns_cv,clock_ns\n",
    );
    let f = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:.4}"));
    for c in &r.cells {
        let _ = writeln!(
            o,
            "{},{},{},{},{},{},{},{},{},{},{},{},{:.2},{:.4},{:.2}",
            c.llc_cpus,
            c.idle_pct,
            c.idle_cpus,
            c.mode,
            c.searches,
            c.found,
            c.with_idle,
            c.missed,
            f(c.probes_per_search()),
            f(c.probes_per_found()),
            f(c.probes_per_failed()),
            f(c.recall()),
            c.ns(),
            c.ns_cv(),
            c.clock_ns
        );
    }
    o
}

/// Two rows of panels, one panel per idle fraction: ns per search (top) and probes per search
/// (bottom) against the LLC size, one line per mode.
pub fn write_png(r: &Report, path: &Path) -> Result<()> {
    plot::ensure_font().map_err(anyhow::Error::msg)?;
    let p = &r.params;
    let root = BitMapBackend::new(path, (1600, 820)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(
        &format!(
            "{NAME}: one idle-CPU search over one LLC (SMT2), host BPF JIT, {} trials x {} searches",
            p.trials, p.searches
        ),
        ("sans-serif", 22),
    )?;
    let panels = root.split_evenly((2, p.idle_pct.len()));
    let xs = p.sizes.len();
    type Metric = fn(&Cell) -> Option<f64>;
    let rows: [(&str, Metric); 2] =
        [("ns per search", |c| Some(c.ns())), ("probes per search", |c: &Cell| c.probes_per_search())];
    for (ri, (what, val)) in rows.iter().enumerate() {
        for (pi, &pct) in p.idle_pct.iter().enumerate() {
            let area = &panels[ri * p.idle_pct.len() + pi];
            let series: Vec<(usize, Vec<(f64, f64)>)> = p
                .modes
                .iter()
                .enumerate()
                .map(|(mi, m)| {
                    let pts = p
                        .sizes
                        .iter()
                        .enumerate()
                        .filter_map(|(i, &n)| r.cell(n, pct, m).and_then(val).map(|v| (i as f64, v)))
                        .filter(|(_, v)| v.is_finite())
                        .collect();
                    (mi, pts)
                })
                .collect();
            let ymax = series.iter().flat_map(|(_, s)| s.iter().map(|&(_, v)| v)).fold(0.0, f64::max).max(1e-9);
            let labels = p.sizes.clone();
            let mut chart = ChartBuilder::on(area)
                .caption(format!("{pct}% idle"), ("sans-serif", 17))
                .margin(8)
                .x_label_area_size(34)
                .y_label_area_size(56)
                .build_cartesian_2d(-0.3f64..(xs as f64 - 0.7), 0f64..ymax * 1.12)?;
            chart
                .configure_mesh()
                .x_labels(xs)
                .x_label_formatter(&|x: &f64| {
                    let i = x.round();
                    if (x - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < labels.len() {
                        labels[i as usize].to_string()
                    } else {
                        String::new()
                    }
                })
                .x_desc("CPUs in the LLC")
                .y_desc(if pi == 0 { *what } else { "" })
                .label_style(("sans-serif", 13))
                .axis_desc_style(("sans-serif", 14))
                .draw()?;
            for (mi, pts) in series {
                let color = plot::PALETTE[(mi + 1) % plot::PALETTE.len()];
                chart
                    .draw_series(std::iter::once(PathElement::new(pts.clone(), color.stroke_width(2))))?
                    .label(p.modes[mi].clone())
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2)));
                chart.draw_series(pts.iter().map(|&(x, y)| Circle::new((x, y), 3, color.filled())))?;
            }
            if ri == 0 && pi == 0 {
                chart
                    .configure_series_labels()
                    .position(SeriesLabelPosition::UpperLeft)
                    .background_style(WHITE.mix(0.85))
                    .border_style(BLACK)
                    .label_font(("sans-serif", 13))
                    .draw()?;
            }
        }
    }
    root.present().with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

/// Writes table.txt, idle-scale.json, idle-scale.csv and idle-scale.png into `dir`; returns
/// the table.
pub fn write_outputs(r: &Report, dir: &Path) -> Result<String> {
    let table = format_table(r);
    let w = |name: &str, s: &str| {
        std::fs::write(dir.join(name), s).with_context(|| format!("writing {}/{name}", dir.display()))
    };
    w("table.txt", &table)?;
    w(&format!("{NAME}.json"), &(serde_json::to_string_pretty(r)? + "\n"))?;
    w(&format!("{NAME}.csv"), &to_csv(r))?;
    if let Err(e) = write_png(r, &dir.join(format!("{NAME}.png"))) {
        eprintln!("scx_sis bench: warning: no plot for {NAME}: {e:#}");
    }
    Ok(table)
}

/// Is `--suite` asking for this suite? It runs alone: it is host-only and compares the modes
/// itself, not schedulers.
pub fn requested(args: &BenchArgs) -> Result<bool> {
    super::host_only_suite(args, NAME)
}

/// Entry of `scx_sis_bench --suite idle-scale`.
pub fn run(args: &BenchArgs) -> Result<()> {
    if args.runs == 0 {
        return Err(usage("--runs must be at least 1"));
    }
    let p = Params::new(args.runs, args.quick);
    let cells = p.sizes.len() * p.idle_pct.len() * p.modes.len();
    let plan = format!(
        "scx_sis bench: {NAME}: host-only, nothing attached; LLCs of {:?} CPUs (SMT2) x idle {:?}% x modes {:?}: \
         {cells} cells of {} trials x {} searches (+{} per CPU warm-up)\n",
        p.sizes, p.idle_pct, p.modes, p.trials, p.searches, p.warmup_per_cpu
    );
    let Some((created, out)) = super::host_only_start(args, NAME, &plan)? else { return Ok(()) };
    let t0 = std::time::Instant::now();
    let cells = run_all(&p, &mut |done, total, c| {
        eprintln!(
            "[{NAME} {done}/{total}] {} CPUs, {}% idle, {}: {:.1} ns, {} probes/search, recall {} ({:.0} s)",
            c.llc_cpus,
            c.idle_pct,
            c.mode,
            c.ns(),
            opt(c.probes_per_search(), 2),
            c.recall().map_or("-".into(), |v| format!("{:.2}%", v * 100.0)),
            t0.elapsed().as_secs_f64()
        );
    })?;
    let r =
        Report { format: 1, created, host: host_info(), command_line: std::env::args().collect(), params: p, cells };
    let table = write_outputs(&r, &out)?;
    print!("{table}");
    eprintln!("scx_sis bench: wrote {}/{{table.txt,{NAME}.json,{NAME}.csv,{NAME}.png}}", out.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::tests::{args, is_usage};

    fn cell(n: usize, pct: u32, mode: &str, found: u64, probes_found: u64, with_idle: u64, ns: f64) -> Cell {
        Cell {
            llc_cpus: n,
            idle_pct: pct,
            idle_cpus: idle_cpus(n, pct),
            mode: mode.into(),
            searches: 100,
            found,
            probes_found,
            with_idle,
            missed: with_idle - found,
            trial_ns: vec![ns, ns],
            paths: vec![PathStat::default(); PATHS.len()],
            ..Default::default()
        }
    }

    /// The targets are judged per `full` cell from the counts: met and missed both show.
    #[test]
    fn table_judges_targets() {
        let params =
            Params { sizes: vec![8, 256], idle_pct: vec![50], modes: vec!["full".into()], ..Params::new(1, true) };
        let r = Report {
            format: 1,
            created: "now".into(),
            host: HostInfo::default(),
            command_line: vec![],
            params,
            // 8 CPUs: 1.2 probes per success, recall 100%; 256: 3 probes, recall 95%, 2x the time
            cells: vec![cell(8, 50, "full", 100, 120, 100, 100.0), cell(256, 50, "full", 95, 285, 100, 200.0)],
        };
        assert_eq!(
            missed_targets(&r),
            [
                "probes per successful search 3.00 > 1.5 at 256 CPUs, 50% idle (128 CPUs)",
                "recall 95.00% < 99% at 256 CPUs, 50% idle (128 CPUs)",
                "ns per search at the largest LLC / smallest 2.00 > 1.3 at 50% idle",
            ]
        );
        let t = format_table(&r);
        assert!(t.contains("1.20 met"), "{t}");
        assert!(t.contains("3.00 MISSED"), "{t}");
        assert!(t.contains("targets (full mode): 3 missed"), "{t}");
        assert!(to_csv(&r).lines().nth(2).unwrap().starts_with("256,50,128,full,100,95,100,5,2.8500,3.0000,"));
    }

    #[test]
    fn runs_alone() {
        assert!(!requested(&args(&["--suite", "hackbench"])).unwrap());
        assert!(requested(&args(&["--suite", "idle-scale"])).unwrap());
        for bad in [
            vec!["--suite", "idle-scale,hackbench"],
            vec!["--suite", "idle-scale", "--variant", "x=--sis-mode linear"],
            vec!["--suite", "idle-scale", "--cmd", "x=true"],
        ] {
            assert!(is_usage(&requested(&args(&bad)).unwrap_err()), "{bad:?}");
        }
        // the plan needs neither root nor sched_ext
        run(&args(&["--suite", "idle-scale", "--dry-run"])).unwrap();
        assert!(is_usage(&run(&args(&["--suite", "idle-scale", "--runs", "0"])).unwrap_err()));
    }
}
