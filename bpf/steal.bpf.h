/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Steal-on-idle: a CPU about to go idle walks its LLC's
 * overloaded map (overload.bpf.h) from the next CPU and moves the first
 * migratable task it finds, in next-to-run (vtime) order, to itself; then,
 * by default (steal-scope node), the maps of the other LLCs of its node.
 * Migratable: allowed here by p->cpus_ptr, not migration-disabled, not a
 * per-CPU kthread.
 * The same move serves balance_pull (balance.bpf.h decides whom to pull from).
 * Called from: ops.dispatch when the CPU's own DSQ is empty and prev is done;
 * ops.enqueue, to wake an idle stealer when it makes a CPU overloaded;
 * ops.tick, to wake one again at most once a slice while work still waits
 * (an idle CPU without a tick would otherwise sleep on).
 * Entry points are global subprograms, each verified once.
 * Hooks (hooks.bpf.h): sis_allowed, task_load_weight (the scheduler's only).
 */
#ifndef __SIS_STEAL_BPF_H
#define __SIS_STEAL_BPF_H

#include "hooks.bpf.h"
#include "topology.bpf.h"
#include "stats.bpf.h"
#include "llc_stats.bpf.h"
#include "idle_filter.bpf.h"
#include "overload.bpf.h"
#include "balance.bpf.h"
#include "group.bpf.h"

/*
 * writable: `scx_sis set steal-scope=`. The node by default: with the LLC
 * alone, one LLC idled while the other's CPUs had tasks waiting; the own LLC
 * is still walked first.
 */
u32 steal_scope SEC(".data") = STEAL_SCOPE_NODE;

/* tasks stolen per LLC (of the thief) */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, u32);
	__type(value, u64);
	__uint(max_entries, 1);		/* resized to nr_llcs */
} llc_steals SEC(".maps");

/* the walk's cursor lives in map memory so the verifier's loop converges */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, u32);
	__type(value, struct ovl_walk);
	__uint(max_entries, 1);
} steal_walk SEC(".maps");

static __always_inline bool is_pcpu_kthread(const struct task_struct *p)
{
	return (p->flags & PF_KTHREAD) && p->nr_cpus_allowed == 1;
}

static __always_inline bool can_steal(const struct task_struct *p, s32 cpu)
{
	return sis_allowed(p, cpu) && !is_migration_disabled(p) &&
	       !is_pcpu_kthread(p);
}

/*
 * Whether @p, queued on @victim, may move to @cpu now (steal_from_rank's
 * test). A global function: inline, 6.12's verifier walked the DSQ loop's
 * body ~110 times before its states converged (15.6k of the 25.4k
 * instructions its log counted in dispatch); a call returns an unknown
 * scalar, and the loop converges.
 */
__noinline int steal_candidate(struct task_struct *p __arg_trusted, s32 cpu, s32 victim, u64 gap,
			       int rank)
{
	/* any task may go when stealing for an idle CPU: no weight lookup then */
	if (!can_steal(p, cpu) ||
	    (gap != BAL_GAP_ANY && !balance_may_move(task_load_weight(p), gap)))
		return 0;
	if (rank && gb_steal_rank(p, cpu, victim) < rank)
		return 0;
	return 1;
}

/*
 * Move the first task of @victim's DSQ that may run on @cpu to @cpu's local
 * DSQ; with a load @gap (balance.bpf.h), only one whose move narrows it;
 * with the group balancer, only one of group rank >= @rank (group.bpf.h).
 */
__noinline int steal_from_rank(s32 cpu, s32 victim, u64 gap, int rank)
{
	struct task_struct *p;
	struct ovl_walk *wk;
	u32 zero = 0;

	/* the examined count lives in map memory too: no per-count verifier state */
	wk = bpf_map_lookup_elem(&steal_walk, &zero);
	if (!wk)
		return false;
	wk->seen = 0;
	bpf_for_each(scx_dsq, p, victim, 0) {
		if (++wk->seen > STEAL_SCAN_TASKS)
			break;
		if (!steal_candidate(p, cpu, victim, gap, rank))
			continue;
		if (scx_bpf_dsq_move(BPF_FOR_EACH_ITER, p, SCX_DSQ_LOCAL, 0))
			return true;
	}
	return false;
}

/* With the group balancer: the thief's groups first, tasks at home on the victim last. */
static __always_inline bool steal_from(s32 cpu, s32 victim, u64 gap)
{
	if (!gb_enabled)
		return steal_from_rank(cpu, victim, gap, 0);
	if (steal_from_rank(cpu, victim, gap, 2)) {
		gb_stat_inc(GB_STAT_STEAL_PREF);
		return true;
	}
	return steal_from_rank(cpu, victim, gap, 1) || steal_from_rank(cpu, victim, gap, 0);
}

/*
 * Kick the first CPU of @llc idle by record, @self excepted; true if one was
 * kicked. A saturated LLC (every CPU busy by its count) is not walked: that
 * is when queues form, and the walk would cost a probe per CPU of the LLC.
 */
static __always_inline bool kick_idle_in(u32 llc, s32 self)
{
	struct llc_topo *lt = llc_topo(llc);
	struct llc_ctx *l = llc_ctx(llc);
	s32 cpu;

	if (!lt || !l || READ_ONCE(l->nr_busy) >= (s32)lt->nr_cpus)
		return false;
	cpu = llc_first_idle(llc, self, NULL);
	if (cpu < 0)
		return false;
	stat_inc(STAT_KICK_IDLE);
	scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
	return true;
}

/*
 * Wake one idle CPU so it comes to steal from @llc: one of @llc first, then,
 * with a wider steal scope, one of the LLCs allowed to steal from it. Nothing
 * is claimed: a stealer that finds nothing just idles again.
 */
__noinline int steal_kick(u32 llc, s32 self)
{
	struct llc_topo *lt = llc_topo(llc);
	u32 i;

	if (steal_mode != STEAL_ON || !lt)
		return 0;
	if (kick_idle_in(llc, self))
		return 1;
	if (steal_scope == STEAL_SCOPE_LLC)
		return 0;
	bpf_for(i, 0, nr_llcs) {
		struct llc_topo *ot = llc_topo(i);

		if (i == llc || !ot)
			continue;
		if (steal_scope == STEAL_SCOPE_NODE && ot->node != lt->node)
			continue;
		if (kick_idle_in(i, self))
			return 1;
	}
	return 0;
}

/* per CPU: when this CPU last woke a stealer from its tick */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, u32);
	__type(value, u64);
	__uint(max_entries, 1);
} steal_tick_kick SEC(".maps");

/* ops.tick on @cpu: tasks still wait in its DSQ (@waiting), so wake a stealer once a @period. */
static __always_inline void steal_tick(s32 cpu, bool waiting, u64 now, u64 period)
{
	u32 zero = 0;
	u64 *last;

	if (steal_mode != STEAL_ON || !waiting)
		return;
	last = bpf_map_lookup_elem(&steal_tick_kick, &zero);
	if (!last || now - *last < period)
		return;
	*last = now;
	steal_kick(cpu_llc(cpu), cpu);
}

enum steal_result {
	STEAL_NONE_SEEN		= 0,	/* no overloaded CPU on the walk */
	STEAL_UNMIGRATABLE	= 1,	/* overloaded CPUs, nothing this CPU may run */
	STEAL_DONE		= 2,
};

/* Walk @llc's overloaded CPUs from @start for @len positions. */
__noinline int steal_in_llc(s32 cpu, u32 llc, u32 start, u32 len)
{
	struct llc_topo *lt = llc_topo(llc);
	int ret = STEAL_NONE_SEEN;
	struct ovl_walk *wk;
	u32 zero = 0, i;

	wk = bpf_map_lookup_elem(&steal_walk, &zero);
	if (!wk || !lt)
		return ret;
	ovl_walk_init(wk, llc, lt->nr_cpus, start, len);

	bpf_for(i, 0, SIS_MAX_LLC_CPUS) {
		s32 victim, left;

		wk = bpf_map_lookup_elem(&steal_walk, &zero);
		if (!wk)
			break;
		victim = ovl_walk_next(wk);
		if (victim < 0)
			break;
		if (victim == cpu)
			continue;
		ret = STEAL_UNMIGRATABLE;
		if (!steal_from(cpu, victim, BAL_GAP_ANY))
			continue;
		left = scx_bpf_dsq_nr_queued(victim);
		overload_update(victim, left);
		if (left > 0) {
			/*
			 * An idle victim with work queued missed its wakeup (an
			 * enqueue before its idle bit was set): wake it to run its
			 * own queue rather than have stealers drain it one by one.
			 */
			if (cpu_is_idle(victim))
				scx_bpf_kick_cpu(victim, SCX_KICK_IDLE);
			/* more waiting there: wake the next stealer */
			steal_kick(llc, cpu);
		}
		return STEAL_DONE;
	}
	return ret;
}

/* ops.dispatch found nothing for @cpu: steal, nearest first. */
__noinline int steal_task(s32 cpu)
{
	struct cpu_topo *t = cpu_topo(cpu);
	struct llc_topo *lt;
	int ret, worst = STEAL_NONE_SEEN;
	u32 llc, i;
	u64 *cnt;

	if (steal_mode != STEAL_ON || !t || !(lt = llc_topo(t->llc)))
		return false;
	stat_inc(STAT_STEAL_ATTEMPT);
	llc = t->llc;

	ret = steal_in_llc(cpu, llc, t->llc_pos + 1, lt->nr_cpus - 1);
	if (ret == STEAL_DONE)
		goto stolen;
	worst = ret;

	if (steal_scope != STEAL_SCOPE_LLC) {
		bpf_for(i, 0, nr_llcs) {
			struct llc_topo *ot;

			if (i == llc || !(ot = llc_topo(i)))
				continue;
			if (steal_scope == STEAL_SCOPE_NODE && ot->node != lt->node)
				continue;
			ret = steal_in_llc(cpu, i, 0, ot->nr_cpus);
			if (ret == STEAL_DONE)
				goto stolen;
			if (ret > worst)
				worst = ret;
		}
	}

	stat_inc(worst == STEAL_UNMIGRATABLE ? STAT_STEAL_NOT_MIGRATABLE : STAT_STEAL_EMPTY);
	return false;

stolen:
	stat_inc(STAT_STEAL_SUCCESS);
	llc_stat_inc(llc, LLC_STAT_STEAL);
	cnt = bpf_map_lookup_elem(&llc_steals, &llc);
	if (cnt)
		(*cnt)++;
	return true;
}

/*
 * A busy @cpu at the end of a slice: pull one task from a busier CPU
 * (balance.bpf.h decides whom, rate-limited). True when one was moved.
 */
__noinline int balance_pull(s32 cpu, u64 now)
{
	struct balance_pick bp = { .victim = -1 };
	s32 victim, left;

	victim = balance_pick_victim(cpu, now, &bp);
	if (victim < 0)
		return false;
	if (!steal_from(cpu, victim, bp.gap)) {
		stat_inc(STAT_BALANCE_UNMOVABLE);
		return false;
	}
	stat_inc(bp.xllc ? STAT_BALANCE_PULL_XLLC : STAT_BALANCE_PULL);
	left = scx_bpf_dsq_nr_queued(victim);
	overload_update(victim, left);
	return true;
}

#endif /* __SIS_STEAL_BPF_H */
