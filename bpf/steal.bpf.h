/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Steal-on-idle (seed 004): a CPU about to go idle walks its LLC's
 * overloaded map (overload.bpf.h) from the next CPU and moves the first
 * migratable task it finds, in next-to-run (vtime) order, to itself.
 * Migratable: allowed here by p->cpus_ptr, not migration-disabled, not a
 * per-CPU kthread.
 * Called from: ops.dispatch when the CPU's own DSQ is empty and prev is done;
 * ops.enqueue, to wake an idle stealer when it makes a CPU overloaded.
 */
#ifndef __SIS_STEAL_BPF_H
#define __SIS_STEAL_BPF_H

const volatile u32 steal_scope = STEAL_SCOPE_LLC;

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
	return bpf_cpumask_test_cpu(cpu, p->cpus_ptr) && !is_migration_disabled(p) &&
	       !is_pcpu_kthread(p);
}

/* Move the first task of @victim's DSQ that may run on @cpu to @cpu's local DSQ. */
static __noinline bool steal_from(s32 cpu, s32 victim)
{
	struct task_struct *p;
	u32 seen = 0;

	bpf_for_each(scx_dsq, p, victim, 0) {
		if (++seen > STEAL_SCAN_TASKS)
			break;
		if (!can_steal(p, cpu))
			continue;
		if (scx_bpf_dsq_move(BPF_FOR_EACH_ITER, p, SCX_DSQ_LOCAL, 0))
			return true;
	}
	return false;
}

/*
 * Wake one idle CPU of @llc so it comes to steal: the first filter CPU idle
 * by record. Nothing is claimed: a stealer that finds nothing just idles again.
 */
static __noinline void steal_kick(u32 llc, s32 self)
{
	struct llc_topo *lt = llc_topo(llc);
	u32 pos;

	if (steal_mode != STEAL_ON || !lt)
		return;
	bpf_for(pos, 0, SIS_MAX_LLC_CPUS) {
		s32 cpu;

		if (pos >= lt->nr_cpus)
			break;
		cpu = llc_cpu_at(llc, pos);
		if (cpu >= 0 && cpu != self && cpu_is_idle(cpu)) {
			stat_inc(STAT_KICK_IDLE);
			scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
			return;
		}
	}
}

/* Walk @llc's overloaded CPUs from @start for @len positions; true once a task is stolen. */
static __noinline bool steal_in_llc(s32 cpu, u32 llc, u32 start, u32 len, bool *any)
{
	struct llc_topo *lt = llc_topo(llc);
	struct ovl_walk *wk;
	u32 zero = 0, i;

	wk = bpf_map_lookup_elem(&steal_walk, &zero);
	if (!wk || !lt)
		return false;
	ovl_walk_init(wk, llc, lt->nr_cpus, start, len);

	bpf_for(i, 0, SIS_MAX_LLC_CPUS) {
		s32 victim = ovl_walk_next(wk);

		if (victim < 0)
			break;
		if (victim == cpu)
			continue;
		*any = true;
		if (steal_from(cpu, victim)) {
			s32 left = scx_bpf_dsq_nr_queued(victim);

			overload_update(victim, left);
			/* more waiting there: wake the next stealer */
			if (left > 0)
				steal_kick(llc, cpu);
			return true;
		}
	}
	return false;
}

/* ops.dispatch found nothing for @cpu: steal, nearest first. */
static __noinline bool steal_task(s32 cpu)
{
	struct cpu_topo *t = cpu_topo(cpu);
	struct llc_topo *lt;
	bool any = false;
	u32 llc, i;
	u64 *cnt;

	if (steal_mode != STEAL_ON || !t || !(lt = llc_topo(t->llc)))
		return false;
	stat_inc(STAT_STEAL_ATTEMPT);
	llc = t->llc;

	if (steal_in_llc(cpu, llc, t->llc_pos + 1, lt->nr_cpus - 1, &any))
		goto stolen;

	if (steal_scope != STEAL_SCOPE_LLC) {
		bpf_for(i, 0, nr_llcs) {
			struct llc_topo *ot;

			if (i == llc || !(ot = llc_topo(i)))
				continue;
			if (steal_scope == STEAL_SCOPE_NODE && ot->node != lt->node)
				continue;
			if (steal_in_llc(cpu, i, 0, ot->nr_cpus, &any))
				goto stolen;
		}
	}

	stat_inc(any ? STAT_STEAL_NOT_MIGRATABLE : STAT_STEAL_EMPTY);
	return false;

stolen:
	stat_inc(STAT_STEAL_SUCCESS);
	cnt = bpf_map_lookup_elem(&llc_steals, &llc);
	if (cnt)
		(*cnt)++;
	return true;
}

#endif /* __SIS_STEAL_BPF_H */
