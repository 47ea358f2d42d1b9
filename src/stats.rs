//! Scheduler statistics served through scx_stats (`--stats`, `--monitor`, `--help-stats`).
//!
//! Counters are per-CPU in BPF and summed here; rates are derived per interval.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::Result;
use log::info;
use scx_stats::prelude::*;
use scx_stats_derive::{stat_doc, Stats};
use serde::{Deserialize, Serialize};

use crate::access::{self, ConnectError};
use crate::bpf_intf::*;
use crate::error::usage_err;
use crate::group::{GbPartMetrics, GbSample};
use crate::knobs::KnobName;

/// Raw counters summed over CPUs, indexed by `enum sis_stat`.
pub type Counters = [u64; sis_stat_SIS_NR_STATS as usize];

/// Point-in-time samples the loader reads from the BPF maps beside the counters.
#[derive(Clone, Debug, Default)]
pub struct Samples {
    pub nr_cpus: u64,
    pub filter_weight: u64,
    pub true_idle: u64,
    pub overloaded: u64,
    pub llc_steals: Vec<u64>,
    /// Per LLC, by LLC id.
    pub llcs: Vec<LlcSamples>,
    /// One char per CPU id (see `Metrics::cpu_state`).
    pub cpu_state: String,
    /// Tasks counted runnable by the load accounting, over all CPUs.
    pub nr_runnable: i64,
    pub knobs: crate::knobs::Knobs,
    pub gb: GbSample,
    pub cg: CgSample,
}

/// cgroup cpu.weight bookkeeping (bpf/cgroup.bpf.h), read from the BPF globals.
#[derive(Clone, Copy, Debug, Default)]
pub struct CgSample {
    /// cgroups below the root without state of their own now: charged to an ancestor
    pub untracked: u64,
    /// cgroups the state map had no room for, since load
    pub map_full: u64,
    /// weight changes given up after losing every compare-and-swap
    pub weight_lost: u64,
}

/// One LLC's counters (`enum sis_llc_stat`, summed over CPUs) and samples.
#[derive(Clone, Debug, Default)]
pub struct LlcSamples {
    pub counters: LlcCounters,
    pub cpus: String,
    pub nr_cpus: u64,
    pub filter_weight: u64,
    pub true_idle: u64,
    pub overloaded: u64,
}

/// Per-LLC counters indexed by `enum sis_llc_stat`.
pub type LlcCounters = [u64; sis_llc_stat_SIS_NR_LLC_STATS as usize];

/// One LLC (nested in `Metrics::llcs`): the machine-wide scan and steal figures, for its CPUs.
#[stat_doc]
#[derive(Clone, Debug, Default, Serialize, Deserialize, Stats)]
#[serde(default)]
pub struct LlcMetrics {
    #[stat(desc = "CPUs of the LLC (cpulist)")]
    pub cpus: String,
    #[stat(desc = "CPUs in the LLC")]
    pub nr_cpus: u64,
    #[stat(desc = "Idle scans of this LLC")]
    pub scans: u64,
    #[stat(desc = "Scans that claimed an idle CPU")]
    pub scan_success: u64,
    #[stat(desc = "Scans that found none")]
    pub scan_fail: u64,
    #[stat(desc = "CPUs probed by scans")]
    pub probes: u64,
    #[stat(desc = "False-positive probes")]
    pub fp_probes: u64,
    #[stat(desc = "Failed scans checked against the oracle")]
    pub oracle_checks: u64,
    #[stat(desc = "Checked failed scans while the oracle showed an allowed idle CPU")]
    pub missed_idle: u64,
    #[stat(desc = "Tasks stolen by CPUs of this LLC")]
    pub steals: u64,
    #[stat(desc = "Bits set in the LLC's idle filter (sampled)")]
    pub filter_weight: u64,
    #[stat(desc = "CPUs idle by the state of record (sampled)")]
    pub true_idle: u64,
    #[stat(desc = "CPUs marked overloaded (sampled)")]
    pub overloaded: u64,
    #[stat(desc = "Load: CPUs not idle by the state of record, the scan depth's input (sampled)")]
    pub load: u64,
    #[stat(desc = "Scans that found an idle CPU, % of scans")]
    pub success_pct: f64,
    #[stat(desc = "Recall: found / (found + missed idle), %")]
    pub recall_pct: f64,
    #[stat(desc = "Probes per scan")]
    pub probes_per_scan: f64,
    #[stat(desc = "False-positive probes, % of probes")]
    pub fp_pct: f64,
}

impl LlcMetrics {
    pub fn from_samples(s: &LlcSamples) -> Self {
        let c = &s.counters;
        let mut m = LlcMetrics {
            cpus: s.cpus.clone(),
            nr_cpus: s.nr_cpus,
            scans: c[sis_llc_stat_LLC_STAT_SCAN as usize],
            scan_success: c[sis_llc_stat_LLC_STAT_SCAN_SUCCESS as usize],
            scan_fail: c[sis_llc_stat_LLC_STAT_SCAN_FAIL as usize],
            probes: c[sis_llc_stat_LLC_STAT_PROBE as usize],
            fp_probes: c[sis_llc_stat_LLC_STAT_FP as usize],
            oracle_checks: c[sis_llc_stat_LLC_STAT_ORACLE as usize],
            missed_idle: c[sis_llc_stat_LLC_STAT_MISSED as usize],
            steals: c[sis_llc_stat_LLC_STAT_STEAL as usize],
            filter_weight: s.filter_weight,
            true_idle: s.true_idle,
            overloaded: s.overloaded,
            load: s.nr_cpus.saturating_sub(s.true_idle),
            ..Default::default()
        };
        m.derive();
        m
    }

    /// Counters of `self` minus `rhs`, samples of `self`.
    pub fn delta(&self, rhs: &Self) -> Self {
        let mut m = LlcMetrics {
            scans: self.scans.wrapping_sub(rhs.scans),
            scan_success: self.scan_success.wrapping_sub(rhs.scan_success),
            scan_fail: self.scan_fail.wrapping_sub(rhs.scan_fail),
            probes: self.probes.wrapping_sub(rhs.probes),
            fp_probes: self.fp_probes.wrapping_sub(rhs.fp_probes),
            oracle_checks: self.oracle_checks.wrapping_sub(rhs.oracle_checks),
            missed_idle: self.missed_idle.wrapping_sub(rhs.missed_idle),
            steals: self.steals.wrapping_sub(rhs.steals),
            ..self.clone()
        };
        m.derive();
        m
    }

    fn derive(&mut self) {
        (self.success_pct, self.recall_pct, self.probes_per_scan, self.fp_pct) = scan_rates(
            self.scans,
            self.scan_success,
            self.scan_fail,
            self.oracle_checks,
            self.missed_idle,
            self.probes,
            self.fp_probes,
        );
    }
}

/// Declares the counter fields once: name, enum index, description.
macro_rules! counter_fields {
    ($($name:ident = $idx:ident : $desc:literal),* $(,)?) => {
        #[stat_doc]
        #[derive(Clone, Debug, Default, Serialize, Deserialize, Stats)]
        #[stat(top)]
        // a field missing from another version's reply reads as 0 (scx_sis top)
        #[serde(default)]
        pub struct Metrics {
            #[stat(desc = "Online CPUs")]
            pub nr_cpus: u64,
            $(#[stat(desc = $desc)] pub $name: u64,)*
            #[stat(desc = "Bits set in the idle filters (sampled)")]
            pub filter_weight: u64,
            #[stat(desc = "CPUs idle by the state of record (sampled)")]
            pub true_idle: u64,
            #[stat(desc = "CPUs marked overloaded (sampled)")]
            pub overloaded: u64,
            #[stat(desc = "Tasks stolen, by LLC of the thief")]
            pub llc_steals: BTreeMap<u32, u64>,
            #[stat(desc = "Per LLC, by LLC id")]
            pub llcs: BTreeMap<u32, LlcMetrics>,
            #[stat(desc = "One char per CPU id (sampled): . idle, B busy, O overloaded (tasks waiting), F fail-prone (its last scan failed), - offline")]
            pub cpu_state: String,
            #[stat(desc = "Tasks counted runnable (queued or running) by the load accounting, all CPUs (sampled): about the running tasks when the machine is idle")]
            pub nr_runnable: i64,
            #[stat(desc = "Knob sis-mode: full / filter / linear")]
            pub sis_mode: String,
            #[stat(desc = "Knob steal: on / map-only / off")]
            pub steal_mode: String,
            #[stat(desc = "Knob steal-scope: llc / node / all")]
            pub steal_scope: String,
            #[stat(desc = "Knob oracle-every: 1 failed scan in N checked (0: never)")]
            pub oracle_every: u64,
            #[stat(desc = "Knob slice-us: time slice in microseconds")]
            pub slice_us: u64,
            #[stat(desc = "Group balancer on (--gb-cgroup / --gb-parent given)")]
            pub gb_enabled: u64,
            #[stat(desc = "Group balancer: grouped wakeups placed on prev, idle and in the group's partition")]
            pub gb_wake_prev: u64,
            #[stat(desc = "Group balancer: grouped wakeups placed on another idle CPU of the partition")]
            pub gb_wake_part: u64,
            #[stat(desc = "Group balancer: grouped wakeups with no idle CPU in the partition: normal path, anywhere")]
            pub gb_wake_elsewhere: u64,
            #[stat(desc = "Group balancer: slice ends outside the partition moved to an idle CPU in it")]
            pub gb_move_idle: u64,
            #[stat(desc = "Group balancer: slice ends outside the partition swapped with a task there that wants ours")]
            pub gb_move_swap: u64,
            #[stat(desc = "Group balancer: steals and pulls of a task whose group prefers the thief's partition")]
            pub gb_steal_pref: u64,
            #[stat(desc = "Group balancer: cgroups left ungrouped because a map was full")]
            pub gb_no_state: u64,
            #[stat(desc = "Group balancer: per partition (by id), with the groups that prefer it (sampled)")]
            pub gb_parts: BTreeMap<u32, GbPartMetrics>,
            #[stat(desc = "cgroups without cpu.weight state of their own now (deeper than 16 levels, under such a cgroup, or no room in the map: see --max-cgroups); their tasks count in their nearest tracked ancestor (sampled)")]
            pub cg_untracked: u64,
            #[stat(desc = "cgroups the cpu.weight state map had no room for, since the start (raise --max-cgroups)")]
            pub cg_map_full: u64,
            #[stat(desc = "cpu.weight changes given up after losing every retry to concurrent activations, since the start")]
            pub cg_weight_lost: u64,
            #[stat(desc = "Scans that found an idle CPU, % of scans")]
            pub success_pct: f64,
            #[stat(desc = "Recall: found / (found + missed idle), %; missed idle extrapolated from the checked share of failed scans")]
            pub recall_pct: f64,
            #[stat(desc = "Probes per scan")]
            pub probes_per_scan: f64,
            #[stat(desc = "False-positive probes, % of probes")]
            pub fp_pct: f64,
        }

        impl Metrics {
            pub fn from_counters(c: &Counters, s: Samples) -> Self {
                let mut m = Metrics {
                    nr_cpus: s.nr_cpus,
                    $($name: c[$idx as usize],)*
                    filter_weight: s.filter_weight,
                    true_idle: s.true_idle,
                    overloaded: s.overloaded,
                    llc_steals: s.llc_steals.iter().enumerate().map(|(i, v)| (i as u32, *v)).collect(),
                    llcs: s.llcs.iter().enumerate().map(|(i, l)| (i as u32, LlcMetrics::from_samples(l))).collect(),
                    cpu_state: s.cpu_state,
                    nr_runnable: s.nr_runnable,
                    sis_mode: s.knobs.sis_mode.name().into(),
                    steal_mode: s.knobs.steal.name().into(),
                    steal_scope: s.knobs.steal_scope.name().into(),
                    oracle_every: s.knobs.oracle_every as u64,
                    slice_us: s.knobs.slice_us,
                    gb_enabled: s.gb.enabled as u64,
                    gb_wake_prev: s.gb.counters[gb_stat_GB_STAT_WAKE_PREV as usize],
                    gb_wake_part: s.gb.counters[gb_stat_GB_STAT_WAKE_PART as usize],
                    gb_wake_elsewhere: s.gb.counters[gb_stat_GB_STAT_WAKE_ELSEWHERE as usize],
                    gb_move_idle: s.gb.counters[gb_stat_GB_STAT_MOVE_IDLE as usize],
                    gb_move_swap: s.gb.counters[gb_stat_GB_STAT_MOVE_SWAP as usize],
                    gb_steal_pref: s.gb.counters[gb_stat_GB_STAT_STEAL_PREF as usize],
                    gb_no_state: s.gb.counters[gb_stat_GB_STAT_NO_STATE as usize],
                    gb_parts: s.gb.parts,
                    cg_untracked: s.cg.untracked,
                    cg_map_full: s.cg.map_full,
                    cg_weight_lost: s.cg.weight_lost,
                    ..Default::default()
                };
                m.derive();
                m
            }

            /// Counters of `self` minus `rhs`, samples of `self`, rates over the interval.
            pub fn delta(&self, rhs: &Self) -> Self {
                let mut m = Metrics {
                    nr_cpus: self.nr_cpus,
                    $($name: self.$name.wrapping_sub(rhs.$name),)*
                    filter_weight: self.filter_weight,
                    true_idle: self.true_idle,
                    overloaded: self.overloaded,
                    llc_steals: self
                        .llc_steals
                        .iter()
                        .map(|(k, v)| (*k, v.wrapping_sub(*rhs.llc_steals.get(k).unwrap_or(&0))))
                        .collect(),
                    llcs: self
                        .llcs
                        .iter()
                        .map(|(k, l)| (*k, rhs.llcs.get(k).map_or_else(|| l.clone(), |r| l.delta(r))))
                        .collect(),
                    cpu_state: self.cpu_state.clone(),
                    nr_runnable: self.nr_runnable,
                    sis_mode: self.sis_mode.clone(),
                    steal_mode: self.steal_mode.clone(),
                    steal_scope: self.steal_scope.clone(),
                    oracle_every: self.oracle_every,
                    slice_us: self.slice_us,
                    gb_enabled: self.gb_enabled,
                    gb_wake_prev: self.gb_wake_prev.wrapping_sub(rhs.gb_wake_prev),
                    gb_wake_part: self.gb_wake_part.wrapping_sub(rhs.gb_wake_part),
                    gb_wake_elsewhere: self.gb_wake_elsewhere.wrapping_sub(rhs.gb_wake_elsewhere),
                    gb_move_idle: self.gb_move_idle.wrapping_sub(rhs.gb_move_idle),
                    gb_move_swap: self.gb_move_swap.wrapping_sub(rhs.gb_move_swap),
                    gb_steal_pref: self.gb_steal_pref.wrapping_sub(rhs.gb_steal_pref),
                    gb_no_state: self.gb_no_state,
                    gb_parts: self.gb_parts.clone(),
                    cg_untracked: self.cg_untracked,
                    cg_map_full: self.cg_map_full,
                    cg_weight_lost: self.cg_weight_lost,
                    ..Default::default()
                };
                m.derive();
                m
            }
        }
    };
}

counter_fields! {
    enqueue = sis_stat_STAT_ENQUEUE: "ops.enqueue calls",
    direct_idle = sis_stat_STAT_DIRECT_IDLE: "Wakeups inserted straight into an idle CPU's local DSQ",
    kthread = sis_stat_STAT_KTHREAD: "Per-CPU kthreads enqueued (queued first by credit, may preempt at once)",
    dispatch_local = sis_stat_STAT_DISPATCH_LOCAL: "Tasks moved from a CPU's own DSQ to run",
    keep_prev = sis_stat_STAT_KEEP_PREV: "Times prev kept its CPU at the end of its slice: nothing queued, or still the lowest vtime",
    kick_idle = sis_stat_STAT_KICK_IDLE: "Idle CPUs kicked after an enqueue",
    wake_prev = sis_stat_STAT_WAKE_PREV: "ttwu placed on the idle wake-affine target or prev",
    wake_sync = sis_stat_STAT_WAKE_SYNC: "ttwu placed on the waker's CPU (sync, nothing else queued there)",
    wake_recent = sis_stat_STAT_WAKE_RECENT: "ttwu placed on the idle recently used CPU",
    wake_scan = sis_stat_STAT_WAKE_SCAN: "ttwu placed by the LLC scan",
    wake_fork_exec = sis_stat_STAT_WAKE_FORK_EXEC: "fork/exec placements (idlest LLC, then scan)",
    wake_none = sis_stat_STAT_WAKE_NONE: "ttwu with no idle CPU found: queued on the target",
    wake_affine = sis_stat_STAT_WAKE_AFFINE: "sync ttwu with no idle CPU found: queued behind the waker (its CPU no busier than prev)",
    scans = sis_stat_STAT_SCAN: "LLC idle scans",
    probes = sis_stat_STAT_SCAN_PROBE: "CPUs probed by scans",
    scan_success = sis_stat_STAT_SCAN_SUCCESS: "Scans that claimed an idle CPU",
    scan_fail = sis_stat_STAT_SCAN_FAIL: "Scans that found none",
    oracle_checks = sis_stat_STAT_SCAN_ORACLE: "Failed scans checked against the oracle (1 in --oracle-every)",
    missed_idle = sis_stat_STAT_SCAN_MISSED: "Checked failed scans while the oracle showed an allowed idle CPU in the LLC",
    fp_probes = sis_stat_STAT_SCAN_FP: "Probes of a filter CPU that was busy (false positive)",
    fp_removed = sis_stat_STAT_FP_REMOVED: "False positives (fully busy cores) removed from the filter by full-mode scans",
    resets = sis_stat_STAT_FILTER_RESET: "Filter resets after a failed full idle-core scan",
    failprone_scans = sis_stat_STAT_FAILPRONE_SCAN: "Scans from a fail-prone CPU (its last scan failed)",
    sibling_rescues = sis_stat_STAT_SIBLING_RESCUE: "Idle SMT siblings (true negatives) found by full-mode scans",
    filter_sets = sis_stat_STAT_FILTER_SET: "Filter bits set on the idle path",
    filter_skip_gen = sis_stat_STAT_FILTER_SET_SKIP_GEN: "Idle-path sets skipped: generation says already set",
    filter_skip_core = sis_stat_STAT_FILTER_SET_SKIP_CORE: "Idle-path sets skipped: a sibling stands for the core",
    filter_drops = sis_stat_STAT_FILTER_DROP: "Cores cleared from the filter: false positives removed, claims that filled the core",
    claim_clears = sis_stat_STAT_FILTER_CLAIM_CLEAR: "Of those, by a claim outside a scan (at most an eighth of the LLC idle)",
    overload_sets = sis_stat_STAT_OVERLOAD_SET: "CPUs marked overloaded (0 -> 1 transitions)",
    overload_clears = sis_stat_STAT_OVERLOAD_CLEAR: "CPUs unmarked (1 -> 0 transitions)",
    steal_attempts = sis_stat_STAT_STEAL_ATTEMPT: "Steal attempts by CPUs about to idle",
    steals = sis_stat_STAT_STEAL_SUCCESS: "Tasks stolen from overloaded CPUs",
    steal_empty = sis_stat_STAT_STEAL_EMPTY: "Steal attempts that found no overloaded CPU",
    steal_not_migratable = sis_stat_STAT_STEAL_NOT_MIGRATABLE: "Steal attempts where overloaded CPUs had nothing this CPU may run",
    preempt_kicks = sis_stat_STAT_PREEMPT_KICK: "Woken or new tasks owed time that preempted a running one",
    balance_pulls = sis_stat_STAT_BALANCE_PULL: "Tasks pulled from a busier CPU of the same LLC (balance by weighted load)",
    balance_pulls_xllc = sis_stat_STAT_BALANCE_PULL_XLLC: "Tasks pulled from a busier CPU of another LLC",
    balance_looks = sis_stat_STAT_BALANCE_LOOK: "Busy CPUs' looks for a busier CPU at a slice end (rate-limited)",
    balance_no_gap = sis_stat_STAT_BALANCE_NO_GAP: "Balance looks that found no load gap worth a move",
    balance_unmovable = sis_stat_STAT_BALANCE_UNMOVABLE: "Balance looks with a gap but no queued task whose move narrows it",
    balance_unconfirmed = sis_stat_STAT_BALANCE_UNCONFIRMED: "Balance looks whose busier CPU the look before had not found (a gap that may not last): no pull yet",
    balance_paced = sis_stat_STAT_BALANCE_PACED: "Balance looks with a lasting gap whose LLC had pulled within the pull period (8 slices): no pull yet",
    balance_rotations = sis_stat_STAT_BALANCE_ROTATE: "Slice ends that sent the task just served to a CPU one task lighter (rotation: the extra seat moves when tasks do not divide among CPUs)",
    balance_rotations_xllc = sis_stat_STAT_BALANCE_ROTATE_XLLC: "Rotations to a CPU of another LLC",
    fork_least_loaded = sis_stat_STAT_FORK_LEAST_LOADED: "fork/exec with no idle CPU placed on the least-loaded CPU of the idlest LLC",
    fork_stay = sis_stat_STAT_FORK_STAY: "fork/exec with no idle CPU kept on the parent's CPU (exec: its own), no busier than the least-loaded by the fair class's imbalance margin",
    released_redirects = sis_stat_STAT_RELEASED_REDIRECT: "Tasks queued away from a CPU taken by RT/DL",
    idle_reconciled = sis_stat_STAT_IDLE_RECONCILED: "CPUs found running a task while idle by record, marked busy",
    idle_healed = sis_stat_STAT_IDLE_HEALED: "CPUs idle by the kernel's mask while busy by record (idle entries the kernel did not report), marked idle",
    tick_preempts = sis_stat_STAT_TICK_PREEMPT: "Ticks that ended the running task's slice for a queued task owed more than a slice and a half (a wakee not owed enough to preempt when it woke)",
    migration_disabled = sis_stat_STAT_STOP_MIGRATION_DISABLED: "Runnable tasks switched out while migration-disabled (preempted inside migrate_disable()): each stays on its CPU",
}

fn pct(num: u64, den: u64) -> f64 {
    if den == 0 {
        0.0
    } else {
        100.0 * num as f64 / den as f64
    }
}

/// (success %, recall %, probes per scan, FP %) of a set of scans.
fn scan_rates(
    scans: u64,
    success: u64,
    fail: u64,
    oracle_checks: u64,
    missed_idle: u64,
    probes: u64,
    fp_probes: u64,
) -> (f64, f64, f64, f64) {
    // missed idle is counted on a sample of the failed scans: scale it to all of them
    let missed = if oracle_checks == 0 { 0.0 } else { missed_idle as f64 * fail as f64 / oracle_checks as f64 };
    let recall = if success == 0 && missed == 0.0 { 0.0 } else { 100.0 * success as f64 / (success as f64 + missed) };
    let pps = if scans == 0 { 0.0 } else { probes as f64 / scans as f64 };
    (pct(success, scans), recall, pps, pct(fp_probes, probes))
}

impl Metrics {
    fn derive(&mut self) {
        (self.success_pct, self.recall_pct, self.probes_per_scan, self.fp_pct) = scan_rates(
            self.scans,
            self.scan_success,
            self.scan_fail,
            self.oracle_checks,
            self.missed_idle,
            self.probes,
            self.fp_probes,
        );
    }

    pub fn format<W: Write>(&self, w: &mut W) -> Result<()> {
        writeln!(
            w,
            "[scx_sis] wake prev/sync/recent/scan/fx/affine/none {}/{}/{}/{}/{}/{}/{} | enq {} direct {} kick {}",
            self.wake_prev,
            self.wake_sync,
            self.wake_recent,
            self.wake_scan,
            self.wake_fork_exec,
            self.wake_affine,
            self.wake_none,
            self.enqueue,
            self.direct_idle,
            self.kick_idle,
        )?;
        writeln!(
            w,
            "          scan {} ok {:.1}% recall {:.1}% probes/scan {:.2} fp {:.1}% | fp-rm {} reset {} fail-prone {} rescue {} | filter {}/{} idle",
            self.scans, self.success_pct, self.recall_pct, self.probes_per_scan, self.fp_pct,
            self.fp_removed, self.resets, self.failprone_scans, self.sibling_rescues,
            self.filter_weight, self.true_idle,
        )?;
        writeln!(
            w,
            "          preempt {} tick {} | balance pull {} xllc {} (looks {} no-gap {} unmovable {} unconfirmed {} paced {}) rotate {} xllc {} | fork least-loaded {} stay {} | rt redirect {} migration-disabled {} | reconciled {} healed {}",
            self.preempt_kicks,
            self.tick_preempts,
            self.balance_pulls,
            self.balance_pulls_xllc,
            self.balance_looks,
            self.balance_no_gap,
            self.balance_unmovable,
            self.balance_unconfirmed,
            self.balance_paced,
            self.balance_rotations,
            self.balance_rotations_xllc,
            self.fork_least_loaded,
            self.fork_stay,
            self.released_redirects,
            self.migration_disabled,
            self.idle_reconciled,
            self.idle_healed,
        )?;
        writeln!(
            w,
            "          steal {}/{} (empty {} unmigratable {}) per-llc {:?} | overloaded {} (+{} -{})",
            self.steals,
            self.steal_attempts,
            self.steal_empty,
            self.steal_not_migratable,
            self.llc_steals.values().collect::<Vec<_>>(),
            self.overloaded,
            self.overload_sets,
            self.overload_clears,
        )?;
        for (id, l) in &self.llcs {
            writeln!(
                w,
                "          llc {id} ({}): scan {} ok {:.1}% recall {:.1}% probes/scan {:.2} fp {:.1}% | filter {}/{} idle | overloaded {} steals {} load {}/{}",
                l.cpus, l.scans, l.success_pct, l.recall_pct, l.probes_per_scan, l.fp_pct,
                l.filter_weight, l.true_idle, l.overloaded, l.steals, l.load, l.nr_cpus,
            )?;
        }
        writeln!(
            w,
            "          cpus {} runnable {} | sis-mode {} steal {} scope {} oracle-every {} slice {} us | cgroups untracked {} (map full {}){}",
            self.cpu_state, self.nr_runnable, self.sis_mode, self.steal_mode, self.steal_scope, self.oracle_every, self.slice_us,
            self.cg_untracked, self.cg_map_full,
            if self.cg_weight_lost > 0 { format!(" weight changes lost {}", self.cg_weight_lost) } else { String::new() },
        )?;
        format_gb(w, self)?;
        Ok(())
    }
}

/// The gb lines of `--stats` / `--monitor`: counters, then per group the proposal's gb_stat view,
/// one line per partition (id, CPUs, the group's load there, the partition's load, `*` on the
/// preferred one; loads in milli-CPUs).
fn format_gb<W: std::io::Write>(w: &mut W, m: &Metrics) -> Result<()> {
    if m.gb_enabled == 0 {
        return Ok(());
    }
    writeln!(
        w,
        "          gb wake prev/part/elsewhere {}/{}/{} | move idle {} swap {} | steal-pref {}{}",
        m.gb_wake_prev,
        m.gb_wake_part,
        m.gb_wake_elsewhere,
        m.gb_move_idle,
        m.gb_move_swap,
        m.gb_steal_pref,
        if m.gb_no_state > 0 { format!(" | ungrouped (map full) {}", m.gb_no_state) } else { String::new() },
    )?;
    for g in m.gb_parts.values().flat_map(|p| p.groups.values()) {
        writeln!(
            w,
            "          gb group {} part {} load {:.2} in-part {:.1}% moves {}",
            g.path, g.part, g.load, g.in_part_pct, g.moves
        )?;
        for (id, p) in &m.gb_parts {
            writeln!(
                w,
                "            PART-{id} {} {} {} {}",
                p.cpus,
                g.by_part_mcpu.get(id).copied().unwrap_or(0),
                (p.load * 1000.0).round() as u64,
                if g.part == *id as u64 { "*" } else { "" }
            )?;
        }
    }
    Ok(())
}

/// The stats' descriptions (`--help-stats`, the `stats_meta` request).
pub fn metas() -> Vec<StatsMeta> {
    vec![LlcMetrics::meta(), crate::group::GbGroupMetrics::meta(), GbPartMetrics::meta(), Metrics::meta()]
}

pub fn server_data() -> StatsServerData<(), Metrics> {
    metas().into_iter().fold(StatsServerData::new(), |d, m| d.add_meta(m))
}

/// Prints the stats of the scheduler serving `path` every `intv` until `shutdown`. Waits while
/// no scx_sis runs (as scx_utils::monitor_stats does); a socket it may not read is a usage error
/// (exit 2), not a wait.
pub fn monitor(path: &Path, intv: Duration, shutdown: &AtomicBool) -> Result<()> {
    let mut failed = 0u32;
    while !shutdown.load(Ordering::Relaxed) {
        let mut client = match StatsClient::new().set_path(path).connect(None) {
            Ok(c) => c,
            Err(e) => match access::classify(path, &e) {
                ConnectError::Denied(msg) => return Err(usage_err(msg)),
                ConnectError::NotRunning(msg) => {
                    // quiet for a scheduler that is just starting or restarting
                    if failed == 1 {
                        info!("{msg} - retrying");
                    }
                    failed += 1;
                    std::thread::sleep(Duration::from_secs(1));
                    continue;
                }
                ConnectError::Other(msg) => anyhow::bail!(msg),
            },
        };
        failed = 0;
        while !shutdown.load(Ordering::Relaxed) {
            match client.request::<Metrics>("stats", vec![]) {
                Ok(m) => m.format(&mut std::io::stdout())?,
                Err(e) => {
                    info!("stats connection lost ({e}) - reconnecting");
                    std::thread::sleep(Duration::from_secs(1));
                    break;
                }
            }
            std::thread::sleep(intv);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The served socket is 0600 root's, or 0660 with --stats-group's group, from its bind on.
    #[test]
    fn gb_stats_view() {
        use crate::group::GbGroupMetrics;
        let zero: Counters = [0; sis_stat_SIS_NR_STATS as usize];
        let sample = |swaps: u64| {
            let mut g = GbSample { enabled: true, ..Default::default() };
            g.counters[gb_stat_GB_STAT_MOVE_SWAP as usize] = swaps;
            let a = GbGroupMetrics {
                path: "/cg/a".into(),
                part: 0,
                load: 3.8,
                in_part_pct: 97.4,
                by_part_mcpu: [(0, 3700), (1, 100)].into(),
                ..Default::default()
            };
            let p0 = GbPartMetrics { cpus: "0-3".into(), load: 3.9, groups: [(0, a)].into(), ..Default::default() };
            let p1 = GbPartMetrics { cpus: "4-7".into(), load: 0.2, ..Default::default() };
            g.parts = [(0, p0), (1, p1)].into();
            Samples { gb: g, ..Default::default() }
        };
        let d = Metrics::from_counters(&zero, sample(5)).delta(&Metrics::from_counters(&zero, sample(2)));
        assert_eq!((d.gb_enabled, d.gb_move_swap), (1, 3));
        assert_eq!(d.gb_parts[&0].groups[&0].path, "/cg/a");
        let mut out = Vec::new();
        format_gb(&mut out, &d).unwrap();
        let out = String::from_utf8(out).unwrap();
        assert!(out.contains("gb group /cg/a part 0 load 3.80 in-part 97.4% moves 0"), "{out}");
        assert!(out.contains("PART-0 0-3 3700 3900 *\n"), "{out}");
        assert!(out.contains("PART-1 4-7 100 200 \n"), "{out}");
        // off: no gb lines at all
        let mut out = Vec::new();
        format_gb(&mut out, &Metrics::default()).unwrap();
        assert!(out.is_empty());
    }

    #[test]
    fn derived_rates() {
        let mut c: Counters = [0; sis_stat_SIS_NR_STATS as usize];
        c[sis_stat_STAT_SCAN as usize] = 10;
        c[sis_stat_STAT_SCAN_SUCCESS as usize] = 8;
        c[sis_stat_STAT_SCAN_FAIL as usize] = 2;
        c[sis_stat_STAT_SCAN_ORACLE as usize] = 1;
        c[sis_stat_STAT_SCAN_MISSED as usize] = 1; // 1 of 1 checked: 2 missed of 2 failed
        c[sis_stat_STAT_SCAN_PROBE as usize] = 15;
        c[sis_stat_STAT_SCAN_FP as usize] = 3;
        let m = Metrics::from_counters(&c, Samples { llc_steals: vec![3, 4], ..Default::default() });
        assert_eq!(m.success_pct, 80.0);
        assert_eq!(m.recall_pct, 80.0);
        assert_eq!(m.probes_per_scan, 1.5);
        assert_eq!(m.fp_pct, 20.0);

        let base = Samples { llc_steals: vec![1, 4], ..Default::default() };
        let d = m.delta(&Metrics::from_counters(&[0; sis_stat_SIS_NR_STATS as usize], base));
        assert_eq!(d.scans, 10);
        assert_eq!(d.llc_steals.get(&0), Some(&2));
        assert_eq!(d.llc_steals.get(&1), Some(&0));
        assert_eq!(d.recall_pct, 80.0);
    }

    #[test]
    fn llc_metrics() {
        let mut c: LlcCounters = [0; sis_llc_stat_SIS_NR_LLC_STATS as usize];
        c[sis_llc_stat_LLC_STAT_SCAN as usize] = 10;
        c[sis_llc_stat_LLC_STAT_SCAN_SUCCESS as usize] = 5;
        c[sis_llc_stat_LLC_STAT_SCAN_FAIL as usize] = 5;
        c[sis_llc_stat_LLC_STAT_PROBE as usize] = 20;
        c[sis_llc_stat_LLC_STAT_FP as usize] = 5;
        c[sis_llc_stat_LLC_STAT_STEAL as usize] = 7;
        let l = LlcSamples { counters: c, cpus: "0-3".into(), nr_cpus: 4, true_idle: 1, ..Default::default() };
        let s = Samples { llcs: vec![l.clone(), LlcSamples::default()], ..Default::default() };
        let m = Metrics::from_counters(&[0; sis_stat_SIS_NR_STATS as usize], s);
        let l0 = &m.llcs[&0];
        assert_eq!((l0.scans, l0.steals, l0.load), (10, 7, 3));
        assert_eq!((l0.success_pct, l0.probes_per_scan, l0.fp_pct), (50.0, 2.0, 25.0));
        assert_eq!(m.llcs.len(), 2);
        let d = m.delta(&Metrics::from_counters(
            &[0; sis_stat_SIS_NR_STATS as usize],
            Samples {
                llcs: vec![LlcSamples { counters: [1; sis_llc_stat_SIS_NR_LLC_STATS as usize], ..l }],
                ..Default::default()
            },
        ));
        assert_eq!((d.llcs[&0].scans, d.llcs[&0].steals, d.llcs[&0].cpus.as_str()), (9, 6, "0-3"));
        assert_eq!(d.sis_mode, "full");
    }
}
