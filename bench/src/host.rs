//! The machine a session runs on: what is recorded about it, and whether it can attach
//! schedulers at all.

use anyhow::Result;

use super::model::HostInfo;
use super::rq_lock::{RqLockSums, RqLockTimer};

pub fn nproc() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

pub fn host_info() -> HostInfo {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu_model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, m)| m.trim().to_string())
        .unwrap_or_default();
    let mut llcs: Vec<String> = vec![];
    if let Ok(rd) = std::fs::read_dir("/sys/devices/system/cpu") {
        let mut v: Vec<String> = rd
            .flatten()
            .filter_map(|e| std::fs::read_to_string(e.path().join("cache/index3/shared_cpu_list")).ok())
            .map(|s| s.trim().to_string())
            .collect();
        v.sort();
        v.dedup();
        llcs = v;
    }
    HostInfo {
        kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default().trim().to_string(),
        nproc: nproc(),
        cpu_model,
        llcs,
        scx_sis_version: env!("CARGO_PKG_VERSION").to_string(),
        rig: rig(&std::fs::read_to_string("/proc/cmdline").unwrap_or_default()),
    }
}

/// `scx_sis_rig=NAME` of a kernel command line.
pub fn rig(cmdline: &str) -> String {
    cmdline.split_whitespace().find_map(|w| w.strip_prefix("scx_sis_rig=")).unwrap_or_default().to_string()
}

/// Local time as (YYYY-MM-DD HH:MM:SS, YYYY-MM-DD-HHMMSS).
pub fn local_time() -> (String, String) {
    let now = chrono::Local::now();
    (now.format("%Y-%m-%d %H:%M:%S").to_string(), now.format("%Y-%m-%d-%H%M%S").to_string())
}

/// Is the system fit to attach schedulers? A UsageError if not.
pub fn preflight() -> Result<()> {
    scx_sis::preflight::check(&scx_sis::preflight::Hints {
        no_sched_ext: "run the benchmarks in a VM on a sched_ext kernel (bench/run-vm.sh)",
        not_root: "scx_sis_bench must run as root (it attaches and detaches sched_ext schedulers)",
        attached: ": the baseline needs the fair class",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_time_format() {
        let (a, b) = local_time();
        assert_eq!((a.len(), b.len()), (19, 17));
    }
}

/// The /proc/stat counters a run's `SystemDelta` is the difference of.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ProcStat {
    pub ctxt: u64,
    pub idle: u64,
    pub total: u64,
}

impl ProcStat {
    pub fn read() -> Option<Self> {
        Self::parse(&std::fs::read_to_string("/proc/stat").ok()?)
    }

    /// The aggregate `cpu` line (user nice system idle iowait irq softirq steal; guest time is
    /// inside user) and `ctxt`.
    pub fn parse(text: &str) -> Option<Self> {
        let mut st = ProcStat::default();
        let mut seen = (false, false);
        for l in text.lines() {
            let mut w = l.split_whitespace();
            match w.next() {
                Some("cpu") => {
                    let v: Vec<u64> = w.take(8).filter_map(|x| x.parse().ok()).collect();
                    if v.len() < 5 {
                        return None;
                    }
                    st.idle = v[3] + v[4];
                    st.total = v.iter().sum();
                    seen.0 = true;
                }
                Some("ctxt") => {
                    st.ctxt = w.next()?.parse().ok()?;
                    seen.1 = true;
                }
                _ => {}
            }
        }
        (seen.0 && seen.1).then_some(st)
    }

    pub fn delta(self, later: ProcStat) -> super::model::SystemDelta {
        let total = later.total.saturating_sub(self.total);
        let idle = later.idle.saturating_sub(self.idle);
        super::model::SystemDelta {
            ctxt: later.ctxt.saturating_sub(self.ctxt),
            idle_pct: if total == 0 { 0.0 } else { 100.0 * idle as f64 / total as f64 },
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod proc_stat_tests {
    use super::*;

    #[test]
    fn proc_stat_delta() {
        let a = ProcStat::parse("cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 1 2 3 4\nctxt 1000\nbtime 1\n").unwrap();
        let b = ProcStat::parse("cpu  200 0 100 850 50 0 0 0 0 0\nctxt 4000\n").unwrap();
        let d = a.delta(b);
        assert_eq!(d.ctxt, 3000);
        // 150 busy + 50 idle jiffies
        assert!((d.idle_pct - 25.0).abs() < 1e-9, "{}", d.idle_pct);
        assert_eq!(ProcStat::parse("ctxt 5\n"), None);
    }
}

/// Counters of a run beyond /proc/stat, system-wide: task migrations (the kernel's
/// `cpu-migrations` software event, which counts every class's moves, sched_ext's included),
/// the time tasks waited runnable (`run_delay` of /proc/schedstat), with `--bpf-time` the run
/// time of every loaded sched_ext (struct_ops) program, which is where a BPF scheduler's own cost
/// is, and with `--lock-time` the time taken by runqueue locks (rq_lock.rs).
pub struct SysCounters {
    migrations: Vec<std::os::fd::OwnedFd>,
    /// Held open while the kernel keeps BPF run-time statistics (BPF_ENABLE_STATS).
    bpf_stats: Option<std::os::fd::OwnedFd>,
    rq_lock: Option<RqLockTimer>,
}

/// One reading of `SysCounters`; a field is None when its source is missing.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SysSnapshot {
    pub migrations: Option<u64>,
    pub run_delay_ns: Option<u64>,
    /// (run time ns, calls) summed over the struct_ops programs.
    pub bpf: Option<(u64, u64)>,
    pub rq_lock: Option<RqLockSums>,
}

static COUNTERS: std::sync::OnceLock<SysCounters> = std::sync::OnceLock::new();

/// Opens the session's counters (once). Returns notes about the sources that cannot be read.
pub fn init_counters(bpf_time: bool, lock_time: bool) -> Vec<String> {
    let mut notes = vec![];
    let mut lock_err = None;
    let c = COUNTERS.get_or_init(|| {
        let rq_lock =
            if lock_time { RqLockTimer::attach().map_err(|e| lock_err = Some(format!("{e:#}"))).ok() } else { None };
        SysCounters {
            bpf_stats: if bpf_time { bpf_enable_run_time_stats() } else { None },
            rq_lock,
            ..SysCounters::migrations_only()
        }
    });
    if c.migrations.is_empty() {
        notes.push("no migration counts: perf_event_open(cpu-migrations) failed on some CPU".into());
    }
    if bpf_time && c.bpf_stats.is_none() {
        notes.push("no BPF run time: BPF_ENABLE_STATS failed".into());
    }
    if lock_time && c.rq_lock.is_none() {
        notes.push(format!("no runqueue-lock time: {}", lock_err.unwrap_or_else(|| "not attached".into())));
    }
    notes
}

/// The counters now (only /proc/schedstat when `init_counters` was never called).
pub fn counters_now() -> SysSnapshot {
    SysCounters::snapshot(COUNTERS.get())
}

impl SysCounters {
    /// Migrations only, for a workload to read its own window by, apart from the session's.
    pub fn migrations_only() -> Self {
        let cpus = online_cpus();
        let migrations: Vec<_> =
            cpus.iter().filter_map(|&c| perf_sw_counter(c, PERF_COUNT_SW_CPU_MIGRATIONS)).collect();
        let migrations = if migrations.len() == cpus.len() { migrations } else { vec![] };
        SysCounters { migrations, bpf_stats: None, rq_lock: None }
    }

    fn snapshot(c: Option<&SysCounters>) -> SysSnapshot {
        let mut s = SysSnapshot { run_delay_ns: schedstat_run_delay(), ..Default::default() };
        if let Some(c) = c {
            if !c.migrations.is_empty() {
                s.migrations = c.migrations.iter().map(read_counter).sum::<Option<u64>>();
            }
            if c.bpf_stats.is_some() {
                s.bpf = Some(struct_ops_run_time());
            }
            s.rq_lock = c.rq_lock.as_ref().and_then(RqLockTimer::read);
        }
        s
    }
}

/// Every system counter at one instant: a run's `SystemDelta` is the difference of two.
#[derive(Clone, Debug)]
pub struct SystemMark(Option<ProcStat>, SysSnapshot);

impl SystemMark {
    /// By the session's counters (`init_counters`).
    pub fn now() -> Self {
        SystemMark(ProcStat::read(), counters_now())
    }

    /// By `c`.
    pub fn by(c: &SysCounters) -> Self {
        SystemMark(ProcStat::read(), SysCounters::snapshot(Some(c)))
    }

    /// The counters from `self` to `later`; None without /proc/stat.
    pub fn delta(self, later: SystemMark) -> Option<super::model::SystemDelta> {
        let mut d = self.0?.delta(later.0?);
        self.1.delta_into(later.1, &mut d);
        Some(d)
    }
}

impl SysSnapshot {
    /// Adds the differences from `self` to `later` to `d`.
    pub fn delta_into(self, later: SysSnapshot, d: &mut super::model::SystemDelta) {
        let sub = |a: Option<u64>, b: Option<u64>| a.zip(b).map(|(a, b)| b.saturating_sub(a));
        d.migrations = sub(self.migrations, later.migrations);
        d.run_delay_ns = sub(self.run_delay_ns, later.run_delay_ns);
        if let (Some(a), Some(b)) = (self.bpf, later.bpf) {
            d.bpf_ns = Some(b.0.saturating_sub(a.0));
            d.bpf_calls = Some(b.1.saturating_sub(a.1));
        }
        if let (Some(a), Some(b)) = (self.rq_lock, later.rq_lock) {
            d.rq_wait_sites = Some(a.sites_since(&b));
            d.rq_wait_own_ns = Some(b.wait_own_ns.saturating_sub(a.wait_own_ns));
            d.rq_wait_own_n = Some(b.wait_own_n.saturating_sub(a.wait_own_n));
            d.rq_wait_other_ns = Some(b.wait_other_ns.saturating_sub(a.wait_other_ns));
            d.rq_wait_other_n = Some(b.wait_other_n.saturating_sub(a.wait_other_n));
            d.rq_lock_remote_ns = Some(b.remote_ns.saturating_sub(a.remote_ns));
            d.rq_lock_remote_n = Some(b.remote_n.saturating_sub(a.remote_n));
            d.rq_lock_local_ns = Some(b.local_ns.saturating_sub(a.local_ns));
            d.rq_lock_local_n = Some(b.local_n.saturating_sub(a.local_n));
        }
    }
}

fn online_cpus() -> Vec<i32> {
    std::fs::read_to_string("/sys/devices/system/cpu/online")
        .ok()
        .and_then(|s| scx_sis::topology::parse_cpulist(s.trim()).ok())
        .map(|v| v.into_iter().map(|c| c as i32).collect())
        .unwrap_or_default()
}

const PERF_TYPE_SOFTWARE: u32 = 1;
const PERF_COUNT_SW_CPU_MIGRATIONS: u64 = 4;
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 8;

/// perf_event_attr as of its first version (PERF_ATTR_SIZE_VER0, 64 bytes): all a counting
/// software event needs; the kernel takes older sizes.
#[repr(C)]
#[derive(Default)]
struct PerfEventAttrV0 {
    ty: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    bp_addr: u64,
}

/// A counting software event on one CPU, every task (needs root or perf_event_paranoid <= 0).
fn perf_sw_counter(cpu: i32, config: u64) -> Option<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    let attr = PerfEventAttrV0 { ty: PERF_TYPE_SOFTWARE, size: 64, config, ..Default::default() };
    // SAFETY: attr is a valid perf_event_attr of the size it declares; pid -1 + cpu = all tasks there
    let fd = unsafe {
        libc::syscall(libc::SYS_perf_event_open, &attr as *const PerfEventAttrV0, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC)
    };
    // SAFETY: a new fd the kernel just returned, owned by nothing else
    (fd >= 0).then(|| unsafe { std::os::fd::OwnedFd::from_raw_fd(fd as i32) })
}

fn read_counter(fd: &std::os::fd::OwnedFd) -> Option<u64> {
    use std::os::fd::AsRawFd;
    let mut v = 0u64;
    // SAFETY: reads 8 bytes into a u64 from a counting perf fd
    let n = unsafe { libc::read(fd.as_raw_fd(), &mut v as *mut u64 as *mut libc::c_void, 8) };
    (n == 8).then_some(v)
}

/// BPF_ENABLE_STATS(BPF_STATS_RUN_TIME): the kernel times every BPF program while the fd is open.
fn bpf_enable_run_time_stats() -> Option<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    const BPF_ENABLE_STATS: libc::c_long = 32;
    let attr = [0u32; 2]; // enable_stats.type = BPF_STATS_RUN_TIME (0)
                          // SAFETY: a bpf(2) call with a zeroed attr of the size passed
    let fd = unsafe { libc::syscall(libc::SYS_bpf, BPF_ENABLE_STATS, attr.as_ptr(), 8u32) };
    // SAFETY: a new fd the kernel just returned
    (fd >= 0).then(|| unsafe { std::os::fd::OwnedFd::from_raw_fd(fd as i32) })
}

/// Run time (ns) and calls summed over every loaded struct_ops program.
fn struct_ops_run_time() -> (u64, u64) {
    libbpf_rs::query::ProgInfoIter::default()
        .filter(|p| p.ty == libbpf_rs::ProgramType::StructOps)
        .fold((0, 0), |(ns, n), p| (ns + p.run_time_ns, n + p.run_cnt))
}

/// The sum over CPUs of /proc/schedstat's `run_delay` (ns tasks spent runnable, waiting for a CPU).
fn schedstat_run_delay() -> Option<u64> {
    parse_schedstat_run_delay(&std::fs::read_to_string("/proc/schedstat").ok()?)
}

/// `cpuN yld_count 0 sched_count sched_goidle ttwu_count ttwu_local rq_cpu_time run_delay pcount`
/// (versions 15-17 agree on these fields).
fn parse_schedstat_run_delay(text: &str) -> Option<u64> {
    let mut sum = None;
    for l in text.lines() {
        let mut w = l.split_whitespace();
        if !w.next().is_some_and(|c| c.starts_with("cpu")) {
            continue;
        }
        let v: u64 = w.nth(7)?.parse().ok()?;
        sum = Some(sum.unwrap_or(0) + v);
    }
    sum
}

#[cfg(test)]
mod counter_tests {
    use super::*;

    #[test]
    fn schedstat_sums_run_delay() {
        let text = "version 15\ntimestamp 4295\ncpu0 0 0 100 40 60 30 5000 7000 60\ndomain0 3 1 2 3\n\
                    cpu1 0 0 100 40 60 30 5000 3000 60\n";
        assert_eq!(parse_schedstat_run_delay(text), Some(10_000));
        assert_eq!(parse_schedstat_run_delay("version 15\n"), None);
        assert_eq!(parse_schedstat_run_delay("cpu0 1 2\n"), None);
    }

    #[test]
    fn counters_open_on_this_host() {
        // SAFETY: getuid has no preconditions
        if unsafe { libc::getuid() } != 0 {
            println!("SKIP counters_open_on_this_host: perf and BPF statistics need root");
            return;
        }
        assert_eq!(init_counters(true, false), Vec::<String>::new());
        let a = counters_now();
        // a thread that moves itself between CPUs is a migration the counter must see
        let cpus = online_cpus();
        if cpus.len() >= 2 {
            for &c in cpus.iter().take(2).cycle().take(6) {
                // SAFETY: a zeroed cpu_set_t with one CPU set, for this thread
                unsafe {
                    let mut set: libc::cpu_set_t = std::mem::zeroed();
                    libc::CPU_SET(c as usize, &mut set);
                    libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
                }
                std::thread::yield_now();
            }
        }
        let b = counters_now();
        let (ma, mb) = (a.migrations.unwrap(), b.migrations.unwrap());
        if cpus.len() >= 2 {
            assert!(mb >= ma + 3, "migrations {ma} -> {mb}");
        }
        if std::path::Path::new("/proc/schedstat").exists() {
            assert!(b.run_delay_ns >= a.run_delay_ns && a.run_delay_ns.is_some());
        } else {
            println!("note: this kernel has no /proc/schedstat (CONFIG_SCHEDSTATS): no runnable wait");
            assert_eq!(a.run_delay_ns, None);
        }
        assert!(b.bpf.is_some());
    }

    #[test]
    fn snapshot_delta() {
        let lock = |n: u64| RqLockSums {
            local_ns: 10 * n,
            local_n: n,
            remote_ns: 100 * n,
            remote_n: 2 * n,
            ..Default::default()
        };
        let a =
            SysSnapshot { migrations: Some(10), run_delay_ns: Some(1000), bpf: Some((500, 5)), rq_lock: Some(lock(1)) };
        let b = SysSnapshot {
            migrations: Some(25),
            run_delay_ns: Some(4000),
            bpf: Some((2500, 9)),
            rq_lock: Some(lock(4)),
        };
        let mut d = super::super::model::SystemDelta::default();
        a.delta_into(b.clone(), &mut d);
        assert_eq!((d.migrations, d.run_delay_ns, d.bpf_ns, d.bpf_calls), (Some(15), Some(3000), Some(2000), Some(4)));
        assert_eq!(
            (d.rq_lock_remote_ns, d.rq_lock_remote_n, d.rq_lock_local_ns, d.rq_lock_local_n),
            (Some(300), Some(6), Some(30), Some(3))
        );
        let mut d = super::super::model::SystemDelta::default();
        SysSnapshot::default().delta_into(b, &mut d);
        assert_eq!((d.migrations, d.bpf_ns, d.rq_lock_remote_ns), (None, None, None));
    }
}
