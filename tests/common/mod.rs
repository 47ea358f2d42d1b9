//! Shared test helpers: fixture sysfs trees and a driver for the host-test BPF object.
#![allow(dead_code)]

use std::mem::MaybeUninit;
use std::path::Path;

use libbpf_rs::skel::{OpenSkel, SkelBuilder};
use libbpf_rs::{MapCore, MapFlags, OpenObject, ProgramInput};

use scx_sis::bpf_intf;
use scx_sis::idle_filter;
use scx_sis::layout::Layout;
use scx_sis::maps::percpu_sum;
use scx_sis::overload;
use scx_sis::sis_test_skel::*;
use scx_sis::topology::{self, Topology};

pub use scx_sis::topology::fixture::Shape;

/// Writes a sysfs tree for `shape` under `root`.
pub fn write_sysfs(root: &Path, shape: &Shape) {
    scx_sis::topology::fixture::write_sysfs(root, shape).unwrap();
}

pub fn topology_of(shape: &Shape) -> Topology {
    let dir = tempfile::tempdir().unwrap();
    write_sysfs(dir.path(), shape);
    Topology::from_sysfs(dir.path()).unwrap()
}

// The programs' argument structs come from bpf/test_intf.h through bindgen.
pub use scx_sis::test_intf::{
    balance_args as BalanceArgs, cg_args as CgArgs, cpu_args as CpuArgs, ovl_args as OvlArgs, scan_args as ScanArgs,
    vtime_args as VtimeArgs, walk_args as WalkArgs,
};

use scx_sis::bpf_intf::{cpu_ctx, cpu_sched, llc_ctx};
use scx_sis::map_value;

/// An all-zero value of a bindgen'd C struct (they derive no Default).
pub fn zeroed<T: Copy>() -> T {
    // SAFETY: only used for plain-data C structs, for which all-zero is a valid value
    unsafe { std::mem::zeroed() }
}

/// The host-test BPF object loaded over a synthetic topology.
pub struct Sis {
    pub skel: SisTestSkel<'static>,
    pub topo: Topology,
}

impl Sis {
    /// Loads with `mode` (bpf_intf::sis_mode_*), all CPUs allowed, nothing initialised.
    pub fn load(shape: &Shape, mode: u32) -> Sis {
        Self::load_with(shape, mode, true)
    }

    /// `load`, with the busy-CPU balance on or off (`--no-balance`).
    pub fn load_with(shape: &Shape, mode: u32, balance_on: bool) -> Sis {
        let topo = topology_of(shape);
        let obj: &'static mut MaybeUninit<OpenObject> = Box::leak(Box::new(MaybeUninit::uninit()));
        let mut open = SisTestSkelBuilder::default().open(obj).expect("open test object");
        let layout = Layout::of(&topo);
        let rodata = open.maps.rodata_data.as_mut().unwrap();
        scx_sis::set_layout_rodata!(&mut *rodata, layout);
        open.maps.data_data.as_mut().unwrap().sis_mode = mode;
        rodata.builtin_idle = false;
        rodata.balance_on = balance_on;
        // only group.bpf.h reads it, and only tests/group.rs calls into that
        rodata.gb_enabled = true;
        // the test object has every topology-sized map but the stealing counters
        assert_eq!(layout.size_maps(open.open_object_mut()).unwrap(), ["llc_steals"]);
        scx_sis::group::size_maps(open.open_object_mut(), &topo).unwrap();
        // SIS_VERIFIER_LOG=1: dump the verifier's log of every program to target/verifier.log
        if std::env::var_os("SIS_VERIFIER_LOG").is_some() {
            for mut prog in open.open_object_mut().progs_mut() {
                prog.set_log_level(2);
            }
            libbpf_rs::set_print(Some((libbpf_rs::PrintLevel::Debug, |_, msg: String| {
                use std::io::Write;
                let mut f = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(concat!(env!("CARGO_MANIFEST_DIR"), "/target/verifier.log"))
                    .unwrap();
                let _ = f.write_all(msg.as_bytes());
            })));
        }
        let skel = open.load().expect("load test object (verifier)");
        topology::write_maps(&topo, &skel.maps.cpu_topo_map, &skel.maps.llc_topo_map, &skel.maps.llc_cpus_map).unwrap();
        let mut sis = Sis { skel, topo };
        sis.allow_all();
        sis
    }

    pub fn allow(&mut self, cpus: &[usize]) {
        let bss = self.skel.maps.bss_data.as_mut().unwrap();
        bss.test_allowed.iter_mut().for_each(|w| *w = 0);
        for &c in cpus {
            bss.test_allowed[c / 64] |= 1u64 << (c % 64);
        }
    }

    pub fn allow_all(&mut self) {
        let all: Vec<usize> = self.topo.cpus.iter().map(|c| c.id).collect();
        self.allow(&all);
    }

    pub fn run<T: Copy>(prog: &mut libbpf_rs::ProgramMut, args: &mut T) -> i32 {
        let bytes = unsafe { std::slice::from_raw_parts_mut(args as *mut T as *mut u8, std::mem::size_of::<T>()) };
        let input = ProgramInput { context_in: Some(bytes), ..Default::default() };
        prog.test_run(input).expect("BPF_PROG_TEST_RUN").return_value as i32
    }

    /// A program's fd, for runs from other threads (`run_fd`): the skeleton stays on this one.
    pub fn prog_fd(prog: &libbpf_rs::ProgramMut) -> i32 {
        use std::os::fd::{AsFd, AsRawFd};
        prog.as_fd().as_raw_fd()
    }

    /// `run` by fd, callable from any thread while the object is loaded.
    pub fn run_fd<T: Copy>(fd: i32, args: &mut T) -> i32 {
        let bytes = unsafe { std::slice::from_raw_parts_mut(args as *mut T as *mut u8, std::mem::size_of::<T>()) };
        let mut opts = libbpf_rs::libbpf_sys::bpf_test_run_opts {
            sz: std::mem::size_of::<libbpf_rs::libbpf_sys::bpf_test_run_opts>() as _,
            ctx_in: bytes.as_ptr() as *const _,
            ctx_size_in: bytes.len() as u32,
            ..Default::default()
        };
        let r = unsafe { libbpf_rs::libbpf_sys::bpf_prog_test_run_opts(fd, &mut opts) };
        assert_eq!(r, 0, "BPF_PROG_TEST_RUN");
        opts.retval as i32
    }

    pub fn init_cpus(&mut self) {
        let mut a: CpuArgs = zeroed();
        Self::run(&mut self.skel.progs.test_init_cpus, &mut a);
    }

    pub fn idle(&mut self, cpu: usize) {
        let mut a = CpuArgs { cpu: cpu as i32, ret: 0 };
        Self::run(&mut self.skel.progs.test_cpu_idle, &mut a);
    }

    pub fn busy(&mut self, cpu: usize) {
        let mut a = CpuArgs { cpu: cpu as i32, ret: 0 };
        Self::run(&mut self.skel.progs.test_cpu_busy, &mut a);
    }

    /// This tick of `cpu` checks another CPU for a heal (filter_heal_due).
    pub fn heal_due(&mut self, cpu: usize) -> bool {
        let mut a = CpuArgs { cpu: cpu as i32, ret: -1 };
        Self::run(&mut self.skel.progs.test_heal_due, &mut a);
        a.ret == 1
    }

    /// The CPU `cpu`'s tick checks next for a heal (filter_heal_pick), or -1.
    pub fn heal_pick(&mut self, cpu: usize) -> i32 {
        let mut a = CpuArgs { cpu: cpu as i32, ret: -2 };
        Self::run(&mut self.skel.progs.test_heal_pick, &mut a);
        a.ret
    }

    /// Heal `cpu`, idle by the kernel's mask (filter_heal): true if its record said busy.
    pub fn heal(&mut self, cpu: usize) -> bool {
        let mut a = CpuArgs { cpu: cpu as i32, ret: -1 };
        Self::run(&mut self.skel.progs.test_heal, &mut a);
        a.ret == 1
    }

    /// A wakeup's claim of `cpu` outside the scan (claim_cpu); true when it took the CPU.
    pub fn claim(&mut self, cpu: usize) -> bool {
        let mut a = CpuArgs { cpu: cpu as i32, ret: -1 };
        Self::run(&mut self.skel.progs.test_claim, &mut a);
        a.ret == 1
    }

    pub fn reset(&mut self, llc: usize) {
        let mut a = CpuArgs { cpu: llc as i32, ret: 0 };
        Self::run(&mut self.skel.progs.test_reset, &mut a);
    }

    pub fn scan(&mut self, target: usize, llc: usize) -> ScanArgs {
        let mut a: ScanArgs = zeroed();
        a.target = target as i32;
        a.llc = llc as u32;
        Self::run(&mut self.skel.progs.test_scan, &mut a);
        a
    }

    pub fn topo_lookup(&mut self, cpu: usize) -> i32 {
        let mut a = CpuArgs { cpu: cpu as i32, ret: -1 };
        assert_eq!(Self::run(&mut self.skel.progs.test_topo_lookup, &mut a), 0);
        a.ret
    }

    /// CPU ids whose bits are set in `llc`'s filter.
    pub fn filter(&self, llc: usize) -> Vec<usize> {
        let stride = idle_filter::filter_stride(&self.topo);
        let cpus = &self.topo.llcs[llc].cpus;
        let mut out = vec![];
        for w in 0..stride {
            let key = ((llc * stride + w) as u32).to_ne_bytes();
            let v = self.skel.maps.llc_filter_map.lookup(&key, MapFlags::ANY).unwrap().unwrap();
            let word = u64::from_ne_bytes(v[..8].try_into().unwrap());
            for b in 0..64 {
                if word & (1 << b) != 0 {
                    out.push(cpus[w * 64 + b]);
                }
            }
        }
        out
    }

    /// (idle, fail_prone, filter_gen, busy) of a CPU's cpu_ctx.
    pub fn cpu_state(&self, cpu: usize) -> (u32, u32, u64, u32) {
        let c: cpu_ctx = self.value(&self.skel.maps.cpu_ctx_map, cpu);
        (c.idle, c.fail_prone, c.filter_gen, c.busy)
    }

    /// (gen, has_idle_cores, nr_busy) of an LLC's llc_ctx.
    pub fn llc_state(&self, llc: usize) -> (u64, u32, i32) {
        let l: llc_ctx = self.value(&self.skel.maps.llc_ctx_map, llc);
        (l.gen_, l.has_idle_cores, l.nr_busy)
    }

    fn value<T: Copy>(&self, map: &impl MapCore, key: usize) -> T {
        map_value(&map.lookup(&(key as u32).to_ne_bytes(), MapFlags::ANY).unwrap().unwrap())
    }

    fn update<T: Copy>(&self, map: &impl MapCore, key: usize, f: impl FnOnce(&mut T)) {
        let mut v: T = self.value(map, key);
        f(&mut v);
        // SAFETY: T is the map's plain-data value type
        let bytes = unsafe { std::slice::from_raw_parts(&v as *const T as *const u8, std::mem::size_of::<T>()) };
        map.update(&(key as u32).to_ne_bytes(), bytes, MapFlags::ANY).unwrap();
    }

    /// A CPU's queue state (vtime clock, load, what runs).
    pub fn sched(&self, cpu: usize) -> cpu_sched {
        self.value(&self.skel.maps.cpu_sched_map, cpu)
    }

    pub fn set_sched(&mut self, cpu: usize, f: impl FnOnce(&mut cpu_sched)) {
        self.update(&self.skel.maps.cpu_sched_map, cpu, f);
    }

    /// One call into vtime.bpf.h for test task `slot`; returns the args as the program left them.
    pub fn vtime(&mut self, mut a: VtimeArgs) -> VtimeArgs {
        assert_eq!(Self::run(&mut self.skel.progs.test_vtime, &mut a), 0);
        a
    }

    /// One call into cgroup.bpf.h (test task `a.slot`); Err(ret) when the program refused it.
    pub fn cgroup(&mut self, mut a: CgArgs) -> Result<CgArgs, i32> {
        match Self::run(&mut self.skel.progs.test_cgroup, &mut a) {
            0 => Ok(a),
            ret => Err(ret),
        }
    }

    pub fn balance_pick(&mut self, cpu: usize, now: u64) -> BalanceArgs {
        let mut a: BalanceArgs = zeroed();
        a.cpu = cpu as i32;
        a.now = now;
        Self::run(&mut self.skel.progs.test_balance_pick, &mut a);
        a
    }

    pub fn may_move(&mut self, weight: u64, gap: u64) -> bool {
        let mut a: BalanceArgs = zeroed();
        a.weight = weight;
        a.gap = gap;
        Self::run(&mut self.skel.progs.test_may_move, &mut a);
        a.ret != 0
    }

    /// A sync wakee of weight `w` woken on `this` would go there rather than to `prev`.
    pub fn wake_affine(&mut self, this: usize, prev: usize, w: u64) -> bool {
        let mut a: BalanceArgs = zeroed();
        a.cpu = this as i32;
        a.victim = prev as i32;
        a.weight = w;
        Self::run(&mut self.skel.progs.test_wake_affine, &mut a);
        a.ret != 0
    }

    pub fn least_loaded(&mut self, llc: usize) -> i32 {
        let mut a: BalanceArgs = zeroed();
        a.llc = llc as u32;
        Self::run(&mut self.skel.progs.test_least_loaded, &mut a);
        a.victim
    }

    /// Where the task of load `weight` whose slice ended on `cpu` rotates to at `now`, or -1; it
    /// and the task next in line there have been runnable since boot.
    pub fn rotate(&mut self, cpu: usize, weight: u64, now: u64) -> i32 {
        self.rotate_since(cpu, weight, 0, now)
    }

    /// ... runnable since `since` (its last wakeup).
    pub fn rotate_since(&mut self, cpu: usize, weight: u64, since: u64, now: u64) -> i32 {
        self.rotate_beside(cpu, weight, since, 1, now)
    }

    /// ... with the task next in line on `cpu` runnable since `head_since` (0: it has not run
    /// since it woke).
    pub fn rotate_beside(&mut self, cpu: usize, weight: u64, since: u64, head_since: u64, now: u64) -> i32 {
        let mut a: BalanceArgs = zeroed();
        a.cpu = cpu as i32;
        a.weight = weight;
        a.gap = since;
        a.head_since = head_since;
        a.now = now;
        Self::run(&mut self.skel.progs.test_rotate, &mut a);
        a.victim
    }

    pub fn idlest_llc(&mut self, prev: usize) -> i32 {
        let mut a: BalanceArgs = zeroed();
        a.cpu = prev as i32;
        Self::run(&mut self.skel.progs.test_idlest_llc, &mut a);
        a.victim
    }

    /// Overrides an LLC's idle-core hint and load (nr_busy), which set the scan's mode and depth.
    pub fn set_llc(&mut self, llc: usize, has_idle_cores: bool, nr_busy: i32) {
        self.update(&self.skel.maps.llc_ctx_map, llc, |l: &mut llc_ctx| {
            l.has_idle_cores = has_idle_cores as u32;
            l.nr_busy = nr_busy;
        });
    }

    /// Points an LLC's idle-core hint at the core of the CPU at `pos` in the LLC.
    pub fn set_hint(&mut self, llc: usize, pos: u32) {
        self.update(&self.skel.maps.llc_ctx_map, llc, |l: &mut llc_ctx| l.has_idle_cores = pos + 1);
    }

    pub fn set_fail_prone(&mut self, cpu: usize, on: bool) {
        self.update(&self.skel.maps.cpu_ctx_map, cpu, |c: &mut cpu_ctx| c.fail_prone = on as u32);
    }

    /// Marks `cpu` overloaded; true on the 0 -> 1 transition.
    pub fn ovl_set(&mut self, cpu: usize) -> bool {
        let mut a: OvlArgs = zeroed();
        a.cpu = cpu as i32;
        Self::run(&mut self.skel.progs.test_ovl_set, &mut a);
        a.ret != 0
    }

    pub fn ovl_clear(&mut self, cpu: usize) {
        let mut a: OvlArgs = zeroed();
        a.cpu = cpu as i32;
        Self::run(&mut self.skel.progs.test_ovl_clear, &mut a);
    }

    /// `overload_cpu`: `cpu` is overloaded by the map.
    pub fn ovl_cpu(&mut self, cpu: usize) -> bool {
        let mut a: OvlArgs = zeroed();
        a.cpu = cpu as i32;
        Self::run(&mut self.skel.progs.test_ovl_cpu, &mut a);
        a.ret != 0
    }

    /// The overloaded CPUs a walk of `llc` visits from `start` over `len` positions, in order.
    pub fn ovl_walk(&mut self, llc: usize, start: usize, len: usize) -> Vec<usize> {
        let mut a = WalkArgs { llc: llc as u32, start: start as u32, len: len as u32, count: 0 };
        Self::run(&mut self.skel.progs.test_ovl_walk, &mut a);
        let out = &self.skel.maps.bss_data.as_ref().unwrap().walk_out;
        out[..a.count as usize].iter().map(|&c| c as usize).collect()
    }

    /// Raw 64-byte lines of the overloaded map: (line index -> bits).
    pub fn ovl_lines(&self) -> Vec<u64> {
        let n = self.topo.llcs.len() * overload::ovl_lines(&self.topo);
        (0..n)
            .map(|i| {
                let v = self.skel.maps.ovl_map.lookup(&(i as u32).to_ne_bytes(), MapFlags::ANY).unwrap().unwrap();
                assert_eq!(v.len(), 64, "one cache line per entry");
                u64::from_ne_bytes(v[..8].try_into().unwrap())
            })
            .collect()
    }

    /// `scx_sis set steal=`: bpf_intf::steal_mode_*.
    pub fn set_steal_mode(&mut self, mode: u32) {
        self.skel.maps.data_data.as_mut().unwrap().steal_mode = mode;
    }

    pub fn stat(&self, idx: u32) -> u64 {
        percpu_sum(&self.skel.maps.stats, idx).unwrap()
    }

    /// Every CPU busy by record (filter untouched).
    pub fn all_busy(&mut self) {
        for c in self.topo.cpus.iter().map(|c| c.id).collect::<Vec<_>>() {
            self.busy(c);
        }
    }
}

pub const FULL: u32 = bpf_intf::sis_mode_SIS_MODE_FULL;
pub const FILTER: u32 = bpf_intf::sis_mode_SIS_MODE_FILTER;
pub const LINEAR: u32 = bpf_intf::sis_mode_SIS_MODE_LINEAR;
