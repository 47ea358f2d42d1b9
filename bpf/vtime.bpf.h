/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-CPU vtime and weighted load: what makes weights hold.
 *
 * Owns: each CPU's queue clock (vclock) and load (cpu_sched_map), and a
 * task's side of both (struct task_sched, kept in its task storage).
 *  - A task's lag is its vtime minus its queue's clock. When it moves to
 *    another CPU (wakeup elsewhere, steal, balance) the lag goes with it, so
 *    a nice-5 task keeps owing a nice-0 one wherever each runs. One
 *    machine-wide clock instead would level the tasks of a CPU every round.
 *  - A sleeper's credit (negative lag) is capped at one slice and granted on
 *    a wakeup only; a task whose slice ended keeps its vtime.
 *  - Its debt (positive lag) is capped at two slices of its weight when it
 *    wakes or moves, as the fair class clamps a leaving task's lag: a task
 *    waits behind each of n queued ones by at most that, not by whatever run
 *    it was charged last (under TCG a vCPU's whole descheduled turn, seconds).
 *  - Run time is charged from a timestamp taken when the task starts, so
 *    refilling a running task's slice loses nothing.
 *  - A CPU's load is the sum of the weights of its runnable tasks: what
 *    balance.bpf.h evens out.
 * Called from: ops.enqueue (placement, preemption), ops.running/stopping
 * (charge, clock), and for the load where a wakeup is placed, ops.running,
 * ops.stopping (asleep), ops.disable and ops.set_weight (main.bpf.c).
 *
 * Needs no sched_ext type: the host tests include it too.
 */
#ifndef __SIS_VTIME_BPF_H
#define __SIS_VTIME_BPF_H

#include "intf.h"

/* a nice-0 task's weight in load units (intf.h: SIS_LOAD_SHIFT) */
#define LOAD_DFL	((u64)SIS_WEIGHT_DFL << SIS_LOAD_SHIFT)

u64 slice_ns = SIS_DFL_SLICE_NS;	/* writable: `scx_sis set slice-us=` */
const volatile bool wakeup_preempt = true;

/*
 * The fair class's weight for each nice level (kernel/sched/core.c:
 * sched_prio_to_weight, nice -20..19; nice 0 = 1024) and for SCHED_IDLE.
 * p->scx.weight is this rounded to cpu.weight units (nice 0 = 100): nice 5
 * (335) becomes 33, a 3.03 ratio to nice 0 against the fair class's 3.06,
 * nice 19 (15) and SCHED_IDLE (3) both become 1. Taken from the nice level,
 * weights hold as they do under the fair class.
 */
static const u32 nice_weights[40] = {
	88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916,
	9548, 7620, 6100, 4904, 3906, 3121, 2501, 1991, 1586, 1277,
	1024, 820, 655, 526, 423, 335, 272, 215, 172, 137,
	110, 87, 70, 56, 45, 36, 29, 23, 18, 15,
};
#define NICE_WEIGHT_IDLE	3
#define NICE_PRIO_0		100	/* static_prio of nice -20 (MAX_RT_PRIO) */

/*
 * The weight in load units of a task of @static_prio (and SCHED_IDLE if
 * @idle): nice_weights[] scaled so nice 0 is LOAD_DFL. @scx_weight
 * (p->scx.weight) is the fallback for a static_prio out of the table.
 */
static __always_inline u32 nice_load_weight(s32 static_prio, bool idle, u32 scx_weight)
{
	u32 i = static_prio - NICE_PRIO_0;

	if (idle)
		return NICE_WEIGHT_IDLE * LOAD_DFL / 1024;
	if (i < 40)
		return nice_weights[i] * LOAD_DFL / 1024;
	return scx_weight << SIS_LOAD_SHIFT;
}

/*
 * A running task keeps its CPU this long before a woken task may preempt it,
 * and a wakee must be owed this much. Half a slice: at a quarter, hackbench's
 * receivers preempted their senders a message at a time (more switches,
 * slower on two vCPUs); the fair class protects a whole slice (RUN_TO_PARITY).
 */
static __always_inline u64 preempt_min_ns(void)
{
	return slice_ns / 2;
}

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, u32);
	__type(value, struct cpu_sched);
	__uint(max_entries, 1);		/* resized to nr_cpu_ids */
} cpu_sched_map SEC(".maps");

static __always_inline struct cpu_sched *cpu_sched(s32 cpu)
{
	u32 key = cpu;

	if (cpu < 0)
		return NULL;
	return bpf_map_lookup_elem(&cpu_sched_map, &key);
}

static __always_inline bool vtime_before(u64 a, u64 b)
{
	return (s64)(a - b) < 0;
}

static __always_inline u64 cpu_load(s32 cpu)
{
	struct cpu_sched *c = cpu_sched(cpu);

	return c ? READ_ONCE(c->load) : 0;
}

static __always_inline bool cpu_released(s32 cpu)
{
	struct cpu_sched *c = cpu_sched(cpu);

	return c && READ_ONCE(c->released);
}

/*
 * The most a task of @weight may owe when it wakes or moves: two slices of
 * run time in its vtime, the fair class's clamp (update_entity_lag).
 * Uncapped, a task charged one long run (under TCG, a vCPU descheduled for
 * seconds under it) kept that debt through its sleeps and at each wakeup
 * waited behind every task queued on its CPU until each had run as long: a
 * wait that grew with the number of hogs and the size of one charge. An
 * unbound kworker (sched_ext's watchdog work) is such a task.
 */
static __always_inline s64 lag_max(u32 weight)
{
	return 2 * slice_ns * LOAD_DFL / (weight ? weight : LOAD_DFL);
}

/*
 * @vtime, relative to @from's clock, made relative to @to's: the lag carries,
 * but never more than @credit (one slice, or none: wake_credit) nor lag_max()
 * of debt.
 */
static __always_inline u64 vtime_carry(u64 vtime, s32 from, s32 to, u32 weight, u64 credit)
{
	struct cpu_sched *f = cpu_sched(from), *t = cpu_sched(to);
	s64 lag, debt;

	if (!t)
		return vtime;
	lag = f ? (s64)(vtime - READ_ONCE(f->vclock)) : 0;
	if (lag < -(s64)credit)
		lag = -(s64)credit;
	/* the division only when there is a debt to cap: wakeups mostly carry credit */
	if (lag > 0 && lag > (debt = lag_max(weight)))
		lag = debt;
	return READ_ONCE(t->vclock) + lag;
}

/*
 * The sleeper credit of a wakeup: a slice, but none for a sync wakee (its
 * waker is about to sleep: pipes, sockets) that joins others already waiting
 * there. With a slice of credit it went before every task in line, ran with
 * the few messages written so far and slept again: 1.5-2x the switches per
 * hackbench message of the same scheduler with FIFO queues, and 20-35%
 * slower. In line it reads a batch. Beside a lone runner, behind a hog
 * (ops.enqueue looks at the head of the queue), or woken by a timer, it keeps
 * its credit (and its preemption); hogs' shares are vtime's.
 */
static __always_inline u64 wake_credit(bool in_line)
{
	return in_line ? 0 : slice_ns;
}

/*
 * The vtime of a task of @weight queued on @cpu. A wakeup (or a move to
 * another CPU) measures its lag against the destination's clock, @credit and
 * debt capped; a task whose slice ended on the same CPU keeps its vtime: no
 * credit at expiry.
 */
static __always_inline u64 vtime_place(struct task_sched *ts, u64 vtime, s32 cpu, bool wakeup,
				       u32 weight, u64 credit)
{
	if (wakeup || ts->vcpu != cpu)
		vtime = vtime_carry(vtime, ts->vcpu, cpu, weight, credit);
	ts->vcpu = cpu;
	return vtime;
}

/*
 * Charge the run time since the last charge, inversely to the weight. @ran is
 * the task's run-time clock, p->se.sum_exec_runtime: the kernel's account,
 * which shares are measured by. Timed here instead, from ops.running to
 * ops.stopping, the time around each switch went elsewhere than in the
 * kernel's account, about alike for every task, and shares drifted towards
 * 1:1 (300 vs 100 on one CPU: 2.79-2.98 where the fair class holds 3.00).
 */
static __always_inline u64 vtime_charge(struct task_sched *ts, u64 vtime, u32 weight, u64 ran)
{
	u64 delta = ran - ts->charged_at;

	ts->charged_at = ran;
	if ((s64)delta <= 0 || !weight)
		return vtime;
	return vtime + delta * LOAD_DFL / weight;
}

/* Record what runs on @c now; the clock moves up to it when @advance. */
static __always_inline void set_curr(struct cpu_sched *c, u64 vtime, u32 weight, u64 now,
				     bool advance)
{
	if (advance && vtime_before(c->vclock, vtime))
		WRITE_ONCE(c->vclock, vtime);
	c->curr_vtime = vtime;
	c->curr_weight = weight;
	WRITE_ONCE(c->curr_started, now);
}

/* @cpu starts running a task: its vtime is made @cpu's, the clock moves up to it. */
static __always_inline u64 vtime_running(s32 cpu, struct task_sched *ts, u64 vtime, u32 weight,
					 u64 now, u64 woke, u64 ran)
{
	struct cpu_sched *c = cpu_sched(cpu);

	/* started elsewhere than queued: a steal, a balance move, a direct dispatch */
	vtime = vtime_place(ts, vtime, cpu, false, weight, wake_credit(false));
	ts->charged_at = ran;
	if (c) {
		set_curr(c, vtime, weight, now, true);
		WRITE_ONCE(c->curr_woke, woke);
	}
	return vtime;
}

/*
 * Charge the task running on @cpu. With nothing else queued there, the clock
 * follows it (like CFS's min_vruntime with an empty tree): else a task alone
 * for a long time would carry a huge lag to its next CPU.
 */
static __always_inline u64 vtime_update_curr(s32 cpu, struct task_sched *ts, u64 vtime, u32 weight,
					     u64 now, u64 ran, bool alone)
{
	struct cpu_sched *c = cpu_sched(cpu);

	vtime = vtime_charge(ts, vtime, weight, ran);
	if (c)
		set_curr(c, vtime, weight, now, alone);
	return vtime;
}

/*
 * The task leaves @cpu: charged, and nothing of ours runs there now (no
 * start time, so no clock read: a kfunc call fewer per switch).
 */
static __always_inline u64 vtime_stopping(s32 cpu, struct task_sched *ts, u64 vtime, u32 weight,
					  u64 ran, bool alone)
{
	return vtime_update_curr(cpu, ts, vtime, weight, 0, ran, alone);
}

/*
 * The task running on @cpu has run @min_ns and, charged up to @now, is ahead
 * of @vtime by more than @margin.
 */
static __always_inline bool curr_owes(s32 cpu, u64 vtime, u64 now, u64 min_ns, u64 margin)
{
	struct cpu_sched *c = cpu_sched(cpu);
	u64 started, ran, curr;
	u32 w;

	if (!c || !wakeup_preempt)
		return false;
	started = READ_ONCE(c->curr_started);
	w = READ_ONCE(c->curr_weight);
	if (!started || !w)
		return false;
	ran = now - started;
	if ((s64)ran < (s64)min_ns)
		return false;
	curr = READ_ONCE(c->curr_vtime) + ran * LOAD_DFL / w;
	return vtime_before(vtime + margin, curr);
}

/*
 * A task queued on @cpu with @vtime is owed time before the one running
 * there, which has had at least @min_ns: preempt it (EEVDF's wakeup
 * preemption of an eligible task, with a minimum run against ping-pong).
 */
static __always_inline bool vtime_should_preempt(s32 cpu, u64 vtime, u64 now, u64 min_ns)
{
	return curr_owes(cpu, vtime, now, min_ns, preempt_min_ns());
}

/*
 * The task running on @cpu is a hog (runnable a slice or more) and a wakee
 * of @vtime is owed more than it by what any preemption asks
 * (preempt_min_ns()), charged up to @now: with nothing else waiting there the
 * hog needs no minimum run (the caller knows what waits). Else a sleeper
 * waking every millisecond beside it always finds it freshly resumed (by a
 * sleeper's last preemption) and waits for the slice's end. Asking a whole
 * slice, a sleeper near the cap of its credit (one slice) fell just short
 * against a hog resumed a moment before: about 1% of wakeups beside hogs,
 * nearly all of those that waited 2 ms or more. Not where others wait:
 * hackbench's senders are runnable for long too, and preempted a message at a
 * time they ran it 12-27% slower.
 */
static __always_inline bool vtime_hog_gives_way(s32 cpu, u64 vtime, u64 now)
{
	struct cpu_sched *c = cpu_sched(cpu);

	return c && READ_ONCE(c->curr_started) && now - READ_ONCE(c->curr_woke) >= slice_ns &&
	       curr_owes(cpu, vtime, now, 0, preempt_min_ns());
}

/*
 * At the tick: the task first in @cpu's queue, of @head vtime, takes the CPU
 * once the running one has had preempt_min_ns() and is ahead of it by more
 * than a slice and a half. A wakee not owed enough when it woke would else
 * wait for the slice's end, where the fair class preempts at the tick once
 * curr's own slice is used. A task queued behind an equal one owes at most
 * what that one ran, less than a slice: hogs keep whole slices. A margin of
 * one slice made hackbench 10-14% slower (batches cut short).
 */
static __always_inline bool vtime_tick_preempt(s32 cpu, u64 head, u64 now)
{
	return curr_owes(cpu, head, now, preempt_min_ns(), slice_ns + preempt_min_ns());
}

/*
 * Time constant of the averaged runnable count (balance.bpf.h's rotation
 * guard): four rotation periods. Over one, a sleeper's wakeup or a kworker's
 * burst beside hogs made a CPU half a task heavier, and hogs rotated at the
 * rate limit among CPUs that all held two.
 */
#define NR_AVG_TAU_SLICES	16

/*
 * @c's runnable count averaged over time (x1024) up to @now (ktime), from its
 * last fold: an exponential average, dt / (dt + tau) for 1 - e^(-dt/tau).
 * Never folded (a CPU the host tests set by hand): the count itself.
 */
static __always_inline u64 nr_avg_at(struct cpu_sched *c, u64 now)
{
	u64 avg = READ_ONCE(c->nr_avg), at = READ_ONCE(c->nr_avg_at);
	u64 cur = (u64)READ_ONCE(c->nr_runnable) << 10, tau = NR_AVG_TAU_SLICES * slice_ns, dt;

	if (!at)
		return cur;
	if (now <= at)
		return avg;
	dt = now - at;
	if (dt >= 16 * tau)
		return cur;
	if (cur > avg)
		return avg + (cur - avg) * dt / (dt + tau);
	return avg - (avg - cur) * dt / (dt + tau);
}

static __always_inline void load_add(s32 cpu, s64 weight, s32 n, u64 now)
{
	struct cpu_sched *c = cpu_sched(cpu);

	if (!c)
		return;
	/* the count that held until now goes into the average first (racy: a hint) */
	WRITE_ONCE(c->nr_avg, nr_avg_at(c, now));
	WRITE_ONCE(c->nr_avg_at, now);
	__sync_fetch_and_add(&c->load, weight);
	__sync_fetch_and_add(&c->nr_runnable, n);
}

/*
 * Account the task's @weight on @cpu (-1: nowhere), taking it off the CPU
 * it was on. The task side records where it went, so a migration the kernel
 * does on its own (a steal, a fallback) is fixed at the next call (ops.running).
 */
static __always_inline void load_account(struct task_sched *ts, s32 cpu, u32 weight)
{
	u64 now;

	if (cpu < 0)
		weight = 0;
	if (ts->load_cpu == cpu && ts->load_weight == weight)
		return;
	/* one clock read for both ends of a move */
	now = bpf_ktime_get_ns();
	if (ts->load_cpu >= 0)
		load_add(ts->load_cpu, -(s64)ts->load_weight, -1, now);
	ts->load_cpu = cpu;
	ts->load_weight = weight;
	if (cpu >= 0)
		load_add(cpu, weight, 1, now);
}

static __always_inline void task_sched_init(struct task_sched *ts)
{
	ts->vcpu = -1;
	ts->load_cpu = -1;
	ts->load_weight = 0;
	ts->charged_at = 0;
}

#endif /* __SIS_VTIME_BPF_H */
