//! Time the kernel spends taking runqueue locks (`--lock-time`): bpf/rq_lock.bpf.c, attached for
//! the whole session, sums per CPU the time from entering raw_spin_rq_lock_nested to leaving it,
//! split by whether the rq is the CPU's own or another's (remote: cross-CPU moves and wakeups).
//! That function is not seen where kernel/sched/core.c inlined it (a wakeup's lock of the wakee's
//! rq, __schedule's own), so the contended waits for any rq lock are timed too, from every caller
//! (the spinlock's slow path), split by whether the rq is the waiter's own, and counted by
//! site: the kernel path that waited, named from its stack (`site_of`), so a wait above the fair
//! class's can be traced to wakeups, pulls, kicks or balancing. Tracing programs, so they measure
//! the fair class and every sched_ext scheduler alike.

mod skel {
    include!(concat!(env!("OUT_DIR"), "/rq_lock_skel.rs"));
}

use std::collections::{BTreeMap, HashMap};
use std::mem::MaybeUninit;
use std::sync::Mutex;

use anyhow::{Context, Result};
use libbpf_rs::skel::{OpenSkel, Skel, SkelBuilder};
use libbpf_rs::{MapCore, MapFlags, MapHandle};

/// Runqueue-lock time summed over CPUs, since the timer attached.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RqLockSums {
    pub local_ns: u64,
    pub local_n: u64,
    pub remote_ns: u64,
    pub remote_n: u64,
    /// Contended waits for the CPU's own rq lock, and for another CPU's, from any caller.
    pub wait_own_ns: u64,
    pub wait_own_n: u64,
    pub wait_other_ns: u64,
    pub wait_other_n: u64,
    /// Contended waits by site (`site_of`): (count, ns).
    pub wait_sites: BTreeMap<String, (u64, u64)>,
}

/// The spinlock's own functions, those that take an rq lock for a caller, and the timer's frames:
/// a site is named by the frames above them.
const LOCK_FRAMES: &[&str] = &[
    "bpf_",
    "__bpf",
    "raw_spin_rq_lock",
    "_raw_spin",
    "do_raw_spin",
    "double_rq_lock",
    "_double_lock_balance",
    "double_lock_balance",
    "__task_rq_lock",
    "task_rq_lock",
    "rq_lock",
    "queued_spin_lock",
    "native_queued_spin_lock",
    "__pv_queued_spin_lock",
];
/// How many frames above the lock name a site.
const SITE_FRAMES: usize = 2;

/// Kernel text symbols, by address (/proc/kallsyms; root sees the addresses).
#[derive(Debug, Default)]
struct Kallsyms(Vec<(u64, String)>);

impl Kallsyms {
    fn parse(text: &str) -> Self {
        let mut v: Vec<(u64, String)> = text
            .lines()
            .filter_map(|l| {
                let mut w = l.split_whitespace();
                let a = u64::from_str_radix(w.next()?, 16).ok()?;
                let t = w.next()?;
                let name = w.next()?;
                (a != 0 && matches!(t, "t" | "T" | "w" | "W")).then(|| (a, name.to_string()))
            })
            .collect();
        v.sort();
        Kallsyms(v)
    }

    fn name(&self, ip: u64) -> &str {
        match self.0.partition_point(|(a, _)| *a <= ip) {
            0 => "?",
            i => &self.0[i - 1].1,
        }
    }
}

/// A wait's site from its stack (innermost frame first): the first SITE_FRAMES functions
/// above the lock helpers, innermost first, joined by " < " (e.g. "move_remote_task_to_local_dsq
/// < dispatch_to_local_dsq").
fn site_of(names: &[&str]) -> String {
    let above: Vec<&str> = names
        .iter()
        .copied()
        .skip_while(|n| *n == "?" || LOCK_FRAMES.iter().any(|l| n.starts_with(l)))
        .take(SITE_FRAMES)
        .map(|n| if n.starts_with("bpf_") { "(bpf)" } else { n })
        .collect();
    if above.is_empty() {
        "?".into()
    } else {
        above.join(" < ")
    }
}

impl RqLockSums {
    /// Adds one CPU's record (four u64s, bpf/rq_lock.bpf.c's struct rq_lock_sum).
    fn add_record(&mut self, b: &[u8]) {
        let f = |i: usize| b.get(i * 8..i * 8 + 8).map_or(0, |s| u64::from_ne_bytes(s.try_into().unwrap()));
        self.local_ns += f(0);
        self.local_n += f(1);
        self.remote_ns += f(2);
        self.remote_n += f(3);
        self.wait_own_ns += f(4);
        self.wait_own_n += f(5);
        self.wait_other_ns += f(6);
        self.wait_other_n += f(7);
    }

    /// Waits by site, (count, ns), from `later`'s less `self`'s (sites at 0 left out).
    pub fn sites_since(&self, later: &RqLockSums) -> BTreeMap<String, (u64, u64)> {
        later
            .wait_sites
            .iter()
            .map(|(k, v)| {
                let a = self.wait_sites.get(k).copied().unwrap_or((0, 0));
                (k.clone(), (v.0.saturating_sub(a.0), v.1.saturating_sub(a.1)))
            })
            .filter(|(_, v)| v.0 > 0)
            .collect()
    }
}

/// The attached timer: its programs stay attached until the process exits.
pub struct RqLockTimer {
    sums: MapHandle,
    sites: MapHandle,
    syms: Kallsyms,
    /// stack -> site, named once
    named: Mutex<HashMap<Vec<u8>, String>>,
}

impl RqLockTimer {
    /// Loads and attaches the timer (root; a kernel with BTF and BPF trampolines).
    pub fn attach() -> Result<Self> {
        let obj: &'static mut MaybeUninit<libbpf_rs::OpenObject> = Box::leak(Box::new(MaybeUninit::uninit()));
        let open = skel::RqLockSkelBuilder::default().open(obj).context("open the rq-lock timer")?;
        let mut skel = open.load().context("load the rq-lock timer")?;
        skel.attach().context("attach to raw_spin_rq_lock_nested")?;
        let sums = MapHandle::try_from(&skel.maps.rq_lock_sums)?;
        let sites = MapHandle::try_from(&skel.maps.rq_lock_sites)?;
        // the links live in the skeleton: kept for the rest of the process
        Box::leak(Box::new(skel));
        let syms = Kallsyms::parse(&std::fs::read_to_string("/proc/kallsyms").unwrap_or_default());
        Ok(RqLockTimer { sums, sites, syms, named: Mutex::new(HashMap::new()) })
    }

    /// The site of a stack (bpf/rq_lock.bpf.c's struct rq_lock_stack), named once.
    fn site(&self, key: &[u8]) -> String {
        let mut named = self.named.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = named.get(key) {
            return s.clone();
        }
        let names: Vec<&str> = key
            .chunks_exact(8)
            .map(|c| u64::from_ne_bytes(c.try_into().unwrap()))
            .take_while(|ip| *ip != 0)
            .map(|ip| self.syms.name(ip))
            .collect();
        let s = site_of(&names);
        named.insert(key.to_vec(), s.clone());
        s
    }

    /// Waits by site now, summed over CPUs.
    fn read_sites(&self) -> BTreeMap<String, (u64, u64)> {
        let mut out = BTreeMap::new();
        let f = |b: &[u8], i: usize| b.get(i * 8..i * 8 + 8).map_or(0, |s| u64::from_ne_bytes(s.try_into().unwrap()));
        for key in self.sites.keys() {
            let Ok(Some(per_cpu)) = self.sites.lookup_percpu(&key, MapFlags::ANY) else { continue };
            let e = out.entry(self.site(&key)).or_insert((0, 0));
            for b in &per_cpu {
                e.0 += f(b, 0);
                e.1 += f(b, 1);
            }
        }
        out
    }

    /// The sums over CPUs now.
    pub fn read(&self) -> Option<RqLockSums> {
        let per_cpu = self.sums.lookup_percpu(&0u32.to_ne_bytes(), MapFlags::ANY).ok()??;
        let mut s = RqLockSums::default();
        for b in &per_cpu {
            s.add_record(b);
        }
        s.wait_sites = self.read_sites();
        Some(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The timer itself is checked in the VM (tests/vm/guest/bench_smoke.sh): this host refuses
    // tracing programs to its sandbox.
    #[test]
    fn records_add_up() {
        let rec = |v: [u64; 8]| v.iter().flat_map(|x| x.to_ne_bytes()).collect::<Vec<u8>>();
        let mut s = RqLockSums::default();
        s.add_record(&rec([10, 1, 300, 2, 7, 1, 90, 3]));
        s.add_record(&rec([5, 1, 0, 0, 0, 0, 10, 1]));
        assert_eq!(
            s,
            RqLockSums {
                local_ns: 15,
                local_n: 2,
                remote_ns: 300,
                remote_n: 2,
                wait_own_ns: 7,
                wait_own_n: 1,
                wait_other_ns: 100,
                wait_other_n: 4,
                ..Default::default()
            }
        );
    }

    #[test]
    fn a_site_is_named_by_the_frames_above_the_lock() {
        let syms = Kallsyms::parse(
            "ffffffff81000100 T raw_spin_rq_lock_nested\nffffffff81000200 t move_remote_task_to_local_dsq\n\
             ffffffff81000300 T dispatch_to_local_dsq\nffffffff81000400 T schedule\n0000000000000000 T zero\n\
             ffffffff81000500 d data_not_text\n",
        );
        assert_eq!(syms.name(0xffffffff81000210), "move_remote_task_to_local_dsq");
        assert_eq!(syms.name(0xffffffff81000010), "?");
        let names: Vec<&str> =
            [0xffffffffa0001000u64, 0xffffffff81000110, 0xffffffff81000210, 0xffffffff81000310, 0xffffffff81000410]
                .iter()
                .map(|ip| syms.name(*ip))
                .collect();
        assert_eq!(names[0], "schedule", "an address past the last symbol is in the last");
        assert_eq!(
            site_of(&[
                "bpf_trampoline_6442",
                "raw_spin_rq_lock_nested",
                "move_remote_task_to_local_dsq",
                "dispatch_to_local_dsq",
                "schedule"
            ]),
            "move_remote_task_to_local_dsq < dispatch_to_local_dsq"
        );
        assert_eq!(site_of(&["?", "double_rq_lock", "sched_balance_rq"]), "sched_balance_rq");
        assert_eq!(site_of(&["raw_spin_rq_lock_nested"]), "?");
        assert_eq!(site_of(&["bpf_prog_1", "scx_dsq_move", "bpf_trampoline_6442", "x"]), "scx_dsq_move < (bpf)");
        let a = RqLockSums {
            wait_sites: [("a".to_string(), (3, 30)), ("b".to_string(), (5, 50))].into(),
            ..Default::default()
        };
        let b = RqLockSums {
            wait_sites: [("a".to_string(), (3, 30)), ("b".to_string(), (9, 70)), ("c".to_string(), (1, 5))].into(),
            ..Default::default()
        };
        assert_eq!(a.sites_since(&b), [("b".to_string(), (4, 20)), ("c".to_string(), (1, 5))].into());
    }
}
