//! Balance between busy CPUs (bpf/balance.bpf.h) through BPF_PROG_TEST_RUN: whom to pull from
//! by weighted load, the hysteresis margin, the rate limits (a CPU's looks, an LLC's pulls), a
//! gap that must last to the next look, other LLCs, CPUs taken by RT/DL, and the fork/exec
//! placement on the least-loaded CPU of the idlest LLC.
mod common;

use common::*;
use scx_sis::bpf_intf::*;

const MS: u64 = 1_000_000;
const INTERVAL: u64 = sis_consts_SIS_DFL_SLICE_NS as u64;

/// 16 CPUs, SMT2, 2 LLCs of 8; every CPU's load given (LLC 0 = CPUs 0-7).
fn sis(loads: [u64; 16]) -> Sis {
    let mut s = Sis::load(&Shape::new(16, 2, 8), FULL);
    s.init_cpus();
    s.all_busy();
    for (cpu, l) in loads.iter().enumerate() {
        s.set_sched(cpu, |c| {
            c.load = *l;
            c.nr_runnable = (*l / 100) as u32;
        });
        // a CPU with more than one task has some waiting: overloaded
        if *l > 100 {
            s.ovl_set(cpu);
        }
    }
    s
}

#[test]
fn hysteresis_margin() {
    let mut s = sis([0; 16]);
    assert!(s.may_move(100, 200), "3 vs 1 nice-0 tasks: one moves");
    assert!(!s.may_move(100, 100), "2 vs 1: a move would only swap the imbalance");
    assert!(!s.may_move(100, 111), "within the margin: stays");
    assert!(s.may_move(11, 22), "nice-10 tasks (weight 11) even out too");
    assert!(!s.may_move(11, 11));
    assert!(s.may_move(10_000, u64::MAX), "a CPU taken by RT/DL gives up anything");
}

#[test]
fn pulls_from_the_busiest_cpu_of_the_llc() {
    let mut l = [100; 16];
    l[2] = 200;
    l[5] = 300;
    let mut s = sis(l);
    // a first find is no pull yet: the gap must last to the next look
    assert_eq!(s.balance_pick(0, 1000 * MS).victim, -1);
    // rate-limited: no look within the interval
    assert_eq!(s.balance_pick(0, 1000 * MS + INTERVAL / 2).victim, -1);
    let p = s.balance_pick(0, 1000 * MS + INTERVAL);
    assert_eq!((p.victim, p.xllc, p.gap), (5, 0, 200));
    // and again, while it lasts, once the LLC's pull period (8 slices) has passed
    for i in 2..9 {
        assert_eq!(s.balance_pick(0, 1000 * MS + i * INTERVAL).victim, -1, "look {i}");
    }
    assert_eq!(s.balance_pick(0, 1000 * MS + 9 * INTERVAL).victim, 5);
}

/// An LLC pulls at most once a pull period (8 slices), whichever of its CPUs looks: where tasks
/// wake and sleep in bursts, gaps that hold over time too came often enough for 2 000-3 800
/// pulls a run at 8 CPUs. A CPU of the other LLC has a period of its own, and a CPU taken by
/// RT/DL is pulled from at once.
#[test]
fn an_llc_pulls_once_a_pull_period() {
    let mut l = [100; 16];
    l[5] = 300;
    l[13] = 300;
    let mut s = sis(l);
    let t = 1000 * MS;
    for cpu in [0, 1, 8] {
        assert_eq!(s.balance_pick(cpu, t).victim, -1, "CPU {cpu}: first find");
    }
    assert_eq!(s.balance_pick(0, t + INTERVAL).victim, 5);
    // CPU 1 confirms CPU 5 too, but its LLC has just pulled: it waits, and keeps the find
    assert_eq!(s.balance_pick(1, t + INTERVAL).victim, -1);
    assert_eq!(s.stat(sis_stat_STAT_BALANCE_PACED), 1);
    assert_eq!(s.balance_pick(8, t + INTERVAL).victim, 13, "the other LLC's own period");
    for i in 2..8 {
        assert_eq!(s.balance_pick(1 + (i as usize % 2), t + i * INTERVAL).victim, -1, "look {i}");
    }
    assert_eq!(s.balance_pick(1, t + 9 * INTERVAL).victim, 5, "due again, confirmed by its last look");
    // a CPU taken by RT/DL is no gap to pace
    s.set_sched(6, |c| c.released = 1);
    s.ovl_set(6);
    assert_eq!(s.balance_pick(2, t + 10 * INTERVAL).victim, 6);
}

/// `steal=off` (at start or live) leaves the balance its victims: the overloaded CPUs it walks
/// are still marked, and the busiest one is pulled from as with stealing on.
#[test]
fn pulls_with_steal_off() {
    let mut s = Sis::load(&Shape::new(16, 2, 8), FULL);
    s.set_steal_mode(steal_mode_STEAL_OFF);
    s.init_cpus();
    s.all_busy();
    for cpu in 0..16 {
        let l = if cpu == 5 { 600 } else { 300 - 200 * (cpu < 8) as u64 };
        s.set_sched(cpu, |c| {
            c.load = l;
            c.nr_runnable = (l / 100) as u32;
        });
        if l > 100 {
            s.ovl_set(cpu);
        }
    }
    assert_eq!(s.balance_pick(0, 1000 * MS).victim, -1, "first find");
    let p = s.balance_pick(0, 1000 * MS + INTERVAL);
    assert_eq!((p.victim, p.xllc, p.gap), (5, 0, 500));
}

#[test]
fn a_gap_must_last_to_the_next_look() {
    // cg-wide: a nice-0 root task's short run on a CPU of cgroup hogs (37.5 + 2 x 6.25) made it
    // the busiest for a moment; pulling a hog for it moved hogs away and back all run long
    let mut l = [100; 16];
    l[5] = 300;
    let mut s = sis(l);
    assert_eq!(s.balance_pick(0, 1000 * MS).victim, -1, "first find");
    // CPU 5's load was a blip: gone by the next look, and CPU 2 is the busier one now
    s.set_sched(5, |c| c.load = 100);
    s.set_sched(2, |c| {
        c.load = 300;
        c.nr_runnable = 3;
    });
    s.ovl_set(2);
    assert_eq!(s.balance_pick(0, 1000 * MS + INTERVAL).victim, -1, "CPU 2 was not found before");
    assert_eq!(s.balance_pick(0, 1000 * MS + 2 * INTERVAL).victim, 2);
    // a find more than 4 intervals old confirms nothing (past the LLC's pull period: due)
    assert_eq!(s.balance_pick(0, 1000 * MS + 20 * INTERVAL).victim, -1);
    assert_eq!(s.balance_pick(0, 1000 * MS + 21 * INTERVAL).victim, 2);
    // a look with no gap forgets the find
    s.set_sched(2, |c| c.load = 100);
    assert_eq!(s.balance_pick(0, 1000 * MS + 22 * INTERVAL).victim, -1);
    s.set_sched(2, |c| c.load = 300);
    assert_eq!(s.balance_pick(0, 1000 * MS + 23 * INTERVAL).victim, -1, "found anew");
    assert_eq!(s.balance_pick(0, 1000 * MS + 38 * INTERVAL).victim, -1, "too old again");
    assert_eq!(s.balance_pick(0, 1000 * MS + 39 * INTERVAL).victim, 2);
    assert_eq!(s.stat(sis_stat_STAT_BALANCE_UNCONFIRMED), 5);
    assert_eq!(s.stat(sis_stat_STAT_BALANCE_PACED), 0);
}

/// Hackbench's CPUs: CPU 5 three tasks heavier now, as some CPU often is for a moment where
/// tasks wake and sleep in bursts, but not over time (its averaged runnable count). Two looks in
/// a row found such gaps and pulled 2 000 tasks a run at 8 CPUs; over time holds them back.
#[test]
fn a_gap_only_of_the_moment_pulls_nothing() {
    let mut l = [200; 16];
    l[5] = 500;
    // runnable counts averaged over time, x1024: every CPU 2.5 tasks, CPU 5 @avg5
    let averaged = |s: &mut Sis, avg5: u64| {
        let at = ktime_now() + SECOND;
        for cpu in 0..16 {
            s.set_sched(cpu, |c| {
                c.nr_avg = if cpu == 5 { avg5 } else { 2560 };
                c.nr_avg_at = at;
            });
        }
    };
    let mut s = sis(l);
    averaged(&mut s, 2560);
    for i in 0..8 {
        assert_eq!(s.balance_pick(0, 1000 * MS + i * INTERVAL).victim, -1, "look {i}");
    }
    assert_eq!(s.stat(sis_stat_STAT_BALANCE_UNCONFIRMED), 0, "no gap found at all");
    // heavier over time too (hogs): pulled from, by the smaller gap
    let mut s = sis(l);
    averaged(&mut s, 4608);
    assert_eq!(s.balance_pick(0, 1000 * MS).victim, -1, "first find");
    let p = s.balance_pick(0, 1000 * MS + INTERVAL);
    assert_eq!((p.victim, p.gap), (5, 200), "over time 450 - 250, not the 300 of now");
    // heavier over time but even now (its extra tasks just left): no pull either
    let mut s = sis([200; 16]);
    averaged(&mut s, 4608);
    assert_eq!(s.balance_pick(0, 1000 * MS).victim, -1);
    assert_eq!(s.balance_pick(0, 1000 * MS + INTERVAL).victim, -1);
}

#[test]
fn light_cgroup_tasks_balance_too() {
    // cg-wide: a cgroup's weight is shared by its tasks, so a machine of them carries less than
    // one nice-0 task's load per CPU, and a gap smaller than a nice-0 task must still count
    let mut s = sis([0; 16]);
    for cpu in 0..16 {
        s.set_sched(cpu, |c| {
            c.load = 50;
            c.nr_runnable = 2;
        });
    }
    s.set_sched(5, |c| {
        c.load = 100;
        c.nr_runnable = 4;
    });
    s.ovl_set(5);
    assert_eq!(s.balance_pick(0, 1000 * MS).victim, -1, "first find");
    let p = s.balance_pick(0, 1000 * MS + INTERVAL);
    assert_eq!((p.victim, p.gap), (5, 50), "4 tasks of mean weight 25 across a gap of 50");
    // within the margin of the victim's mean weight: stays
    s.set_sched(5, |c| c.load = 60);
    assert_eq!(s.balance_pick(0, 1000 * MS + 2 * INTERVAL).victim, -1);
    // the other LLC, by the same measure
    s.set_sched(5, |c| c.load = 50);
    s.ovl_clear(5);
    s.set_sched(12, |c| {
        c.load = 150;
        c.nr_runnable = 4;
    });
    s.ovl_set(12);
    assert_eq!(s.balance_pick(0, 1000 * MS + 20 * INTERVAL).victim, -1, "first find");
    let p = s.balance_pick(0, 1000 * MS + 24 * INTERVAL);
    assert_eq!((p.victim, p.xllc), (12, 1), "{p:?}");
}

#[test]
fn a_light_waiting_task_evens_a_gap_its_running_neighbour_hides() {
    // fair-nice8 (one nice-0 and one nice-10 hog per CPU) ended with a nice-0 hog alone on one
    // CPU and another running with two nice-10 ones waiting: the gap (two nice-10 weights less
    // one) is below the mean of all three tasks, but a waiting nice-10 hog moves across it
    const T: u64 = (sis_consts_SIS_WEIGHT_DFL as u64) << sis_consts_SIS_LOAD_SHIFT;
    let n10 = T * 110 / 1024;
    let mut s = sis([0; 16]);
    for cpu in 0..16 {
        s.set_sched(cpu, |c| {
            c.load = T + n10;
            c.nr_runnable = 2;
        });
        s.ovl_set(cpu);
    }
    s.ovl_clear(0);
    s.set_sched(0, |c| {
        c.load = T;
        c.nr_runnable = 1;
    });
    s.set_sched(5, |c| {
        c.load = T + 2 * n10;
        c.nr_runnable = 3;
        c.curr_started = 1;
        c.curr_weight = T as u32;
    });
    assert_eq!(s.balance_pick(0, 1000 * MS).victim, -1, "first find");
    let p = s.balance_pick(0, 1000 * MS + INTERVAL);
    assert_eq!((p.victim, p.gap), (5, 2 * n10), "{p:?}");
    // a nice-10 hog runs there: a nice-0 and a nice-10 one wait, of mean weight over the gap
    s.set_sched(5, |c| c.curr_weight = n10 as u32);
    assert_eq!(s.balance_pick(0, 1000 * MS + 2 * INTERVAL).victim, -1);
    // nothing of ours runs there: the mean of all three, over the gap too
    s.set_sched(5, |c| c.curr_started = 0);
    assert_eq!(s.balance_pick(0, 1000 * MS + 3 * INTERVAL).victim, -1);
}

#[test]
fn even_cpus_stay() {
    let mut s = sis([200; 16]);
    let p = s.balance_pick(3, 1000 * MS);
    assert_eq!(p.victim, -1, "no gap anywhere: {p:?}");
}

#[test]
fn other_llc_when_the_own_one_is_even() {
    let mut l = [100; 16];
    l[9] = 400;
    let mut s = sis(l);
    assert_eq!(s.balance_pick(0, 1000 * MS).victim, -1, "first find");
    // cross-LLC looks are rarer: within BAL_XLLC_EVERY intervals, only the LLC is looked at
    assert_eq!(s.balance_pick(0, 1000 * MS + INTERVAL).victim, -1);
    let p = s.balance_pick(0, 1000 * MS + 4 * INTERVAL);
    // CPU gap 300, LLC gap 1100 - 800 = 300
    assert_eq!((p.victim, p.xllc, p.gap), (9, 1, 300));
}

#[test]
fn llc_gap_bounds_a_cross_llc_move() {
    // CPU 9 is busy but its LLC as a whole is not busier than ours: nothing to gain
    let mut l = [200; 16];
    l[8..].fill(150);
    l[9] = 400;
    let mut s = sis(l);
    for c in 0..8 {
        s.ovl_clear(c);
    }
    let p = s.balance_pick(0, 1000 * MS);
    assert_eq!(p.victim, -1, "{p:?}");
}

#[test]
fn released_cpu_gives_up_any_task() {
    let mut l = [100; 16];
    l[6] = 150;
    let mut s = sis(l);
    s.ovl_set(6);
    s.set_sched(6, |c| c.released = 1);
    let p = s.balance_pick(1, 1000 * MS);
    assert_eq!((p.victim, p.gap), (6, u64::MAX));
}

#[test]
fn least_loaded_cpu_among_the_allowed() {
    let mut l = [300; 16];
    l[2] = 50;
    l[4] = 100;
    let mut s = sis(l);
    assert_eq!(s.least_loaded(0), 2);
    s.allow(&[0, 1, 3, 4, 5, 6, 7]);
    assert_eq!(s.least_loaded(0), 4, "CPU 2 is not in p->cpus_ptr");
    s.set_sched(4, |c| c.released = 1);
    assert_eq!(s.least_loaded(0), 0, "CPU 4 is taken by RT/DL");
    s.allow(&[9]);
    assert_eq!(s.least_loaded(0), -1, "nothing allowed in LLC 0");
}

#[test]
fn idlest_llc_by_busy_cpus_then_load() {
    let mut l = [300; 16];
    l[8..].fill(100);
    let mut s = sis(l);
    // all busy (nr_busy 8 and 8): the lighter LLC wins over prev's
    assert_eq!(s.idlest_llc(0), 1);
    // fewer busy CPUs wins over load
    s.set_llc(0, false, 7);
    assert_eq!(s.idlest_llc(12), 0);
    // a tie in both keeps prev's LLC
    let mut s = sis([200; 16]);
    assert_eq!(s.idlest_llc(3), 0);
    assert_eq!(s.idlest_llc(11), 1);
}

#[test]
fn sync_wakee_joins_its_waker_unless_the_waker_cpu_is_busier() {
    const T: u64 = (sis_consts_SIS_WEIGHT_DFL as u64) << sis_consts_SIS_LOAD_SHIFT;
    let mut s = sis([0; 16]);
    let waker_runs = |s: &mut Sis, cpu: usize, load: u64| {
        s.set_sched(cpu, |c| {
            c.load = load;
            c.curr_started = 1;
            c.curr_weight = T as u32;
        })
    };
    // even loads: once the waker sleeps, its CPU with the wakee weighs what prev does
    waker_runs(&mut s, 1, 4 * T);
    s.set_sched(5, |c| c.load = 4 * T);
    assert!(s.wake_affine(1, 5, T), "4 vs 4 tasks: the waker's CPU");
    // prev is lighter by a task: the wakee stays there
    s.set_sched(5, |c| c.load = 3 * T);
    assert!(!s.wake_affine(1, 5, T), "4 vs 3 tasks: prev");
    // the margin: the waker's CPU may be up to 8% busier
    s.set_sched(5, |c| c.load = 4 * T - T / 20);
    assert!(s.wake_affine(1, 5, T), "within the margin");
    // the waker is not ours (nothing of ours runs there): it counts in full
    s.set_sched(1, |c| c.curr_started = 0);
    s.set_sched(5, |c| c.load = 4 * T);
    assert!(!s.wake_affine(1, 5, T), "no waker to discount: 5 vs 4 tasks");
    // a heavier wakee weighs more on the waker's CPU
    waker_runs(&mut s, 1, 4 * T);
    assert!(!s.wake_affine(1, 5, 2 * T), "a weight-200 wakee tips it");
}

const ROTATE_EVERY: u64 = 4 * INTERVAL; // BAL_ROTATE_EVERY slices

/// Where `cpu`'s task of `weight` rotates to over `tries` slice ends a rotation period apart.
fn rotations(s: &mut Sis, cpu: usize, weight: u64, tries: u64) -> Vec<i32> {
    (1..=tries).map(|i| s.rotate(cpu, weight, 1000 * MS + i * ROTATE_EVERY)).collect()
}

#[test]
fn the_extra_seat_rotates_to_a_lighter_cpu() {
    // 17 nice-0 hogs on 16 CPUs: CPU 3 runs two, every other CPU one. No pull evens that out
    // (a move only swaps the imbalance), so the two on CPU 3 would get half a CPU each for good.
    let mut l = [100; 16];
    l[3] = 200;
    let mut s = sis(l);
    let to = rotations(&mut s, 3, 100, 64);
    assert!(to.iter().all(|&t| t != 3), "{to:?}");
    let moved: Vec<i32> = to.iter().copied().filter(|&t| t >= 0).collect();
    assert!(moved.len() >= 32, "a target at most draws apart: {to:?}");
    assert!(moved.iter().any(|&t| t < 8) && moved.iter().any(|&t| t >= 8), "both LLCs: {to:?}");
    // at most one rotation per LLC and period
    let mut s = sis(l);
    let t0 = 1000 * MS;
    let first = (0..16).map(|i| t0 + i * ROTATE_EVERY).find(|&t| s.rotate(3, 100, t) >= 0);
    let t = first.expect("no rotation in 16 periods");
    assert_eq!(s.rotate(3, 100, t + ROTATE_EVERY / 2), -1, "rate-limited");
    assert_eq!(s.rotate(2, 100, t + ROTATE_EVERY / 2), -1, "per LLC, not per CPU");
    // only after a whole slice since the last charge: not a task preempted early (hackbench)
    let mut s = sis(l);
    let t1 = 1000 * MS + ROTATE_EVERY;
    s.set_sched(3, |c| c.curr_started = t1 - INTERVAL / 2);
    assert!((0..32).all(|_| s.rotate(3, 100, t1) == -1), "half a slice: stays");
    s.set_sched(3, |c| c.curr_started = t1 - INTERVAL);
    let to = (0..16).map(|i| s.rotate(3, 100, t1 + i * ROTATE_EVERY)).find(|&t| t >= 0);
    assert!(to.is_some(), "a whole slice: rotates");
    // a task that slept within the period (hackbench's) stays: its wakeups place it
    let mut s = sis(l);
    let t2 = 1000 * MS + ROTATE_EVERY;
    assert!((0..32).all(|_| s.rotate_since(3, 100, t2 - ROTATE_EVERY / 2, t2) == -1));
    let to = (0..16).map(|i| s.rotate_since(3, 100, t2 - ROTATE_EVERY, t2 + i * ROTATE_EVERY)).find(|&t| t >= 0);
    assert!(to.is_some(), "runnable for a whole period: rotates");
}

#[test]
fn one_rotation_in_four_crosses_to_the_other_llc() {
    // the one extra hog of LLC 0 (CPUs 0-7), its rotations paced 5 periods apart, as the
    // averaged count paces them beside hogs: by time every one was due to cross; by count, one
    // in BAL_XLLC_EVERY (4) is
    let mut l = [100; 16];
    l[3] = 200;
    let mut s = sis(l);
    let to: Vec<i32> = (1..=80).map(|i| s.rotate(3, 100, 1000 * MS + 5 * i * ROTATE_EVERY)).collect();
    let moved: Vec<i32> = to.iter().copied().filter(|&t| t >= 0).collect();
    let crossed = moved.iter().filter(|&&t| t >= 8).count();
    assert!(moved.len() >= 40, "{to:?}");
    assert!(crossed >= 4 && crossed * 3 <= moved.len(), "{crossed} of {}: {to:?}", moved.len());
    // three in its own LLC between two crossings; two when a draw there found no lighter CPU
    // (one draw, not a walk) 16 periods after the last crossing, when the time rule sends it
    // out. By time alone none would stay. Runs between crossings only: not the moves before the
    // first (its time rule is due at once), nor after the last (cut off by the end of the tries)
    let runs: Vec<usize> = moved.split(|&t| t >= 8).map(|r| r.len()).collect();
    let between = &runs[1..runs.len() - 1];
    let mean = between.iter().sum::<usize>() as f64 / between.len() as f64;
    assert!(between.len() >= 4 && mean >= 2.5 && between.iter().all(|&n| n <= 3), "{runs:?}: {to:?}");
}

#[test]
fn an_llc_of_even_cpus_sends_its_extra_out_now_and_then() {
    // every CPU of LLC 0 runs 2 hogs, of LLC 1 one: no CPU of LLC 0 is lighter than another, so
    // only a crossing moves its extra seat, at most once every BAL_XLLC_EVERY^2 periods
    let mut l = [200; 16];
    l[8..].fill(100);
    let mut s = sis(l);
    let to = rotations(&mut s, 3, 100, 64);
    let at: Vec<usize> = to.iter().enumerate().filter(|(_, &t)| t >= 0).map(|(i, _)| i).collect();
    assert!(to.iter().all(|&t| !(0..8).contains(&t)), "{to:?}");
    assert!(at.len() >= 3, "{to:?}");
    assert!(at.windows(2).all(|w| w[1] - w[0] >= 16), "{at:?}");
}

#[test]
fn a_hog_beside_a_task_just_woken_does_not_rotate() {
    // CPU 3 carries a task more than the others, but the one waiting there woke a moment ago (a
    // per-CPU kthread, a sleeper): it runs briefly and sleeps again. Sending the hog away would
    // leave CPU 3 to it for a moment, then to a steal back: settled spinners swapped CPUs so
    let mut l = [100; 16];
    l[3] = 200;
    let t = |i: u64| 1000 * MS + i * ROTATE_EVERY;
    let mut s = sis(l);
    let to: Vec<i32> = (1..=64).map(|i| s.rotate_beside(3, 100, 0, 0, t(i))).collect();
    assert!(to.iter().all(|&t| t == -1), "not run since it woke: {to:?}");
    let mut s = sis(l);
    let to: Vec<i32> = (1..=64).map(|i| s.rotate_beside(3, 100, 0, t(i) - ROTATE_EVERY / 2, t(i))).collect();
    assert!(to.iter().all(|&t| t == -1), "runnable for half a period: {to:?}");
    // a hog waits there: the extra seat does not divide, and it rotates
    let mut s = sis(l);
    let to: Vec<i32> = (1..=64).map(|i| s.rotate_beside(3, 100, 0, t(i) - ROTATE_EVERY, t(i))).collect();
    assert!(to.iter().any(|&t| t >= 0 && t != 3), "runnable for a whole period: {to:?}");
}

/// CLOCK_MONOTONIC, bpf_ktime_get_ns's clock.
fn ktime_now() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec it is given
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// A fold time this far ahead of the BPF clock: until then the average reads as set, however
/// long the test takes.
const SECOND: u64 = 1_000_000_000;

/// Two hogs on every CPU and one more on CPU 3, each CPU's averaged count and its fold time set
/// by `avg(cpu, now)`: `now` is the BPF clock once the object is loaded (loading takes a while).
fn with_averages(avg: impl Fn(usize, u64) -> (u64, u64)) -> Sis {
    let mut l = [200; 16];
    l[3] = 300;
    let mut s = sis(l);
    let now = ktime_now();
    for cpu in 0..16 {
        let (nr_avg, at) = avg(cpu, now);
        s.set_sched(cpu, |c| {
            c.nr_avg = nr_avg;
            c.nr_avg_at = at;
        });
    }
    s
}

#[test]
fn a_cpu_lighter_only_for_a_moment_is_no_rotation_target() {
    // beside hogs, CPU 3's sleeper is awake (3 runnable) and the others' asleep (2): lighter now,
    // but over time every CPU held the same, so the hog stays
    let mut s = with_averages(|_, now| (2 * 1024 + 50, now + SECOND));
    let to = rotations(&mut s, 3, 100, 64);
    assert!(to.iter().all(|&t| t == -1), "{to:?}");
    // lighter over time too (a seat that does not divide): it rotates
    let mut s = with_averages(|cpu, now| (if cpu == 3 { 3 * 1024 } else { 2 * 1024 }, now + SECOND));
    let to = rotations(&mut s, 3, 100, 64);
    assert!(to.iter().any(|&t| t >= 0 && t != 3), "{to:?}");
}

#[test]
fn a_cpu_heavier_for_a_few_slices_sends_no_hog_yet() {
    // every CPU ran 2 tasks; CPU 3 has run 3 for the last 6 slices (a sleeper's wakeup, a
    // kworker's burst beside its hogs). With the count averaged over 4 slices that was half a
    // task heavier already and a hog rotated at every such burst, 4-5x the fair class's
    // migrations beside hogs; over 16 slices it is not yet
    let since = |slices: u64| move |cpu, now| (2 * 1024, if cpu == 3 { now - slices * INTERVAL } else { now + SECOND });
    let mut s = with_averages(since(6));
    let to = rotations(&mut s, 3, 100, 64);
    assert!(to.iter().all(|&t| t == -1), "{to:?}");
    // heavier for 4 time constants: the extra task stays, so the seat does not divide; it rotates
    let mut s = with_averages(since(64));
    let to = rotations(&mut s, 3, 100, 64);
    assert!(to.iter().any(|&t| t >= 0 && t != 3), "{to:?}");
}

#[test]
fn even_cpus_do_not_rotate() {
    let mut s = sis([200; 16]);
    let to = rotations(&mut s, 5, 100, 64);
    assert!(to.iter().all(|&t| t == -1), "{to:?}");
}

#[test]
fn only_tasks_of_one_weight_rotate() {
    // fair-nice8's stray state: a nice-0 (100) beside a nice-10 hog (11) on CPU 0, a nice-10 hog
    // alone on CPU 1. Sending the nice-0 one over is neutral by load, but leaves the nice-10 one
    // a CPU of its own (an earlier build: fair-nice8 9.3 -> 6.2); pulls even mixed weights out
    let mut l = [111; 16];
    l[1] = 11;
    let mut s = sis(l);
    for c in 0..16 {
        s.set_sched(c, |x| x.nr_runnable = if c == 1 { 1 } else { 2 });
    }
    let heavy = rotations(&mut s, 0, 100, 64);
    assert!(heavy.iter().all(|&t| t == -1), "{heavy:?}");
    // nice-10 hogs alone rotate like nice-0 ones: 3 on CPU 0, 2 on every other CPU
    let mut s = sis([22; 16]);
    s.set_sched(0, |x| {
        x.load = 33;
        x.nr_runnable = 3;
    });
    for c in 1..16 {
        s.set_sched(c, |x| x.nr_runnable = 2);
    }
    let light = rotations(&mut s, 0, 11, 64);
    assert!(light.iter().filter(|&&t| t > 0).count() >= 32, "{light:?}");
    // 3 nice-0 hogs on CPU 0 and 2 on the others, but a pair of nice-10 ones on CPU 5 of the
    // same LLC: the LLC's weights are mixed, and pulls need the busiest CPU to stay put
    let mut l = [200; 16];
    l[0] = 300;
    l[5] = 22;
    let mut s = sis(l);
    s.set_sched(5, |x| x.nr_runnable = 2);
    let mixed = rotations(&mut s, 0, 100, 64);
    assert!(mixed.iter().all(|&t| t == -1), "{mixed:?}");
    s.set_sched(5, |x| x.load = 200);
    assert!(rotations(&mut s, 0, 100, 64).iter().any(|&t| t > 0), "once the LLC is of one weight");
}

#[test]
fn the_extra_seat_crosses_only_to_a_lighter_llc() {
    // LLC 0 carries 800 like LLC 1 (CPU 1 is empty): CPU 0 is busier than any CPU of LLC 1,
    // but crossing would only make LLC 1 the busier one by a whole task
    let mut l = [100; 16];
    l[0] = 200;
    l[1] = 0;
    let mut s = sis(l);
    let to = rotations(&mut s, 0, 100, 128);
    // nor to the idle CPU 1: an idle CPU is stealing's, and `--steal off` must leave it idle
    assert!(to.iter().all(|&t| t < 8 && t != 0 && t != 1), "{to:?}");
    assert!(to.iter().any(|&t| t > 1), "{to:?}");
}

#[test]
fn a_pinned_task_does_not_rotate() {
    let mut l = [100; 16];
    l[3] = 200;
    let mut s = sis(l);
    s.allow(&[3]);
    assert!(rotations(&mut s, 3, 100, 32).iter().all(|&t| t == -1));
    // nor to a CPU taken by RT/DL
    s.allow(&[2, 3]);
    s.set_sched(2, |c| c.released = 1);
    assert!(rotations(&mut s, 3, 100, 32).iter().all(|&t| t == -1));
}
