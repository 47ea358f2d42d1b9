/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Balance between busy CPUs, by weighted load (vtime.bpf.h).
 *
 * Steal-on-idle (steal.bpf.h) stays the fast path for idle CPUs;
 * this evens out CPUs that are all busy, which stealing never looks at:
 *  - a CPU whose slice ended looks, at most once every balance_every
 *    slices, for the
 *    busiest overloaded CPU of its LLC, and, at most once every
 *    BAL_XLLC_EVERY slices when its LLC gave nothing movable, of the other
 *    LLCs; it pulls one task whose move narrows the load gap by a margin
 *    (BAL_MARGIN_PCT of its weight), so near-even pairs do not ping-pong;
 *  - only from a CPU the look before found busiest too: a load is
 *    instantaneous, and a root task's short run (a nice-0 kworker outweighs
 *    a whole CPU of cgroup hogs) must not pull hogs away and back again;
 *  - by a gap that holds now and over time (the smaller of the two), the
 *    victim heavier over time by the fair class's imbalance_pct: where tasks
 *    wake and sleep in bursts (hackbench), instantaneous gaps come and go
 *    every slice, two looks in a row found one, and their pulls were most of
 *    the remote rq locks. Over time is the averaged runnable count
 *    (vtime.bpf.h) at the mean weight of now: no second average to fold at
 *    every load change, in the callbacks of every wakeup and switch;
 *  - an LLC pulls at most once every BAL_PULL_EVERY slices, whichever of
 *    its CPUs looks (the fair class balances a busy domain only every
 *    busy_factor intervals, from one CPU of the group, and moves a batch
 *    under one lock; sched_ext moves a task a call): on 7.3, gaps of
 *    hackbench's bursts held over time often enough for 2 000-3 800 pulls
 *    a run at 8 CPUs. 16 slices cut more, but cg-wide, whose pulls come in
 *    bursts, read lower;
 *  - a CPU taken by RT/DL (released) gives up any task at once: nothing of
 *    ours runs there until it comes back;
 *  - a fork or exec that found no idle CPU goes to the least-loaded CPU of
 *    the idlest LLC (the fair class's idlest group / idlest CPU), not to prev;
 *  - rotation: when tasks do not divide among CPUs (17 hogs on 8 CPUs), no
 *    pull evens them out, and the tasks of the one busier CPU would get a
 *    third of it while the others get half. A busier CPU whose slice ended
 *    sends that task, the one just served, to a CPU one task lighter, at
 *    most once every BAL_ROTATE_EVERY slices per LLC (and to another LLC
 *    one in BAL_XLLC_EVERY rotations): the extra seat moves around, and the
 *    shares even out over time as under the fair class's balancing.
 * Decisions only: the move (a DSQ walk, scx kfuncs) is steal.bpf.h's.
 * Needs no sched_ext type: the host tests include it too. Hook (hooks.bpf.h):
 * sis_allowed.
 */
#ifndef __SIS_BALANCE_BPF_H
#define __SIS_BALANCE_BPF_H

#include "hooks.bpf.h"
#include "topology.bpf.h"
#include "stats.bpf.h"
#include "idle_filter.bpf.h"
#include "overload.bpf.h"
#include "vtime.bpf.h"

#define BAL_XLLC_EVERY	4
#define BAL_IMBALANCE_PCT	117	/* a victim's load over ours over time, percent */
#define BAL_ROTATE_EVERY	4	/* slices between an LLC's rotations */
#define BAL_PULL_EVERY	8	/* slices between an LLC's pulls */
#define BAL_GAP_ANY	(~0ULL)		/* victim released: any task may go */

/* balance_on is overload.bpf.h's: the overloaded map is kept for the balance too */
const volatile u32 balance_every = 1;	/* slices between a busy CPU's looks (--balance-every) */

struct balance_pick {
	s32 victim;		/* CPU to pull from, or -1 */
	u32 xllc;		/* it is in another LLC */
	u64 gap;		/* victim's load minus ours (BAL_GAP_ANY: released) */
	u64 now;		/* ktime, for the averages */
	u64 my_avg;		/* our load over time (load_over_time) */
};

/* the walk's cursor lives in map memory so the verifier's loop converges */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, u32);
	__type(value, struct ovl_walk);
	__uint(max_entries, 1);
} balance_walk SEC(".maps");

/* Moving @weight across a load @gap narrows it, by the margin. */
static __always_inline bool balance_may_move(u64 weight, u64 gap)
{
	if (gap == BAL_GAP_ANY)
		return true;
	return weight * (100 + BAL_MARGIN_PCT) < gap * 100;
}

/*
 * A gap worth a pull from @victim: one of its waiting tasks of mean weight,
 * or a nice-0 one if heavier, could move across it. The running task stays,
 * so it is left out of the mean: a nice-0 hog (weight 1024) running with two
 * nice-10 ones (110) waiting, a mean of 415 with it and 110 without, must give
 * one up to a CPU with a nice-0 hog alone, 220 lighter: the mean of all kept
 * fair-nice8 at 10.5 where the ideal is 9.31. Not a nice-0 task alone: a
 * cgroup's tasks weigh its weight shared among them (cgroup.bpf.h), and a
 * whole machine of them can carry less load than one nice-0 task per CPU.
 */
static __always_inline bool gap_movable(s32 victim, u64 gap)
{
	struct cpu_sched *c = cpu_sched(victim);
	u64 load = 0, curr, w;
	u32 nr = 0;

	if (c) {
		nr = READ_ONCE(c->nr_runnable);
		load = READ_ONCE(c->load);
		curr = READ_ONCE(c->curr_weight);
		if (READ_ONCE(c->curr_started) && nr > 1 && load > curr) {
			load -= curr;
			nr--;
		}
	}
	w = nr ? load / nr : LOAD_DFL;
	return balance_may_move(w < LOAD_DFL ? w : LOAD_DFL, gap);
}

static __always_inline u64 load_gap(u64 from, u64 to)
{
	return from > to ? from - to : 0;
}

/*
 * @c's load over time: its runnable count averaged (nr_avg_at) at the mean
 * weight of its tasks now. Exact for tasks of one weight; with weights mixed,
 * right as long as the mix holds, which is what a balance of hogs needs.
 */
static __always_inline u64 load_over_time(struct cpu_sched *c, u64 now)
{
	u64 nr = READ_ONCE(c->nr_runnable), load = READ_ONCE(c->load);

	if (!nr)
		return 0;
	return nr_avg_at(c, now) * load / (nr << 10);
}

/*
 * @v's load over @my_load now, and over @bp's my_avg over time: the smaller.
 * No gap unless @v is heavier over time by the fair class's imbalance_pct at
 * the LLC: a cgroup's tasks share its weight, so a hackbench task weighs a
 * few units, and the noise of the averages alone was a movable gap.
 */
static __always_inline u64 lasting_gap(s32 v, u64 my_load, const struct balance_pick *bp)
{
	struct cpu_sched *c = cpu_sched(v);
	u64 now_gap, avg, avg_gap;

	if (!c)
		return 0;
	avg = load_over_time(c, bp->now);
	if (avg * 100 <= bp->my_avg * BAL_IMBALANCE_PCT)
		return 0;
	now_gap = load_gap(READ_ONCE(c->load), my_load);
	avg_gap = avg - bp->my_avg;
	return now_gap < avg_gap ? now_gap : avg_gap;
}

/* Sum of the loads of @llc's CPUs; their number in *@nr. */
static __always_inline u64 llc_load(u32 llc, u32 *nr)
{
	struct llc_topo *lt = llc_topo(llc);
	u64 sum = 0;
	u32 pos;

	*nr = 0;
	if (!lt)
		return 0;
	bpf_for(pos, 0, SIS_MAX_LLC_CPUS) {
		if (pos >= lt->nr_cpus)
			break;
		sum += cpu_load(llc_cpu_at(llc, pos));
	}
	*nr = lt->nr_cpus;
	return sum;
}

/*
 * The overloaded CPU of @llc (other than @cpu) with the largest load gap
 * over @my_load, into @bp if larger than what @bp holds. A released CPU
 * wins at once.
 */
__noinline int balance_find_in_llc(s32 cpu, u32 llc, u64 my_load, struct balance_pick *bp)
{
	struct llc_topo *lt = llc_topo(llc);
	struct ovl_walk *wk;
	u32 zero = 0, i;

	wk = bpf_map_lookup_elem(&balance_walk, &zero);
	if (!wk || !lt || !bp)
		return 0;
	ovl_walk_init(wk, llc, lt->nr_cpus, 0, lt->nr_cpus);
	bpf_for(i, 0, SIS_MAX_LLC_CPUS) {
		s32 v;
		u64 gap;

		wk = bpf_map_lookup_elem(&balance_walk, &zero);
		if (!wk)
			break;
		v = ovl_walk_next(wk);
		if (v < 0)
			break;
		if (v == cpu)
			continue;
		gap = cpu_released(v) ? BAL_GAP_ANY : lasting_gap(v, my_load, bp);
		if (gap > bp->gap) {
			bp->victim = v;
			bp->gap = gap;
			if (gap == BAL_GAP_ANY)
				break;
		}
	}
	return 0;
}

/*
 * Another LLC whose load, scaled to ours, exceeds ours by a movable gap: the
 * busiest CPU there, if the move also narrows the gap between the LLCs.
 */
__noinline int balance_find_xllc(s32 cpu, u32 llc, u64 my_load, struct balance_pick *bp)
{
	struct balance_pick best = { .victim = -1, .xllc = 1 };
	u64 mine, other, llc_gap;
	u32 n_mine, n_other, i;

	if (!bp)
		return 0;
	best.now = bp->now;
	best.my_avg = bp->my_avg;
	mine = llc_load(llc, &n_mine);
	if (!n_mine)
		return 0;
	bpf_for(i, 0, nr_llcs) {
		struct balance_pick in = { .victim = -1, .xllc = 1, .now = bp->now, .my_avg = bp->my_avg };

		if (i == llc)
			continue;
		other = llc_load(i, &n_other);
		if (!n_other)
			continue;
		/* other's load as if it had our number of CPUs */
		llc_gap = load_gap(other * n_mine / n_other, mine);
		if (!llc_gap)
			continue;
		balance_find_in_llc(cpu, i, my_load, &in);
		if (in.victim < 0)
			continue;
		if (in.gap > llc_gap)
			in.gap = llc_gap;
		if (!gap_movable(in.victim, in.gap))
			continue;
		if (in.gap > best.gap)
			best = in;
	}
	if (best.victim >= 0 && best.gap > bp->gap)
		*bp = best;
	return 0;
}

/*
 * @victim, found by this look, was found by the previous one (@seen, taken
 * @since ago, at most four of its @period: slices end at ticks, 10 ms
 * apart at HZ=100): a gap that lasts. Records @victim as this look's find.
 */
static __always_inline bool balance_confirmed(u16 *seen, s32 victim, u64 since, u64 period)
{
	bool ok = *seen == (u16)(victim + 1) && since <= 4 * period;

	*seen = victim + 1;
	return ok;
}

/*
 * @bp's confirmed victim, if @llc's pull is due at @now (none within
 * BAL_PULL_EVERY slices before; stamped then: it is pulled from next),
 * else -1.
 */
static __always_inline s32 balance_pull_due(s32 llc, u64 now, struct balance_pick *bp)
{
	struct llc_ctx *l = llc_ctx(llc);

	if (!l || now - READ_ONCE(l->last_pull) < BAL_PULL_EVERY * slice_ns) {
		stat_inc(STAT_BALANCE_PACED);
		bp->victim = -1;
		return -1;
	}
	WRITE_ONCE(l->last_pull, now);
	return bp->victim;
}

/*
 * Whom @cpu should pull from now, or -1: rate-limited per CPU, and per LLC
 * once confirmed (balance_pull_due). The LLC first; other LLCs only when
 * the LLC has no movable gap. A CPU taken by RT/DL at once, any other one
 * when two looks in a row find it.
 */
__noinline int balance_pick_victim(s32 cpu, u64 now, struct balance_pick *bp)
{
	struct cpu_sched *c = cpu_sched(cpu);
	s32 llc = cpu_llc(cpu);
	u64 my_load, since, period = balance_every * slice_ns;

	if (!bp)
		return -1;
	bp->victim = -1;
	bp->xllc = 0;
	bp->gap = 0;
	if (!balance_on || !c || llc < 0)
		return -1;
	since = now - c->last_balance;
	if (since < period)
		return -1;
	c->last_balance = now;
	stat_inc(STAT_BALANCE_LOOK);
	my_load = READ_ONCE(c->load);
	/* the averaged count's clock: load_add folds it at bpf_ktime_get_ns() */
	bp->now = bpf_ktime_get_ns();
	bp->my_avg = load_over_time(c, bp->now);

	balance_find_in_llc(cpu, llc, my_load, bp);
	if (bp->victim >= 0 && bp->gap == BAL_GAP_ANY)
		return bp->victim;
	if (bp->victim >= 0 && gap_movable(bp->victim, bp->gap)) {
		if (balance_confirmed(&c->bal_seen, bp->victim, since, period))
			return balance_pull_due(llc, now, bp);
		stat_inc(STAT_BALANCE_UNCONFIRMED);
		bp->victim = -1;
		return -1;
	}
	c->bal_seen = 0;
	/* a gap too small to move anything across is no pick: a pull would walk for nothing */
	bp->victim = -1;
	bp->gap = 0;
	since = now - c->last_xllc;
	if (nr_llcs > 1 && since >= BAL_XLLC_EVERY * slice_ns) {
		c->last_xllc = now;
		balance_find_xllc(cpu, llc, my_load, bp);
		if (bp->victim < 0) {
			c->bal_seen_xllc = 0;
		} else if (!balance_confirmed(&c->bal_seen_xllc, bp->victim, since,
					      BAL_XLLC_EVERY * slice_ns)) {
			stat_inc(STAT_BALANCE_UNCONFIRMED);
			bp->victim = -1;
			return -1;
		}
	}
	if (bp->victim >= 0)
		return balance_pull_due(llc, now, bp);
	stat_inc(STAT_BALANCE_NO_GAP);
	return -1;
}

/* the fair class's wake_affine margin: half of its LLC-level imbalance_pct (117) */
#define WA_MARGIN_PCT	8

/*
 * A sync wakee of weight @w is no worse off on its waker's CPU @this than on
 * @prev: @this's load without the waker (it is about to sleep) and with the
 * wakee is at most @prev's, by the margin.
 */
static __always_inline bool wake_affine_load(s32 this, s32 prev, u64 w)
{
	struct cpu_sched *c = cpu_sched(this);
	u64 this_load = cpu_load(this), prev_load = cpu_load(prev), curr = 0;

	if (c && READ_ONCE(c->curr_started))
		curr = READ_ONCE(c->curr_weight);
	this_load = this_load > curr ? this_load - curr : 0;
	return (this_load + w) * 100 < prev_load * (100 + WA_MARGIN_PCT);
}

/* The least-loaded CPU of @llc allowed for @p and not released, or -1. */
__noinline int least_loaded_cpu(struct task_struct *p __arg_trusted, u32 llc)
{
	struct llc_topo *lt = llc_topo(llc);
	u64 best_load = ~0ULL;
	s32 best = -1;
	u32 pos;

	if (!lt)
		return -1;
	bpf_for(pos, 0, SIS_MAX_LLC_CPUS) {
		s32 cpu;
		u64 load;

		if (pos >= lt->nr_cpus)
			break;
		cpu = llc_cpu_at(llc, pos);
		if (cpu < 0 || !sis_allowed(p, cpu) || cpu_released(cpu))
			continue;
		load = cpu_load(cpu);
		if (load < best_load) {
			best = cpu;
			best_load = load;
		}
	}
	return best;
}

/*
 * The LLC with the fewest busy CPUs (nr_busy, kept incrementally); when
 * that ties, as it does once every CPU is busy, the least load per CPU.
 * @prev's LLC wins ties.
 */
__noinline int idlest_llc(s32 prev)
{
	s32 best = cpu_llc(prev), best_busy = 0x7fffffff, i;
	u64 best_load = ~0ULL;
	u32 nr;
	struct llc_ctx *l;

	if (best >= 0 && (l = llc_ctx(best))) {
		best_busy = READ_ONCE(l->nr_busy);
		best_load = llc_load(best, &nr);
		best_load = nr ? best_load / nr : best_load;
	}
	bpf_for(i, 0, nr_llcs) {
		s32 busy;
		u64 load;

		l = llc_ctx(i);
		if (!l || i == best)
			continue;
		busy = READ_ONCE(l->nr_busy);
		if (busy > best_busy)
			continue;
		load = llc_load(i, &nr);
		load = nr ? load / nr : load;
		if (busy < best_busy || load < best_load) {
			best = i;
			best_busy = busy;
			best_load = load;
		}
	}
	return best;
}

/*
 * Moving a task of @weight across a load @gap only swaps which side is
 * busier, no wider than now by the margin: a rotation, not a balancing move
 * (balance_may_move), which needs the gap to narrow.
 */
static __always_inline bool balance_may_rotate(u64 weight, u64 gap)
{
	return gap && weight * 100 <= gap * (100 + BAL_MARGIN_PCT);
}

/*
 * @nr tasks of @weight each make up @load: off by less than half a task, so
 * that one nice-10 task (a tenth of a nice-0 one) among any number of nice-0
 * ones shows.
 */
static __always_inline bool load_of_equals(u64 load, u32 nr, u64 weight)
{
	u64 expect = nr * weight;

	return (load > expect ? load - expect : expect - load) * 2 < weight;
}

/*
 * Every task of @llc weighs @weight, by the margin. Rotation is for tasks of
 * one weight. With nice 0 and nice 10 mixed, moving a nice-0 task from
 * beside a nice-10 one to a nice-10 one alone is neutral by load, but leaves
 * that one a CPU of its own (fair-nice8 9.3 -> 6.2); and rotations among
 * even the CPUs of one weight move the busier CPU around, so the pulls that
 * even out the mixed ones (balance_may_move), which need the same busiest
 * CPU in two looks, came less often (fair-nice8 9.3 -> 8.1).
 */
static __always_inline bool llc_of_equals(u32 llc, u64 weight)
{
	struct llc_topo *lt = llc_topo(llc);
	u64 load = 0;
	u32 nr = 0, pos;

	if (!lt)
		return false;
	bpf_for(pos, 0, SIS_MAX_LLC_CPUS) {
		struct cpu_sched *c;

		if (pos >= lt->nr_cpus)
			break;
		c = cpu_sched(llc_cpu_at(llc, pos));
		if (!c)
			continue;
		load += READ_ONCE(c->load);
		nr += READ_ONCE(c->nr_runnable);
	}
	return load_of_equals(load, nr, weight);
}

/*
 * A busy CPU of @llc drawn at random, if it runs fewer tasks than @cpu and
 * @p may rotate there, or -1. One draw, not a walk: every slice end of a busy
 * CPU asks, and on evenly loaded CPUs the answer is always no.
 */
static __always_inline s32 rotate_to_in(struct task_struct *p, s32 cpu, u32 llc, u64 weight)
{
	struct cpu_sched *c = cpu_sched(cpu), *t;
	struct llc_topo *lt = llc_topo(llc);
	u64 now = bpf_ktime_get_ns();
	s32 to;

	if (!lt || !lt->nr_cpus || !c)
		return -1;
	to = llc_cpu_at(llc, bpf_get_prandom_u32() % lt->nr_cpus);
	if (to < 0 || to == cpu || !(t = cpu_sched(to)))
		return -1;
	/*
	 * An idle CPU is stealing's (steal.bpf.h): --steal off leaves it idle.
	 * Lighter now and, by half a task, over time: beside hogs, a sleeper
	 * asleep makes its CPU one task lighter for a moment, and rotating a hog
	 * there for it migrated 10x as often as the fair class, for nothing.
	 */
	if (!READ_ONCE(t->nr_runnable) || READ_ONCE(t->nr_runnable) >= READ_ONCE(c->nr_runnable) ||
	    nr_avg_at(t, now) + 512 > nr_avg_at(c, now) ||
	    !balance_may_rotate(weight, load_gap(READ_ONCE(c->load), READ_ONCE(t->load))) ||
	    !load_of_equals(READ_ONCE(c->load), READ_ONCE(c->nr_runnable), weight) ||
	    READ_ONCE(t->released) || !sis_allowed(p, to) || !llc_of_equals(llc, weight))
		return -1;
	return to;
}

/* @llc carries, per CPU, a task of @weight more than @other: the extra seat may cross. */
static __always_inline bool llc_may_rotate(u32 llc, u32 other, u64 weight)
{
	u64 mine, theirs;
	u32 n_mine, n_other;

	mine = llc_load(llc, &n_mine);
	theirs = llc_load(other, &n_other);
	if (!n_mine || !n_other)
		return false;
	return balance_may_rotate(weight, load_gap(mine, theirs * n_mine / n_other));
}

/* Runnable since @since, without a sleep, for a rotation period: a hog, which may rotate. */
static __always_inline bool rotation_hog(u64 since, u64 now)
{
	return now - since >= BAL_ROTATE_EVERY * slice_ns;
}

/*
 * A rotation swaps seats among hogs: @prev_since is when the task whose slice
 * ended first ran since its wakeup, @head_since the same for the task next in
 * line on its CPU (0: not run since it woke). The two have been runnable
 * since the later of the two. Beside a task just woken (a per-CPU kthread, a
 * sleeper), a hog sent away left its CPU to that task for a moment, then to a
 * steal back: two migrations, and the CPU it went to shared for nothing
 * (settled spinners swapped CPUs every second).
 */
static __always_inline u64 rotation_since(u64 prev_since, u64 head_since, u64 now)
{
	if (!head_since)
		return now;
	return prev_since > head_since ? prev_since : head_since;
}

/* @p's rotation from @llc to a CPU of another LLC, drawn at random, or -1. */
static __always_inline s32 rotate_out_of(struct task_struct *p, s32 cpu, u32 llc, struct llc_ctx *l,
					 u64 weight, u64 now)
{
	u32 other = (llc + 1 + bpf_get_prandom_u32() % (nr_llcs - 1)) % nr_llcs;
	s32 to = rotate_to_in(p, cpu, other, weight);

	/* the LLC as a whole must carry the extra task too, not just this CPU */
	if (to < 0 || !llc_may_rotate(llc, other, weight) || !llc_of_equals(llc, weight))
		return -1;
	WRITE_ONCE(l->last_xrotate, now);
	WRITE_ONCE(l->local_rotations, 0);
	stat_inc(STAT_BALANCE_ROTATE_XLLC);
	return to;
}

/*
 * @p ended a whole slice on @cpu with others waiting there, it and the next
 * in line runnable since @runnable_at (rotation_since): the CPU to rotate it
 * to (queued there by ops.enqueue), or -1. Rate-limited per LLC. One in
 * BAL_XLLC_EVERY goes to another LLC; an LLC with no CPU lighter than
 * another (its CPUs even, or only one) sends it out at most once every
 * BAL_XLLC_EVERY^2 periods.
 */
__noinline int balance_rotate_target(struct task_struct *p __arg_trusted, s32 cpu, u64 weight,
				     u64 runnable_at, u64 now)
{
	u64 period = BAL_ROTATE_EVERY * slice_ns;
	struct cpu_sched *c = cpu_sched(cpu);
	s32 llc = cpu_llc(cpu), to = -1;
	struct llc_ctx *l;

	if (!balance_on || llc < 0 || !c || !(l = llc_ctx(llc)))
		return -1;
	/*
	 * Only a CPU hog: a task that used a whole slice since its last charge
	 * and has not slept for a rotation period, and another one next in
	 * line (rotation_since). A task that sleeps gets its
	 * share through its wakeups' placement; rotating hackbench's tasks
	 * (200-300 rotations a run) cost it 11-15% of its speed.
	 */
	if (now - READ_ONCE(c->curr_started) < slice_ns || !rotation_hog(runnable_at, now))
		return -1;
	if (now - READ_ONCE(l->last_rotate) < period)
		return -1;
	/*
	 * Counted in rotations, not time: the averaged count paces rotations
	 * beside hogs to one every 4-5 periods, so by time every one of them
	 * was due to cross (9 hogs on 8 CPUs in 2 LLCs: 2 in 3 did).
	 */
	if (nr_llcs > 1 && READ_ONCE(l->local_rotations) >= BAL_XLLC_EVERY - 1)
		to = rotate_out_of(p, cpu, llc, l, weight, now);
	if (to < 0) {
		to = rotate_to_in(p, cpu, llc, weight);
		if (to >= 0)
			WRITE_ONCE(l->local_rotations, READ_ONCE(l->local_rotations) + 1);
	}
	if (to < 0 && nr_llcs > 1 &&
	    now - READ_ONCE(l->last_xrotate) >= BAL_XLLC_EVERY * BAL_XLLC_EVERY * period)
		to = rotate_out_of(p, cpu, llc, l, weight, now);
	if (to < 0)
		return -1;
	WRITE_ONCE(l->last_rotate, now);
	stat_inc(STAT_BALANCE_ROTATE);
	return to;
}

#endif /* __SIS_BALANCE_BPF_H */
