//! Time the kernel spends taking runqueue locks (`--lock-time`): bpf/rq_lock.bpf.c, attached for
//! the whole session, sums per CPU the time from entering raw_spin_rq_lock_nested to leaving it,
//! split by whether the rq is the CPU's own or another's (remote: cross-CPU moves and wakeups).
//! A tracing program, so it measures the fair class and every sched_ext scheduler alike.

mod skel {
    include!(concat!(env!("OUT_DIR"), "/rq_lock_skel.rs"));
}

use std::mem::MaybeUninit;

use anyhow::{Context, Result};
use libbpf_rs::skel::{OpenSkel, Skel, SkelBuilder};
use libbpf_rs::{MapCore, MapFlags, MapHandle};

/// Runqueue-lock time summed over CPUs, since the timer attached.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RqLockSums {
    pub local_ns: u64,
    pub local_n: u64,
    pub remote_ns: u64,
    pub remote_n: u64,
}

impl RqLockSums {
    /// Adds one CPU's record (four u64s, bpf/rq_lock.bpf.c's struct rq_lock_sum).
    fn add_record(&mut self, b: &[u8]) {
        let f = |i: usize| b.get(i * 8..i * 8 + 8).map_or(0, |s| u64::from_ne_bytes(s.try_into().unwrap()));
        self.local_ns += f(0);
        self.local_n += f(1);
        self.remote_ns += f(2);
        self.remote_n += f(3);
    }
}

/// The attached timer: its programs stay attached until the process exits.
pub struct RqLockTimer {
    sums: MapHandle,
}

impl RqLockTimer {
    /// Loads and attaches the timer (root; a kernel with BTF and BPF trampolines).
    pub fn attach() -> Result<Self> {
        let obj: &'static mut MaybeUninit<libbpf_rs::OpenObject> = Box::leak(Box::new(MaybeUninit::uninit()));
        let open = skel::RqLockSkelBuilder::default().open(obj).context("open the rq-lock timer")?;
        let mut skel = open.load().context("load the rq-lock timer")?;
        skel.attach().context("attach to raw_spin_rq_lock_nested")?;
        let sums = MapHandle::try_from(&skel.maps.rq_lock_sums)?;
        // the links live in the skeleton: kept for the rest of the process
        Box::leak(Box::new(skel));
        Ok(RqLockTimer { sums })
    }

    /// The sums over CPUs now.
    pub fn read(&self) -> Option<RqLockSums> {
        let per_cpu = self.sums.lookup_percpu(&0u32.to_ne_bytes(), MapFlags::ANY).ok()??;
        let mut s = RqLockSums::default();
        for b in &per_cpu {
            s.add_record(b);
        }
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
        let rec = |v: [u64; 4]| v.iter().flat_map(|x| x.to_ne_bytes()).collect::<Vec<u8>>();
        let mut s = RqLockSums::default();
        s.add_record(&rec([10, 1, 300, 2]));
        s.add_record(&rec([5, 1, 0, 0]));
        assert_eq!(s, RqLockSums { local_ns: 15, local_n: 2, remote_ns: 300, remote_n: 2 });
    }
}
