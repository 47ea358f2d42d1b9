//! `scx_sis_bench --suite cg-scale`: what a cgroup's depth costs scx_sis's cpu.weight books per
//! wakeup, measured on the host where the BPF really runs (JIT on), without sched_ext.
//!
//! Under systemd every task sits in a cgroup 2-3 levels deep (a service, a login session's
//! scope), and a cgroup task's weight is its share at every level (bpf/cgroup.bpf.h): the walk up
//! the levels runs where a wakeup is placed and where a slice ends; a wakeup and a sleep also move
//! the task's weight into and out of its cgroup, which climbs while a level turns active or idle.
//! Those two operations, the scheduler's own code compiled into the host-test object
//! (bpf/sis_test.bpf.c `bench_cg`), over a chain of cgroups `depth` levels deep whose every level
//! has one more cgroup with a runnable task (as on a busy machine: the climb stops at the first
//! level, every share has a sibling to split with):
//! - `weight`: the task's effective weight (cg_task_weight), one walk of all its levels;
//! - `wake+sleep`: the task runnable, then quiescent (cg_account): its cgroup turns active and
//!   idle, its parent's child weight follows.
//!
//! Each trial times `rounds` operations in one program run (syscall programs take no
//! BPF_PROG_TEST_RUN `repeat`) with bpf_ktime_get_ns() around the loop: ns per operation. One
//! thread, so every line stays in its cache: contention between CPUs is not measured.

use std::fmt::Write as _;
use std::mem::MaybeUninit;

use anyhow::{Context, Result};
use libbpf_rs::skel::{OpenSkel, SkelBuilder};
use libbpf_rs::OpenObject;
use serde::Serialize;

use super::cli::BenchArgs;
use super::host::host_info;
use super::idle_scale::run_prog;
use super::model::HostInfo;
use super::statistics::{amean, stddev};
use super::usage;
use scx_sis::bpf_intf::sis_consts_SIS_LOAD_SHIFT;
use scx_sis::layout::Layout;
use scx_sis::sis_test_skel::*;
use scx_sis::test_intf::*;
use scx_sis::topology::Topology;

pub const NAME: &str = "cg-scale";
pub const DEPTHS: [u32; 6] = [1, 2, 3, 4, 8, 16];
const OPS: [(&str, u32); 2] = [("weight", bench_cg_op_BENCH_CG_WEIGHT), ("wake+sleep", bench_cg_op_BENCH_CG_TOGGLE)];

#[derive(Debug, Clone, Serialize)]
pub struct Cell {
    pub depth: u32,
    pub op: String,
    /// ns per operation, one per trial
    pub trial_ns: Vec<f64>,
    /// `weight`: the effective weight the walks returned, in task weight units (nice 0: 100)
    pub eff: Option<f64>,
}

#[derive(Debug, Serialize)]
struct Report {
    format: u32,
    created: String,
    host: HostInfo,
    command_line: Vec<String>,
    rounds: u32,
    cells: Vec<Cell>,
}

/// One cgroup.bpf.h call through test_cgroup.
fn cg_op(skel: &mut SisTestSkel, op: u32, slot: u32, cgid: u64, parent: u64, weight: u32, level: u32) -> Result<()> {
    // SAFETY: cg_args is plain data; all zeroes is a valid value
    let mut a: cg_args = unsafe { std::mem::zeroed() };
    (a.op, a.slot, a.cgid, a.parent, a.weight, a.level) = (op, slot, cgid, parent, weight, level);
    run_prog(&mut skel.progs.test_cgroup, &mut a)
}

/// The host-test object, a chain of `depth` cgroups (ids 100 + level) with a busy sibling
/// (200 + level, test task `level`) at every level; the measured task is test task 0 of the leaf.
fn chain<'a>(obj: &'a mut MaybeUninit<OpenObject>, topo: &Topology, depth: u32) -> Result<(SisTestSkel<'a>, u64)> {
    let mut open = SisTestSkelBuilder::default().open(obj).context("opening the host-test BPF object")?;
    let layout = Layout::of(topo);
    scx_sis::set_layout_rodata!(open.maps.rodata_data.as_mut().context("no .rodata")?, layout);
    layout.size_maps(open.open_object_mut())?;
    scx_sis::group::size_maps(open.open_object_mut(), topo)?;
    let mut skel = open.load().context("loading the host-test BPF object (verifier)")?;
    let mut parent = 0;
    for l in 1..=depth {
        let (own, sib) = (100 + l as u64, 200 + l as u64);
        cg_op(&mut skel, cg_test_op_CG_INIT, 0, own, parent, 100, l)?;
        cg_op(&mut skel, cg_test_op_CG_INIT, 0, sib, parent, 100, l)?;
        cg_op(&mut skel, cg_test_op_CG_ATTACH, l, sib, 0, 0, l)?;
        cg_op(&mut skel, cg_test_op_CG_ACCOUNT, l, 0, 0, 100, 0)?;
        parent = own;
    }
    Ok((skel, parent))
}

pub fn requested(args: &BenchArgs) -> Result<bool> {
    super::host_only_suite(args, NAME)
}

fn measure(depths: &[u32], trials: usize, rounds: u32, progress: &mut dyn FnMut(&Cell)) -> Result<Vec<Cell>> {
    // the cgroup books do not look at the topology: any will do
    let topo = super::idle_scale::llc_topology(8)?;
    let mut cells = Vec::new();
    for &depth in depths {
        let mut obj = MaybeUninit::uninit();
        let (mut skel, leaf) = chain(&mut obj, &topo, depth)?;
        for (name, op) in OPS {
            let (mut trial_ns, mut eff) = (Vec::with_capacity(trials), None);
            for _ in 0..trials {
                // SAFETY: bench_cg_args is plain data; all zeroes is a valid value
                let mut a: bench_cg_args = unsafe { std::mem::zeroed() };
                (a.op, a.slot, a.cgid, a.rounds) = (op, 0, leaf, rounds);
                run_prog(&mut skel.progs.bench_cg, &mut a)?;
                trial_ns.push(a.ns as f64 / rounds as f64);
                if op == bench_cg_op_BENCH_CG_WEIGHT {
                    eff = Some(a.sum as f64 / rounds as f64 / (1u64 << sis_consts_SIS_LOAD_SHIFT) as f64);
                }
            }
            let c = Cell { depth, op: name.into(), trial_ns, eff };
            progress(&c);
            cells.push(c);
        }
    }
    Ok(cells)
}

fn format_table(r: &Report) -> String {
    let mut t = String::new();
    let _ = writeln!(t, "# scx_sis bench {NAME}: ns per operation on the host (JIT), mean of trials (CV)");
    let _ = writeln!(t, "# {} | {} ops per trial | {}", r.created, r.rounds, r.host.cpu_model);
    let _ = write!(t, "{:>6}", "depth");
    for (name, _) in OPS {
        let _ = write!(t, " {:>18}", name);
    }
    t.push('\n');
    for depth in r.cells.iter().map(|c| c.depth).collect::<std::collections::BTreeSet<_>>() {
        let _ = write!(t, "{depth:>6}");
        for (name, _) in OPS {
            match r.cells.iter().find(|c| c.depth == depth && c.op == name) {
                Some(c) => {
                    let m = amean(&c.trial_ns);
                    let cv = if m > 0.0 { stddev(&c.trial_ns) / m * 100.0 } else { 0.0 };
                    let _ = write!(t, " {:>10.1} ({cv:>4.1}%)", m);
                }
                None => {
                    let _ = write!(t, " {:>18}", "-");
                }
            }
        }
        t.push('\n');
    }
    t
}

/// Entry of `scx_sis_bench --suite cg-scale`: --runs = trials per cell.
pub fn run(args: &BenchArgs) -> Result<()> {
    if args.runs == 0 {
        return Err(usage("--runs must be at least 1"));
    }
    let rounds = if args.quick { 10_000 } else { 1_000_000 };
    let plan = format!(
        "scx_sis bench: {NAME}: host-only, nothing attached; cgroups {DEPTHS:?} levels deep x {:?}: {} trials of {rounds} ops\n",
        OPS.map(|o| o.0),
        args.runs
    );
    let Some((created, out)) = super::host_only_start(args, NAME, &plan)? else { return Ok(()) };
    let cells = measure(&DEPTHS, args.runs, rounds, &mut |c| {
        eprintln!("[{NAME}] {} levels, {}: {:.1} ns", c.depth, c.op, amean(&c.trial_ns));
    })?;
    let r = Report { format: 1, created, host: host_info(), command_line: std::env::args().collect(), rounds, cells };
    let table = format_table(&r);
    std::fs::write(out.join("table.txt"), &table)?;
    std::fs::write(out.join(format!("{NAME}.json")), serde_json::to_string_pretty(&r)?)?;
    print!("{table}");
    eprintln!("scx_sis bench: wrote {}/{{table.txt,{NAME}.json}}", out.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::tests::{args, is_usage};

    #[test]
    fn runs_alone() {
        assert!(!requested(&args(&["--suite", "hackbench"])).unwrap());
        assert!(requested(&args(&["--suite", "cg-scale"])).unwrap());
        for bad in [vec!["--suite", "cg-scale,idle-scale"], vec!["--suite", "cg-scale", "--variant", "x=--steal off"]] {
            assert!(is_usage(&requested(&args(&bad)).unwrap_err()), "{bad:?}");
        }
        run(&args(&["--suite", "cg-scale", "--dry-run"])).unwrap();
        assert!(is_usage(&run(&args(&["--suite", "cg-scale", "--runs", "0"])).unwrap_err()));
    }

    /// The walks measured are the weight's: halved at every level by the busy sibling there.
    #[test]
    fn measures_the_walk_of_the_chain() {
        let cells = measure(&[1, 3], 2, 1000, &mut |_| {}).unwrap();
        let got: Vec<(u32, &str, Option<f64>, usize)> =
            cells.iter().map(|c| (c.depth, c.op.as_str(), c.eff, c.trial_ns.len())).collect();
        assert_eq!(
            got,
            [
                (1, "weight", Some(100.0), 2),
                (1, "wake+sleep", None, 2),
                (3, "weight", Some(25.0), 2),
                (3, "wake+sleep", None, 2)
            ]
        );
        assert!(cells.iter().all(|c| c.trial_ns.iter().all(|&ns| ns > 0.0)), "{cells:?}");
    }

    #[test]
    fn table_has_a_row_per_depth() {
        let cell = |depth, op: &str, ns| Cell { depth, op: op.into(), trial_ns: vec![ns, ns], eff: None };
        let r = Report {
            format: 1,
            created: "now".into(),
            host: HostInfo::default(),
            command_line: vec![],
            rounds: 10,
            cells: vec![cell(1, "weight", 10.0), cell(1, "wake+sleep", 50.0), cell(3, "weight", 30.0)],
        };
        let t = format_table(&r);
        let rows: Vec<&str> = t.lines().skip(3).collect();
        assert_eq!(rows.len(), 2, "{t}");
        assert!(rows[0].contains("10.0 ( 0.0%)") && rows[0].contains("50.0"), "{t}");
        assert!(rows[1].contains("30.0") && rows[1].trim_end().ends_with('-'), "{t}");
    }
}
