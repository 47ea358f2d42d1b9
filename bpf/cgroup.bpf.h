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
 * A weight change races activations on other CPUs: the weight and nr_active
 * share one word (cg_sched.state), so each transition adds or removes the
 * weight of its own instant and a change applies its delta only if the
 * cgroup was active at the instant of its compare-and-swap. Whatever the
 * order, a parent's child_weight ends as the sum of its active children's
 * weights.
 *
 * Untracked cgroups (deeper than SIS_CG_MAX_DEPTH, under an untracked
 * parent, or no room in the map) are charged to their nearest tracked
 * ancestor: their tasks count as tasks of it, so no nesting and no number of
 * cgroups takes a task out of its ancestors' share. They are counted
 * (cg_nr_untracked), shown by --stats.
 *
 * State lives in slots of an array (cg_sched_map), found by cgroup id through
 * a hash (cg_slot_map) only where a cgroup or a task's cgroup changes: a task
 * holds its cgroup's slot, a cgroup its parent's, so the walks of every
 * wakeup and slice end read one array entry a level (a hash lookup a level
 * took 25 ns). Not cgroup storage: the host tests drive this file through
 * SEC("syscall") programs with made-up ids. A slot is freed when its cgroup
 * exits, which it does only with no task and no child left to name it.
 * Needs no sched_ext type; the includer defines cg_ancestor_id() (hooks.bpf.h).
 */
#ifndef __SIS_CGROUP_BPF_H
#define __SIS_CGROUP_BPF_H

#include "hooks.bpf.h"

/* slot - 1 -> state, 64 bytes each; --max-cgroups sizes it, cg_slot_map and cg_nr_slots */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, u32);
	__type(value, struct cg_sched);
	__uint(max_entries, SIS_MAX_CGROUPS);
} cg_sched_map SEC(".maps");

/* cgroup id -> its slot, for the cgroup ops and a task joining a cgroup */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, u64);
	__type(value, u32);
	__uint(max_entries, SIS_MAX_CGROUPS);
} cg_slot_map SEC(".maps");

const volatile u32 cg_nr_slots = SIS_MAX_CGROUPS;
u32 cg_slot_next;	/* where the search for a free slot starts: past the last one taken */

s64 cg_nr_untracked;	/* cgroups below the root without a slot now */
u64 cg_nr_map_full;	/* of the cgroups that appeared, those the map had no room for */
u64 cg_nr_weight_lost;	/* weight changes given up after CG_CAS_TRIES lost races */

/* a weight change retries its compare-and-swap while activations keep winning the word */
#define CG_CAS_TRIES	1024

static __always_inline u32 cg_state_weight(u64 state)
{
	return state >> 32;
}

static __always_inline s32 cg_state_nr(u64 state)
{
	return (s32)((u32)state - CG_NR_BIAS);
}

static __always_inline u32 cg_weight(struct cg_sched *c)
{
	return cg_state_weight(READ_ONCE(c->state));
}

/* The state in @slot (0: none): an array read, inlined by the verifier. */
static __always_inline struct cg_sched *cg_at(u32 slot)
{
	u32 idx = slot - 1;

	if (!slot)
		return NULL;
	return bpf_map_lookup_elem(&cg_sched_map, &idx);
}

/* The slot of cgroup @cgid; 0: untracked (or the root) */
static __always_inline u32 cg_slot_of(u64 cgid)
{
	u32 *slot;

	if (!cgid)
		return 0;
	slot = bpf_map_lookup_elem(&cg_slot_map, &cgid);
	return slot ? *slot : 0;
}

/* A free slot (zeroed: never used, or cg_slot_free) taken for @cgid; 0: none left. */
static __always_inline u32 cg_slot_take(u64 cgid)
{
	u32 start = cg_slot_next, i;

	/* from the iterator's: an index of its own is a new constant each round to 7.x's verifier */
	bpf_for(i, 0, cg_nr_slots) {
		u32 idx = start + i;
		struct cg_sched *c;

		if (idx >= cg_nr_slots)
			idx -= cg_nr_slots;
		c = bpf_map_lookup_elem(&cg_sched_map, &idx);
		if (!c)
			continue;
		if (!READ_ONCE(c->cgid) && __sync_val_compare_and_swap(&c->cgid, 0, cgid) == 0) {
			cg_slot_next = idx + 1;
			return idx + 1;
		}
	}
	return 0;
}

static __always_inline void cg_slot_free(struct cg_sched *c)
{
	c->state = 0;
	c->task_weight = 0;
	c->child_weight = 0;
	c->parent = 0;
	c->level = 0;
	WRITE_ONCE(c->cgid, 0);
}

/*
 * A cgroup appears (ops.cgroup_init: parents before children). Not tracked
 * (counted) when under an untracked parent or too deep, or when the map is
 * full: its tasks are charged to its nearest tracked ancestor (cg_charge_of).
 * The root is never tracked: its tasks keep their own weight. Never an error:
 * a failing cgroup_init would refuse the cgroup's creation (or the attach).
 */
static __always_inline bool cg_init(u64 cgid, u64 parent, u32 weight, u32 level)
{
	struct cg_sched *c;
	u32 pslot = 0, slot;

	if (!cgid || !level)
		return false;
	if (level > SIS_CG_MAX_DEPTH || (level > 1 && !(pslot = cg_slot_of(parent))))
		goto untracked;
	/* seen before (never twice by the kernel): its slot starts over */
	slot = cg_slot_of(cgid) ?: cg_slot_take(cgid);
	c = cg_at(slot);
	if (!c)
		goto full;
	c->parent = pslot;
	c->state = ((u64)(weight ?: SIS_WEIGHT_DFL) << 32) | CG_NR_BIAS;
	c->task_weight = 0;
	c->child_weight = 0;
	c->level = level;
	if (!bpf_map_update_elem(&cg_slot_map, &cgid, &slot, BPF_ANY))
		return true;
	cg_slot_free(c);
full:
	__sync_fetch_and_add(&cg_nr_map_full, 1);
untracked:
	__sync_fetch_and_add(&cg_nr_untracked, 1);
	return false;
}

/* The cgroup is gone (no task left in it or below, so nothing accounted either). */
static __always_inline void cg_exit(u64 cgid, u32 level)
{
	struct cg_sched *c = cg_at(cg_slot_of(cgid));

	if (bpf_map_delete_elem(&cg_slot_map, &cgid)) {
		if (level)
			__sync_fetch_and_add(&cg_nr_untracked, -1);
		return;
	}
	if (c)
		cg_slot_free(c);
}

/*
 * The slot of the cgroup whose books hold the tasks of cgroup @cgid at @level:
 * itself if tracked, else the nearest tracked ancestor, read by the includer's
 * cg_ancestor_id(@cgrp, level); 0 (their own weight, as in the root) if none
 * is. Only the levels up to SIS_CG_MAX_DEPTH can be tracked.
 */
static __always_inline u32 cg_charge_of(struct cgroup *cgrp, u64 cgid, u32 level)
{
	u32 i, top, slot = cg_slot_of(cgid);

	if (slot)
		return slot;
	/* the deepest level that can be tracked above this one */
	top = level > SIS_CG_MAX_DEPTH ? SIS_CG_MAX_DEPTH : (level ? level - 1 : 0);
	for (i = 0; i < SIS_CG_MAX_DEPTH; i++) {
		if (i >= top)
			break;
		slot = cg_slot_of(cg_ancestor_id(cgrp, top - i));
		if (slot)
			return slot;
	}
	return 0;
}

/*
 * The cgroup in @slot gained (+1) or lost (-1) one reason to be active.
 * When that makes it active or idle, its weight joins or leaves its parent's
 * child_weight, and the parent gains or loses a reason in turn. A global function, verified
 * once: inline, its loop was walked again on every path of ops.enqueue.
 */
__noinline int cg_activity(u32 slot, s32 delta)
{
	u32 i;

	for (i = 0; i < SIS_CG_MAX_DEPTH; i++) {
		struct cg_sched *c = cg_at(slot), *par;
		u64 old;
		s32 nr;
		u32 w;

		if (!c)
			return 0;
		old = __sync_fetch_and_add(&c->state, (s64)delta);
		nr = cg_state_nr(old);
		if (delta > 0 ? nr != 0 : nr != 1)
			return 0;
		slot = c->parent;
		par = cg_at(slot);
		if (!par)
			return 0;
		/* the weight of the transition's own instant (see the top) */
		w = cg_state_weight(old);
		__sync_fetch_and_add(&par->child_weight, delta > 0 ? (s64)w : -(s64)w);
	}
	return 0;
}

/*
 * cpu.weight changed (ops.cgroup_set_weight). The new weight goes in by
 * compare-and-swap with nr_active as it was: the parent's child_weight takes
 * the change only if the cgroup was active at that instant. Two writers of
 * one cgroup's cpu.weight need no serializing by the cgroup core either.
 */
static __always_inline void cg_set_weight(u64 cgid, u32 weight)
{
	struct cg_sched *c = cg_at(cg_slot_of(cgid)), *par;
	u64 old = 0;
	bool done = false;
	u32 i;

	if (!c)
		return;
	weight = weight ?: SIS_WEIGHT_DFL;
	bpf_for(i, 0, CG_CAS_TRIES) {
		old = READ_ONCE(c->state);
		if (__sync_val_compare_and_swap(&c->state, old, ((u64)weight << 32) | (u32)old) == old) {
			done = true;
			break;
		}
	}
	if (!done) {
		__sync_fetch_and_add(&cg_nr_weight_lost, 1);
		return;
	}
	par = cg_at(c->parent);
	if (par && cg_state_nr(old) > 0)
		__sync_fetch_and_add(&par->child_weight, (s64)weight - (s64)cg_state_weight(old));
}

/*
 * Make the task's accounting match its cgroup and runnable weight: taken
 * out of the cgroup that held it, added to its own while runnable.
 */
static __always_inline void cg_reconcile(struct task_cg *tc)
{
	struct cg_sched *c, *dst;
	u32 to, weight;

	/*
	 * Accounted as it stands (every ops.running of a woken task): no
	 * lookup. A cgroup that holds a task's weight keeps its slot: it cannot
	 * exit while it or a cgroup charged to it has tasks.
	 */
	if (tc->acct_slot == (tc->weight ? tc->slot : 0) &&
	    tc->acct_weight == (tc->slot ? tc->weight : 0))
		return;
	dst = tc->weight ? cg_at(tc->slot) : NULL;
	to = dst ? tc->slot : 0;
	weight = to ? tc->weight : 0;
	if (tc->acct_slot == to && tc->acct_weight == weight)
		return;
	/* same cgroup, new weight: no activity change */
	if (dst && tc->acct_slot == to) {
		__sync_fetch_and_add(&dst->task_weight, (s64)weight - (s64)tc->acct_weight);
		tc->acct_weight = weight;
		return;
	}
	if (tc->acct_slot) {
		c = cg_at(tc->acct_slot);
		if (c) {
			__sync_fetch_and_add(&c->task_weight, -(s64)tc->acct_weight);
			cg_activity(tc->acct_slot, -1);
		}
	}
	tc->acct_slot = 0;
	tc->acct_weight = 0;
	if (dst) {
		__sync_fetch_and_add(&dst->task_weight, (s64)weight);
		cg_activity(to, 1);
		tc->acct_slot = to;
		tc->acct_weight = weight;
	}
}

/* The task became runnable with @weight, changed weight, or went quiescent (0). */
static __always_inline void cg_account(struct task_cg *tc, u32 weight)
{
	tc->weight = weight;
	cg_reconcile(tc);
}

/* The task joins the cgroup in @slot (init_task, cgroup_move); its accounting follows. */
static __always_inline void cg_attach(struct task_cg *tc, u32 slot)
{
	tc->slot = cg_at(slot) ? slot : 0;
	cg_reconcile(tc);
}

/* The task leaves the scheduler (exit_task): nothing of it stays counted. */
static __always_inline void cg_task_exit(struct task_cg *tc)
{
	tc->slot = 0;
	tc->weight = 0;
	cg_reconcile(tc);
}

static __always_inline u64 cg_den(struct cg_sched *c)
{
	s64 den = READ_ONCE(c->child_weight) + READ_ONCE(c->task_weight);

	return den > 0 ? den : 0;
}

/*
 * The effective weight of a task of weight @weight in the cgroup in @slot: its share
 * of the cgroup, times the cgroup's share of each level, in load units (task
 * weights << SIS_LOAD_SHIFT). Fixed point in 1/2^20: a share is at most 1.
 * A global function, as cg_activity.
 */
__noinline int cg_task_weight(u32 slot, u32 weight)
{
	struct cg_sched *c = cg_at(slot);
	u64 share, den, eff;
	u32 i, cw;

	if (!c)
		return weight << SIS_LOAD_SHIFT;
	/* counted in task_weight only while runnable: not yet, it would be itself */
	den = cg_den(c);
	if (den < weight)
		den = weight;
	share = ((u64)weight << 20) / den;
	for (i = 0; i < SIS_CG_MAX_DEPTH; i++) {
		struct cg_sched *par = cg_at(c->parent);

		if (!par)
			break;
		cw = cg_weight(c);
		den = cg_den(par);
		if (den < cw)
			den = cw;
		share = share * cw / den;
		c = par;
	}
	eff = (share * cg_weight(c)) >> (20 - SIS_LOAD_SHIFT);
	if (eff < 1)
		eff = 1;
	if (eff > SIS_WEIGHT_MAX << SIS_LOAD_SHIFT)
		eff = SIS_WEIGHT_MAX << SIS_LOAD_SHIFT;
	return eff;
}

#endif /* __SIS_CGROUP_BPF_H */
