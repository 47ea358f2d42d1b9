/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Overloaded-CPU map: per LLC, which CPUs have tasks waiting in
 * their DSQ behind the running one. Set and cleared only at the transitions
 * (enqueue, dispatch, running); never rescanned.
 *
 * Sparse like the steal-tasks proposal's sparsemask: OVL_BITS_PER_LINE bits per 64-byte
 * line, so CPUs setting and clearing their bits rarely share a cache line.
 * Writers read before they write, so a steady state touches no line.
 *
 * Needs no sched_ext type: the host tests include it too.
 */
#ifndef __SIS_OVERLOAD_BPF_H
#define __SIS_OVERLOAD_BPF_H

#include "intf.h"
#include "topology.bpf.h"
#include "stats.bpf.h"

/* writable: `scx_sis set steal=` */
u32 steal_mode = STEAL_ON;
const volatile u32 ovl_lines = 1;	/* 64-byte lines per LLC */
/* the busy-CPU balance (balance.bpf.h, --no-balance clears it); it finds its victims here */
const volatile bool balance_on = true;

struct ovl_line {
	u64 bits;			/* low OVL_BITS_PER_LINE bits used */
	u64 __pad[7];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, u32);
	__type(value, struct ovl_line);
	__uint(max_entries, 1);		/* resized to nr_llcs * ovl_lines */
} ovl_map SEC(".maps");

static __always_inline u64 *ovl_word(u32 llc, u32 pos)
{
	u32 key = llc * ovl_lines + pos / OVL_BITS_PER_LINE;
	struct ovl_line *line = bpf_map_lookup_elem(&ovl_map, &key);

	return line ? &line->bits : NULL;
}

static __always_inline u64 ovl_bit(u32 pos)
{
	return 1ULL << (pos % OVL_BITS_PER_LINE);
}

/*
 * The map is kept while anything reads it: stealing, or the busy-CPU
 * balance, whose pulls and victims come from it (steal=off stops only the
 * stealing). Off for both, it is left as it was (the loader empties it).
 */
static __always_inline bool overload_kept(void)
{
	return steal_mode != STEAL_OFF || balance_on;
}

/* True when this call made @cpu overloaded (the 0 -> 1 transition). */
static __always_inline bool overload_set(s32 cpu)
{
	struct cpu_topo *t = cpu_topo(cpu);
	u64 *w, bit;

	if (!overload_kept() || !t || !(w = ovl_word(t->llc, t->llc_pos)))
		return false;
	bit = ovl_bit(t->llc_pos);
	if (READ_ONCE(*w) & bit)
		return false;
	if (__sync_fetch_and_or(w, bit) & bit)
		return false;
	stat_inc(STAT_OVERLOAD_SET);
	return true;
}

static __always_inline void overload_clear(s32 cpu)
{
	struct cpu_topo *t = cpu_topo(cpu);
	u64 *w;

	if (!overload_kept() || !t || !(w = ovl_word(t->llc, t->llc_pos)))
		return;
	/*
	 * A stealer clears its victim's bit (steal.bpf.h) while the victim may
	 * clear it too: count only the clear that took the bit.
	 */
	if ((READ_ONCE(*w) & ovl_bit(t->llc_pos)) &&
	    (__sync_fetch_and_and(w, ~ovl_bit(t->llc_pos)) & ovl_bit(t->llc_pos)))
		stat_inc(STAT_OVERLOAD_CLEAR);
}

/* Record @cpu as overloaded or not from its DSQ's waiting count. */
static __always_inline void overload_update(s32 cpu, s32 nr_waiting)
{
	if (nr_waiting > 0)
		overload_set(cpu);
	else
		overload_clear(cpu);
}

static __always_inline bool overload_test(u32 llc, u32 pos)
{
	u64 *w = ovl_word(llc, pos);

	return w && (READ_ONCE(*w) & ovl_bit(pos));
}

/* @cpu is overloaded by the map: an answer only while overload_kept() */
static __always_inline bool overload_cpu(s32 cpu)
{
	struct cpu_topo *t = cpu_topo(cpu);

	return t && overload_test(t->llc, t->llc_pos);
}

/*
 * Walk of @llc's map in wrap-around order: @len positions from @start. The
 * cursor counts positions consumed; each call returns the next overloaded
 * CPU (or -1 when the walk is over) and skips empty lines whole.
 */
struct ovl_walk {
	u32 llc;
	u32 n;			/* CPUs in the LLC */
	u32 start;
	u32 len;		/* positions to visit: n, or n - 1 to leave out the walker */
	u32 visited;
	u32 seen;		/* tasks examined on the current victim (steal.bpf.h) */
};

static __always_inline void ovl_walk_init(struct ovl_walk *wk, u32 llc, u32 n, u32 start, u32 len)
{
	wk->llc = llc;
	wk->n = n;
	wk->start = n ? start % n : 0;
	wk->len = len < n ? len : n;
	wk->visited = 0;
}

static __noinline s32 ovl_walk_next(struct ovl_walk *wk)
{
	u32 i;

	bpf_for(i, 0, SIS_MAX_LLC_CPUS) {
		u32 pos, skip;
		u64 *w;

		if (!wk->n || wk->visited >= wk->len)
			return -1;
		pos = (wk->start + wk->visited) % wk->n;
		w = ovl_word(wk->llc, pos);
		if (!w)
			return -1;
		if (!READ_ONCE(*w) && pos % OVL_BITS_PER_LINE == 0) {
			/* an empty line: skip its positions at once, not past the LLC's end */
			skip = wk->n - pos < OVL_BITS_PER_LINE ? wk->n - pos : OVL_BITS_PER_LINE;
			wk->visited += skip;
			continue;
		}
		wk->visited++;
		if (READ_ONCE(*w) & ovl_bit(pos))
			return llc_cpu_at(wk->llc, pos);
	}
	return -1;
}

#endif /* __SIS_OVERLOAD_BPF_H */
