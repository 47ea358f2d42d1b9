//! Scheduler statistics served through scx_stats (`--stats`, `--monitor`, `--help-stats`).
//!
//! Counters are per-CPU in BPF and summed here; rates are derived per interval.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use scx_stats::prelude::*;
use scx_stats_derive::{stat_doc, Stats};
use serde::{Deserialize, Serialize};

use crate::bpf_intf::*;

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
}

/// Declares the counter fields once: name, enum index, description.
macro_rules! counter_fields {
    ($($name:ident = $idx:ident : $desc:literal),* $(,)?) => {
        #[stat_doc]
        #[derive(Clone, Debug, Default, Serialize, Deserialize, Stats)]
        #[stat(top)]
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
    wake_sync = sis_stat_STAT_WAKE_SYNC: "ttwu placed on the waker's CPU (sync, waker about to idle)",
    wake_recent = sis_stat_STAT_WAKE_RECENT: "ttwu placed on the idle recently used CPU",
    wake_scan = sis_stat_STAT_WAKE_SCAN: "ttwu placed by the LLC scan",
    wake_fork_exec = sis_stat_STAT_WAKE_FORK_EXEC: "fork/exec placements (idlest LLC, then scan)",
    wake_none = sis_stat_STAT_WAKE_NONE: "ttwu with no idle CPU found: queued on the target",
    scans = sis_stat_STAT_SCAN: "LLC idle scans",
    probes = sis_stat_STAT_SCAN_PROBE: "CPUs probed by scans",
    scan_success = sis_stat_STAT_SCAN_SUCCESS: "Scans that claimed an idle CPU",
    scan_fail = sis_stat_STAT_SCAN_FAIL: "Scans that found none",
    oracle_checks = sis_stat_STAT_SCAN_ORACLE: "Failed scans checked against the oracle (1 in --oracle-every)",
    missed_idle = sis_stat_STAT_SCAN_MISSED: "Checked failed scans while the oracle showed an allowed idle CPU in the LLC",
    fp_probes = sis_stat_STAT_SCAN_FP: "Probes of a filter CPU that was busy (false positive)",
    fp_removed = sis_stat_STAT_FP_REMOVED: "False positives removed from the filter by fail-prone scans",
    resets = sis_stat_STAT_FILTER_RESET: "Filter resets after a failed full idle-core scan",
    failprone_scans = sis_stat_STAT_FAILPRONE_SCAN: "Scans from a fail-prone CPU (SMT siblings checked)",
    sibling_rescues = sis_stat_STAT_SIBLING_RESCUE: "Idle SMT siblings (true negatives) found by fail-prone scans",
    filter_sets = sis_stat_STAT_FILTER_SET: "Filter bits set on the idle path",
    filter_skip_gen = sis_stat_STAT_FILTER_SET_SKIP_GEN: "Idle-path sets skipped: generation says already set",
    filter_skip_core = sis_stat_STAT_FILTER_SET_SKIP_CORE: "Idle-path sets skipped: a sibling stands for the core",
    overload_sets = sis_stat_STAT_OVERLOAD_SET: "CPUs marked overloaded (0 -> 1 transitions)",
    overload_clears = sis_stat_STAT_OVERLOAD_CLEAR: "CPUs unmarked (1 -> 0 transitions)",
    steal_attempts = sis_stat_STAT_STEAL_ATTEMPT: "Steal attempts by CPUs about to idle",
    steals = sis_stat_STAT_STEAL_SUCCESS: "Tasks stolen from overloaded CPUs",
    steal_empty = sis_stat_STAT_STEAL_EMPTY: "Steal attempts that found no overloaded CPU",
    steal_not_migratable = sis_stat_STAT_STEAL_NOT_MIGRATABLE: "Steal attempts where overloaded CPUs had nothing this CPU may run",
    preempt_kicks = sis_stat_STAT_PREEMPT_KICK: "Woken or new tasks owed time that preempted a running one",
    balance_pulls = sis_stat_STAT_BALANCE_PULL: "Tasks pulled from a busier CPU of the same LLC (balance by weighted load)",
    balance_pulls_xllc = sis_stat_STAT_BALANCE_PULL_XLLC: "Tasks pulled from a busier CPU of another LLC",
    fork_least_loaded = sis_stat_STAT_FORK_LEAST_LOADED: "fork/exec with no idle CPU placed on the least-loaded CPU of the idlest LLC",
    released_redirects = sis_stat_STAT_RELEASED_REDIRECT: "Tasks queued away from a CPU taken by RT/DL",
    idle_reconciled = sis_stat_STAT_IDLE_RECONCILED: "CPUs found running a task while idle by record, marked busy",
}

fn pct(num: u64, den: u64) -> f64 {
    if den == 0 {
        0.0
    } else {
        100.0 * num as f64 / den as f64
    }
}

impl Metrics {
    fn derive(&mut self) {
        self.success_pct = pct(self.scan_success, self.scans);
        // missed idle is counted on a sample of the failed scans: scale it to all of them
        let missed = if self.oracle_checks == 0 {
            0.0
        } else {
            self.missed_idle as f64 * self.scan_fail as f64 / self.oracle_checks as f64
        };
        self.recall_pct = if self.scan_success == 0 && missed == 0.0 {
            0.0
        } else {
            100.0 * self.scan_success as f64 / (self.scan_success as f64 + missed)
        };
        self.probes_per_scan = if self.scans == 0 { 0.0 } else { self.probes as f64 / self.scans as f64 };
        self.fp_pct = pct(self.fp_probes, self.probes);
    }

    pub fn format<W: Write>(&self, w: &mut W) -> Result<()> {
        writeln!(
            w,
            "[scx_sis] wake prev/sync/recent/scan/fx/none {}/{}/{}/{}/{}/{} | enq {} direct {} kick {}",
            self.wake_prev,
            self.wake_sync,
            self.wake_recent,
            self.wake_scan,
            self.wake_fork_exec,
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
            "          preempt {} | balance pull {} xllc {} | fork least-loaded {} | rt redirect {} | reconciled {}",
            self.preempt_kicks,
            self.balance_pulls,
            self.balance_pulls_xllc,
            self.fork_least_loaded,
            self.released_redirects,
            self.idle_reconciled,
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
        Ok(())
    }
}

pub fn server_data() -> StatsServerData<(), Metrics> {
    let open: Box<dyn StatsOpener<(), Metrics>> = Box::new(move |(req_ch, res_ch)| {
        req_ch.send(())?;
        let mut prev = res_ch.recv()?;

        let read: Box<dyn StatsReader<(), Metrics>> = Box::new(move |_args, (req_ch, res_ch)| {
            req_ch.send(())?;
            let cur = res_ch.recv()?;
            let delta = cur.delta(&prev);
            prev = cur;
            delta.to_json()
        });

        Ok(read)
    });

    StatsServerData::new().add_meta(Metrics::meta()).add_ops("top", StatsOps { open, close: None })
}

/// Prints the running scheduler's stats every `intv` until `shutdown`.
pub fn monitor(intv: Duration, shutdown: Arc<AtomicBool>) -> Result<()> {
    scx_utils::monitor_stats::<Metrics>(
        &[],
        intv,
        || shutdown.load(Ordering::Relaxed),
        |metrics| metrics.format(&mut std::io::stdout()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
