//! Per-CPU vtime and weighted load (bpf/vtime.bpf.h) through BPF_PROG_TEST_RUN: lag carried
//! across CPUs, sleeper credit capped and only on wakeup, debt capped on wakeup and move,
//! run-time charge that a slice refill does not lose, weights on one CPU (from the nice level, as
//! the fair class has them), wakeup preemption, load accounting.
mod common;

use common::*;
use scx_sis::bpf_intf::*;
use scx_sis::test_intf::*;

const MS: u64 = 1_000_000;
const SLICE: u64 = sis_consts_SIS_DFL_SLICE_NS as u64;

fn sis() -> Sis {
    let mut s = Sis::load(&Shape::new(16, 2, 8), FULL);
    s.init_cpus();
    for slot in 0..16 {
        s.vtime(op(vtime_test_op_VT_INIT, slot, -1));
    }
    s
}

fn op(op: u32, slot: u32, cpu: i32) -> VtimeArgs {
    let mut a: VtimeArgs = zeroed();
    a.op = op;
    a.slot = slot;
    a.cpu = cpu;
    a
}

fn place(s: &mut Sis, slot: u32, vtime: u64, cpu: i32, wakeup: bool) -> u64 {
    place_weighing(s, slot, vtime, cpu, wakeup, 0)
}

// a sync wakee joining others already waiting on @cpu (wake_credit)
fn place_in_line(s: &mut Sis, slot: u32, vtime: u64, cpu: i32) -> u64 {
    let mut a = op(vtime_test_op_VT_PLACE, slot, cpu);
    a.vtime = vtime;
    a.flag = 1 | 2;
    s.vtime(a).vtime
}

// weight in cpu.weight units (100: nice 0); 0 is taken as nice 0
fn place_weighing(s: &mut Sis, slot: u32, vtime: u64, cpu: i32, wakeup: bool, weight: u32) -> u64 {
    let mut a = op(vtime_test_op_VT_PLACE, slot, cpu);
    a.vtime = vtime;
    a.flag = wakeup as u32;
    a.weight = weight << sis_consts_SIS_LOAD_SHIFT;
    s.vtime(a).vtime
}

fn running(s: &mut Sis, slot: u32, vtime: u64, cpu: i32, weight: u32, now: u64) -> u64 {
    let mut a = op(vtime_test_op_VT_RUNNING, slot, cpu);
    a.vtime = vtime;
    a.weight = weight << sis_consts_SIS_LOAD_SHIFT;
    a.now = now;
    a.min_ns = now; // it woke just now
    s.vtime(a).vtime
}

// one argument per field of the call it builds: clearer at the call sites than a struct
#[allow(clippy::too_many_arguments)]
fn charge(s: &mut Sis, which: u32, slot: u32, vtime: u64, cpu: i32, weight: u32, now: u64, alone: bool) -> u64 {
    let mut a = op(which, slot, cpu);
    a.vtime = vtime;
    a.weight = weight << sis_consts_SIS_LOAD_SHIFT;
    a.now = now;
    a.flag = alone as u32;
    s.vtime(a).vtime
}

fn set_clock(s: &mut Sis, cpu: usize, v: u64) {
    s.set_sched(cpu, |c| c.vclock = v);
}

#[test]
fn lag_carries_to_another_cpu() {
    let mut s = sis();
    set_clock(&mut s, 0, 100 * MS);
    set_clock(&mut s, 9, 7000 * MS);
    // a new task (no CPU yet) starts level with its queue's clock
    assert_eq!(place(&mut s, 0, 0, 0, false), 100 * MS);
    // 2 ms ahead of CPU 0's clock stays 2 ms ahead of CPU 9's (other LLC)
    assert_eq!(place(&mut s, 0, 102 * MS, 9, false), 7002 * MS);
    // and owing 1 ms comes back owing 1 ms
    assert_eq!(place(&mut s, 0, 6999 * MS, 0, false), 99 * MS);
}

#[test]
fn sync_wakee_in_line_gets_no_credit_and_keeps_its_debt() {
    let mut s = sis();
    set_clock(&mut s, 3, 500 * MS);
    place(&mut s, 1, 0, 3, false);
    // slept long: in line it starts at the clock, behind every task queued before it
    assert_eq!(place_in_line(&mut s, 1, 500 * MS - 50 * SLICE, 3), 500 * MS);
    // the same wakeup beside a lone runner keeps a slice of credit
    assert_eq!(place(&mut s, 1, 500 * MS - 50 * SLICE, 3, true), 500 * MS - SLICE);
    // a debt is carried as for any wakeup, capped at two slices
    assert_eq!(place_in_line(&mut s, 1, 500 * MS + SLICE, 3), 500 * MS + SLICE);
    assert_eq!(place_in_line(&mut s, 1, 500 * MS + 40 * SLICE, 3), 500 * MS + 2 * SLICE);
    // onto another CPU: measured against that CPU's clock, no credit either
    set_clock(&mut s, 12, 9000 * MS);
    assert_eq!(place_in_line(&mut s, 1, 500 * MS - 3 * SLICE, 12), 9000 * MS);
}

#[test]
fn sleeper_credit_capped_at_a_slice_and_only_on_wakeup() {
    let mut s = sis();
    set_clock(&mut s, 3, 500 * MS);
    place(&mut s, 1, 0, 3, false);
    // slept long: 50 slices behind its CPU's clock; the wakeup grants one slice of credit
    assert_eq!(place(&mut s, 1, 500 * MS - 50 * SLICE, 3, true), 500 * MS - SLICE);
    // a slice expiry on the same CPU (not a wakeup) keeps the vtime: no credit at expiry
    assert_eq!(place(&mut s, 1, 500 * MS - 3 * SLICE, 3, false), 500 * MS - 3 * SLICE);
    // a wakeup elsewhere measures against the destination's clock, capped the same way
    set_clock(&mut s, 12, 9000 * MS);
    assert_eq!(place(&mut s, 1, 500 * MS - 3 * SLICE, 12, true), 9000 * MS - SLICE);
}

#[test]
fn debt_capped_at_two_slices_of_its_weight_on_wakeup_and_move() {
    let mut s = sis();
    set_clock(&mut s, 5, 900 * MS);
    place(&mut s, 4, 0, 5, false);
    // charged 40 slices for one run (a vCPU descheduled under it): it wakes owing two slices
    assert_eq!(place(&mut s, 4, 900 * MS + 40 * SLICE, 5, true), 900 * MS + 2 * SLICE);
    // a debt within the cap carries whole
    assert_eq!(place(&mut s, 4, 900 * MS + SLICE, 5, true), 900 * MS + SLICE);
    // moved to another CPU, the same cap against the destination's clock
    set_clock(&mut s, 14, 3000 * MS);
    assert_eq!(place(&mut s, 4, 900 * MS + 40 * SLICE, 14, false), 3000 * MS + 2 * SLICE);
    // a nice-10-like weight (10 for 100) runs its vtime 10x faster: its cap is 10x wider
    set_clock(&mut s, 5, 900 * MS);
    assert_eq!(place_weighing(&mut s, 4, 3000 * MS + 40 * SLICE, 5, true, 10), 900 * MS + 20 * SLICE);
    // a slice end on the same CPU keeps the debt: only a wakeup or a move forgives it
    assert_eq!(place(&mut s, 4, 900 * MS + 40 * SLICE, 5, false), 900 * MS + 40 * SLICE);
}

#[test]
fn charge_survives_a_slice_refill() {
    let mut s = sis();
    place(&mut s, 2, 0, 4, false);
    place(&mut s, 3, 0, 4, false);
    let v0 = running(&mut s, 2, 1000 * MS, 4, 100, 10 * MS);
    assert_eq!(v0, 1000 * MS);
    // the slice is refilled at 13 ms (prev kept, alone): charged so far, the clock follows it
    let v1 = charge(&mut s, vtime_test_op_VT_UPDATE_CURR, 2, v0, 4, 100, 13 * MS, true);
    assert_eq!(v1, 1003 * MS);
    assert_eq!(s.sched(4).vclock, 1003 * MS);
    // it stops at 15 ms: 5 ms charged in all, none lost to the refill
    let v2 = charge(&mut s, vtime_test_op_VT_STOPPING, 2, v1, 4, 100, 15 * MS, false);
    assert_eq!(v2, 1005 * MS);
    assert_eq!(s.sched(4).curr_started, 0, "nothing of ours runs after stopping");
    // a heavier task's vtime advances slower: weight 200 charges half
    let v3 = running(&mut s, 3, 0, 4, 200, 20 * MS);
    let v4 = charge(&mut s, vtime_test_op_VT_STOPPING, 3, v3, 4, 200, 24 * MS, false);
    assert_eq!(v4 - v3, 2 * MS);
}

/// Two hogs on one CPU, the lower vtime runs next for a slice: CPU time follows the weights
/// (in load units, as the scheduler passes them).
fn share(weights: (u32, u32)) -> f64 {
    let mut s = sis();
    let cpu = 5;
    let (mut v, mut ran, mut now) = ([0u64; 2], [0u64; 2], 0u64);
    for (slot, v) in v.iter_mut().enumerate() {
        *v = place(&mut s, slot as u32, 0, cpu, false);
    }
    for _ in 0..400 {
        let t = if v[0] <= v[1] { 0 } else { 1 };
        let w = if t == 0 { weights.0 } else { weights.1 };
        for (which, at) in [(vtime_test_op_VT_RUNNING, now), (vtime_test_op_VT_STOPPING, now + 3 * MS)] {
            let mut a = op(which, t as u32, cpu);
            a.vtime = v[t];
            a.weight = w;
            a.now = at;
            v[t] = s.vtime(a).vtime;
        }
        now += 3 * MS;
        ran[t] += 3 * MS;
        v[t] = place(&mut s, t as u32, v[t], cpu, false);
    }
    ran[0] as f64 / ran[1] as f64
}

/// nice_load_weight: a task's weight in load units from its nice level (SCHED_IDLE if `idle`);
/// 77 stands for p->scx.weight, its fallback.
fn nice_weight(s: &mut Sis, nice: i32, idle: bool) -> u32 {
    let mut a = op(vtime_test_op_VT_NICE_WEIGHT, 0, -1);
    a.vtime = (120 + nice) as u64;
    a.flag = idle as u32;
    a.weight = 77;
    s.vtime(a).weight
}

#[test]
fn weights_hold_on_one_cpu() {
    let mut s = sis();
    // nice 0 vs nice 5: 1024 : 335 in the fair class (p->scx.weight's 100 : 33 would give 3.03)
    let (w0, w5) = (nice_weight(&mut s, 0, false), nice_weight(&mut s, 5, false));
    let ideal = 1024.0 / 335.0;
    let r = share((w0, w5));
    assert!((r - ideal).abs() / ideal < 0.01, "nice 0 : nice 5 = {r:.3}, want {ideal:.3}");
    let r = share((w0, w0));
    assert!((r - 1.0).abs() < 0.02, "equal weights: {r:.3}");
}

#[test]
fn nice_levels_weigh_as_in_the_fair_class() {
    let mut s = sis();
    let shift = sis_consts_SIS_LOAD_SHIFT;
    // load units: the fair class's weight x 100 (nice 0: 1024 -> 100 << SIS_LOAD_SHIFT)
    assert_eq!(nice_weight(&mut s, 0, false), 100 << shift);
    assert_eq!(nice_weight(&mut s, 5, false), 335 * 100);
    assert_eq!(nice_weight(&mut s, -20, false), 88761 * 100);
    // p->scx.weight rounds these to 1 (a 100:1 ratio to nice 0, against 68:1 and 341:1)
    assert_eq!(nice_weight(&mut s, 19, false), 15 * 100);
    assert_eq!(nice_weight(&mut s, 0, true), 3 * 100, "SCHED_IDLE, whatever its nice");
    // each nice level weighs ~1.25x the next (the fair class's "10% per level"): no typo in the table
    for nice in -20..19 {
        let r = nice_weight(&mut s, nice, false) as f64 / nice_weight(&mut s, nice + 1, false) as f64;
        assert!((1.2..1.3).contains(&r), "nice {nice} : nice {} = {r:.3}", nice + 1);
    }
    // not a nice level: p->scx.weight
    assert_eq!(nice_weight(&mut s, 20, false), 77 << shift);
    assert_eq!(nice_weight(&mut s, -21, false), 77 << shift);
}

#[test]
fn wakeup_preempts_after_the_minimum_run() {
    let mut s = sis();
    let min = SLICE / 4;
    place(&mut s, 0, 0, 6, false);
    running(&mut s, 0, 700 * MS, 6, 100, 100 * MS);
    let owed = 700 * MS - SLICE;
    let mut q = op(vtime_test_op_VT_SHOULD_PREEMPT, 0, 6);
    q.vtime = owed;
    q.min_ns = min;
    q.now = 100 * MS + min / 2;
    assert_eq!(s.vtime(q).ret, 0, "before the running task's minimum slice");
    q.now = 100 * MS + min;
    assert_eq!(s.vtime(q).ret, 1, "owed time, minimum run done");
    q.vtime = 700 * MS + 5 * MS;
    assert_eq!(s.vtime(q).ret, 0, "a task ahead of the running one waits");
    // a per-CPU kthread (min 0) owed time preempts at once
    q.vtime = owed;
    q.min_ns = 0;
    q.now = 100 * MS + 1;
    assert_eq!(s.vtime(q).ret, 1);
    // nothing of ours running: no preemption
    charge(&mut s, vtime_test_op_VT_STOPPING, 0, 700 * MS, 6, 100, 101 * MS, false);
    q.now = 200 * MS;
    assert_eq!(s.vtime(q).ret, 0);
}

#[test]
fn a_hog_gives_way_to_a_wakee_owed_half_a_slice() {
    let mut s = sis();
    place(&mut s, 0, 0, 6, false);
    // a hog runnable for a second resumes at vtime 700 ms
    let mut a = op(vtime_test_op_VT_RUNNING, 0, 6);
    a.vtime = 700 * MS;
    a.weight = 100 << sis_consts_SIS_LOAD_SHIFT;
    a.now = 1000 * MS;
    a.min_ns = 0;
    s.vtime(a);
    let gives_way = |s: &mut Sis, wakee: u64, now: u64| {
        let mut q = op(vtime_test_op_VT_HOG_GIVES_WAY, 0, 6);
        q.vtime = wakee;
        q.now = now;
        s.vtime(q).ret
    };
    let now = 1000 * MS + MS / 10;
    // charged up to now the hog is at 700.1 ms
    assert_eq!(gives_way(&mut s, 700 * MS - SLICE, now), 1, "at the cap of its credit");
    // near the cap, the hog resumed a moment before: what used to wait for the slice's end
    assert_eq!(gives_way(&mut s, 700 * MS - SLICE + SLICE / 8, 1000 * MS + 10_000), 1, "near the cap, just resumed");
    assert_eq!(gives_way(&mut s, 700 * MS - SLICE / 2, 1000 * MS), 0, "owed exactly half a slice, not resumed yet");
    assert_eq!(
        gives_way(&mut s, 700 * MS + MS / 10 - SLICE / 2, now),
        0,
        "owed exactly half a slice of the hog's time now"
    );
    assert_eq!(gives_way(&mut s, 700 * MS + MS / 10 - SLICE / 2 - 1, now), 1, "owed just over half a slice");
    assert_eq!(gives_way(&mut s, 700 * MS - SLICE / 4, now), 0, "a quarter slice of credit");
    // the same task, woken less than a slice ago, is no hog
    a.min_ns = now - SLICE + 1;
    s.vtime(a);
    assert_eq!(gives_way(&mut s, 700 * MS - SLICE, now), 0, "woke recently");
    // with a minimum run of 0 (the caller's choice) the wakee preempts at once
    let mut q = op(vtime_test_op_VT_SHOULD_PREEMPT, 0, 6);
    q.vtime = 700 * MS - SLICE;
    q.now = now;
    q.min_ns = 0;
    assert_eq!(s.vtime(q).ret, 1);
    // nothing of ours running: no hog
    charge(&mut s, vtime_test_op_VT_STOPPING, 0, 700 * MS, 6, 100, now, false);
    assert_eq!(gives_way(&mut s, 0, now + MS), 0);
}

#[test]
fn the_tick_preempts_for_a_task_owed_more_than_a_slice() {
    let mut s = sis();
    let min = SLICE / 2;
    let tick = |s: &mut Sis, head: u64, now: u64| {
        let mut q = op(vtime_test_op_VT_TICK_PREEMPT, 0, 6);
        q.vtime = head;
        q.now = now;
        s.vtime(q).ret
    };
    // nice 0 starts at vtime 700 ms, at 100 ms
    place(&mut s, 0, 0, 6, false);
    running(&mut s, 0, 700 * MS, 6, 100, 100 * MS);
    // a wakee with a slice of credit: owed a slice plus what curr ran
    let wakee = 700 * MS - SLICE;
    assert_eq!(tick(&mut s, wakee, 100 * MS + min), 0, "curr keeps its minimum run");
    assert_eq!(tick(&mut s, wakee, 100 * MS + min + 1), 1, "owed more than a slice and a half");
    // an equal hog queued behind it owes only what curr ran: it waits for the slice's end
    assert_eq!(tick(&mut s, 700 * MS, 100 * MS + SLICE - 1), 0);
    // a quarter slice of credit is not enough within curr's slice
    assert_eq!(tick(&mut s, 700 * MS - SLICE / 4, 100 * MS + SLICE - 1), 0);
    // a light curr (nice 5, a third of the weight) falls behind three times as fast
    running(&mut s, 0, 700 * MS, 6, 33, 200 * MS);
    assert_eq!(tick(&mut s, 700 * MS, 200 * MS + min + MS / 10), 1);
    // nothing of ours running: never
    charge(&mut s, vtime_test_op_VT_STOPPING, 0, 700 * MS, 6, 33, 201 * MS, false);
    assert_eq!(tick(&mut s, wakee, 300 * MS), 0);
}

#[test]
fn load_follows_the_task() {
    let mut s = sis();
    let acct = |s: &mut Sis, slot: u32, cpu: i32, w: u32| {
        let mut a = op(vtime_test_op_VT_LOAD_ACCOUNT, slot, cpu);
        a.weight = w << sis_consts_SIS_LOAD_SHIFT;
        s.vtime(a);
    };
    // loads in task-weight units
    let load = |s: &mut Sis, cpu: usize| (s.sched(cpu).load >> sis_consts_SIS_LOAD_SHIFT, s.sched(cpu).nr_runnable);
    acct(&mut s, 0, 3, 100);
    acct(&mut s, 1, 3, 33);
    assert_eq!(load(&mut s, 3), (133, 2));
    // moved without quiescent/runnable (a steal): fixed at the next call
    acct(&mut s, 0, 4, 100);
    assert_eq!(load(&mut s, 3), (33, 1));
    assert_eq!(load(&mut s, 4), (100, 1));
    // the same call twice changes nothing
    acct(&mut s, 0, 4, 100);
    assert_eq!(load(&mut s, 4), (100, 1));
    // a weight change while runnable
    acct(&mut s, 0, 4, 300);
    assert_eq!(load(&mut s, 4), (300, 1));
    // quiescent
    acct(&mut s, 1, -1, 0);
    acct(&mut s, 0, -1, 0);
    assert_eq!((load(&mut s, 3), load(&mut s, 4)), ((0, 0), (0, 0)));
}

/// A wakeup is counted where it is placed and again when it runs (ops.select_cpu or
/// ops.enqueue, then ops.running), uncounted when it sleeps: `runnable` in --stats follows.
#[test]
fn runnable_count_follows_placements_and_sleeps() {
    let mut s = sis();
    let acct = |s: &mut Sis, slot: u32, cpu: i32| {
        let mut a = op(vtime_test_op_VT_LOAD_ACCOUNT, slot, cpu);
        a.weight = if cpu < 0 { 0 } else { 100 << sis_consts_SIS_LOAD_SHIFT };
        s.vtime(a);
    };
    let runnable = |s: &Sis| scx_sis::llc_stats::nr_runnable(&s.topo, &s.skel.maps.cpu_sched_map).unwrap();
    // three wakeups placed, each counted again when it runs; one runs elsewhere (a steal)
    for (slot, cpu) in [(0, 1), (1, 2), (2, 2)] {
        acct(&mut s, slot, cpu);
    }
    acct(&mut s, 0, 1);
    acct(&mut s, 2, 5);
    assert_eq!(runnable(&s), 3);
    // two sleep, one twice (stopping, then the exit): counted once each
    acct(&mut s, 0, -1);
    acct(&mut s, 2, -1);
    acct(&mut s, 2, -1);
    assert_eq!(runnable(&s), 1);
    acct(&mut s, 1, -1);
    assert_eq!(runnable(&s), 0);
}
