/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-CPU event counters (enum sis_stat), summed by user space. Per-CPU so
 * counting never bounces a cache line between wakers.
 */
#ifndef __SIS_STATS_BPF_H
#define __SIS_STATS_BPF_H

#include "intf.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, u32);
	__type(value, u64);
	__uint(max_entries, SIS_NR_STATS);
} stats SEC(".maps");

static __always_inline void stat_add(u32 idx, u64 n)
{
	u64 *cnt = bpf_map_lookup_elem(&stats, &idx);

	if (cnt)
		*cnt += n;
}

static __always_inline void stat_inc(u32 idx)
{
	stat_add(idx, 1);
}

#endif /* __SIS_STATS_BPF_H */
