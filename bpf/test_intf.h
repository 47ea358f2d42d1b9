/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Definitions shared by the host tests' BPF object (sis_test.bpf.c) and the
 * Rust tests (bindgen'd into test_intf.rs): the programs' argument structs
 * and operation codes. Not part of the scheduler's interface (intf.h).
 */
#ifndef __SIS_TEST_INTF_H
#define __SIS_TEST_INTF_H

#include "intf.h"

/*
 * Arguments of the host-test programs (bpf/sis_test.bpf.c), each passed as
 * the BPF_PROG_TEST_RUN context and read back after the run.
 */
struct cpu_args {
	s32 cpu;
	s32 ret;
};

struct scan_args {
	s32 target;
	u32 llc;
	s32 cpu;
	u32 probes;
	u32 full;
	u32 fail_prone;
	u32 missed;
};

/*
 * One timed search of the idle-scale bench (src/bench/idle_scale.rs): the
 * scan of test_scan between two clock reads. Syscall programs take no
 * BPF_PROG_TEST_RUN repeat (the kernel refuses it), so the program times
 * the search itself.
 */
struct bench_scan_args {
	s32 target;
	u32 llc;
	s32 cpu;		/* out: the claimed CPU or -1 */
	u32 probes;
	u32 missed;		/* failed while an allowed CPU of the LLC was idle by record */
	u32 idle_core;		/* the LLC's has_idle_cores hint before: an idle-core search */
	u32 fail_prone;		/* the scan followed a failed one from the waker */
	u32 __pad;
	u64 ns;			/* bpf_ktime_get_ns() before and after sis_scan */
	u64 clock_ns;		/* two reads back to back: the clock's own share of ns */
};

struct ovl_args {
	s32 cpu;
	u32 final_set;		/* toggle: leave the bit set */
	s32 ret;
};

struct walk_args {
	u32 llc;
	u32 start;
	u32 len;
	u32 count;
};

/* one call into vtime.bpf.h for test task @slot */
struct vtime_args {
	u32 op;			/* enum vtime_test_op */
	u32 slot;		/* test task */
	s32 cpu;
	u32 weight;
	u64 vtime;		/* in: the task's vtime; out: the result */
	u64 now;
	u64 min_ns;		/* should_preempt: curr's minimum run; running: when it woke */
	u32 flag;		/* place: 1 wakeup, 2 in line (no credit); update/stop: alone */
	s32 ret;		/* preempt: 1 / 0 */
};

enum vtime_test_op {
	VT_PLACE		= 0,
	VT_RUNNING		= 1,
	VT_UPDATE_CURR		= 2,
	VT_STOPPING		= 3,
	VT_SHOULD_PREEMPT	= 4,
	VT_LOAD_ACCOUNT		= 5,
	VT_INIT			= 6,
	VT_NICE_WEIGHT		= 7,	/* in: vtime = static_prio, flag = SCHED_IDLE, weight = p->scx.weight; out: weight */
	VT_TICK_PREEMPT		= 8,	/* in: vtime = the queue head's, now; out: ret */
	VT_HOG_GIVES_WAY	= 9,	/* in: vtime = the wakee's, now; out: ret */
};

struct balance_args {
	s32 cpu;
	u32 llc;
	u64 now;
	u64 weight;		/* may_move */
	u64 gap;		/* in: may_move; out: the pick's gap; rotate: runnable since */
	s32 victim;		/* out: pick victim / least-loaded CPU / idlest LLC */
	u32 xllc;
	s32 ret;		/* may_move: 1 / 0 */
	u32 __pad;
	u64 head_since;		/* rotate: the next in line runnable since (0: not run since it woke) */
};

/* one call into cgroup.bpf.h for test task @slot */
struct cg_args {
	u32 op;			/* enum cg_test_op */
	u32 slot;		/* test task */
	u64 cgid;
	u64 parent;
	u32 weight;		/* cgroup: cpu.weight; task: p->scx.weight */
	u32 level;
	u32 ret;		/* CG_TASK_WEIGHT: the effective weight */
	s32 err;
	struct cg_sched cg;	/* CG_READ: the cgroup's state */
};

enum cg_test_op {
	CG_INIT			= 0,	/* cgid, parent, weight, level */
	CG_EXIT			= 1,	/* cgid, level */
	CG_SET_WEIGHT		= 2,
	/* task @slot joins cgid at level (init_task / cgroup_move); its ancestors: test_cg_ancestors */
	CG_ATTACH		= 3,
	CG_ACCOUNT		= 4,	/* task @slot runnable with weight, 0: quiescent */
	CG_TASK_WEIGHT		= 5,	/* the effective weight of task @slot of weight */
	CG_READ			= 6,
	CG_TASK_EXIT		= 7,
};

/*
 * @rounds of one stress op in one program run (BPF_PROG_TEST_RUN of a
 * syscall program has no repeat), run from two threads at once.
 */
struct cg_stress_args {
	u32 op;			/* enum cg_stress_op */
	u32 slot;		/* the test task it makes runnable and quiescent */
	u64 cgid;		/* the task's cgroup; CG_STRESS_WEIGHT: the one whose weight changes */
	u32 weight;		/* CG_STRESS_WEIGHT: weight2, then back to weight, each round */
	u32 weight2;
	u32 rounds;
	u32 __pad;
};

enum cg_stress_op {
	CG_STRESS_TOGGLE	= 0,	/* the task runnable, then quiescent */
	CG_STRESS_WEIGHT	= 1,	/* weight2, the task runnable, quiescent, weight */
};

/*
 * bench_cg: @rounds of one cgroup.bpf.h operation on test task @slot, in
 * cgroup @cgid, timed in the program (syscall programs take no repeat).
 */
struct bench_cg_args {
	u32 op;			/* enum bench_cg_op */
	u32 slot;
	u64 cgid;
	u32 rounds;
	u32 __pad;
	u64 ns;			/* out: the loop's time */
	u64 sum;		/* out: BENCH_CG_WEIGHT: the weights, kept so the loop is not dropped */
};

enum bench_cg_op {
	BENCH_CG_WEIGHT		= 0,	/* the task's effective weight (a wakeup's, a slice end's) */
	BENCH_CG_TOGGLE		= 1,	/* the task runnable, then quiescent (a wakeup and a sleep) */
};

/* one call into group.bpf.h from the host tests (sis_test.bpf.c) */
struct gb_args {
	u32 op;			/* enum gb_test_op */
	s32 part;
	u64 cgid;
	u64 parent;
	u64 delta;
	u64 ret;
	s32 cpu;		/* GB_T_STEAL_RANK: the thief */
	s32 victim;		/* GB_T_STEAL_RANK: the CPU it takes from */
};

enum gb_test_op {
	GB_T_CGROUP_INIT	= 0,
	GB_T_CGROUP_EXIT	= 1,
	GB_T_GROUP_OF		= 2,
	GB_T_CHARGE		= 3,
	GB_T_STEAL_RANK		= 4,
	GB_T_SWAP_KEEPS_LOAD	= 5,
};

#endif /* __SIS_TEST_INTF_H */
