/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cgroup cpu.weight: a cgroup's tasks together get the share of contended
 * CPU its weight gives it among its active siblings, however many threads it
 * has, at every level (hierarchical weight, as the fair class and
 * scx_flatcg compute it).
 *
 * The share reaches the vtime model as one number: a task's *effective
 * weight*, what vtime.bpf.h charges run time with and what balance.bpf.h
 * sums into a CPU's load. For a task of weight w in cgroup C:
 *     eff = w / den(C) * total(C)
 *     total(C) = C.weight                                 C a child of the root
 *              = total(P) * C.weight / den(P)             P = C's parent
 *     den(X)   = X's active children's weights + X's own runnable tasks' weights
 * so a child of the root weighs like a task of the same weight (cpu.weight
 * 100 = nice 0), as in the fair class, and an idle cgroup counts nowhere.
 * Tasks of the root cgroup keep their own weight and cost no lookup.
 *
 * Activity: a cgroup is active while it has runnable tasks or active
 * children (nr_active > 0). The 0 <-> 1 transitions are seen exactly once by
 * the atomic that makes them, so each one adds or removes the cgroup's weight
 * in its parent's child_weight, and climbs only when the parent's own
 * activity changes: idle cgroups cost nothing, busy ones one atomic a level.
 *
 * State is keyed by cgroup id in a hash map, not cgroup storage, so the host
 * tests drive this file through SEC("syscall") programs with made-up ids.
 * Needs no sched_ext type.
 */
#ifndef __SIS_CGROUP_BPF_H
#define __SIS_CGROUP_BPF_H

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, u64);
	__type(value, struct cg_sched);
	__uint(max_entries, SIS_MAX_CGROUPS);
} cg_sched_map SEC(".maps");

static __always_inline struct cg_sched *cg_lookup(u64 cgid)
{
	if (!cgid)
		return NULL;
	return bpf_map_lookup_elem(&cg_sched_map, &cgid);
}

/*
 * A cgroup appears (ops.cgroup_init: parents before children). Not tracked,
 * its tasks run with their own weight: the root, a cgroup under an untracked
 * parent or too deep, or a full map. Never an error: a failing cgroup_init
 * would refuse the cgroup's creation (or the attach).
 */
static __always_inline bool cg_init(u64 cgid, u64 parent, u32 weight, u32 level)
{
	struct cg_sched c = {};

	if (!cgid || !level || level > SIS_CG_MAX_DEPTH)
		return false;
	if (level > 1 && !cg_lookup(parent))
		return false;
	c.parent = level > 1 ? parent : 0;
	c.weight = weight ?: SIS_WEIGHT_DFL;
	c.level = level;
	return bpf_map_update_elem(&cg_sched_map, &cgid, &c, BPF_ANY) == 0;
}

/* The cgroup is gone (no task left in it, so nothing accounted either). */
static __always_inline void cg_exit(u64 cgid)
{
	bpf_map_delete_elem(&cg_sched_map, &cgid);
}

/*
 * @cgid gained (+1) or lost (-1) one reason to be active. When that makes it
 * active or idle, its weight joins or leaves its parent's child_weight, and
 * the parent gains or loses a reason in turn.
 */
static __always_inline void cg_activity(u64 cgid, s32 delta)
{
	u64 id = cgid;
	u32 i;

	for (i = 0; i < SIS_CG_MAX_DEPTH; i++) {
		struct cg_sched *c = cg_lookup(id), *par;
		s32 old;

		if (!c)
			return;
		old = __sync_fetch_and_add(&c->nr_active, delta);
		if (delta > 0 ? old != 0 : old != 1)
			return;
		par = cg_lookup(c->parent);
		if (!par)
			return;
		__sync_fetch_and_add(&par->child_weight, delta > 0 ? (s64)c->weight : -(s64)c->weight);
		id = c->parent;
	}
}

/* cpu.weight changed (ops.cgroup_set_weight; serialized by the cgroup core). */
static __always_inline void cg_set_weight(u64 cgid, u32 weight)
{
	struct cg_sched *c = cg_lookup(cgid), *par;
	u32 old;

	if (!c)
		return;
	weight = weight ?: SIS_WEIGHT_DFL;
	old = c->weight;
	c->weight = weight;
	par = cg_lookup(c->parent);
	if (par && READ_ONCE(c->nr_active) > 0)
		__sync_fetch_and_add(&par->child_weight, (s64)weight - (s64)old);
}

/*
 * Make the task's accounting match its cgroup and runnable weight: taken
 * out of the cgroup that held it, added to its own while runnable.
 */
static __always_inline void cg_reconcile(struct task_cg *tc)
{
	u64 to = tc->weight && cg_lookup(tc->cgid) ? tc->cgid : 0;
	u32 weight = to ? tc->weight : 0;
	struct cg_sched *c;

	if (tc->acct_cgid == to && tc->acct_weight == weight)
		return;
	/* same cgroup, new weight: no activity change */
	if (to && tc->acct_cgid == to) {
		c = cg_lookup(to);
		if (c)
			__sync_fetch_and_add(&c->task_weight, (s64)weight - (s64)tc->acct_weight);
		tc->acct_weight = weight;
		return;
	}
	if (tc->acct_cgid) {
		c = cg_lookup(tc->acct_cgid);
		if (c) {
			__sync_fetch_and_add(&c->task_weight, -(s64)tc->acct_weight);
			cg_activity(tc->acct_cgid, -1);
		}
	}
	tc->acct_cgid = 0;
	tc->acct_weight = 0;
	c = cg_lookup(to);
	if (c) {
		__sync_fetch_and_add(&c->task_weight, (s64)weight);
		cg_activity(to, 1);
		tc->acct_cgid = to;
		tc->acct_weight = weight;
	}
}

/* The task became runnable with @weight, changed weight, or went quiescent (0). */
static __always_inline void cg_account(struct task_cg *tc, u32 weight)
{
	tc->weight = weight;
	cg_reconcile(tc);
}

/* The task joins cgroup @cgid (init_task, cgroup_move); its accounting follows. */
static __always_inline void cg_attach(struct task_cg *tc, u64 cgid)
{
	tc->cgid = cg_lookup(cgid) ? cgid : 0;
	cg_reconcile(tc);
}

/* The task leaves the scheduler (exit_task): nothing of it stays counted. */
static __always_inline void cg_task_exit(struct task_cg *tc)
{
	tc->cgid = 0;
	tc->weight = 0;
	cg_reconcile(tc);
}

static __always_inline u64 cg_den(struct cg_sched *c)
{
	s64 den = READ_ONCE(c->child_weight) + READ_ONCE(c->task_weight);

	return den > 0 ? den : 0;
}

/*
 * The effective weight of a task of weight @weight in cgroup @cgid: its share
 * of the cgroup, times the cgroup's share of each level, in load units (task
 * weights << SIS_LOAD_SHIFT). Fixed point in 1/2^20: a share is at most 1.
 */
static __always_inline u32 cg_task_weight(u64 cgid, u32 weight)
{
	struct cg_sched *c = cg_lookup(cgid);
	u64 share, den, eff;
	u32 i;

	if (!c)
		return weight << SIS_LOAD_SHIFT;
	/* counted in task_weight only while runnable: not yet, it would be itself */
	den = cg_den(c);
	if (den < weight)
		den = weight;
	share = ((u64)weight << 20) / den;
	for (i = 0; i < SIS_CG_MAX_DEPTH; i++) {
		struct cg_sched *par = cg_lookup(c->parent);

		if (!par)
			break;
		den = cg_den(par);
		if (den < c->weight)
			den = c->weight;
		share = share * c->weight / den;
		c = par;
	}
	eff = (share * c->weight) >> (20 - SIS_LOAD_SHIFT);
	if (eff < 1)
		eff = 1;
	if (eff > SIS_WEIGHT_MAX << SIS_LOAD_SHIFT)
		eff = SIS_WEIGHT_MAX << SIS_LOAD_SHIFT;
	return eff;
}

#endif /* __SIS_CGROUP_BPF_H */
