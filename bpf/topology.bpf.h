/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Topology shortcuts ("cached domain shortcuts"): everything a
 * wakeup needs to know about a CPU's core and LLC is precomputed by user space
 * into arrays sized from the machine, so no hot path walks a domain.
 *
 * Needs no sched_ext type: the host tests include it too.
 */
#ifndef __SIS_TOPOLOGY_BPF_H
#define __SIS_TOPOLOGY_BPF_H

#include "intf.h"

const volatile u32 nr_cpu_ids = 1;	/* possible CPU ids */
const volatile u32 nr_llcs = 1;
const volatile u32 llc_stride = 1;	/* slots per LLC in llc_cpus: the largest LLC */
const volatile bool smt_enabled = false;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, u32);
	__type(value, struct cpu_topo);
	__uint(max_entries, 1);		/* resized to nr_cpu_ids */
} cpu_topo_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, u32);
	__type(value, struct llc_topo);
	__uint(max_entries, 1);		/* resized to nr_llcs */
} llc_topo_map SEC(".maps");

/* llc * llc_stride + pos -> CPU id: the LLC span in scan order */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, u32);
	__type(value, u32);
	__uint(max_entries, 1);		/* resized to nr_llcs * llc_stride */
} llc_cpus_map SEC(".maps");

static __always_inline struct cpu_topo *cpu_topo(s32 cpu)
{
	u32 key = cpu;

	return bpf_map_lookup_elem(&cpu_topo_map, &key);
}

static __always_inline struct llc_topo *llc_topo(u32 llc)
{
	return bpf_map_lookup_elem(&llc_topo_map, &llc);
}

/* CPU at @pos of @llc's span, or -1 */
static __always_inline s32 llc_cpu_at(u32 llc, u32 pos)
{
	u32 key = llc * llc_stride + pos;
	u32 *cpu = bpf_map_lookup_elem(&llc_cpus_map, &key);

	return cpu ? (s32)*cpu : -1;
}

static __always_inline s32 cpu_llc(s32 cpu)
{
	struct cpu_topo *t = cpu_topo(cpu);

	return t ? (s32)t->llc : -1;
}

static __always_inline bool cpus_share_llc(s32 a, s32 b)
{
	struct cpu_topo *ta = cpu_topo(a), *tb = cpu_topo(b);

	return ta && tb && ta->llc == tb->llc;
}

#endif /* __SIS_TOPOLOGY_BPF_H */
