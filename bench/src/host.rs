//! The machine a session runs on: what is recorded about it, and whether it can attach
//! schedulers at all.

use anyhow::Result;

use super::model::HostInfo;

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
