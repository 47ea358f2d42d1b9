/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Group balancer: groups of tasks (opted-in cgroups) settle on
 * partitions of CPUs, softly.
 *
 * Owns: which cgroup belongs to which group (gb_cgrp_map, from the cgroup
 * ops, never looked up per wakeup), a task's group (gb_task_stor, set at
 * init_task and cgroup_move), each group's preferred partition (written by
 * the loader, src/group.rs, which settles groups every --gb-period-ms on
 * the run time kept here), the CPU -> partition map, and run time per CPU
 * and per group and partition.
 * Soft, never hard: a grouped wakeup takes an idle CPU of its partition,
 * prev first, else the normal path anywhere (narrowing the idle search
 * under load hurts, the proposal's lesson). A task whose slice ends outside its
 * partition moves in when a CPU there is idle, or swaps with a task there
 * whose group wants ours; stealing and balancing prefer tasks whose group
 * belongs to the thief's partition.
 * Called from: ops.select_cpu, enqueue, dispatch (slice end), running,
 * stopping, tick, init_task, cgroup_init/exit/move; steal.bpf.h.
 * Everything is behind gb_enabled (rodata): without --gb-* options the
 * scheduler runs none of it.
 * Needs no sched_ext type: the host tests include it too. Hook (hooks.bpf.h):
 * sis_allowed.
 */
#ifndef __SIS_GROUP_BPF_H
#define __SIS_GROUP_BPF_H

#include "hooks.bpf.h"
#include "topology.bpf.h"
#include "idle_filter.bpf.h"

const volatile bool gb_enabled = false;

/* cgroup id -> GB_OPT_* of the --gb-cgroup / --gb-parent cgroups (loader) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, u64);
	__type(value, u32);
	__uint(max_entries, GB_MAX_CGROUPS);
} gb_optin SEC(".maps");

/* cgroup id -> its group (the id of the group's top cgroup) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, u64);
	__type(value, u64);
	__uint(max_entries, GB_MAX_CGROUPS);
} gb_cgrp_map SEC(".maps");

/* group -> its preferred partition; BPF creates and deletes, the loader sets part */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, u64);
	__type(value, struct gb_group);
	__uint(max_entries, GB_MAX_CGROUPS);
} gb_group_map SEC(".maps");

/* group -> run time by partition, per CPU (no atomics on the charge path) */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, u64);
	__type(value, struct gb_acct);
	__uint(max_entries, GB_MAX_CGROUPS);
} gb_acct_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, u32);
	__type(value, struct gb_cpu);
	__uint(max_entries, 1);		/* resized to nr_cpu_ids (src/group.rs) */
} gb_cpu_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, u32);
	__type(value, struct gb_part);
	__uint(max_entries, GB_MAX_PARTS);
} gb_part_map SEC(".maps");

/* CPU ids, partition by partition */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, u32);
	__type(value, u32);
	__uint(max_entries, 1);		/* resized to nr_cpu_ids */
} gb_part_cpus SEC(".maps");

/* a task's group (0: none) */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, u64);
} gb_task_stor SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, u32);
	__type(value, u64);
	__uint(max_entries, GB_NR_STATS);
} gb_stats SEC(".maps");

static struct gb_acct gb_zero_acct;

static __always_inline void gb_stat_inc(u32 idx)
{
	u64 *c = bpf_map_lookup_elem(&gb_stats, &idx);

	if (c)
		(*c)++;
}

static __always_inline struct gb_cpu *gb_cpu(s32 cpu)
{
	u32 key = cpu;

	if (cpu < 0)
		return NULL;
	return bpf_map_lookup_elem(&gb_cpu_map, &key);
}

static __always_inline s32 gb_cpu_part(s32 cpu)
{
	struct gb_cpu *c = gb_cpu(cpu);

	return c ? c->part : -1;
}

/* The group of cgroup @cgid, 0 if none. */
static __always_inline u64 gb_group_of(u64 cgid)
{
	u64 *g = bpf_map_lookup_elem(&gb_cgrp_map, &cgid);

	return g ? *g : 0;
}

static __always_inline s32 gb_group_part(u64 group)
{
	struct gb_group *g;

	if (!group || !(g = bpf_map_lookup_elem(&gb_group_map, &group)))
		return -1;
	return READ_ONCE(g->part);
}

static __always_inline bool gb_opted(u64 cgid, u32 opt)
{
	u32 *o = bpf_map_lookup_elem(&gb_optin, &cgid);

	return o && (*o & opt);
}

/*
 * A cgroup appears (at attach, parents first, or when created): it is a
 * group when opted in or a child of a --gb-parent; a descendant of a
 * grouped cgroup joins that group. Never fails the cgroup: a full map only
 * leaves it ungrouped (counted).
 */
__noinline int gb_cgroup_init(u64 cgid, u64 parent)
{
	struct gb_group g = { .part = -1 };
	u64 group;

	if (!gb_enabled)
		return 0;
	if (gb_opted(cgid, GB_OPT_CGROUP) || gb_opted(parent, GB_OPT_PARENT))
		group = cgid;
	else
		group = gb_group_of(parent);
	if (!group)
		return 0;
	if (group == cgid &&
	    (bpf_map_update_elem(&gb_group_map, &cgid, &g, BPF_NOEXIST) ||
	     bpf_map_update_elem(&gb_acct_map, &cgid, &gb_zero_acct, BPF_NOEXIST))) {
		bpf_map_delete_elem(&gb_group_map, &cgid);
		gb_stat_inc(GB_STAT_NO_STATE);
		return 0;
	}
	if (bpf_map_update_elem(&gb_cgrp_map, &cgid, &group, BPF_ANY))
		gb_stat_inc(GB_STAT_NO_STATE);
	return 0;
}

/* The cgroup is gone (empty by then): its state goes with it. */
__noinline int gb_cgroup_exit(u64 cgid)
{
	if (!gb_enabled)
		return 0;
	bpf_map_delete_elem(&gb_cgrp_map, &cgid);
	bpf_map_delete_elem(&gb_group_map, &cgid);
	bpf_map_delete_elem(&gb_acct_map, &cgid);
	return 0;
}

/* The id of @cgrp's parent (0 for the root). */
static __always_inline u64 gb_cgroup_parent_id(struct cgroup *cgrp)
{
	struct cgroup *parent = NULL;
	int level = cgrp->level;

	if (level <= 0)
		return 0;
	bpf_core_read(&parent, sizeof(parent), &cgrp->ancestors[level - 1]);
	return parent ? BPF_CORE_READ(parent, kn, id) : 0;
}

/* @p is in cgroup @cgid now (init_task, cgroup_move). */
static __always_inline void gb_task_set(struct task_struct *p, u64 cgid)
{
	u64 group, *g;

	if (!gb_enabled)
		return;
	group = gb_group_of(cgid);
	g = bpf_task_storage_get(&gb_task_stor, p, 0, group ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
	if (g)
		*g = group;
}

static __always_inline u64 gb_task_group(struct task_struct *p)
{
	u64 *g = bpf_task_storage_get(&gb_task_stor, p, 0, 0);

	return g ? *g : 0;
}

/* @delta ns of @group's run time on a CPU of partition @part. */
__noinline int gb_charge(u64 group, s32 part, u64 delta)
{
	struct gb_acct *a = bpf_map_lookup_elem(&gb_acct_map, &group);
	u32 slot = part >= 0 && part < GB_MAX_PARTS ? part : GB_NO_PART;

	if (!a || slot > GB_NO_PART)
		return 0;
	a->part_ns[slot] += delta;
	return 0;
}

/*
 * Charge @p's run time on @cpu up to @now. From ops.tick too: a task that
 * keeps its CPU slice after slice would show no run time until it stops.
 */
static __always_inline void gb_charge_curr(struct task_struct *p, s32 cpu, u64 now, bool stop)
{
	struct gb_cpu *c;
	u64 delta, group;

	if (!gb_enabled || !(c = gb_cpu(cpu)) || !c->started)
		return;
	delta = now - c->started;
	c->started = stop ? 0 : now;
	if (stop)
		WRITE_ONCE(c->curr_want, -1);
	if ((s64)delta <= 0)
		return;
	c->busy_ns += delta;
	group = gb_task_group(p);
	if (group)
		gb_charge(group, c->part, delta);
}

/* @p, of load weight @load, starts running on @cpu at @now. */
static __always_inline void gb_running(struct task_struct *p, s32 cpu, u64 now, u32 load)
{
	struct gb_cpu *c;

	if (!gb_enabled || !(c = gb_cpu(cpu)))
		return;
	c->started = now;
	WRITE_ONCE(c->curr_load, load);
	WRITE_ONCE(c->curr_want, gb_group_part(gb_task_group(p)));
}

/*
 * A swap of a task of load weight @ours with a running one of @theirs
 * leaves both CPUs' loads as they were, within an eighth: the partitions'
 * locality never trades away cpu.weight (a 300-weight group's task for a
 * 100-weight group's would undo what balancing by weighted load did).
 */
static __always_inline bool gb_swap_keeps_load(u32 ours, u32 theirs)
{
	u32 d = ours > theirs ? ours - theirs : theirs - ours;

	return (u64)d * 8 <= ours;
}

/* What gb_find_cpu looks for, and what it found. */
struct gb_pick {
	s32 swap_for;	/* in: a busy CPU whose task wants this partition will do, -1: idle only */
	u32 load;	/* in: the load weight of the task to place (gb_swap_keeps_load) */
	bool claim;	/* in: claim the idle CPU found */
	bool idle;	/* out: the CPU returned is idle */
};

/* The @i-th CPU of partition @gp, or -1. */
static __always_inline s32 gb_part_cpu(struct gb_part *gp, u32 i)
{
	u32 idx = gp->first + i;
	u32 *c = bpf_map_lookup_elem(&gb_part_cpus, &idx);

	return c ? *c : -1;
}

/*
 * A CPU of partition @part for @p, @self excepted: an idle one (claimed
 * with @pk->claim), else, with @pk->swap_for >= 0, one whose running task's
 * group wants partition @pk->swap_for and weighs what @p does. Bounded:
 * GB_SCAN_CPUS probes from a random start, so concurrent wakers spread.
 * @pk->idle says which on return.
 */
__noinline int gb_find_cpu(struct task_struct *p __arg_trusted, s32 self, s32 part, struct gb_pick *pk)
{
	struct gb_part *gp;
	u32 key = part, n, start, i;
	s32 swap = -1, swap_for;
	bool claim;

	if (!pk || part < 0 || !(gp = bpf_map_lookup_elem(&gb_part_map, &key)) || !gp->nr_cpus)
		return -1;
	claim = pk->claim;
	swap_for = pk->swap_for;
	pk->idle = false;
	n = gp->nr_cpus;
	start = bpf_get_prandom_u32() % n;
	bpf_for(i, 0, GB_SCAN_CPUS) {
		struct gb_cpu *c;
		s32 cpu;

		if (i >= n)
			break;
		cpu = gb_part_cpu(gp, (start + i) % n);
		if (cpu < 0 || cpu == self || !sis_allowed(p, cpu))
			continue;
		if (cpu_is_idle(cpu) && (!claim || claim_cpu(cpu))) {
			pk->idle = true;
			return cpu;
		}
		if (swap < 0 && swap_for >= 0 && (c = gb_cpu(cpu)) && READ_ONCE(c->curr_want) == swap_for &&
		    gb_swap_keeps_load(pk->load, READ_ONCE(c->curr_load)))
			swap = cpu;
	}
	return swap;
}

/* ops.select_cpu: an idle CPU of @p's group's partition, prev first, claimed; else -1. */
__noinline int gb_select(struct task_struct *p __arg_trusted, s32 prev)
{
	s32 part = gb_group_part(gb_task_group(p)), cpu;
	struct gb_pick pk = { .swap_for = -1, .claim = true };

	if (part < 0)
		return -1;
	if (gb_cpu_part(prev) == part && sis_allowed(p, prev) && claim_cpu(prev)) {
		gb_stat_inc(GB_STAT_WAKE_PREV);
		return prev;
	}
	cpu = gb_find_cpu(p, prev, part, &pk);
	if (cpu >= 0 && pk.idle) {
		gb_stat_inc(GB_STAT_WAKE_PART);
		return cpu;
	}
	gb_stat_inc(GB_STAT_WAKE_ELSEWHERE);
	return -1;
}

/*
 * ops.dispatch, @prev's slice ended on @cpu outside its group's partition:
 * should it give way, for ops.enqueue to move it in (gb_enqueue_cpu)? Only
 * when a CPU there is idle or runs a task of its @load that wants ours.
 */
__noinline int gb_should_yield(s32 cpu, struct task_struct *prev __arg_trusted, u32 load)
{
	s32 part = gb_group_part(gb_task_group(prev)), mine = gb_cpu_part(cpu);
	struct gb_pick pk = { .swap_for = mine, .load = load };

	if (part < 0 || part == mine)
		return false;
	return gb_find_cpu(prev, cpu, part, &pk) >= 0;
}

/*
 * ops.enqueue of a task not woken (its slice ended, or it gave way) on
 * @cpu, outside its group's partition: the CPU in the partition to queue it
 * on instead, or @cpu. *@kick: a busy swap partner to preempt (its task,
 * of about @p's @load, wants our partition and comes over at its dispatch,
 * gb_should_yield).
 */
__noinline int gb_enqueue_cpu(struct task_struct *p __arg_trusted, s32 cpu, u32 load, bool *kick)
{
	s32 part = gb_group_part(gb_task_group(p)), mine = gb_cpu_part(cpu), to;
	struct gb_pick pk = { .swap_for = mine, .load = load, .claim = true };

	if (!kick)
		return cpu;
	*kick = false;
	if (part < 0 || part == mine)
		return cpu;
	to = gb_find_cpu(p, cpu, part, &pk);
	if (to < 0)
		return cpu;
	gb_stat_inc(pk.idle ? GB_STAT_MOVE_IDLE : GB_STAT_MOVE_SWAP);
	*kick = !pk.idle;
	return to;
}

/*
 * Rank of a task of @group for a thief @cpu taking it from @victim: 2 its
 * group belongs to the thief's partition, 1 no group or a group not at home
 * on the victim, 0 at home on the victim (taken last).
 */
static __always_inline int gb_group_steal_rank(u64 group, s32 cpu, s32 victim)
{
	s32 part = gb_group_part(group);

	if (part < 0)
		return 1;
	if (part == gb_cpu_part(cpu))
		return 2;
	return part == gb_cpu_part(victim) ? 0 : 1;
}

static __always_inline int gb_steal_rank(struct task_struct *p, s32 cpu, s32 victim)
{
	return gb_group_steal_rank(gb_task_group(p), cpu, victim);
}

#endif /* __SIS_GROUP_BPF_H */
