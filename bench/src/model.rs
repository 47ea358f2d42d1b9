//! The data of a benchmark session: variants, suites, runs; what results.json holds.

use serde::{Deserialize, Serialize};

use super::statistics::Direction;

/// Name of the baseline column: the kernel's fair class, nothing attached.
pub const BASELINE: &str = "EEVDF";

/// Sizes of the built-in suites.
#[derive(Clone, Debug)]
pub struct Scale {
    pub nproc: usize,
    pub quick: bool,
    /// hackbench groups (default: powers of two up to nproc; quick: 1, 2).
    pub hackbench_groups: Option<Vec<u32>>,
    /// hackbench -l (default 100, quick 20).
    pub hackbench_loops: Option<u32>,
    /// Seconds per tbench/netperf/schbench/wakelat run (default 5, 3 for netperf; quick 2, 1).
    pub duration_s: Option<u32>,
}

/// What runs the CPUs during a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum VariantKind {
    /// The fair class (CFS/EEVDF): no sched_ext scheduler attached.
    Fair,
    /// scx_sis itself (the running binary) with these options.
    ScxSis { args: Vec<String> },
    /// Another sched_ext scheduler binary.
    Peer { binary: String, args: Vec<String> },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Variant {
    pub name: String,
    #[serde(flatten)]
    pub kind: VariantKind,
}

impl Variant {
    pub fn fair() -> Self {
        Variant { name: BASELINE.into(), kind: VariantKind::Fair }
    }
    pub fn is_scx_sis(&self) -> bool {
        matches!(self.kind, VariantKind::ScxSis { .. })
    }
    /// The command line, for the plan and the JSON (`-` for the fair class).
    pub fn describe(&self) -> String {
        match &self.kind {
            VariantKind::Fair => "fair class (no sched_ext scheduler)".into(),
            VariantKind::ScxSis { args } => join_cmd("scx_sis", args),
            VariantKind::Peer { binary, args } => join_cmd(binary, args),
        }
    }
}

/// `bin args...` quoted so that `split_args` gives the words back.
fn join_cmd(bin: &str, args: &[String]) -> String {
    let words = std::iter::once(bin).chain(args.iter().map(String::as_str));
    // try_join fails only on a NUL byte, which no argv can hold
    shlex::try_join(words).unwrap_or_else(|_| format!("{bin} {}", args.join(" ")))
}

/// How a run's number is read from the workload's output.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", content = "value", rename_all = "snake_case")]
pub enum Parser {
    /// hackbench's `Time: X` (seconds).
    Hackbench,
    /// tbench's `Throughput X MB/sec`.
    Tbench,
    /// netperf *_STREAM: throughput of the first result line (the sender's for UDP).
    Netperf,
    /// schbench: p99 of the last `Wakeup Latencies` block (usec).
    Schbench,
    /// cyclictest -h: p99 of the histogram over all threads (usec).
    Cyclictest,
    /// cyclictest -h: the median (p50) of the same histogram (usec).
    CyclictestP50,
    /// First capture group (or the whole match) of a regex.
    Regex(String),
    /// The workload's wall-clock time (seconds).
    WallTime,
}

/// A server the workload needs, started (under the scheduler being measured) before each run
/// and stopped after it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Server {
    pub command: Vec<String>,
    /// TCP port on 127.0.0.1 that accepts connections once it is ready.
    pub port: u16,
}

/// One row of a suite: a parameter value and the command that measures it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Param {
    pub label: String,
    /// argv; for custom commands `["sh", "-c", COMMAND]`.
    pub command: Vec<String>,
}

/// A workload swept over parameters: one table section and one plot.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Suite {
    /// Key used by --suite and in file names (e.g. `hackbench`, `netperf-udp`).
    pub name: String,
    /// Table heading (mmtests style, e.g. `hackbench-process-pipes`).
    pub title: String,
    /// What the number is (e.g. `time`, `throughput`, `p99 wakeup latency`).
    pub metric: String,
    pub unit: String,
    pub direction: Direction,
    /// A ratio with a right value (a weight ratio): closer to it is better, whatever
    /// `direction` says about the mean; the verdict compares distances to it.
    #[serde(default)]
    pub ideal: Option<f64>,
    pub parser: Parser,
    pub server: Option<Server>,
    /// A run taking longer than this is killed and marked failed.
    pub timeout_s: u64,
    pub params: Vec<Param>,
}

/// A suite that was asked for but cannot run here.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Skipped {
    pub suite: String,
    pub reason: String,
}

/// One execution of one parameter of one suite under one variant.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// 1-based position in the session's run order.
    pub seq: usize,
    pub suite: String,
    pub param: String,
    pub variant: String,
    /// 0-based round (warm-up rounds first) and whether it is a warm-up (not in the statistics).
    pub round: usize,
    pub warmup: bool,
    pub ok: bool,
    /// The parsed metric (None when the run failed before a number was read).
    pub value: Option<f64>,
    /// Wall-clock time of the workload itself, seconds.
    pub wall_s: Option<f64>,
    /// Why the run failed (or a problem worth knowing when it did not).
    pub error: Option<String>,
    /// Unix time the run started.
    pub started: f64,
    /// Seconds from spawning the scheduler to state `enabled` (sched_ext variants).
    pub attach_s: Option<f64>,
    /// scx_sis statistics over the workload (scx_sis variants): the `stats` reply.
    pub telemetry: Option<serde_json::Value>,
    pub telemetry_error: Option<String>,
    /// Workload output, relative to the results directory.
    pub raw: Option<String>,
    /// The system's counters over the workload (every variant, EEVDF included).
    #[serde(default)]
    pub system: Option<SystemDelta>,
    /// Units of work the workload reported doing (hackbench messages, tbench operations,
    /// netperf transactions): what the counters are divided by.
    #[serde(default)]
    pub work: Option<f64>,
    /// The same counters over the window the workload measured itself (the fairness cases: from
    /// the end of their warm-up to their last reading, without the fork of their hogs before it
    /// and the harness's own reads after it).
    #[serde(default)]
    pub window: Option<SystemDelta>,
}

/// /proc/stat over one workload: what a scheduler adds to the work (switches) and whether CPUs
/// sat idle while the workload ran.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SystemDelta {
    /// Context switches, all CPUs.
    pub ctxt: u64,
    /// Share of CPU time idle (idle + iowait), all CPUs, percent.
    pub idle_pct: f64,
    /// Task migrations between CPUs, all classes (the cpu-migrations software event).
    #[serde(default)]
    pub migrations: Option<u64>,
    /// Time tasks spent runnable but waiting for a CPU, summed over CPUs (/proc/schedstat), ns.
    #[serde(default)]
    pub run_delay_ns: Option<u64>,
    /// Run time and calls of the sched_ext programs (with --bpf-time).
    #[serde(default)]
    pub bpf_ns: Option<u64>,
    #[serde(default)]
    pub bpf_calls: Option<u64>,
    /// Time spent taking another CPU's runqueue lock, and how many times, all CPUs (with
    /// --lock-time).
    #[serde(default)]
    pub rq_lock_remote_ns: Option<u64>,
    #[serde(default)]
    pub rq_lock_remote_n: Option<u64>,
    /// The same for each CPU's own runqueue lock.
    #[serde(default)]
    pub rq_lock_local_ns: Option<u64>,
    #[serde(default)]
    pub rq_lock_local_n: Option<u64>,
    /// Contended waits for an rq lock from any caller (with --lock-time): for the waiting CPU's
    /// own rq, for another's, and by the kernel path that waited (rq_lock.rs `site_of`):
    /// (count, ns).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rq_wait_own_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rq_wait_own_n: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rq_wait_other_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rq_wait_other_n: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rq_wait_sites: Option<std::collections::BTreeMap<String, (u64, u64)>>,
}

/// Settings a session ran with (for the record, and for --report).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Config {
    pub runs: usize,
    pub warmup: usize,
    /// Rounds per block (0: every run attaches its own scheduler).
    #[serde(default)]
    pub block: usize,
    /// The sched_ext programs were timed (BPF run-time statistics on).
    #[serde(default)]
    pub bpf_time: bool,
    /// Runqueue locks were timed (--lock-time).
    #[serde(default)]
    pub lock_time: bool,
    /// Workloads ran this many cgroup levels deep (--cgroup-depth; 0: where the bench ran).
    #[serde(default)]
    pub cgroup_depth: u32,
    pub quick: bool,
    pub command_line: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HostInfo {
    pub kernel: String,
    pub nproc: usize,
    pub cpu_model: String,
    /// Distinct L3 `shared_cpu_list`s.
    pub llcs: Vec<String>,
    pub scx_sis_version: String,
    /// The VM rig, from the guest's kernel command line (`scx_sis_rig=`, set by tests/vm/vm.sh):
    /// "tcg-serial" or "mttcg"; empty elsewhere.
    #[serde(default)]
    pub rig: String,
}

/// Everything results.json holds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Results {
    pub format: u32,
    pub created: String,
    pub host: HostInfo,
    pub config: Config,
    /// Column order; the first is the baseline (EEVDF).
    pub variants: Vec<Variant>,
    pub suites: Vec<Suite>,
    pub skipped: Vec<Skipped>,
    pub runs: Vec<RunRecord>,
    /// Set when the session stopped early (error or interrupt): why.
    pub aborted: Option<String>,
    /// True once every planned run is done.
    pub complete: bool,
}

pub const FORMAT_VERSION: u32 = 1;

impl Results {
    /// Measured (non-warm-up) runs of one cell, ok or not, in run order.
    pub fn cell<'a>(
        &'a self,
        suite: &'a str,
        param: &'a str,
        variant: &'a str,
    ) -> impl Iterator<Item = &'a RunRecord> + 'a {
        self.runs.iter().filter(move |r| !r.warmup && r.suite == suite && r.param == param && r.variant == variant)
    }

    /// Values of the ok measured runs of one cell.
    pub fn values(&self, suite: &str, param: &str, variant: &str) -> Vec<f64> {
        self.cell(suite, param, variant).filter(|r| r.ok).filter_map(|r| r.value).collect()
    }
}
