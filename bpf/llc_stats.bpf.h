/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-LLC event counters (enum sis_llc_stat) for the per-LLC stats and
 * `scx_sis top`: key = llc * SIS_NR_LLC_STATS + idx. Per-CPU like stats.bpf.h
 * so counting never bounces a line; user space sums the CPUs.
 * Called from: the scan (idle_filter.bpf.h), the oracle (main.bpf.c), the
 * stealer (steal.bpf.h).
 */
#ifndef __SIS_LLC_STATS_BPF_H
#define __SIS_LLC_STATS_BPF_H

#include "intf.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, u32);
	__type(value, u64);
	__uint(max_entries, SIS_NR_LLC_STATS);	/* resized to nr_llcs * SIS_NR_LLC_STATS */
} llc_stats SEC(".maps");

static __always_inline void llc_stat_add(u32 llc, u32 idx, u64 n)
{
	u32 key = llc * SIS_NR_LLC_STATS + idx;
	u64 *cnt = bpf_map_lookup_elem(&llc_stats, &key);

	if (cnt)
		*cnt += n;
}

static __always_inline void llc_stat_inc(u32 llc, u32 idx)
{
	llc_stat_add(llc, idx, 1);
}

#endif /* __SIS_LLC_STATS_BPF_H */
