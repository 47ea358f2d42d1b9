//! cgroup cpu.weight (bpf/cgroup.bpf.h) through BPF_PROG_TEST_RUN: a task's effective weight
//! from its cgroup's hierarchical share, independent of thread counts, idle cgroups counting for
//! nothing, weight changes and moves keeping the books exact, nothing left behind.
mod common;

use common::*;
use scx_sis::bpf_intf::*;

const ROOT: u64 = 0;

fn sis() -> Sis {
    let mut s = Sis::load(&Shape::new(8, 2, 4), FULL);
    for slot in 0..16 {
        s.cgroup(op(cg_test_op_CG_TASK_EXIT, slot)).unwrap();
    }
    s
}

fn op(op: u32, slot: u32) -> CgArgs {
    let mut a: CgArgs = zeroed();
    a.op = op;
    a.slot = slot;
    a
}

fn init(s: &mut Sis, cgid: u64, parent: u64, weight: u32, level: u32) -> bool {
    let mut a = op(cg_test_op_CG_INIT, 0);
    a.cgid = cgid;
    a.parent = parent;
    a.weight = weight;
    a.level = level;
    s.cgroup(a).unwrap().ret == 1
}

fn attach(s: &mut Sis, slot: u32, cgid: u64) {
    let mut a = op(cg_test_op_CG_ATTACH, slot);
    a.cgid = cgid;
    s.cgroup(a).unwrap();
}

/// Task `slot` becomes runnable with `weight` (0: quiescent).
fn account(s: &mut Sis, slot: u32, weight: u32) {
    let mut a = op(cg_test_op_CG_ACCOUNT, slot);
    a.weight = weight;
    s.cgroup(a).unwrap();
}

/// Task `slot`'s effective weight in task-weight units (BPF keeps it << SIS_LOAD_SHIFT).
fn eff(s: &mut Sis, slot: u32, weight: u32) -> f64 {
    let mut a = op(cg_test_op_CG_TASK_WEIGHT, slot);
    a.weight = weight;
    s.cgroup(a).unwrap().ret as f64 / (1u64 << sis_consts_SIS_LOAD_SHIFT) as f64
}

fn read(s: &mut Sis, cgid: u64) -> Option<cg_sched> {
    let mut a = op(cg_test_op_CG_READ, 0);
    a.cgid = cgid;
    s.cgroup(a).ok().map(|a| a.cg)
}

fn set_weight(s: &mut Sis, cgid: u64, weight: u32) {
    let mut a = op(cg_test_op_CG_SET_WEIGHT, 0);
    a.cgid = cgid;
    a.weight = weight;
    s.cgroup(a).unwrap();
}

/// Tasks `slots` join `cgid` and become runnable at nice 0.
fn run_in(s: &mut Sis, cgid: u64, slots: &[u32]) {
    for &slot in slots {
        attach(s, slot, cgid);
        account(s, slot, 100);
    }
}

fn sum_eff(s: &mut Sis, slots: &[u32]) -> f64 {
    slots.iter().map(|&slot| eff(s, slot, 100)).sum()
}

#[test]
fn weight_300_vs_100_gives_3_to_1() {
    let mut s = sis();
    assert!(init(&mut s, 10, ROOT, 300, 1));
    assert!(init(&mut s, 11, ROOT, 100, 1));
    run_in(&mut s, 10, &[0]);
    run_in(&mut s, 11, &[1]);
    // children of the root weigh like tasks of the same weight (cpu.weight 100 = nice 0)
    assert_eq!(eff(&mut s, 0, 100), 300.0);
    assert_eq!(eff(&mut s, 1, 100), 100.0);
}

#[test]
fn share_is_independent_of_thread_count() {
    let mut s = sis();
    init(&mut s, 10, ROOT, 100, 1);
    init(&mut s, 11, ROOT, 100, 1);
    run_in(&mut s, 10, &[0, 1, 2, 3]);
    run_in(&mut s, 11, &[4]);
    assert_eq!(eff(&mut s, 0, 100), 25.0);
    assert_eq!(sum_eff(&mut s, &[0, 1, 2, 3]), 100.0);
    assert_eq!(eff(&mut s, 4, 100), 100.0);
    // inside the cgroup, nice still splits its share: a nice-5 thread (weight 29) among three nice-0
    account(&mut s, 3, 29);
    let (w0, w3) = (eff(&mut s, 0, 100), eff(&mut s, 3, 29));
    assert!((w0 - 100.0 * 100.0 / 329.0).abs() < 0.01, "{w0}");
    assert!((w3 - 100.0 * 29.0 / 329.0).abs() < 0.01, "{w3}");
}

#[test]
fn many_threads_keep_the_fraction() {
    // a/{x,y}, cpu.weight 25 and 375: x's 8 threads share 6.25 (0.78 each, not 1: integers
    // would give x 28% more than its due, and a deeper or busier cgroup far more)
    let mut s = sis();
    init(&mut s, 10, ROOT, 100, 1);
    init(&mut s, 20, 10, 25, 2);
    init(&mut s, 21, 10, 375, 2);
    let x: Vec<u32> = (0..8).collect();
    run_in(&mut s, 20, &x);
    run_in(&mut s, 21, &[8]);
    assert_eq!(eff(&mut s, 0, 100), 0.78125);
    assert_eq!(sum_eff(&mut s, &x), 6.25);
    assert_eq!(eff(&mut s, 8, 100), 93.75);
}

#[test]
fn nested_cgroups_split_their_parents_share() {
    let mut s = sis();
    // a/{x,y} vs b
    init(&mut s, 10, ROOT, 100, 1);
    init(&mut s, 11, ROOT, 100, 1);
    assert!(init(&mut s, 20, 10, 100, 2));
    assert!(init(&mut s, 21, 10, 100, 2));
    run_in(&mut s, 20, &[0]);
    run_in(&mut s, 21, &[1]);
    run_in(&mut s, 11, &[2]);
    assert_eq!(eff(&mut s, 0, 100), 50.0);
    assert_eq!(eff(&mut s, 1, 100), 50.0);
    assert_eq!(eff(&mut s, 2, 100), 100.0);
    let a = read(&mut s, 10).unwrap();
    assert_eq!((a.nr_active, a.child_weight, a.task_weight), (2, 200, 0));

    // a third level: x/z with two threads takes x's half
    assert!(init(&mut s, 30, 20, 100, 3));
    account(&mut s, 0, 0);
    run_in(&mut s, 30, &[3, 4]);
    assert_eq!(eff(&mut s, 3, 100), 25.0);
    assert_eq!(eff(&mut s, 1, 100), 50.0);
}

#[test]
fn idle_cgroups_count_for_nothing() {
    let mut s = sis();
    init(&mut s, 10, ROOT, 100, 1);
    init(&mut s, 20, 10, 100, 2);
    init(&mut s, 21, 10, 300, 2);
    run_in(&mut s, 20, &[0]);
    // y (weight 300) has no runnable task: x gets all of a
    assert_eq!(eff(&mut s, 0, 100), 100.0);
    run_in(&mut s, 21, &[1]);
    assert_eq!(eff(&mut s, 0, 100), 25.0);
    assert_eq!(eff(&mut s, 1, 100), 75.0);
    // y's task sleeps: y leaves a's child_weight, a stays active through x
    account(&mut s, 1, 0);
    assert_eq!(eff(&mut s, 0, 100), 100.0);
    let a = read(&mut s, 10).unwrap();
    assert_eq!((a.nr_active, a.child_weight), (1, 100));
    assert_eq!(read(&mut s, 21).unwrap().nr_active, 0);
}

#[test]
fn weight_change_and_move_keep_the_books() {
    let mut s = sis();
    init(&mut s, 10, ROOT, 100, 1);
    init(&mut s, 20, 10, 100, 2);
    init(&mut s, 21, 10, 100, 2);
    run_in(&mut s, 20, &[0]);
    run_in(&mut s, 21, &[1]);
    set_weight(&mut s, 20, 300);
    assert_eq!(eff(&mut s, 0, 100), 75.0);
    assert_eq!(eff(&mut s, 1, 100), 25.0);
    assert_eq!(read(&mut s, 10).unwrap().child_weight, 400);

    // task 1 moves from y to x while runnable: y idles, x holds both
    attach(&mut s, 1, 20);
    let (a, x, y) = (read(&mut s, 10).unwrap(), read(&mut s, 20).unwrap(), read(&mut s, 21).unwrap());
    assert_eq!((a.child_weight, a.nr_active), (300, 1));
    assert_eq!((x.task_weight, x.nr_active), (200, 2));
    assert_eq!((y.task_weight, y.nr_active), (0, 0));
    assert_eq!(eff(&mut s, 0, 100), 50.0);

    // a task's own weight change (nice) while runnable stays one entry
    account(&mut s, 1, 300);
    assert_eq!(read(&mut s, 20).unwrap().task_weight, 400);
    assert_eq!(read(&mut s, 20).unwrap().nr_active, 2);

    // a task that moved while not runnable is counted where it is when it wakes
    account(&mut s, 1, 0);
    attach(&mut s, 1, 21);
    assert_eq!(read(&mut s, 21).unwrap().task_weight, 0);
    account(&mut s, 1, 100);
    assert_eq!(read(&mut s, 21).unwrap().task_weight, 100);
    assert_eq!(read(&mut s, 10).unwrap().child_weight, 400);
}

#[test]
fn nothing_stays_counted() {
    let mut s = sis();
    init(&mut s, 10, ROOT, 100, 1);
    init(&mut s, 20, 10, 100, 2);
    init(&mut s, 21, 10, 100, 2);
    init(&mut s, 11, ROOT, 100, 1);
    run_in(&mut s, 20, &[0, 1]);
    run_in(&mut s, 21, &[2]);
    run_in(&mut s, 11, &[3]);
    account(&mut s, 0, 0);
    attach(&mut s, 1, 11);
    s.cgroup(op(cg_test_op_CG_TASK_EXIT, 2)).unwrap(); // exits while runnable (detach)
    account(&mut s, 1, 0);
    account(&mut s, 3, 0);
    for id in [10, 11, 20, 21] {
        let c = read(&mut s, id).unwrap();
        assert_eq!((c.nr_active, c.task_weight, c.child_weight), (0, 0, 0), "cgroup {id}");
    }
    // a cgroup that is gone is gone; its former tasks weigh as themselves
    let mut a = op(cg_test_op_CG_EXIT, 0);
    a.cgid = 21;
    s.cgroup(a).unwrap();
    assert!(read(&mut s, 21).is_none());
}

#[test]
fn untracked_cgroups_run_unweighted() {
    let mut s = sis();
    // the root itself, a parent nobody knows, and a level beyond the depth bound
    assert!(!init(&mut s, 1, ROOT, 100, 0));
    assert!(!init(&mut s, 40, 99, 100, 2));
    let deep = sis_consts_SIS_CG_MAX_DEPTH + 1;
    assert!(!init(&mut s, 41, 10, 100, deep));
    attach(&mut s, 0, 40);
    account(&mut s, 0, 100);
    assert_eq!(eff(&mut s, 0, 100), 100.0);
    assert!(read(&mut s, 40).is_none());
    // the chain is followed to the depth bound
    let mut parent = ROOT;
    for level in 1..=sis_consts_SIS_CG_MAX_DEPTH {
        let id = 100 + level as u64;
        assert!(init(&mut s, id, parent, 100, level), "level {level}");
        parent = id;
    }
    run_in(&mut s, parent, &[5]);
    assert_eq!(eff(&mut s, 5, 100), 100.0);
    let sibling = 200;
    assert!(init(&mut s, sibling, 100 + 1, 100, 2));
    run_in(&mut s, sibling, &[6]);
    assert_eq!(eff(&mut s, 5, 100), 50.0);
    assert_eq!(eff(&mut s, 6, 100), 50.0);
}
