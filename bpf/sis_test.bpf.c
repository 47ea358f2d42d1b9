/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host tests: SEC("syscall") programs that drive the scheduler's mechanism
 * headers (the same files main.bpf.c includes) through BPF_PROG_TEST_RUN on
 * a kernel without sched_ext. Nothing here may touch a sched_ext type.
 *
 * The hooks the mechanisms need from the scheduler (hooks.bpf.h) are replaced
 * by a test-controlled allowed mask (for p->cpus_ptr), no built-in idle mask
 * and test-set cgroup ancestors.
 * The argument structs are in test_intf.h, so the Rust side gets them from bindgen.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "test_intf.h"

#ifndef READ_ONCE
#define READ_ONCE(x) (*(volatile typeof(x) *)&(x))
#endif
#ifndef WRITE_ONCE
#define WRITE_ONCE(x, val) ((*(volatile typeof(x) *)&(x)) = (val))
#endif

#include "topology.bpf.h"
#include "stats.bpf.h"

char _license[] SEC("license") = "GPL";

/* Stand-in for p->cpus_ptr: bit n = CPU n allowed. */
u64 test_allowed[SIS_MAX_CPUS / 64];

static __always_inline bool sis_allowed(const struct task_struct *p, s32 cpu)
{
	u32 w = (u32)cpu / 64;

	/* p is the current task here; reading it keeps clang from eliding the argument */
	if (!p || w >= SIS_MAX_CPUS / 64)
		return false;
	return test_allowed[w] & (1ULL << (cpu & 63));
}

static __always_inline bool sis_claim_builtin(s32 cpu)
{
	return false;	/* the host has no built-in idle mask: tests run builtin_idle=false */
}

/* Stand-in for a cgroup's ancestors: test_cg_ancestors[l] is the id of the one at level l. */
u64 test_cg_ancestors[SIS_CG_MAX_DEPTH + 1];

static __always_inline u64 cg_ancestor_id(struct cgroup *cgrp, u32 level)
{
	return level <= SIS_CG_MAX_DEPTH ? test_cg_ancestors[level] : 0;
}

#include "idle_filter.bpf.h"
#include "overload.bpf.h"
#include "vtime.bpf.h"
#include "balance.bpf.h"
#include "cgroup.bpf.h"
#include "group.bpf.h"

SEC("syscall")
int test_topo_lookup(struct cpu_args *args)
{
	struct cpu_topo *t = cpu_topo(args->cpu);

	if (!t)
		return -1;
	args->ret = llc_cpu_at(t->llc, t->llc_pos);
	return 0;
}

SEC("syscall")
int test_init_cpus(void *ctx)
{
	s32 cpu;

	bpf_for(cpu, 0, nr_cpu_ids)
		filter_init_cpu(cpu);
	return 0;
}

SEC("syscall")
int test_cpu_idle(struct cpu_args *args)
{
	filter_cpu_idle(args->cpu);
	return 0;
}

SEC("syscall")
int test_cpu_busy(struct cpu_args *args)
{
	filter_cpu_busy(args->cpu);
	return 0;
}

/* this tick of @args->cpu checks another CPU for a heal */
SEC("syscall")
int test_heal_due(struct cpu_args *args)
{
	args->ret = filter_heal_due(args->cpu);
	return 0;
}

/* the CPU @args->cpu's tick would check for a heal next */
SEC("syscall")
int test_heal_pick(struct cpu_args *args)
{
	args->ret = filter_heal_pick(args->cpu);
	return 0;
}

/* @args->cpu is idle by the kernel's mask: heal its record */
SEC("syscall")
int test_heal(struct cpu_args *args)
{
	args->ret = filter_heal(args->cpu);
	return 0;
}

SEC("syscall")
int test_scan(struct scan_args *args)
{
	struct task_struct *p = bpf_get_current_task_btf();
	struct scan_result res;

	args->cpu = sis_scan(p, args->target, args->llc, &res);
	args->probes = res.probes;
	args->full = res.full;
	args->fail_prone = res.fail_prone;
	args->missed = args->cpu < 0 && missed_idle_by_record(p, args->llc);
	return 0;
}

/*
 * test_scan timed (struct bench_scan_args): only sis_scan lies between the
 * first two reads; the missed-idle check after them is the bench's recall.
 */
SEC("syscall")
int bench_scan(struct bench_scan_args *args)
{
	struct task_struct *p = bpf_get_current_task_btf();
	struct llc_ctx *l = llc_ctx(args->llc);
	struct scan_result res;
	u64 t0, t1, t2;

	args->idle_core = smt_enabled && l && READ_ONCE(l->has_idle_cores);
	t0 = bpf_ktime_get_ns();
	args->cpu = sis_scan(p, args->target, args->llc, &res);
	t1 = bpf_ktime_get_ns();
	t2 = bpf_ktime_get_ns();
	args->ns = t1 - t0;
	args->clock_ns = t2 - t1;
	args->probes = res.probes;
	args->fail_prone = res.fail_prone;
	args->missed = args->cpu < 0 && missed_idle_by_record(p, args->llc);
	return 0;
}

/* A wakeup's claim of an idle CPU outside the scan (prev, recent, an enqueue's kick). */
SEC("syscall")
int test_claim(struct cpu_args *args)
{
	args->ret = claim_cpu(args->cpu);
	return 0;
}

SEC("syscall")
int test_reset(struct cpu_args *args)
{
	filter_reset(args->cpu);
	return 0;
}

SEC("syscall")
int test_ovl_set(struct ovl_args *args)
{
	args->ret = overload_set(args->cpu);
	return 0;
}

SEC("syscall")
int test_ovl_clear(struct ovl_args *args)
{
	overload_clear(args->cpu);
	return 0;
}

SEC("syscall")
int test_ovl_cpu(struct ovl_args *args)
{
	args->ret = overload_cpu(args->cpu);
	return 0;
}

/* set, clear, and maybe set again: run concurrently from several threads */
SEC("syscall")
int test_ovl_toggle(struct ovl_args *args)
{
	overload_set(args->cpu);
	overload_clear(args->cpu);
	if (args->final_set)
		overload_set(args->cpu);
	return 0;
}

/* the walk's CPUs in order (a ctx may not be written at a variable offset) */
s32 walk_out[64];

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, u32);
	__type(value, struct ovl_walk);
	__uint(max_entries, 1);
} test_walk SEC(".maps");

SEC("syscall")
int test_ovl_walk(struct walk_args *args)
{
	struct llc_topo *lt = llc_topo(args->llc);
	struct ovl_walk *wk;
	u32 zero = 0, i;

	wk = bpf_map_lookup_elem(&test_walk, &zero);
	if (!wk || !lt)
		return -1;
	ovl_walk_init(wk, args->llc, lt->nr_cpus, args->start, args->len);
	args->count = 0;
	bpf_for(i, 0, 64) {
		s32 cpu = ovl_walk_next(wk);

		if (cpu < 0)
			break;
		walk_out[i] = cpu;
		args->count = i + 1;
	}
	return 0;
}

/* Test tasks' side of the vtime and load accounting (a task's storage in the scheduler). */
struct task_sched test_tasks[16];

SEC("syscall")
int test_vtime(struct vtime_args *a)
{
	struct task_sched *ts;
	u32 slot = a->slot;

	if (slot >= 16)
		return -1;
	ts = &test_tasks[slot];
	switch (a->op) {
	case VT_PLACE:
		a->vtime = vtime_place(ts, a->vtime, a->cpu, a->flag & 1, a->weight,
				       wake_credit(a->flag & 2));
		break;
	case VT_RUNNING:
		a->vtime = vtime_running(a->cpu, ts, a->vtime, a->weight, a->now, a->min_ns, a->now);
		break;
	case VT_UPDATE_CURR:
		a->vtime = vtime_update_curr(a->cpu, ts, a->vtime, a->weight, a->now, a->now, a->flag);
		break;
	case VT_STOPPING:
		a->vtime = vtime_stopping(a->cpu, ts, a->vtime, a->weight, a->now, a->flag);
		break;
	case VT_SHOULD_PREEMPT:
		a->ret = vtime_should_preempt(a->cpu, a->vtime, a->now, a->min_ns);
		break;
	case VT_HOG_GIVES_WAY:
		a->ret = vtime_hog_gives_way(a->cpu, a->vtime, a->now);
		break;
	case VT_TICK_PREEMPT:
		a->ret = vtime_tick_preempt(a->cpu, a->vtime, a->now);
		break;
	case VT_LOAD_ACCOUNT:
		load_account(ts, a->cpu, a->weight);
		break;
	case VT_INIT:
		task_sched_init(ts);
		break;
	case VT_NICE_WEIGHT:
		a->weight = nice_load_weight(a->vtime, a->flag, a->weight);
		break;
	default:
		return -1;
	}
	return 0;
}

SEC("syscall")
int test_balance_pick(struct balance_args *a)
{
	struct balance_pick bp = { .victim = -1 };

	a->victim = balance_pick_victim(a->cpu, a->now, &bp);
	a->xllc = bp.xllc;
	a->gap = bp.gap;
	return 0;
}

SEC("syscall")
int test_may_move(struct balance_args *a)
{
	a->ret = balance_may_move(a->weight, a->gap);
	return 0;
}

SEC("syscall")
int test_wake_affine(struct balance_args *a)
{
	a->ret = wake_affine_load(a->cpu, a->victim, a->weight);
	return 0;
}

SEC("syscall")
int test_least_loaded(struct balance_args *a)
{
	a->victim = least_loaded_cpu(bpf_get_current_task_btf(), a->llc);
	return 0;
}

SEC("syscall")
int test_rotate(struct balance_args *a)
{
	a->victim = balance_rotate_target(bpf_get_current_task_btf(), a->cpu, a->weight,
					  rotation_since(a->gap, a->head_since, a->now), a->now);
	return 0;
}

SEC("syscall")
int test_idlest_llc(struct balance_args *a)
{
	a->victim = idlest_llc(a->cpu);
	return 0;
}

/* Test tasks' side of the cgroup accounting: one per level and one more (cg-scale). */
#define TEST_CG_TASKS	(SIS_CG_MAX_DEPTH + 1)
struct task_cg test_task_cgs[TEST_CG_TASKS];

SEC("syscall")
int test_cgroup(struct cg_args *a)
{
	struct task_cg *tc;
	struct cg_sched *c;
	u32 slot = a->slot;

	if (slot >= TEST_CG_TASKS)
		return -1;
	tc = &test_task_cgs[slot];
	switch (a->op) {
	case CG_INIT:
		a->ret = cg_init(a->cgid, a->parent, a->weight, a->level);
		break;
	case CG_EXIT:
		cg_exit(a->cgid, a->level);
		break;
	case CG_SET_WEIGHT:
		cg_set_weight(a->cgid, a->weight);
		break;
	case CG_ATTACH:
		cg_attach(tc, cg_charge_of(NULL, a->cgid, a->level));
		break;
	case CG_ACCOUNT:
		cg_account(tc, a->weight);
		break;
	case CG_TASK_WEIGHT:
		a->ret = tc->slot ? cg_task_weight(tc->slot, a->weight) : a->weight << SIS_LOAD_SHIFT;
		break;
	case CG_READ:
		c = cg_at(cg_slot_of(a->cgid));
		if (!c)
			return -2;
		a->cg = *c;
		break;
	case CG_TASK_EXIT:
		cg_task_exit(tc);
		break;
	default:
		return -1;
	}
	return 0;
}

/* cg_stress_args: weight changes racing activations on another CPU */
SEC("syscall")
int test_cg_stress(struct cg_stress_args *a)
{
	struct task_cg *tc;
	u32 slot = a->slot, i;

	if (slot >= TEST_CG_TASKS)
		return -1;
	tc = &test_task_cgs[slot];
	cg_attach(tc, cg_slot_of(a->cgid));
	bpf_for(i, 0, a->rounds) {
		if (a->op == CG_STRESS_WEIGHT)
			cg_set_weight(a->cgid, a->weight2);
		cg_account(tc, SIS_WEIGHT_DFL);
		cg_account(tc, 0);
		if (a->op == CG_STRESS_WEIGHT)
			cg_set_weight(a->cgid, a->weight);
	}
	return 0;
}

/*
 * bench_cg_args: the walks a cgroup task's wakeup and sleep make, timed
 * around the loop alone (scx_sis_bench --suite cg-scale).
 */
SEC("syscall")
int bench_cg(struct bench_cg_args *a)
{
	struct task_cg *tc;
	u32 slot = a->slot, n = a->rounds, i;
	u64 t0, t1, sum = 0;

	if (slot >= TEST_CG_TASKS)
		return -1;
	tc = &test_task_cgs[slot];
	cg_attach(tc, cg_slot_of(a->cgid));
	if (!tc->slot)
		return -2;
	if (a->op == BENCH_CG_WEIGHT) {
		cg_account(tc, SIS_WEIGHT_DFL);
		t0 = bpf_ktime_get_ns();
		bpf_for(i, 0, n)
			sum += cg_task_weight(tc->slot, SIS_WEIGHT_DFL + (i & 1));
		t1 = bpf_ktime_get_ns();
		cg_account(tc, 0);
	} else {
		t0 = bpf_ktime_get_ns();
		bpf_for(i, 0, n) {
			cg_account(tc, SIS_WEIGHT_DFL);
			cg_account(tc, 0);
		}
		t1 = bpf_ktime_get_ns();
	}
	a->ns = t1 - t0;
	a->sum = sum;
	return 0;
}

/* one call into group.bpf.h's cgroup and run-time state */
SEC("syscall")
int test_gb(struct gb_args *a)
{
	switch (a->op) {
	case GB_T_CGROUP_INIT:
		gb_cgroup_init(a->cgid, a->parent);
		break;
	case GB_T_CGROUP_EXIT:
		gb_cgroup_exit(a->cgid);
		break;
	case GB_T_GROUP_OF:
		a->ret = gb_group_of(a->cgid);
		a->part = gb_group_part(a->ret);
		break;
	case GB_T_CHARGE:
		gb_charge(a->cgid, a->part, a->delta);
		break;
	case GB_T_STEAL_RANK:
		a->ret = gb_group_steal_rank(a->cgid, a->cpu, a->victim);
		break;
	case GB_T_SWAP_KEEPS_LOAD:
		a->ret = gb_swap_keeps_load(a->delta, a->parent);
		break;
	}
	return 0;
}
