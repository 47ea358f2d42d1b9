//! The `fairness` suites of `scx_sis_bench`: does a scheduler keep the promises of the
//! fair class when there are more runnable CPU hogs than CPUs?
//!
//! - `fair-nice1`: a nice-0 and a nice-5 hog pinned to one CPU; their CPU-time ratio (ideal
//!   1024/335 = 3.06, the kernel's weight table).
//! - `fair-nice8`: one nice-0 and one nice-10 hog per CPU, unpinned; mean nice-0 CPU time over
//!   mean nice-10 CPU time (placement decides it, so compare with EEVDF's).
//! - `fair-spread`: 3 hogs per CPU forked by one parent; the worst hog's distance from the mean
//!   CPU time, in % of the mean (lower is better).
//! - `fair-odd`: one hog per CPU and one more, forked by one parent: no placement divides them,
//!   so only moving them around (the fair class's balancing; scx_sis's rotation) evens out their
//!   CPU time; the worst hog's distance from the mean, in % of the mean (lower is better).
//! - `fair-fork`, `fair-sleep`: with 2 hogs per CPU, fork+exec+wait of /bin/true per second and
//!   completed 50 ms sleeps per second (higher is better). The fork loop does at least 5
//!   (one op can take seconds in a saturated TCG guest), within 4x the window.
//!
//! - `cg-weight`, `cg-threads`, `cg-nested`, `cg-wide` (`--suite cgroups`): cgroup
//!   cpu.weight. Pinned to one CPU: 300 vs 100, one hog each (ideal 3); a 4-hog vs a 1-hog
//!   cgroup of equal weight (ideal 1); a/{x (1 hog), y (2 hogs)} vs b (1 hog), all weight 100
//!   (ideal shares 1/4, 1/4, 1/2: the metric is the worst share's error in %). Unpinned:
//!   300 with one hog per CPU vs 100 with two per CPU (ideal 3). `cg-deep`: a hog 20 cgroups
//!   below a cpu.weight-25 cgroup vs one in a 100 cgroup, one CPU (ideal 0.25): nesting deeper
//!   than scx_sis tracks must not escape the weight.
//! - `cg-full` (not in `cgroups`): cg-deep's 25 vs 100 with the hog in a cgroup made after
//!   filling a running scx_sis's cgroup map (as many cgroups under the 25 one as the map
//!   holds: run scx_sis with a small --max-cgroups); the probe fails unless that cgroup is the
//!   one left out of the map and the 25 one is in.
//! - `gb-wide` (not in `cgroups`): cg-wide's load with its two cgroups as children of
//!   the group balancer's bench parent (gbbench::GB_PARENT), so that a variant
//!   `--gb-parent /sys/fs/cgroup/scx_sis_gb` makes them two groups settled on distinct
//!   partitions: does cpu.weight still hold across partitions (ideal 3)?
//!
//! Each run is `scx_sis_bench __fairness CASE --secs T --warmup W` (a hidden subcommand: the real
//! workload, measured from /proc), which prints its details and a last line `metric: X`, so
//! the runner, parsers, tables and JSON of the other suites serve these unchanged. CPU time is a
//! hog's run time from /proc/PID/schedstat (ns; without CONFIG_SCHED_INFO se.sum_exec_runtime
//! of /proc/PID/sched, else utime+stime of /proc/PID/stat) over a window that starts after the
//! warm-up.

use std::collections::BTreeMap;
use std::ffi::CString;
use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use super::cgroups::CgTree;
use super::model::{Param, Parser, Scale, Suite};
use super::parsers::METRIC_RE;
use super::statistics::Direction;
use scx_sis::error::usage_err;

/// `--suite fairness` expands to these, in this order.
pub const ALL: &str = "fairness";
pub const NAMES: &[&str] = &["fair-nice1", "fair-nice8", "fair-spread", "fair-odd", "fair-fork", "fair-sleep"];
/// `--suite cgroups` expands to these.
pub const ALL_CG: &str = "cgroups";
pub const CG_NAMES: &[&str] = &["cg-weight", "cg-threads", "cg-nested", "cg-wide", "cg-deep"];
/// cg-deep's nesting under its weight-25 cgroup.
const DEEP_LEVELS: usize = 20;

/// Weights of nice 0 and nice 5 in the kernel's sched_prio_to_weight[].
pub const NICE1_IDEAL: f64 = 1024.0 / 335.0;
/// ... and of nice 0 and nice 10.
pub const NICE8_IDEAL: f64 = 1024.0 / 110.0;

const NICE1_OTHER: i32 = 5;
const NICE8_OTHER: i32 = 10;
const SPREAD_PER_CPU: usize = 3;
const SPREAD_MIN_SECS: u32 = 4;
const RESPONSIVE_PER_CPU: usize = 2;
const SLEEP_MS: u64 = 50;
const TRUE_BIN: &str = "/bin/true";
/// fork+exec+wait can take seconds each under saturation in a TCG guest: the fork loop goes on
/// past the window until it has this many, but starts none after FORK_CAP x the window.
const FORK_MIN_OPS: u64 = 5;
const FORK_CAP: f64 = 4.0;

/// One fairness case, as the hidden `__fairness` subcommand takes it.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Case {
    Nice1,
    Nice8,
    Spread,
    Odd,
    Fork,
    Sleep,
    CgWeight,
    CgThreads,
    CgNested,
    CgWide,
    GbWide,
    CgDeep,
    CgFull,
}

const CASES: [Case; 13] = [
    Case::Nice1,
    Case::Nice8,
    Case::Spread,
    Case::Odd,
    Case::Fork,
    Case::Sleep,
    Case::CgWeight,
    Case::CgThreads,
    Case::CgNested,
    Case::CgWide,
    Case::GbWide,
    Case::CgDeep,
    Case::CgFull,
];

impl Case {
    pub fn suite_name(self) -> &'static str {
        match self {
            Case::Nice1 => "fair-nice1",
            Case::Nice8 => "fair-nice8",
            Case::Spread => "fair-spread",
            Case::Odd => "fair-odd",
            Case::Fork => "fair-fork",
            Case::Sleep => "fair-sleep",
            Case::CgWeight => "cg-weight",
            Case::CgThreads => "cg-threads",
            Case::CgNested => "cg-nested",
            Case::CgWide => "cg-wide",
            Case::GbWide => "gb-wide",
            Case::CgDeep => "cg-deep",
            Case::CgFull => "cg-full",
        }
    }
    pub fn from_suite(name: &str) -> Option<Case> {
        CASES.into_iter().find(|c| c.suite_name() == name)
    }
    fn arg(self) -> &'static str {
        let n = self.suite_name();
        n.strip_prefix("fair-").unwrap_or(n)
    }
}

/// `scx_sis_bench __fairness CASE`: run one fairness workload and print `metric: X` (hidden; the
/// `fair-*` bench suites run it).
#[derive(clap::Args, Debug, Clone)]
pub struct ProbeArgs {
    #[arg(value_enum)]
    pub case: Case,
    /// Measured window, seconds.
    #[arg(long, default_value_t = 5.0)]
    pub secs: f64,
    /// Seconds the hogs run before the window opens.
    #[arg(long, default_value_t = 1.0)]
    pub warmup: f64,
}

/// (window, warm-up) seconds of a case: `--duration` sets the window; spread warms up longer
/// since balancing must have had its chance before it is judged, and measures at least
/// SPREAD_MIN_SECS (the fairness target judges the spread 5 s in: 1 s warm-up + 4 s with --quick), as a
/// short window in a TCG guest is noisy even under EEVDF.
pub fn durations(case: Case, sc: &Scale) -> (u32, f64) {
    let secs = sc.duration_s.unwrap_or(if sc.quick { 2 } else { 5 });
    // cg-wide too: the hogs join their cgroups after fork, then balancing must spread them
    let settles = matches!(case, Case::Spread | Case::Odd | Case::CgWide | Case::GbWide);
    let secs = if settles { secs.max(SPREAD_MIN_SECS) } else { secs };
    let warm = match (settles, sc.quick) {
        (true, false) => 2.0,
        (true, true) | (_, false) => 1.0,
        (_, true) => 0.5,
    };
    (secs, warm)
}

/// The suite of one case; `exe` is the scx_sis binary that runs the probe.
pub fn suite(case: Case, sc: &Scale, exe: &Path) -> Suite {
    let n = sc.nproc.max(1);
    let (secs, warm) = durations(case, sc);
    let (title, metric, unit, direction, label) = match case {
        Case::Nice1 => (
            "fair-nice1-one-cpu",
            format!("CPU-time ratio nice 0 / nice {NICE1_OTHER}, both pinned to one CPU (ideal {NICE1_IDEAL:.2})"),
            "ratio",
            Direction::HigherIsBetter,
            "1cpu".to_string(),
        ),
        Case::Nice8 => (
            "fair-nice8-unpinned",
            format!("mean CPU-time ratio nice 0 / nice {NICE8_OTHER}, one of each per CPU, unpinned (rows: hogs)"),
            "ratio",
            Direction::HigherIsBetter,
            format!("{n}+{n}"),
        ),
        Case::Spread => (
            "fair-spread-saturated",
            format!(
                "worst hog's |CPU time - mean| / mean, {SPREAD_PER_CPU} hogs per CPU forked by one parent (rows: hogs)"
            ),
            "%",
            Direction::LowerIsBetter,
            (SPREAD_PER_CPU * n).to_string(),
        ),
        Case::Odd => (
            "fair-odd-saturated",
            "worst hog's |CPU time - mean| / mean, one hog per CPU and one more, forked by one parent (rows: hogs)"
                .into(),
            "%",
            Direction::LowerIsBetter,
            (n + 1).to_string(),
        ),
        Case::Fork => (
            "fair-fork-under-hogs",
            format!("fork+exec+wait of {TRUE_BIN} per second, {RESPONSIVE_PER_CPU} hogs per CPU (rows: hogs)"),
            "ops/s",
            Direction::HigherIsBetter,
            (RESPONSIVE_PER_CPU * n).to_string(),
        ),
        Case::Sleep => (
            "fair-sleep-under-hogs",
            format!(
                "completed {SLEEP_MS} ms sleeps per second, {RESPONSIVE_PER_CPU} hogs per CPU (ideal {}; rows: hogs)",
                1000 / SLEEP_MS
            ),
            "sleeps/s",
            Direction::HigherIsBetter,
            (RESPONSIVE_PER_CPU * n).to_string(),
        ),
        Case::CgWeight => (
            "cg-weight-one-cpu",
            "CPU-time ratio of cgroups with cpu.weight 300 and 100, one hog each, one CPU (ideal 3.00)".into(),
            "ratio",
            Direction::HigherIsBetter,
            "1cpu".to_string(),
        ),
        Case::CgThreads => (
            "cg-threads-one-cpu",
            "CPU-time ratio of a 4-hog and a 1-hog cgroup of equal cpu.weight, one CPU (ideal 1.00)".into(),
            "ratio",
            Direction::HigherIsBetter,
            "1cpu".to_string(),
        ),
        Case::CgNested => (
            "cg-nested-one-cpu",
            "worst cgroup's share error in %, a/{x: 1 hog, y: 2 hogs} vs b: 1 hog, equal weights, one CPU (ideal 0)"
                .into(),
            "%",
            Direction::LowerIsBetter,
            "1cpu".to_string(),
        ),
        Case::CgWide => (
            "cg-wide-unpinned",
            "CPU-time ratio of cgroups with cpu.weight 300 (1 hog per CPU) and 100 (2 hogs per CPU), unpinned (ideal 3.00; rows: hogs)".into(),
            "ratio",
            Direction::HigherIsBetter,
            format!("{n}+{}", 2 * n),
        ),
        Case::CgDeep => (
            "cg-deep-one-cpu",
            format!(
                "CPU-time ratio of a hog {DEEP_LEVELS} cgroups below a cpu.weight-25 cgroup and one in a 100 cgroup, one CPU (ideal 0.25)"
            ),
            "ratio",
            Direction::HigherIsBetter,
            "1cpu".to_string(),
        ),
        Case::CgFull => (
            "cg-full-one-cpu",
            "CPU-time ratio of a hog in a cgroup made under a cpu.weight-25 cgroup once scx_sis's cgroup map is full and one in a 100 cgroup, one CPU (ideal 0.25)".into(),
            "ratio",
            Direction::HigherIsBetter,
            "1cpu".to_string(),
        ),
        Case::GbWide => (
            "gb-wide-unpinned",
            format!(
                "cg-wide with both cgroups children of {} (groups under --gb-parent): CPU-time ratio of \
                 cpu.weight 300 (1 hog per CPU) and 100 (2 hogs per CPU), unpinned (ideal 3.00; rows: hogs)",
                super::gbbench::GB_PARENT
            ),
            "ratio",
            Direction::HigherIsBetter,
            format!("{n}+{}", 2 * n),
        ),
    };
    // the groups' parent must be there before a `--gb-parent` variant attaches (best effort and
    // only on cgroup2: the probe reports a failure itself)
    if case == Case::GbWide && scx_sis::group::cgroup_id(Path::new(super::gbbench::GB_PARENT).parent().unwrap()).is_ok()
    {
        let _ = super::gbbench::ensure_parent();
    }
    // ratios of CPU time have a right value: more than it is as wrong as less
    let ideal = match case {
        Case::Nice1 => Some(NICE1_IDEAL),
        Case::Nice8 => Some(NICE8_IDEAL),
        Case::CgWeight | Case::CgWide | Case::GbWide => Some(3.0),
        Case::CgThreads => Some(1.0),
        Case::CgDeep | Case::CgFull => Some(0.25),
        Case::Spread | Case::Odd | Case::Fork | Case::Sleep | Case::CgNested => None,
    };
    Suite {
        name: case.suite_name().into(),
        title: title.into(),
        metric: format!("{metric}; {secs} s after {warm} s"),
        unit: unit.into(),
        direction,
        ideal,
        parser: Parser::Regex(METRIC_RE.into()),
        server: None,
        // the fork loop may run FORK_CAP x the window, plus the op in flight; cg-full makes
        // as many cgroups as the map holds, and removes them
        timeout_s: (FORK_CAP * secs as f64) as u64 + warm.ceil() as u64 + if case == Case::CgFull { 600 } else { 120 },
        params: vec![Param {
            label,
            command: vec![
                exe.to_string_lossy().into_owned(),
                "__fairness".into(),
                case.arg().into(),
                "--secs".into(),
                secs.to_string(),
                "--warmup".into(),
                warm.to_string(),
            ],
        }],
    }
}

/// The suites a --suite entry names: `fairness` = all, `fair-X` = one; None if neither.
pub fn resolve(name: &str, sc: &Scale) -> Option<Vec<Suite>> {
    let exe = std::env::current_exe().unwrap_or_else(|_| "scx_sis".into());
    let all = match name {
        ALL => NAMES,
        ALL_CG => CG_NAMES,
        _ => &[][..],
    };
    if !all.is_empty() {
        return Some(all.iter().filter_map(|n| Case::from_suite(n)).map(|c| suite(c, sc, &exe)).collect());
    }
    Case::from_suite(name).map(|c| vec![suite(c, sc, &exe)])
}

// ---- arithmetic (pure, unit-tested) -----------------------------------------------------------

fn mean(xs: &[f64]) -> Option<f64> {
    (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
}

/// Mean of `a` over mean of `b`; None if either is empty or `b`'s mean is 0.
pub fn mean_ratio(a: &[f64], b: &[f64]) -> Option<f64> {
    let (ma, mb) = (mean(a)?, mean(b)?);
    (mb > 0.0).then(|| ma / mb)
}

/// The largest |x - mean| in % of the mean; None if empty or the mean is 0.
pub fn worst_dev_pct(xs: &[f64]) -> Option<f64> {
    let m = mean(xs)?;
    (m > 0.0).then(|| xs.iter().map(|x| (x - m).abs()).fold(0.0, f64::max) / m * 100.0)
}

/// The worst |share / ideal - 1| in %, shares being `xs` over their sum; None if all are 0.
pub fn worst_share_err_pct(xs: &[f64], ideal: &[f64]) -> Option<f64> {
    let total: f64 = xs.iter().sum();
    (total > 0.0).then(|| xs.iter().zip(ideal).map(|(x, i)| (x / total / i - 1.0).abs() * 100.0).fold(0.0, f64::max))
}

/// Events per second; None for an empty window.
pub fn rate(count: u64, secs: f64) -> Option<f64> {
    (secs > 0.0).then(|| count as f64 / secs)
}

/// Run time in ns: the first field of /proc/PID/schedstat.
pub fn parse_schedstat(s: &str) -> Option<u64> {
    s.split_whitespace().next()?.parse().ok()
}

/// se.sum_exec_runtime of /proc/PID/sched (ms with 6 decimals, CONFIG_SCHED_DEBUG), in ns.
pub fn parse_sched_runtime(s: &str) -> Option<u64> {
    let l = s.lines().find(|l| l.split_whitespace().next() == Some("se.sum_exec_runtime"))?;
    let ms: f64 = l.split(':').nth(1)?.trim().parse().ok()?;
    Some((ms * 1e6).round() as u64)
}

/// Fields of /proc/PID/stat after `comm` (which may hold spaces and parentheses): index 0 is
/// field 3 (state).
fn stat_fields(s: &str) -> Option<Vec<&str>> {
    Some(s[s.rfind(')')? + 1..].split_whitespace().collect())
}

/// utime + stime (fields 14, 15) in clock ticks.
pub fn parse_stat_ticks(s: &str) -> Option<u64> {
    let f = stat_fields(s)?;
    Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
}

/// The CPU the task last ran on (field 39, `processor`).
pub fn parse_stat_cpu(s: &str) -> Option<usize> {
    stat_fields(s)?.get(36)?.parse().ok()
}

/// Hogs per CPU from their last CPUs, as `cpu:count` for each CPU in `cpus` (0 included).
pub fn per_cpu_counts(cpus: &[usize], last: &[Option<usize>]) -> String {
    let mut o = String::new();
    for c in cpus {
        let k = last.iter().filter(|l| **l == Some(*c)).count();
        let _ = write!(o, "{}{c}:{k}", if o.is_empty() { "" } else { " " });
    }
    o
}

// ---- the workload -----------------------------------------------------------------------------

/// CPUs this process may run on.
pub(super) fn allowed_cpus() -> Result<Vec<usize>> {
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            bail!("sched_getaffinity: {}", std::io::Error::last_os_error());
        }
        Ok((0..libc::CPU_SETSIZE as usize).filter(|&c| libc::CPU_ISSET(c, &set)).collect())
    }
}

/// A CPU hog: a forked child spinning until killed.
struct Hog {
    pid: libc::pid_t,
    nice: i32,
    cpu: Option<usize>,
    /// the cgroup it was moved into (index into the case's cgroups; 0: none)
    group: usize,
}

/// The hogs of one run; all are killed and reaped when it is dropped (error paths included).
#[derive(Default)]
pub(super) struct Hogs(Vec<Hog>);

impl Hogs {
    /// Fork a hog at `nice`, pinned to `cpu` if given. Fork without exec, like fair-spread's
    /// "forked by one parent": only fork placement and balancing can spread them.
    pub(super) fn spawn(&mut self, nice: i32, cpu: Option<usize>) -> Result<()> {
        let parent = unsafe { libc::getpid() };
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            bail!("fork: {}", std::io::Error::last_os_error());
        }
        if pid == 0 {
            // child: async-signal-safe calls only, then spin
            unsafe {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                if libc::getppid() != parent {
                    libc::_exit(0);
                }
                if libc::setpriority(libc::PRIO_PROCESS, 0, nice) != 0 {
                    libc::_exit(3);
                }
                if let Some(c) = cpu {
                    let mut set: libc::cpu_set_t = std::mem::zeroed();
                    libc::CPU_SET(c, &mut set);
                    if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                        libc::_exit(4);
                    }
                }
            }
            let mut x = 0u64;
            loop {
                x = std::hint::black_box(x.wrapping_add(1));
            }
        }
        self.0.push(Hog { pid, nice, cpu, group: 0 });
        Ok(())
    }

    /// Fork a nice-0 hog (pinned to `cpu` if given) and move it into cgroup `dir`, as group
    /// `group`; it spins in the parent's cgroup until moved, which the warm-up covers.
    fn spawn_in(&mut self, cpu: Option<usize>, dir: &Path, group: usize) -> Result<()> {
        self.spawn(0, cpu)?;
        let h = self.0.last_mut().unwrap();
        h.group = group;
        CgTree::enter(dir, h.pid)
    }

    /// Run time of every hog (ns) and when it was read, in spawn order; fails if one has died.
    /// Each hog has its own read time: under TCG, reading 24 hogs one after the other can take
    /// a good part of a second (the reader waits its turn among the hogs), so one window for all
    /// favoured the first hogs read (2026-11-23: shares fell from 0.39 to 0.31 along spawn order
    /// with every CPU holding 3 hogs).
    fn run_ns(&self) -> Result<Vec<(u64, Instant)>> {
        self.0.iter().map(|h| Ok((cpu_ns(h.pid)?, Instant::now()))).collect()
    }

    fn last_cpus(&self) -> Vec<Option<usize>> {
        self.0
            .iter()
            .map(|h| std::fs::read_to_string(format!("/proc/{}/stat", h.pid)).ok().and_then(|s| parse_stat_cpu(&s)))
            .collect()
    }
}

impl Drop for Hogs {
    fn drop(&mut self) {
        for h in &self.0 {
            unsafe { libc::kill(h.pid, libc::SIGKILL) };
        }
        for h in &self.0 {
            unsafe { libc::waitpid(h.pid, std::ptr::null_mut(), 0) };
        }
    }
}

/// Sleeps `secs`; with SCX_SIS_FAIR_TRACE=1 in the environment, prints where the hogs are every
/// half second (`place t=S cpu:nice,nice ...`): what a balancing problem looks like over time.
fn watch_placement(hogs: &Hogs, secs: f64) {
    let t0 = Instant::now();
    if std::env::var_os("SCX_SIS_FAIR_TRACE").is_none() {
        std::thread::sleep(Duration::from_secs_f64(secs));
        return;
    }
    while t0.elapsed().as_secs_f64() < secs {
        let mut per_cpu: BTreeMap<usize, Vec<i32>> = BTreeMap::new();
        for (h, c) in hogs.0.iter().zip(hogs.last_cpus()) {
            per_cpu.entry(c.unwrap_or(usize::MAX)).or_default().push(h.nice);
        }
        let cells: Vec<String> = per_cpu
            .iter()
            .map(|(c, n)| format!("{c}:{}", n.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(",")))
            .collect();
        println!("place t={:.1} {}", t0.elapsed().as_secs_f64(), cells.join(" "));
        if let Some(loads) = cpu_loads() {
            println!("  load {}", loads.join(" "));
        }
        if let Some(words) = overloaded_words() {
            println!("  overloaded (ovl_map words, per LLC line) {}", words.join(" "));
        }
        std::thread::sleep(Duration::from_secs_f64((secs - t0.elapsed().as_secs_f64()).clamp(0.0, 0.5)));
    }
}

/// The counters that show what a CPU's slice ends did (stats.rs has their meaning).
const BALANCE_COUNTERS: [(&str, u32); 12] = {
    use scx_sis::bpf_intf::*;
    [
        ("keep_prev", sis_stat_STAT_KEEP_PREV),
        ("dispatch_local", sis_stat_STAT_DISPATCH_LOCAL),
        ("look", sis_stat_STAT_BALANCE_LOOK),
        ("no_gap", sis_stat_STAT_BALANCE_NO_GAP),
        ("unmovable", sis_stat_STAT_BALANCE_UNMOVABLE),
        ("unconfirmed", sis_stat_STAT_BALANCE_UNCONFIRMED),
        ("paced", sis_stat_STAT_BALANCE_PACED),
        ("pull", sis_stat_STAT_BALANCE_PULL),
        ("pull_xllc", sis_stat_STAT_BALANCE_PULL_XLLC),
        ("rotate", sis_stat_STAT_BALANCE_ROTATE),
        ("rotate_xllc", sis_stat_STAT_BALANCE_ROTATE_XLLC),
        ("steal", sis_stat_STAT_STEAL_SUCCESS),
    ]
};

/// A running scx_sis's BALANCE_COUNTERS per CPU (its per-CPU `stats` map), or None.
fn balance_counters() -> Option<Vec<Vec<u64>>> {
    use libbpf_rs::{MapCore, MapFlags};
    // "stats" is a common name: a map of another size (a peer scheduler's) is not ours
    let (map, entries) = map_by_name("stats")?;
    if entries != scx_sis::bpf_intf::sis_stat_SIS_NR_STATS {
        return None;
    }
    let mut per_cpu: Vec<Vec<u64>> = Vec::new();
    for (i, (_, idx)) in BALANCE_COUNTERS.iter().enumerate() {
        let vals = map.lookup_percpu(&idx.to_ne_bytes(), MapFlags::ANY).ok()??;
        per_cpu.resize(vals.len(), vec![0; BALANCE_COUNTERS.len()]);
        for (cpu, v) in vals.iter().enumerate() {
            per_cpu[cpu][i] = u64::from_ne_bytes(v.get(..8)?.try_into().ok()?);
        }
    }
    Some(per_cpu)
}

/// Every thread in state R that is not a hog, as `cpu:comm(tid)` by its last CPU: what else
/// the load of a CPU can hold.
fn other_runnable(hogs: &Hogs) -> String {
    let mine: Vec<i32> = hogs.0.iter().map(|h| h.pid).collect();
    let mut out = Vec::new();
    let procs = std::fs::read_dir("/proc").into_iter().flatten().flatten();
    for pid in procs.filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok()) {
        let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).into_iter().flatten().flatten();
        for tid in tasks.filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok()) {
            if mine.contains(&tid) {
                continue;
            }
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/stat")) else { continue };
            let comm = stat.get(stat.find('(').map_or(0, |i| i + 1)..stat.rfind(')').unwrap_or(0)).unwrap_or("?");
            if stat_fields(&stat).and_then(|f| f.first().copied()) == Some("R") {
                let cpu = parse_stat_cpu(&stat).map_or("?".into(), |c| c.to_string());
                out.push(format!("{cpu}:{comm}({tid})"));
            }
        }
    }
    out.join(" ")
}

/// Every element of a running scx_sis's array map `name` (found by name), formatted by `fmt`
/// from its index and value bytes; None when the map is not there or one element is unreadable.
fn map_cells(name: &str, fmt: impl Fn(u32, &[u8]) -> Option<String>) -> Option<Vec<String>> {
    use libbpf_rs::{MapCore, MapFlags};
    let (map, entries) = map_by_name(name)?;
    (0..entries).map(|i| fmt(i, &map.lookup(&i.to_ne_bytes(), MapFlags::ANY).ok()??)).collect()
}

/// A loaded BPF map found by name, and its number of entries.
fn map_by_name(name: &str) -> Option<(libbpf_rs::MapHandle, u32)> {
    let info = libbpf_rs::query::MapInfoIter::default().find(|m| m.name.to_str() == Some(name))?;
    Some((libbpf_rs::MapHandle::from_map_id(info.id).ok()?, info.max_entries))
}

/// Whether a running scx_sis keeps cpu.weight state of its own for cgroup `dir` (an entry of
/// its cg_slot_map); None without one.
fn cg_tracked(dir: &Path) -> Option<bool> {
    use libbpf_rs::{MapCore, MapFlags};
    let (map, _) = map_by_name("cg_slot_map")?;
    let id = scx_sis::group::cgroup_id(dir).ok()?;
    Some(map.lookup(&id.to_ne_bytes(), MapFlags::ANY).ok()?.is_some())
}

/// cg-full: as many empty cgroups under `parent` as a running scx_sis's cgroup map holds, then
/// `parent/x` (the hog's), which the full map leaves out. Fails unless x is out and `parent` in:
/// else the case would not test a full map.
fn fill_cg_map(t: &mut CgTree, parent: &str) -> Result<std::path::PathBuf> {
    let Some((_, entries)) = map_by_name("cg_slot_map") else {
        println!("no scx_sis cgroup map: nothing to fill");
        return t.add(&format!("{parent}/x"), 100);
    };
    let t0 = Instant::now();
    for i in 0..entries {
        t.mkdir(&format!("{parent}/f{i}"))?;
    }
    let x = t.add(&format!("{parent}/x"), 100)?;
    println!("scx_sis cgroup map filled: {entries} cgroups in {:.1} s", t0.elapsed().as_secs_f64());
    match (cg_tracked(x.parent().unwrap()), cg_tracked(&x)) {
        (Some(true), Some(false)) => Ok(x),
        (p, xt) => bail!(
            "scx_sis cgroup state after the fill: {parent} {p:?}, {parent}/x {xt:?}; want Some(true), Some(false) \
             (was the map full before it? cg-full wants scx_sis --max-cgroups a few hundred)"
        ),
    }
}

/// A running scx_sis's per-CPU `load/tasks` (and `R` when taken by RT/DL), read from its
/// cpu_sched_map: what its balancer sees, beside where the hogs are.
fn cpu_loads() -> Option<Vec<String>> {
    map_cells("cpu_sched_map", |i, v| {
        if v.len() < std::mem::size_of::<scx_sis::bpf_intf::cpu_sched>() {
            return None;
        }
        // SAFETY: the value is a cpu_sched (checked size), read unaligned from the byte buffer
        let c: scx_sis::bpf_intf::cpu_sched = unsafe { std::ptr::read_unaligned(v.as_ptr().cast()) };
        // load in task-weight units (nice 0 = 100)
        let load = c.load >> scx_sis::bpf_intf::sis_consts_SIS_LOAD_SHIFT;
        Some(format!("{i}:{load}/{}{}", c.nr_runnable, if c.released != 0 { "R" } else { "" }))
    })
}

/// The overloaded map's words (first u64 of each 64-byte line, hex): which CPUs the balancer
/// and stealers can pick as victims.
fn overloaded_words() -> Option<Vec<String>> {
    map_cells("ovl_map", |i, v| Some(format!("{i}:{:#x}", u64::from_ne_bytes(v.get(..8)?.try_into().ok()?))))
}

/// A hog's run time in ms between two reads `(ns, when)`, scaled from the time between the two
/// reads to `window` s: every hog measured over an interval of the same length.
fn scaled_run_ms(a: (u64, Instant), b: (u64, Instant), window: f64) -> f64 {
    let ms = b.0.saturating_sub(a.0) as f64 / 1e6;
    let span = b.1.saturating_duration_since(a.1).as_secs_f64();
    if span > 0.0 {
        ms * window / span
    } else {
        ms
    }
}

/// Run time in ns: schedstat (CONFIG_SCHED_INFO), else /proc/PID/sched, else utime+stime.
fn cpu_ns(pid: libc::pid_t) -> Result<u64> {
    if let Some(ns) = std::fs::read_to_string(format!("/proc/{pid}/schedstat")).ok().and_then(|s| parse_schedstat(&s)) {
        return Ok(ns);
    }
    if let Some(ns) = std::fs::read_to_string(format!("/proc/{pid}/sched")).ok().and_then(|s| parse_sched_runtime(&s)) {
        return Ok(ns);
    }
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).with_context(|| format!("hog {pid} is gone"))?;
    if stat_fields(&stat).and_then(|f| f.first().copied()) == Some("Z") {
        bail!("hog {pid} died");
    }
    let ticks = parse_stat_ticks(&stat).with_context(|| format!("cannot parse /proc/{pid}/stat"))?;
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    Ok(ticks * (1_000_000_000 / hz))
}

/// fork+exec+wait of /bin/true for `secs` (and FORK_MIN_OPS, within FORK_CAP x `secs`):
/// (completed, elapsed seconds).
fn fork_loop(secs: f64) -> Result<(u64, f64)> {
    let path = CString::new(TRUE_BIN).unwrap();
    let argv = [path.as_ptr(), std::ptr::null()];
    let t0 = Instant::now();
    let mut n = 0u64;
    while fork_goes_on(n, t0.elapsed().as_secs_f64(), secs) {
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            bail!("fork: {}", std::io::Error::last_os_error());
        }
        if pid == 0 {
            unsafe {
                libc::execv(path.as_ptr(), argv.as_ptr());
                libc::_exit(127);
            }
        }
        let mut status = 0;
        if unsafe { libc::waitpid(pid, &mut status, 0) } != pid {
            bail!("waitpid: {}", std::io::Error::last_os_error());
        }
        if !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 {
            bail!("{TRUE_BIN} failed (wait status {status:#x})");
        }
        n += 1;
    }
    Ok((n, t0.elapsed().as_secs_f64()))
}

/// Whether the fork loop starts another fork+exec+wait after `n` in `t` of a `secs` window.
pub fn fork_goes_on(n: u64, t: f64, secs: f64) -> bool {
    (t < secs || n < FORK_MIN_OPS) && t < FORK_CAP * secs
}

/// 50 ms nanosleeps for `secs`: (completed, elapsed seconds at the last completion), and each
/// sleep's overshoot past 50 ms (timer slack plus the wait for a CPU once woken), in ms.
fn sleep_loop(secs: f64) -> (u64, f64, Vec<f64>) {
    let t0 = Instant::now();
    let mut n = 0u64;
    let mut t = 0.0;
    let mut over = Vec::new();
    while t < secs {
        let s = Instant::now();
        std::thread::sleep(Duration::from_millis(SLEEP_MS));
        over.push(s.elapsed().as_secs_f64() * 1e3 - SLEEP_MS as f64);
        n += 1;
        t = t0.elapsed().as_secs_f64();
    }
    (n, t, over)
}

/// "p50 X p90 Y max Z" of `v` (ms), or "-" when empty.
fn overshoot_summary(v: &[f64]) -> String {
    if v.is_empty() {
        return "-".into();
    }
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
    format!("p50 {:.1} p90 {:.1} max {:.1}", at(0.5), at(0.9), at(1.0))
}

fn usage(msg: String) -> anyhow::Error {
    usage_err(msg)
}

/// This process to SCHED_FIFO 1, its children (the hogs) back to SCHED_OTHER: true if it took.
fn measure_as_rt() -> bool {
    let sp = libc::sched_param { sched_priority: 1 };
    // SAFETY: plain syscall on this process with a valid sched_param
    unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO | libc::SCHED_RESET_ON_FORK, &sp) == 0 }
}

/// Entry of `scx_sis_bench __fairness`.
pub fn probe(a: &ProbeArgs) -> Result<()> {
    if !(a.secs > 0.0 && a.secs <= 3600.0) {
        return Err(usage(format!("__fairness --secs {}: expected 0 < SECS <= 3600", a.secs)));
    }
    if !(0.0..=600.0).contains(&a.warmup) {
        return Err(usage(format!("__fairness --warmup {}: expected 0..=600", a.warmup)));
    }
    let cpus = allowed_cpus()?;
    let n = cpus.len();
    let one = Some(*cpus.last().unwrap());
    // The fork and sleep cases measure this process itself; the others only measure the hogs,
    // and a measurer queued among them (a 25th task among 24 hogs) skews what it reads and,
    // at 64 vCPUs under TCG, needed more than the run's timeout to read 192 hogs.
    if !matches!(a.case, Case::Fork | Case::Sleep) {
        println!("measurer: {}", if measure_as_rt() { "SCHED_FIFO 1" } else { "SCHED_OTHER (no SCHED_FIFO here)" });
    }
    // declared before the hogs: dropped (rmdir) after they are killed and reaped
    let mut cgs = match a.case {
        Case::CgWeight | Case::CgThreads | Case::CgNested | Case::CgWide | Case::CgDeep | Case::CgFull => {
            Some(CgTree::new("scx_sis-fair")?)
        }
        Case::GbWide => {
            super::gbbench::ensure_parent()?;
            Some(CgTree::within(Path::new(super::gbbench::GB_PARENT)))
        }
        _ => None,
    };
    let mut hogs = Hogs::default();
    match a.case {
        Case::Nice1 => {
            let cpu = *cpus.last().unwrap();
            hogs.spawn(0, Some(cpu))?;
            hogs.spawn(NICE1_OTHER, Some(cpu))?;
        }
        Case::Nice8 => {
            for _ in 0..n {
                hogs.spawn(0, None)?;
                hogs.spawn(NICE8_OTHER, None)?;
            }
        }
        Case::Spread => (0..SPREAD_PER_CPU * n).try_for_each(|_| hogs.spawn(0, None))?,
        Case::Odd => (0..n + 1).try_for_each(|_| hogs.spawn(0, None))?,
        Case::Fork | Case::Sleep => (0..RESPONSIVE_PER_CPU * n).try_for_each(|_| hogs.spawn(0, None))?,
        Case::CgFull => {
            let t = cgs.as_mut().unwrap();
            t.add("a", 25)?;
            let b = t.add("b", 100)?;
            let x = fill_cg_map(t, "a")?;
            hogs.spawn_in(one, &x, 1)?;
            hogs.spawn_in(one, &b, 2)?;
        }
        Case::CgWeight | Case::CgThreads | Case::CgNested | Case::CgWide | Case::GbWide | Case::CgDeep => {
            let t = cgs.as_mut().unwrap();
            // (cgroup, cpu.weight, hogs, pinned): group i+1 is the i-th entry with hogs
            let plan: Vec<(String, u32, usize, Option<usize>)> = match a.case {
                Case::CgWeight => vec![("a".into(), 300, 1, one), ("b".into(), 100, 1, one)],
                Case::CgThreads => vec![("a".into(), 100, 4, one), ("b".into(), 100, 1, one)],
                Case::CgNested => vec![
                    ("a".into(), 100, 0, one),
                    ("a/x".into(), 100, 1, one),
                    ("a/y".into(), 100, 2, one),
                    ("b".into(), 100, 1, one),
                ],
                Case::CgDeep => {
                    let mut p = vec![("a".to_string(), 25, 0, one)];
                    for l in 1..=DEEP_LEVELS {
                        p.push((format!("{}/d{l}", p.last().unwrap().0), 100, (l == DEEP_LEVELS) as usize, one));
                    }
                    p.push(("b".into(), 100, 1, one));
                    p
                }
                _ => vec![("a".into(), 300, n, None), ("b".into(), 100, 2 * n, None)],
            };
            let mut group = 0;
            let mut dirs = vec![];
            for (rel, weight, k, cpu) in &plan {
                let dir = t.add(rel, *weight)?;
                if *k > 0 {
                    group += 1;
                    for _ in 0..*k {
                        hogs.spawn_in(*cpu, &dir, group)?;
                    }
                }
                dirs.push(dir);
            }
            if a.case == Case::CgDeep {
                let (top, deepest) = (cg_tracked(&dirs[0]), cg_tracked(&dirs[DEEP_LEVELS]));
                println!("scx_sis cgroup state: a {top:?}, a's deepest {deepest:?} (Some(true): it has its own)");
            }
        }
    }
    std::thread::sleep(Duration::from_secs_f64(a.warmup));
    // the window's own counters: before it the hogs are forked, after it this process reads
    // and prints beside them, one task more than the workload's (the harness's counters cover all)
    let counters = super::host::SysCounters::migrations_only();
    let m0 = super::host::SystemMark::by(&counters);
    let k0 = balance_counters();
    let c0 = hogs.run_ns()?;
    let t0 = Instant::now();
    let loop_result = match a.case {
        Case::Fork => Some(fork_loop(a.secs)?),
        Case::Sleep => {
            let (n, t, over) = sleep_loop(a.secs);
            println!("sleep overshoot past {SLEEP_MS} ms (ms): {}", overshoot_summary(&over));
            Some((n, t))
        }
        _ => {
            watch_placement(&hogs, a.secs);
            None
        }
    };
    let c1 = hogs.run_ns()?;
    let window = t0.elapsed().as_secs_f64();
    let k1 = balance_counters();
    if let Some(d) = m0.delta(super::host::SystemMark::by(&counters)) {
        println!("{}{}", super::parsers::WINDOW_SYSTEM, serde_json::to_string(&d)?);
    }
    let last = hogs.last_cpus();
    // each hog's run time over its own interval, scaled to the common window
    let ms: Vec<f64> = c0.iter().zip(&c1).map(|(a, b)| scaled_run_ms(*a, *b, window)).collect();

    println!("case: {} on {n} CPUs; window {window:.2} s after {} s warm-up", a.case.suite_name(), a.warmup);
    for (h, (m, l)) in hogs.0.iter().zip(ms.iter().zip(&last)) {
        let pin = h.cpu.map_or("-".to_string(), |c| c.to_string());
        let l = l.map_or("?".to_string(), |c| c.to_string());
        println!(
            "hog pid={} nice={} group={} pinned={pin} last_cpu={l} run_ms={m:.1} share={:.3}",
            h.pid,
            h.nice,
            h.group,
            m / window / 1e3
        );
    }
    println!("hogs per CPU at the end: {}", per_cpu_counts(&cpus, &last));
    // what scx_sis's balancer saw at the end (read after the window: no effect on the run)
    if let Some(loads) = cpu_loads() {
        println!("scx_sis load/tasks at the end: {}", loads.join(" "));
    }
    // every thread's stat under /proc: cheap at 8 CPUs, minutes at 64 under TCG (each vCPU gets
    // 1/64 of one host thread, whatever this process's priority)
    let walk_proc = n <= 16 || std::env::var_os("SCX_SIS_FAIR_TRACE").is_some();
    if let Some(words) = overloaded_words() {
        println!("scx_sis overloaded map at the end: {}", words.join(" "));
        if walk_proc {
            println!("runnable threads other than the hogs at the end: {}", other_runnable(&hogs));
        }
    }
    if let (Some(k0), Some(k1)) = (k0, k1) {
        println!("scx_sis per-CPU counters over the window ({}):", BALANCE_COUNTERS.map(|(n, _)| n).join(" "));
        for (cpu, (a, b)) in k0.iter().zip(&k1).enumerate() {
            let d: Vec<String> = a.iter().zip(b).map(|(x, y)| y.saturating_sub(*x).to_string()).collect();
            println!("  cpu{cpu} {}", d.join(" "));
        }
    }
    let by_nice =
        |nice: i32| -> Vec<f64> { hogs.0.iter().zip(&ms).filter(|(h, _)| h.nice == nice).map(|(_, m)| *m).collect() };
    let by_group = |g: usize| -> f64 { hogs.0.iter().zip(&ms).filter(|(h, _)| h.group == g).map(|(_, m)| *m).sum() };
    let metric = match (a.case, loop_result) {
        (Case::CgWeight | Case::CgThreads | Case::CgWide | Case::GbWide | Case::CgDeep | Case::CgFull, _) => {
            let (g1, g2) = (by_group(1), by_group(2));
            println!("group run_ms: 1={g1:.1} 2={g2:.1}");
            (g2 > 0.0).then(|| g1 / g2)
        }
        (Case::CgNested, _) => {
            let g = [by_group(1), by_group(2), by_group(3)];
            println!("group run_ms: x={:.1} y={:.1} b={:.1}", g[0], g[1], g[2]);
            worst_share_err_pct(&g, &[0.25, 0.25, 0.5])
        }
        (Case::Nice1, _) => mean_ratio(&by_nice(0), &by_nice(NICE1_OTHER)),
        (Case::Nice8, _) => mean_ratio(&by_nice(0), &by_nice(NICE8_OTHER)),
        (Case::Spread | Case::Odd, _) => worst_dev_pct(&ms),
        (Case::Fork | Case::Sleep, Some((count, secs))) => {
            println!("completed: {count} in {secs:.2} s");
            rate(count, secs)
        }
        _ => None,
    };
    drop(hogs);
    match metric {
        Some(v) => {
            println!("metric: {v:.4}");
            Ok(())
        }
        None => bail!("no metric: the hogs got no CPU time in the window"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parsers::parse;

    fn scale(quick: bool, duration_s: Option<u32>) -> Scale {
        Scale { nproc: 8, quick, hackbench_groups: None, hackbench_loops: None, duration_s }
    }

    #[test]
    fn overshoot_percentiles() {
        assert_eq!(overshoot_summary(&[]), "-");
        let v: Vec<f64> = (1..=10).rev().map(f64::from).collect();
        // nearest rank on the sorted values: p50 of 1..=10 is the 6th (index 4.5 rounds to 5)
        assert_eq!(overshoot_summary(&v), "p50 6.0 p90 9.0 max 10.0");
    }

    #[test]
    fn run_time_scaled_to_the_common_window() {
        let t = Instant::now();
        let at = |ms: u64| t + Duration::from_millis(ms);
        // read 0.5 s late at the end: 2.25 s of 4.5 s is half the CPU, 2.0 s of a 4 s window
        let m = scaled_run_ms((1_000_000_000, at(0)), (3_250_000_000, at(4500)), 4.0);
        assert!((m - 2000.0).abs() < 1e-6, "{m}");
        // the same instant twice: unscaled
        assert_eq!(scaled_run_ms((0, at(0)), (5_000_000, at(0)), 4.0), 5.0);
    }

    #[test]
    fn arithmetic() {
        assert!((NICE1_IDEAL - 3.0567).abs() < 1e-3);
        assert_eq!(mean_ratio(&[300.0, 100.0], &[50.0, 50.0]), Some(4.0));
        assert_eq!(mean_ratio(&[1.0], &[]), None);
        assert_eq!(mean_ratio(&[1.0], &[0.0]), None);
        // mean 100: the worst is 130 (30 %), not 80 (20 %)
        assert_eq!(worst_dev_pct(&[100.0, 80.0, 90.0, 130.0]), Some(30.0));
        assert_eq!(worst_dev_pct(&[5.0, 5.0]), Some(0.0));
        assert_eq!(worst_dev_pct(&[]), None);
        assert_eq!(worst_dev_pct(&[0.0, 0.0]), None);
        assert_eq!(rate(100, 4.0), Some(25.0));
        // x got 30 of 100 where 25 was due: 20 % off, the worst
        let e = worst_share_err_pct(&[30.0, 25.0, 45.0], &[0.25, 0.25, 0.5]).unwrap();
        assert!((e - 20.0).abs() < 1e-9, "{e}");
        assert_eq!(worst_share_err_pct(&[0.0, 0.0], &[0.5, 0.5]), None);
        assert_eq!(rate(1, 0.0), None);
        // the fork loop: the window, then up to 5 ops, never starting one after 4x the window
        assert!(fork_goes_on(100, 2.9, 3.0));
        assert!(fork_goes_on(4, 5.0, 3.0));
        assert!(!fork_goes_on(5, 3.0, 3.0));
        assert!(!fork_goes_on(1, 12.0, 3.0));
    }

    #[test]
    fn proc_parsing() {
        assert_eq!(parse_schedstat("1234567890 2345 17\n"), Some(1234567890));
        assert_eq!(parse_schedstat(""), None);
        let sched = "hog (4242, #threads: 1)\n---------\nse.exec_start  :  100.5\nse.sum_exec_runtime                          :          1234.567890\nnr_switches : 3\n";
        assert_eq!(parse_sched_runtime(sched), Some(1_234_567_890));
        assert_eq!(parse_sched_runtime("se.exec_start : 1.0\n"), None);
        // comm with spaces and a ')' inside; utime 250 + stime 12, processor 7
        let stat = "4242 (a b) c) R 1 4242 4242 0 -1 4194304 90 0 0 0 250 12 0 0 20 0 1 0 100 1000 50 \
                    18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 7 0 0 0 0 0";
        assert_eq!(parse_stat_ticks(stat), Some(262));
        assert_eq!(parse_stat_cpu(stat), Some(7));
        assert_eq!(parse_stat_cpu("4242 (x) R 1"), None);
        // this very process, from the real file
        let own = std::fs::read_to_string("/proc/self/stat").unwrap();
        assert!(parse_stat_cpu(&own).unwrap() < 4096);
        assert!(parse_stat_ticks(&own).is_some());
        assert_eq!(per_cpu_counts(&[0, 1, 2], &[Some(0), Some(2), Some(0), None]), "0:2 1:0 2:1");
    }

    #[test]
    fn metric_line_parses_with_the_suite_parser() {
        let s = suite(Case::Spread, &scale(false, None), Path::new("/x/scx_sis"));
        let out = "case: fair-spread on 8 CPUs\nhog pid=1 nice=0 run_ms=5.0\nmetric: 3.1250\n";
        assert_eq!(parse(&s.parser, out, 9.0), Ok(3.125));
        assert_eq!(parse(&s.parser, "metric: 1e-3\n", 9.0), Ok(0.001));
        assert!(parse(&s.parser, "no metric: the hogs got no CPU time\n", 9.0).is_err());
    }

    #[test]
    fn suites_and_scaling() {
        let exe = Path::new("/x/scx_sis");
        let s = suite(Case::Nice1, &scale(false, None), exe);
        assert_eq!(s.params[0].command.join(" "), "/x/scx_sis __fairness nice1 --secs 5 --warmup 1");
        assert_eq!(s.direction, Direction::HigherIsBetter);
        let q = suite(Case::Spread, &scale(true, None), exe);
        assert_eq!(q.params[0].command.join(" "), "/x/scx_sis __fairness spread --secs 4 --warmup 1");
        let s = suite(Case::Spread, &scale(false, Some(8)), exe);
        assert_eq!(s.params[0].command[3..].join(" "), "--secs 8 --warmup 2");
        assert_eq!((q.params[0].label.as_str(), q.direction), ("24", Direction::LowerIsBetter));
        let d = suite(Case::Sleep, &scale(true, Some(3)), exe);
        assert_eq!(d.params[0].command[3..].join(" "), "--secs 3 --warmup 0.5");
        assert_eq!(suite(Case::Nice8, &scale(false, None), exe).params[0].label, "8+8");
        assert_eq!(suite(Case::Fork, &scale(false, None), exe).params[0].label, "16");
        let all = resolve(ALL, &scale(true, None)).unwrap();
        assert_eq!(all.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), NAMES);
        assert_eq!(resolve("fair-fork", &scale(true, None)).unwrap()[0].name, "fair-fork");
        assert!(resolve("hackbench", &scale(true, None)).is_none());
        for c in NAMES.iter().chain(CG_NAMES) {
            assert_eq!(Case::from_suite(c).unwrap().suite_name(), *c);
        }
        let cg = resolve(ALL_CG, &scale(true, None)).unwrap();
        assert_eq!(cg.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), CG_NAMES);
        assert_eq!(cg[3].params[0].label, "8+16");
        assert_eq!(cg[4].ideal, Some(0.25));
        // cg-full fills whatever map is loaded: asked for by name only
        let full = resolve("cg-full", &scale(true, None)).unwrap();
        assert_eq!((full[0].ideal, full[0].params[0].command[2].as_str()), (Some(0.25), "cg-full"));
        assert!(!CG_NAMES.contains(&"cg-full"));
        assert_eq!(cg[3].params[0].command[3..].join(" "), "--secs 4 --warmup 1");
        // the probe's case argument is what clap accepts for the variant
        assert_eq!(cg[1].params[0].command[2], "cg-threads");
        assert_eq!(suite(Case::Fork, &scale(true, None), exe).params[0].command[2], "fork");
    }

    /// The real probe, briefly, on this host (no scheduler needed): it must print a metric line.
    #[test]
    fn probe_prints_a_metric() {
        let a = ProbeArgs { case: Case::Sleep, secs: 0.2, warmup: 0.0 };
        probe(&a).unwrap();
        let e = probe(&ProbeArgs { case: Case::Nice1, secs: 0.0, warmup: 0.0 }).unwrap_err();
        assert!(e.downcast_ref::<scx_sis::error::UsageError>().is_some());
    }
}
