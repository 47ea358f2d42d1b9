/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Definitions shared by the BPF side and the Rust loader (bindgen'd into
 * bpf_intf.rs). Keep it free of kernel types: it is also parsed for the host.
 */
#ifndef __SIS_INTF_H
#define __SIS_INTF_H

#ifndef __VMLINUX_H__
typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef int s32;
typedef unsigned long long u64;
typedef long long s64;
#endif

enum sis_consts {
	/* compile-time bounds for loops; the maps themselves are sized at load */
	SIS_MAX_CPUS		= 8192,
	SIS_MAX_LLC_CPUS	= 512,	/* CPUs one LLC may hold */
	SIS_MAX_SMT		= 8,	/* hardware threads per core */
	SIS_WORDS_PER_LINE	= 8,	/* u64 words in a 64-byte cache line */
	OVL_BITS_PER_LINE	= 8,	/* overloaded-map bits per 64-byte line (sparse) */
	STEAL_SCAN_TASKS	= 16,	/* tasks examined per victim DSQ */
	SIS_DFL_SLICE_NS	= 5000000,
	SIS_DFL_ORACLE_EVERY	= 16,	/* failed scans per oracle check (telemetry) */
	SIS_HEAL_EVERY		= 8,	/* ticks of a busy CPU per heal check (filter_heal_due) */
	SIS_WEIGHT_DFL		= 100,	/* p->scx.weight of a nice-0 task */
	/* a move must narrow the load gap by this much of the task's weight (hysteresis) */
	BAL_MARGIN_PCT		= 12,
	SIS_MAX_CGROUPS		= 16384,	/* default --max-cgroups: cgroups with cpu.weight state */
	SIS_CG_MAX_DEPTH	= 16,	/* cgroup levels below the root the weights follow */
	SIS_WEIGHT_MAX		= 10000,	/* cpu.weight and p->scx.weight range: 1..10000 */
	/*
	 * Loads and the weights the vtime model uses are task weights << this:
	 * a cgroup's share split among its tasks needs the fraction (a weight
	 * of 100 over 64 tasks is 1.56 each, and 1 in integers is a third off).
	 */
	SIS_LOAD_SHIFT		= 10,
	SIS_SCHED_IDLE		= 5,	/* uapi SCHED_IDLE (vmlinux.h has no #defines) */
};

/* One cache line per CPU: only its owner writes it, except claims (idle_filter.bpf.h). */
struct cpu_ctx {
	u32 idle;		/* state of record: 1 idle, claimed by CAS 1 -> 0 */
	u32 fail_prone;		/* the last scan from this CPU failed */
	u64 filter_gen;		/* LLC generation when this CPU last set itself */
	u32 busy;		/* counted in the LLC's nr_busy; changed by CAS (the heal writes it too) */
	u32 heal_pos;		/* LLC position this CPU's tick checks next (filter_heal_pick) */
	u32 heal_ticks;		/* ticks since its last check (filter_heal_due) */
	u64 __pad[4];
};

/* Per LLC, one cache line (idle_filter.bpf.h). */
struct llc_ctx {
	u64 gen;		/* bumped on reset: expires every cached filter_gen */
	u32 has_idle_cores;	/* hint: 1 + LLC position of a CPU whose core filled with idle threads; 0: none */
	s32 nr_busy;		/* CPUs not idle by record: the LLC's load */
	u64 last_rotate;	/* when a task of this LLC last rotated (balance.bpf.h) */
	u64 last_xrotate;	/* ... to another LLC */
	u32 local_rotations;	/* rotations within this LLC since the last one out of it */
	u32 __pad32;
	u64 last_pull;		/* when a busy CPU of this LLC last pulled a task (balance.bpf.h) */
	u64 __pad[2];
};

/*
 * Per-CPU queue state (vtime.bpf.h, balance.bpf.h), one cache line: the
 * queue's vtime clock, its weighted load, and what runs on it now.
 */
struct cpu_sched {
	u64 vclock;		/* vtime clock of the CPU's queue: lag is measured against it */
	u64 load;		/* sum of the weights of the runnable tasks accounted here */
	u64 curr_vtime;		/* vtime of the running task when it started */
	u64 curr_started;	/* when it started (ns); 0: nothing of ours runs */
	u32 curr_weight;
	u32 released;		/* taken by a higher class (RT/DL/stop) */
	u64 last_balance;	/* when this CPU last looked for a busier one */
	u32 nr_runnable;	/* tasks accounted in load */
	u16 bal_seen;		/* the busier CPU the last LLC look found, + 1; 0: none */
	u16 bal_seen_xllc;	/* ... the last look across LLCs */
	u64 last_xllc;		/* ... and when in other LLCs too */
	u64 nr_avg;		/* nr_runnable averaged over time, x1024 (vtime.bpf.h) */
	u64 nr_avg_at;		/* when nr_avg was last folded (ktime ns); 0: never */
	u64 curr_woke;		/* when the running task last woke (or was forked) */
};

/* A task's side of the vtime and load accounting (lives in its task storage). */
struct task_sched {
	s32 vcpu;		/* CPU whose vclock p->scx.dsq_vtime is relative to */
	s32 load_cpu;		/* CPU whose load holds this task's weight; -1: none */
	u32 load_weight;	/* the weight added there */
	u32 __pad;
	u64 charged_at;		/* its sum_exec_runtime is charged up to here */
};

/*
 * A cgroup's cpu.weight state (cgroup.bpf.h), in a slot of an array: a task
 * and a child cgroup name it by slot, so the walk up its levels is an array
 * read per level, not a hash lookup. Its share of its parent is weight /
 * (parent's child_weight + parent's task_weight): idle siblings and idle
 * children count for nothing.
 */
struct cg_sched {
	u64 cgid;		/* the cgroup in this slot; 0: a free slot */
	/*
	 * cpu.weight (1..10000, 100 default) in the high 32 bits, nr_active
	 * (own runnable tasks + active children: > 0 is active) + CG_NR_BIAS
	 * in the low 32: one word, so that a weight change and an activation
	 * on another CPU are ordered by the atomics themselves (cgroup.bpf.h).
	 */
	u64 state;
	s64 task_weight;	/* sum of the weights of its own runnable tasks */
	s64 child_weight;	/* sum of the weights of its active children */
	u32 parent;		/* parent's slot; 0: a child of the root */
	u32 level;		/* 1: a child of the root */
	/*
	 * A cache line a slot: every CPU running a cgroup's tasks writes its
	 * counters, and two busy cgroups side by side must not share a line.
	 */
	u64 __pad[3];
};

/* nr_active's bias in cg_sched.state: no count a transient reorder takes below 0 borrows from the weight */
#define CG_NR_BIAS	0x80000000u

/* A task's side of cg_sched (in its task storage); slots are array index + 1. */
struct task_cg {
	u32 slot;		/* the task's cgroup; 0: the root or an untracked one */
	u32 acct_slot;		/* the cgroup whose task_weight holds this task; 0: none */
	u32 weight;		/* its weight while runnable; 0: not runnable */
	u32 acct_weight;	/* the weight added to acct_slot */
};

/* Per-CPU "cached domain shortcuts", filled by user space. */
struct cpu_topo {
	u32 core;			/* global core id */
	u32 llc;			/* LLC id, dense 0..nr_llcs-1 */
	u32 llc_pos;			/* position of this CPU in its LLC span */
	u32 node;			/* NUMA node */
	u32 nr_siblings;		/* SMT threads of the core, this one included */
	u32 siblings[SIS_MAX_SMT];	/* CPU ids of the core's threads */
};

/* Per-LLC shortcuts, filled by user space. */
struct llc_topo {
	u32 nr_cpus;			/* CPUs in the span */
	u32 nr_cores;
	u32 node;
	u32 first_cpu;
};

/* Counter indexes of the per-CPU `stats` array. */
enum sis_stat {
	STAT_ENQUEUE,			/* ops.enqueue calls */
	STAT_DIRECT_IDLE,		/* inserted to a local DSQ from select_cpu (idle CPU found) */
	STAT_KTHREAD,			/* per-CPU kthreads inserted to their local DSQ */
	STAT_DISPATCH_LOCAL,		/* tasks moved from the CPU's own DSQ */
	STAT_KEEP_PREV,			/* prev kept running: nothing queued, or still the lowest vtime */
	STAT_KICK_IDLE,			/* idle CPUs kicked after an enqueue */

	/* wakeup paths */
	STAT_WAKE_PREV,
	STAT_WAKE_SYNC,
	STAT_WAKE_RECENT,
	STAT_WAKE_SCAN,
	STAT_WAKE_FORK_EXEC,
	STAT_WAKE_NONE,			/* no idle CPU found: stays on target */
	STAT_WAKE_AFFINE,		/* no idle CPU: a sync wakee queued behind its waker */

	/* idle filter and scans */
	STAT_SCAN,
	STAT_SCAN_PROBE,
	STAT_SCAN_SUCCESS,
	STAT_SCAN_FAIL,
	STAT_SCAN_ORACLE,		/* failed scans checked against the oracle (sampled) */
	STAT_SCAN_MISSED,		/* of those: the oracle had an allowed idle CPU in the LLC */
	STAT_SCAN_FP,			/* probes of a filter CPU found busy */
	STAT_FP_REMOVED,		/* false positives removed from the filter */
	STAT_FILTER_RESET,
	STAT_FAILPRONE_SCAN,
	STAT_SIBLING_RESCUE,		/* idle SMT sibling found by a full-mode scan */
	STAT_FILTER_SET,		/* bits set on the idle path */
	STAT_FILTER_SET_SKIP_GEN,	/* set skipped: generation says already set */
	STAT_FILTER_SET_SKIP_CORE,	/* set skipped: a sibling already stands for the core */
	STAT_FILTER_DROP,		/* cores whose bits were cleared: false positives, claims that filled them */
	STAT_FILTER_CLAIM_CLEAR,	/* of those: by a claim outside a scan, near saturation (claim_cpu) */

	/* overloaded map and stealing */
	STAT_OVERLOAD_SET,
	STAT_OVERLOAD_CLEAR,
	STAT_STEAL_ATTEMPT,
	STAT_STEAL_SUCCESS,
	STAT_STEAL_EMPTY,		/* map named no overloaded CPU */
	STAT_STEAL_NOT_MIGRATABLE,	/* overloaded CPUs had nothing this CPU may run */

	/* fairness (vtime.bpf.h, balance.bpf.h) */
	STAT_PREEMPT_KICK,		/* a woken task owed time preempted a running one */
	STAT_BALANCE_PULL,		/* tasks pulled from a busier CPU of the LLC */
	STAT_BALANCE_PULL_XLLC,		/* ... from a busier CPU of another LLC */
	STAT_BALANCE_LOOK,		/* busy CPUs' looks for a busier one (rate-limited) */
	STAT_BALANCE_NO_GAP,		/* ... that found no busier overloaded CPU to pull from */
	STAT_BALANCE_UNMOVABLE,		/* ... that found one, but no queued task whose move narrows it */
	STAT_BALANCE_UNCONFIRMED,	/* ... that found one the look before had not: no pull yet */
	STAT_BALANCE_PACED,		/* ... confirmed, but their LLC pulled within the pull period */
	STAT_BALANCE_ROTATE,		/* slice ends that sent prev to a CPU one task lighter (rotation) */
	STAT_BALANCE_ROTATE_XLLC,	/* ... of another LLC */
	STAT_FORK_LEAST_LOADED,		/* fork/exec with no idle CPU: least-loaded CPU of the idlest LLC */
	STAT_FORK_STAY,			/* ... kept on its parent's (exec: own) CPU, no busier by the margin */
	STAT_RELEASED_REDIRECT,		/* enqueued away from a CPU taken by RT/DL */
	STAT_IDLE_RECONCILED,		/* CPU ran a task while idle by record: marked busy */
	STAT_IDLE_HEALED,		/* CPU idle by the kernel's mask while busy by record: marked idle */
	STAT_TICK_PREEMPT,		/* ticks that ended a slice for a queued task owed more (vtime_tick_preempt) */
	STAT_STOP_MIGRATION_DISABLED,	/* switched out runnable while migration-disabled */

	SIS_NR_STATS,
};

/* Modes of the idle-CPU search, for A/B runs. */
enum sis_mode {
	SIS_MODE_LINEAR		= 0,	/* no filter: linear scan of the LLC (CFS without SIS_CORE) */
	SIS_MODE_FILTER		= 1,	/* idle filter, no fail-prone handling */
	SIS_MODE_FULL		= 2,	/* idle filter + fail-prone scans (default) */
};

/* Where ttwu may pull a wakee toward its waker's CPU (--wake-affine). */
enum wake_affine_mode {
	WAKE_AFFINE_OFF		= 0,	/* never: prev, a recent CPU or the scan of prev's LLC */
	WAKE_AFFINE_IDLE	= 1,	/* when the waker leaves its CPU free (sync, nothing queued) */
	WAKE_AFFINE_LOAD	= 2,	/* also, nothing idle, when the waker's CPU is the less loaded (default) */
};

enum steal_scope {
	STEAL_SCOPE_LLC		= 0,
	STEAL_SCOPE_NODE	= 1,	/* then other LLCs of the node */
	STEAL_SCOPE_ALL		= 2,	/* then any LLC */
};

enum steal_mode {
	STEAL_OFF		= 0,
	STEAL_MAP_ONLY		= 1,	/* maintain the overloaded map, never steal */
	STEAL_ON		= 2,
};

/* Per-LLC counter indexes of the per-CPU `llc_stats` array (llc_stats.bpf.h). */
enum sis_llc_stat {
	LLC_STAT_SCAN,
	LLC_STAT_SCAN_SUCCESS,
	LLC_STAT_SCAN_FAIL,
	LLC_STAT_PROBE,
	LLC_STAT_FP,			/* false-positive probes */
	LLC_STAT_ORACLE,		/* failed scans checked against the oracle */
	LLC_STAT_MISSED,		/* of those: an allowed idle CPU was there */
	LLC_STAT_STEAL,			/* tasks stolen by CPUs of this LLC */

	SIS_NR_LLC_STATS,
};

/* Group balancer (group.bpf.h): shared with src/group.rs. */
enum gb_consts {
	GB_MAX_PARTS		= 32,	/* CPU partitions */
	GB_NO_PART		= 32,	/* gb_acct slot: run time on CPUs of no partition */
	GB_MAX_CGROUPS		= 4096,	/* cgroups in groups (groups and their descendants) */
	GB_SCAN_CPUS		= 16,	/* CPUs of a partition probed per idle search */
	GB_OPT_CGROUP		= 1,	/* --gb-cgroup: the cgroup is a group */
	GB_OPT_PARENT		= 2,	/* --gb-parent: each child cgroup is a group */
};

/* Per CPU, one cache line; run-time fields written under the CPU's rq lock. */
struct gb_cpu {
	s32 part;		/* partition of this CPU (loader), -1: none */
	s32 curr_want;		/* partition the running task's group prefers, -1: none */
	u64 started;		/* run time of the running task is charged up to here */
	u64 busy_ns;		/* run time of every task on this CPU */
	u32 curr_load;		/* load weight of the running task (a swap partner's) */
	u32 __pad32;
	u64 __pad[4];
};

/* A partition's CPUs: gb_part_cpus[first .. first + nr_cpus). */
struct gb_part {
	u32 first;
	u32 nr_cpus;
};

struct gb_group {
	s32 part;		/* preferred partition (loader), -1: not settled yet */
	u32 __pad;
};

/* Per CPU and group: run time by partition of the CPU it ran on. */
struct gb_acct {
	u64 part_ns[GB_MAX_PARTS + 1];
};

enum gb_stat {
	GB_STAT_WAKE_PREV,		/* grouped wakeup on prev, idle and in the partition */
	GB_STAT_WAKE_PART,		/* ... on another idle CPU of the partition */
	GB_STAT_WAKE_ELSEWHERE,		/* ... none idle there: the normal path, anywhere */
	GB_STAT_MOVE_IDLE,		/* slice end outside the partition: moved to an idle CPU in it */
	GB_STAT_MOVE_SWAP,		/* ... queued on a CPU in it whose task wants ours (swap) */
	GB_STAT_STEAL_PREF,		/* steals/pulls of a task whose group is the thief's partition */
	GB_STAT_NO_STATE,		/* cgroup not grouped: a map was full */

	GB_NR_STATS,
};

#endif /* __SIS_INTF_H */
