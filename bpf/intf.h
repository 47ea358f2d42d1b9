/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Definitions shared by the BPF side and the Rust loader (bindgen'd into
 * bpf_intf.rs). Keep it free of kernel types: it is also parsed for the host.
 */
#ifndef __SIS_INTF_H
#define __SIS_INTF_H

#ifndef __VMLINUX_H__
typedef unsigned char u8;
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
};

/* Per-CPU "cached domain shortcuts" (seed 001), filled by user space. */
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
	STAT_KEEP_PREV,			/* prev kept running: nothing else queued */
	STAT_KICK_IDLE,			/* idle CPUs kicked after an enqueue */

	/* wakeup paths (seed 001) */
	STAT_WAKE_PREV,
	STAT_WAKE_SYNC,
	STAT_WAKE_RECENT,
	STAT_WAKE_SCAN,
	STAT_WAKE_FORK_EXEC,
	STAT_WAKE_NONE,			/* no idle CPU found: stays on target */

	/* idle filter and scans (seeds 000, 003) */
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
	STAT_SIBLING_RESCUE,		/* idle SMT sibling found by a fail-prone scan */
	STAT_FILTER_SET,		/* bits set on the idle path */
	STAT_FILTER_SET_SKIP_GEN,	/* set skipped: generation says already set */
	STAT_FILTER_SET_SKIP_CORE,	/* set skipped: a sibling already stands for the core */

	/* overloaded map and stealing (seed 004) */
	STAT_OVERLOAD_SET,
	STAT_OVERLOAD_CLEAR,
	STAT_STEAL_ATTEMPT,
	STAT_STEAL_SUCCESS,
	STAT_STEAL_EMPTY,		/* map named no overloaded CPU */
	STAT_STEAL_NOT_MIGRATABLE,	/* overloaded CPUs had nothing this CPU may run */

	SIS_NR_STATS,
};

/* Modes of the idle-CPU search, for A/B runs. */
enum sis_mode {
	SIS_MODE_LINEAR		= 0,	/* no filter: linear scan of the LLC (CFS without SIS_CORE) */
	SIS_MODE_FILTER		= 1,	/* idle filter, no fail-prone handling */
	SIS_MODE_FULL		= 2,	/* idle filter + fail-prone scans (default) */
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

#endif /* __SIS_INTF_H */
