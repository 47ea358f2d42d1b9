//! cgroup cpu.weight (bpf/cgroup.bpf.h) through BPF_PROG_TEST_RUN: a task's effective weight
//! from its cgroup's hierarchical share, independent of thread counts, idle cgroups counting for
//! nothing, weight changes and moves keeping the books exact, nothing left behind.
mod common;

use common::*;
use scx_sis::bpf_intf::*;
use scx_sis::test_intf::*;

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

/// A cgroup's state, its packed word (weight, biased nr_active) unpacked.
struct Cg {
    weight: u32,
    nr_active: i32,
    task_weight: i64,
    child_weight: i64,
}

fn read(s: &mut Sis, cgid: u64) -> Option<Cg> {
    let mut a = op(cg_test_op_CG_READ, 0);
    a.cgid = cgid;
    let c: cg_sched = s.cgroup(a).ok()?.cg;
    Some(Cg {
        weight: (c.state >> 32) as u32,
        nr_active: (c.state as u32).wrapping_sub(CG_NR_BIAS) as i32,
        task_weight: c.task_weight,
        child_weight: c.child_weight,
    })
}

/// Task `slot` joins `cgid`, whose ancestors below the root are `ancestors` (level 1 first).
fn attach_under(s: &mut Sis, slot: u32, cgid: u64, ancestors: &[u64]) {
    let bss = s.skel.maps.bss_data.as_mut().unwrap();
    bss.test_cg_ancestors.fill(0);
    for (l, id) in ancestors.iter().enumerate().take(MAX_DEPTH as usize) {
        bss.test_cg_ancestors[l + 1] = *id;
    }
    let mut a = op(cg_test_op_CG_ATTACH, slot);
    a.cgid = cgid;
    a.level = ancestors.len() as u32 + 1;
    s.cgroup(a).unwrap();
}

/// (cgroups untracked now, refused by the full map so far)
fn untracked(s: &Sis) -> (i64, u64) {
    let bss = s.skel.maps.bss_data.as_ref().unwrap();
    (bss.cg_nr_untracked, bss.cg_nr_map_full)
}

fn exit(s: &mut Sis, cgid: u64, level: u32) {
    let mut a = op(cg_test_op_CG_EXIT, 0);
    a.cgid = cgid;
    a.level = level;
    s.cgroup(a).unwrap();
}

const MAX_DEPTH: u32 = sis_consts_SIS_CG_MAX_DEPTH;

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
    exit(&mut s, 21, 2);
    assert!(read(&mut s, 21).is_none());
    assert_eq!(untracked(&s), (0, 0));
}

/// ops.running re-accounts every woken task as it stands (no lookup then): the books hold, and a
/// new weight or a move still goes through.
#[test]
fn accounting_as_it_stands_changes_nothing() {
    let mut s = sis();
    init(&mut s, 10, ROOT, 100, 1);
    init(&mut s, 20, 10, 300, 2);
    run_in(&mut s, 20, &[0, 1]);
    for _ in 0..3 {
        account(&mut s, 0, 100);
    }
    let c = read(&mut s, 20).unwrap();
    assert_eq!((c.nr_active, c.task_weight), (2, 200));
    assert_eq!(read(&mut s, 10).unwrap().child_weight, 300);
    account(&mut s, 0, 250);
    assert_eq!(read(&mut s, 20).unwrap().task_weight, 350);
    attach(&mut s, 0, 10);
    account(&mut s, 0, 250);
    let (c20, c10) = (read(&mut s, 20).unwrap(), read(&mut s, 10).unwrap());
    assert_eq!((c20.nr_active, c20.task_weight), (1, 100));
    assert_eq!((c10.nr_active, c10.task_weight, c10.child_weight), (2, 250, 300));
    account(&mut s, 0, 0);
    account(&mut s, 1, 0);
    for id in [10, 20] {
        let c = read(&mut s, id).unwrap();
        assert_eq!((c.nr_active, c.task_weight, c.child_weight), (0, 0, 0), "cgroup {id}");
    }
}

#[test]
fn cgroups_too_deep_count_in_their_deepest_tracked_ancestor() {
    let mut s = sis();
    // the root is not tracked, nor counted: its tasks keep their own weight
    assert!(!init(&mut s, 1, ROOT, 100, 0));
    attach_under(&mut s, 3, 1, &[]);
    account(&mut s, 3, 100);
    assert_eq!(eff(&mut s, 3, 100), 100.0);
    account(&mut s, 3, 0);
    assert_eq!(untracked(&s), (0, 0));
    // a (cpu.weight 25) with a chain 20 levels deep under it, vs b (100): what a user with a
    // delegated subtree can nest must not take its tasks out of a's share
    assert!(init(&mut s, 10, ROOT, 25, 1));
    assert!(init(&mut s, 11, ROOT, 100, 1));
    let mut chain = vec![10u64];
    for level in 2..=21 {
        let id = 100 + level as u64;
        assert_eq!(init(&mut s, id, *chain.last().unwrap(), 100, level), level <= MAX_DEPTH, "level {level}");
        chain.push(id);
    }
    assert_eq!(untracked(&s), (21 - MAX_DEPTH as i64, 0));
    let bottom = chain.pop().unwrap();
    attach_under(&mut s, 0, bottom, &chain);
    account(&mut s, 0, 100);
    run_in(&mut s, 11, &[1]);
    assert_eq!(eff(&mut s, 0, 100), 25.0);
    assert_eq!(eff(&mut s, 1, 100), 100.0);
    let deepest = read(&mut s, chain[MAX_DEPTH as usize - 1]).unwrap();
    assert_eq!((deepest.task_weight, deepest.nr_active), (100, 1));
    // a second task one level up shares the same books: a's 25 split in two
    attach_under(&mut s, 2, chain[17], &chain[..17]);
    account(&mut s, 2, 100);
    assert_eq!(eff(&mut s, 0, 100), 12.5);
    assert_eq!(eff(&mut s, 2, 100), 12.5);
    // moved to a tracked level the task counts there; the untracked ones leave the count as they go
    attach_under(&mut s, 2, chain[3], &chain[..3]);
    assert_eq!(read(&mut s, chain[3]).unwrap().task_weight, 100);
    assert_eq!(read(&mut s, chain[MAX_DEPTH as usize - 1]).unwrap().task_weight, 100);
    for level in (MAX_DEPTH + 1..=21).rev() {
        exit(&mut s, 100 + level as u64, level);
    }
    assert_eq!(untracked(&s), (0, 0));
}

#[test]
fn cgroups_a_full_map_refuses_count_in_their_ancestor() {
    let mut s = sis();
    assert!(init(&mut s, 10, ROOT, 25, 1));
    assert!(init(&mut s, 11, ROOT, 100, 1));
    // a user fills the map under a: the first cgroup refused is where its hog goes
    let mut x = 1000;
    while init(&mut s, x, 10, 100, 2) {
        x += 1;
    }
    assert_eq!(x - 1000 + 2, sis_consts_SIS_MAX_CGROUPS as u64, "the map holds its max_entries");
    assert_eq!(untracked(&s), (1, 1));
    attach_under(&mut s, 0, x, &[10]);
    account(&mut s, 0, 100);
    run_in(&mut s, 11, &[1]);
    assert_eq!(eff(&mut s, 0, 100), 25.0);
    assert_eq!(eff(&mut s, 1, 100), 100.0);
    // below it too (an untracked parent): a's books, a's share
    assert!(!init(&mut s, x + 1, x, 100, 3));
    assert_eq!(untracked(&s), (2, 1));
    attach_under(&mut s, 2, x + 1, &[10, x]);
    account(&mut s, 2, 100);
    assert_eq!(read(&mut s, 10).unwrap().task_weight, 200);
    assert_eq!(eff(&mut s, 2, 100), 12.5);
    assert_eq!(eff(&mut s, 1, 100), 100.0);
}

#[test]
fn an_exited_cgroup_frees_its_slot() {
    // a full map under a; a child with a runnable task, another that exits
    let mut s = sis();
    assert!(init(&mut s, 10, ROOT, 100, 1));
    let mut x = 1000;
    while init(&mut s, x, 10, 100, 2) {
        x += 1;
    }
    run_in(&mut s, 1000, &[0]);
    let before = read(&mut s, 1001).unwrap();
    assert_eq!((before.nr_active, before.task_weight), (0, 0));
    exit(&mut s, 1001, 2);
    assert!(read(&mut s, 1001).is_none(), "an exited cgroup has no state");
    assert_eq!(untracked(&s), (1, 1), "x, refused by the full map, is still untracked");
    // a new cgroup takes the freed slot, with state of its own only
    assert!(init(&mut s, x + 1, 10, 300, 2), "the freed slot is taken");
    let y = read(&mut s, x + 1).unwrap();
    assert_eq!((y.weight, y.nr_active, y.task_weight, y.child_weight), (300, 0, 0, 0));
    assert!(!init(&mut s, x + 2, 10, 100, 2), "and the map is full again");
    // its task counts there: a's children weigh 100 + 300
    run_in(&mut s, x + 1, &[1]);
    assert_eq!(read(&mut s, 10).unwrap().child_weight, 400);
    assert_eq!(eff(&mut s, 0, 100), 25.0);
    assert_eq!(eff(&mut s, 1, 100), 75.0);
}

/// `rounds` of stress op `op` for task `slot` of cgroup `cgid`, `runs` times, on a thread of its own.
fn stress(
    s: &Sis,
    op: u32,
    slot: u32,
    cgid: u64,
    weights: (u32, u32),
    rounds: u32,
    runs: u32,
) -> std::thread::JoinHandle<()> {
    let fd = Sis::prog_fd(&s.skel.progs.test_cg_stress);
    let mut a: cg_stress_args = zeroed();
    (a.op, a.slot, a.cgid, a.weight, a.weight2, a.rounds) = (op, slot, cgid, weights.0, weights.1, rounds);
    std::thread::spawn(move || {
        for _ in 0..runs {
            assert_eq!(Sis::run_fd(fd, &mut a), 0);
        }
    })
}

#[test]
fn weight_changes_racing_activations_keep_the_sums() {
    // a/{x, y}, y busy throughout. On one thread a task of x turns runnable and quiescent over
    // and over (x turns active and idle); on another x's cpu.weight flips 100 -> 300 -> 100
    // around a second task of x doing the same. Whatever the interleaving, a's child_weight
    // must end as the sum of its active children's weights: a transition that used one weight
    // and its reverse another would leave the difference there for good.
    let mut s = sis();
    init(&mut s, 10, ROOT, 100, 1);
    init(&mut s, 20, 10, 100, 2);
    init(&mut s, 21, 10, 100, 2);
    run_in(&mut s, 21, &[2]);
    let t = [
        stress(&s, cg_stress_op_CG_STRESS_TOGGLE, 0, 20, (0, 0), 100_000, 20),
        stress(&s, cg_stress_op_CG_STRESS_WEIGHT, 1, 20, (100, 300), 100_000, 20),
    ];
    for h in t {
        h.join().unwrap();
    }
    let (a, x) = (read(&mut s, 10).unwrap(), read(&mut s, 20).unwrap());
    assert_eq!((x.nr_active, x.task_weight, x.weight), (0, 0, 100));
    assert_eq!((a.nr_active, a.child_weight), (1, 100), "a's children: x idle, y (100) active");
    run_in(&mut s, 20, &[0]);
    assert_eq!(read(&mut s, 10).unwrap().child_weight, 200);
}

#[test]
fn a_slot_is_a_cache_line() {
    // every CPU running a cgroup's tasks writes its slot: two busy cgroups must not share a line
    assert_eq!(std::mem::size_of::<cg_sched>(), 64);
}
