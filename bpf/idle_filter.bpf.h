/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SIS_CORE idle filter and fail-prone scans (docs/design.md).
 *
 * Owns: the per-CPU idle state of record, one idle filter per LLC (a bitmap
 * of CPUs that were idle, kept at CORE granule), the per-LLC generation and
 * load, and the wrap-around scan that claims an idle CPU.
 * Called from: ops.update_idle (idle path: set), ops.select_cpu (scan).
 *
 * The entry points are global subprograms: the verifier checks each once,
 * not once per call site, which keeps attach time short (under TCG the
 * verifier runs at a fraction of a host core).
 *
 * The includer provides two hooks, so this file needs no sched_ext type and
 * the host tests run it unchanged:
 *   bool sis_allowed(const struct task_struct *p, s32 cpu)   p->cpus_ptr test
 *   bool sis_claim_builtin(s32 cpu)   claim through the kernel's idle mask
 */
#ifndef __SIS_IDLE_FILTER_BPF_H
#define __SIS_IDLE_FILTER_BPF_H

#include "hooks.bpf.h"
#include "topology.bpf.h"
#include "stats.bpf.h"
#include "llc_stats.bpf.h"

/* writable: `scx_sis set sis-mode=` switches it live (knobs.bpf.h rebuilds the filters) */
u32 sis_mode = SIS_MODE_FULL;
/* claim through the kernel's built-in idle mask instead of the per-CPU state */
const volatile bool builtin_idle = true;
const volatile u32 filter_stride = SIS_WORDS_PER_LINE;	/* u64 words per LLC filter */

/* struct cpu_ctx and struct llc_ctx are in intf.h (shared with user space) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, u32);
	__type(value, struct cpu_ctx);
	__uint(max_entries, 1);		/* resized to nr_cpu_ids */
} cpu_ctx_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, u32);
	__type(value, struct llc_ctx);
	__uint(max_entries, 1);		/* resized to nr_llcs */
} llc_ctx_map SEC(".maps");

/* llc * filter_stride + word: bit (llc_pos % 64) of word (llc_pos / 64) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, u32);
	__type(value, u64);
	__uint(max_entries, 1);		/* resized to nr_llcs * filter_stride */
} llc_filter_map SEC(".maps");

/*
 * Loops over a core's threads are unrolled: an iterator loop indexing
 * siblings[] keeps the index precise and the verifier would walk every
 * round of it from every state.
 */
#define for_each_smt(i) _Pragma("unroll") for ((i) = 0; (i) < SIS_MAX_SMT; (i)++)

static __always_inline struct cpu_ctx *cpu_ctx(s32 cpu)
{
	u32 key = cpu;

	return bpf_map_lookup_elem(&cpu_ctx_map, &key);
}

static __always_inline struct llc_ctx *llc_ctx(u32 llc)
{
	return bpf_map_lookup_elem(&llc_ctx_map, &llc);
}

static __always_inline u64 *filter_word(u32 llc, u32 pos)
{
	u32 key = llc * filter_stride + pos / 64;

	return bpf_map_lookup_elem(&llc_filter_map, &key);
}

static __always_inline bool filter_test(u32 llc, u32 pos)
{
	u64 *w = filter_word(llc, pos);

	return w && (READ_ONCE(*w) & (1ULL << (pos & 63)));
}

static __always_inline bool filter_clear(u32 llc, u32 pos)
{
	u64 *w = filter_word(llc, pos);

	if (!w || !(READ_ONCE(*w) & (1ULL << (pos & 63))))
		return false;
	__sync_fetch_and_and(w, ~(1ULL << (pos & 63)));
	return true;
}

/*
 * No bit set in @llc's filter (@n CPUs): a busy LLC's scan ends at this one
 * pass over its words, not a walk of both segments with a call per step.
 */
static __always_inline bool filter_empty(u32 llc, u32 n)
{
	u64 any = 0;
	u32 k;

	_Pragma("unroll") for (k = 0; k < SIS_MAX_LLC_CPUS / 64; k++) {
		u64 *w;

		if (k * 64 >= n)
			break;
		w = filter_word(llc, k * 64);
		if (w)
			any |= READ_ONCE(*w);
	}
	return !any;
}

static __always_inline bool cpu_is_idle(s32 cpu)
{
	struct cpu_ctx *c = cpu_ctx(cpu);

	return c && READ_ONCE(c->idle);
}

/* Every thread of @cpu's core idle by record. */
__noinline int core_is_idle(s32 cpu)
{
	struct cpu_topo *t = cpu_topo(cpu);
	u32 i;

	if (!t)
		return false;
	for_each_smt(i) {
		if (i >= t->nr_siblings)
			break;
		if (!cpu_is_idle(t->siblings[i]))
			return false;
	}
	return true;
}

/* A thread of @cpu's core other than @but idle by record. */
__noinline int core_idle_besides(s32 cpu, s32 but)
{
	struct cpu_topo *t = cpu_topo(cpu);
	u32 i;

	if (!t)
		return false;
	for_each_smt(i) {
		if (i >= t->nr_siblings)
			break;
		if (t->siblings[i] != (u32)but && cpu_is_idle(t->siblings[i]))
			return true;
	}
	return false;
}

/*
 * Clear every bit standing for @cpu's core: any thread's, since the caller
 * may not know which one holds it. The core's cached generations go stale
 * when one was set, so its next idle entry sets a bit again.
 */
static __always_inline bool filter_drop_core(u32 llc, s32 cpu)
{
	struct cpu_topo *t = cpu_topo(cpu), *st;
	struct cpu_ctx *sc;
	bool dropped = false;
	u32 i;

	if (!t)
		return false;
	for_each_smt(i) {
		if (i >= t->nr_siblings)
			break;
		st = cpu_topo(t->siblings[i]);
		if (st && filter_clear(llc, st->llc_pos))
			dropped = true;
	}
	if (!dropped)
		return false;
	stat_inc(STAT_FILTER_DROP);
	for_each_smt(i) {
		if (i >= t->nr_siblings)
			break;
		sc = cpu_ctx(t->siblings[i]);
		if (sc)
			WRITE_ONCE(sc->filter_gen, 0);
	}
	return true;
}

/*
 * At most an eighth of @llc's CPUs idle (nr_busy, the idle path's count):
 * claims clear the bits they make stale (claim_cpu).
 */
static __always_inline bool filter_claim_clears(u32 llc)
{
	struct llc_topo *lt = llc_topo(llc);
	struct llc_ctx *l = llc_ctx(llc);

	return lt && l && (u64)READ_ONCE(l->nr_busy) * 8 >= (u64)lt->nr_cpus * 7;
}

/*
 * Claim an idle CPU so two wakers never pick the same one: through the
 * kernel's idle mask when it is kept, else by CAS on the state of record.
 * A CPU busy by record is not tried: the kernel's test-and-clear is a locked
 * write to a line every waker shares, and most wakeups try a busy prev first.
 * Should the record lag (busy, idle by the kernel), the tick heals it.
 *
 * Full mode: a claim that takes its core's last idle thread drops the
 * core's bit; left set, it is a false positive the next scan pays a probe to
 * remove. A scan's claim (@scan) does so at any load: one atomic on a word
 * it just read. Any other claim (a wakeup's prev, an enqueue's kick) only
 * while the LLC is nearly all busy (filter_claim_clears), where nearly every
 * claim leaves a stale bit and the few true ones hide among them. Below that
 * the bit stays (lazy, as the proposal has it): the CPU idles again soon and
 * its generation then skips the write, where an eager clear would cost two
 * per wakeup.
 */
__noinline int claim_idle(s32 cpu, bool scan)
{
	struct cpu_ctx *c = cpu_ctx(cpu);
	struct cpu_topo *t;
	bool ok;

	if (!c || !READ_ONCE(c->idle))
		return false;
	if (builtin_idle)
		ok = sis_claim_builtin(cpu);
	else
		ok = __sync_val_compare_and_swap(&c->idle, 1, 0) == 1;
	if (!ok || sis_mode != SIS_MODE_FULL || !(t = cpu_topo(cpu)))
		return ok;
	if ((scan || filter_claim_clears(t->llc)) && !core_idle_besides(cpu, cpu) &&
	    filter_drop_core(t->llc, cpu) && !scan)
		stat_inc(STAT_FILTER_CLAIM_CLEAR);
	return ok;
}

/* A claim outside a scan's sibling check. */
static __always_inline int claim_cpu(s32 cpu)
{
	return claim_idle(cpu, false);
}

/*
 * A thread of @cpu's core (@cpu included) allowed for @p and idle, or -1:
 * with @claim it is claimed as the scan claims (claim_idle), else only idle
 * by record.
 */
__noinline int idle_sibling(struct task_struct *p __arg_trusted, s32 cpu, bool claim)
{
	struct cpu_topo *t = cpu_topo(cpu);
	u32 k;

	if (!t)
		return -1;
	for_each_smt(k) {
		s32 s;

		if (k >= t->nr_siblings)
			break;
		s = t->siblings[k];
		if (!sis_allowed(p, s))
			continue;
		if (claim ? claim_idle(s, true) : cpu_is_idle(s))
			return s;
	}
	return -1;
}

/*
 * Idle path: record the state and put the CPU into its LLC's filter unless
 * the cached generation says it is there already, or a sibling already
 * stands for the core (CORE granule).
 */
__noinline int filter_cpu_idle(s32 cpu)
{
	struct cpu_topo *t = cpu_topo(cpu);
	struct cpu_ctx *c = cpu_ctx(cpu);
	struct llc_ctx *l;
	u64 gen, *w;
	u32 i;

	if (!t || !c || !(l = llc_ctx(t->llc)))
		return 0;

	WRITE_ONCE(c->idle, 1);
	/* by CAS: the heal (filter_heal) may run this for the CPU from another */
	if (READ_ONCE(c->busy) && __sync_val_compare_and_swap(&c->busy, 1, 0) == 1)
		__sync_fetch_and_sub(&l->nr_busy, 1);

	/* the hint says where: the filter modes probe that core alone (sis_scan) */
	if (smt_enabled && !READ_ONCE(l->has_idle_cores) && core_is_idle(cpu))
		WRITE_ONCE(l->has_idle_cores, t->llc_pos + 1);

	if (sis_mode == SIS_MODE_LINEAR)
		return 0;

	gen = READ_ONCE(l->gen);
	if (c->filter_gen == gen) {
		stat_inc(STAT_FILTER_SET_SKIP_GEN);
		return 0;
	}
	c->filter_gen = gen;

	for_each_smt(i) {
		struct cpu_topo *st;

		if (i >= t->nr_siblings)
			break;
		if (t->siblings[i] == cpu)
			continue;
		st = cpu_topo(t->siblings[i]);
		if (st && filter_test(t->llc, st->llc_pos)) {
			stat_inc(STAT_FILTER_SET_SKIP_CORE);
			return 0;
		}
	}

	w = filter_word(t->llc, t->llc_pos);
	if (w) {
		__sync_fetch_and_or(w, 1ULL << (t->llc_pos & 63));
		stat_inc(STAT_FILTER_SET);
	}
	return 0;
}

/* Leaving idle only updates the record: the filter is cleared lazily. */
__noinline int filter_cpu_busy(s32 cpu)
{
	struct cpu_topo *t = cpu_topo(cpu);
	struct cpu_ctx *c = cpu_ctx(cpu);
	struct llc_ctx *l;

	if (!t || !c || !(l = llc_ctx(t->llc)))
		return 0;
	WRITE_ONCE(c->idle, 0);
	if (!READ_ONCE(c->busy) && __sync_val_compare_and_swap(&c->busy, 0, 1) == 0)
		__sync_fetch_and_add(&l->nr_busy, 1);
	return 0;
}

/*
 * Reset after a failed full idle-core scan: the bitmap goes, and every cached
 * generation expires. Unlike the proposal's plain clear, CPUs idle by record are
 * put back (core granule): a CPU that stays idle never passes the idle path
 * again, so a plain clear would hide it until its next wakeup. This costs one
 * pass over the LLC, on a path that just failed a full scan of it anyway.
 */
__noinline int filter_reset(u32 llc)
{
	struct llc_topo *lt = llc_topo(llc);
	struct llc_ctx *l = llc_ctx(llc);
	u32 i;

	if (!l || !lt)
		return 0;
	__sync_fetch_and_add(&l->gen, 1);
	bpf_for(i, 0, filter_stride) {
		u32 key = llc * filter_stride + i;
		u64 *w = bpf_map_lookup_elem(&llc_filter_map, &key);

		if (w)
			WRITE_ONCE(*w, 0);
	}
	bpf_for(i, 0, SIS_MAX_LLC_CPUS) {
		struct cpu_topo *t;
		u64 *w;
		s32 cpu;
		u32 k;
		bool covered = false;

		if (i >= lt->nr_cpus)
			break;
		cpu = llc_cpu_at(llc, i);
		if (cpu < 0 || !cpu_is_idle(cpu) || !(t = cpu_topo(cpu)))
			continue;
		for_each_smt(k) {
			struct cpu_topo *st;

			if (k >= t->nr_siblings)
				break;
			st = cpu_topo(t->siblings[k]);
			if (st && st->llc_pos != i && filter_test(llc, st->llc_pos)) {
				covered = true;
				break;
			}
		}
		if (!covered && (w = filter_word(llc, i)))
			__sync_fetch_and_or(w, 1ULL << (i & 63));
	}
	stat_inc(STAT_FILTER_RESET);
	return 0;
}

/* Remove a false positive: its whole core is busy. */
__noinline int filter_remove_core(u32 llc, s32 cpu)
{
	filter_drop_core(llc, cpu);
	stat_inc(STAT_FP_REMOVED);
	return 0;
}

/*
 * Scan depth from the LLC's load, like SIS_UTIL: n * (1 - (busy/n)^2), but
 * never below SIS_PROP's floor of 4: the busy count is a snapshot, and a
 * missed idle CPU costs a whole queueing delay while a probe costs a load.
 */
static __always_inline u32 scan_depth(u32 nr_cpus, s32 nr_busy)
{
	u32 busy = nr_busy < 0 ? 0 : (u32)nr_busy, d;

	if (busy > nr_cpus)
		busy = nr_cpus;
	d = nr_cpus - busy * busy / nr_cpus;
	return d > 4 ? d : 4;
}

static __always_inline u32 ctz64(u64 v)
{
	u32 n = 0;

	if (!(v & 0xffffffffULL)) { n += 32; v >>= 32; }
	if (!(v & 0xffffULL)) { n += 16; v >>= 16; }
	if (!(v & 0xffULL)) { n += 8; v >>= 8; }
	if (!(v & 0xfULL)) { n += 4; v >>= 4; }
	if (!(v & 0x3ULL)) { n += 2; v >>= 2; }
	if (!(v & 0x1ULL)) { n += 1; }
	return n;
}

struct scan_result {
	s32 cpu;		/* claimed idle CPU or -1 */
	u32 probes;
	bool full;		/* the whole candidate set was visited */
	bool fail_prone;	/* the scan followed a failed one from the same waker */
};

/*
 * Loop state of one scan. It lives in a per-CPU map value rather than on the
 * stack: the verifier then sees unknown scalars each round and the scan loop
 * converges instead of being walked position by position.
 */
struct scan_ctx {
	u32 llc;
	u32 start;		/* wrap point: first segment [start, n), then [0, start) */
	u32 from, end, seg;
	s32 nr;			/* probes left + 1 (decremented before a probe, as in select_idle_cpu) */
	u32 probes;
	s32 idle_cpu;
	u32 core_search;	/* the scan began with the idle-core hint set */
	u32 has_idle_core;	/* in linear mode's idle-core search */
	u32 scan_sibling, fail_prone, use_filter, full, found;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, u32);
	__type(value, struct scan_ctx);
	__uint(max_entries, 1);
} scan_ctx_map SEC(".maps");

/* Probe the candidate @cpu by the scan's rules; true when an idle CPU is claimed. */
__noinline int scan_probe(struct task_struct *p __arg_trusted, struct scan_ctx *sc, s32 cpu)
{
	s32 s;

	if (!sc)
		return false;
	sc->probes++;

	if (sc->has_idle_core) {
		if (core_is_idle(cpu) && claim_cpu(cpu)) {
			sc->idle_cpu = cpu;
			return true;
		}
		/* remember an idle thread of a busy core */
		if (sc->idle_cpu < 0)
			sc->idle_cpu = idle_sibling(p, cpu, false);
		return false;
	}

	if (sc->scan_sibling) {
		s = idle_sibling(p, cpu, true);
		if (s >= 0) {
			if (s != cpu)
				stat_inc(STAT_SIBLING_RESCUE);
			sc->idle_cpu = s;
			return true;
		}
		stat_inc(STAT_SCAN_FP);
		llc_stat_inc(sc->llc, LLC_STAT_FP);
		/* only a core with no idle thread at all is a false positive */
		if (sc->use_filter && !core_idle_besides(cpu, -1))
			filter_remove_core(sc->llc, cpu);
		return false;
	}

	if (claim_cpu(cpu)) {
		sc->idle_cpu = cpu;
		return true;
	}
	if (sc->use_filter) {
		stat_inc(STAT_SCAN_FP);
		llc_stat_inc(sc->llc, LLC_STAT_FP);
	}
	return false;
}

/*
 * The next candidate position at or after sc->from in the current segment: a
 * set filter bit, or any position when the filter is off; -1 when the
 * segment has none. Empty filter words are skipped in this one call: a step
 * per word made a search of a busy 256-CPU LLC cost 2.7x that of 8 CPUs.
 */
static __always_inline s32 scan_next_pos(struct scan_ctx *sc)
{
	u32 pos = sc->from, k;
	u64 bits = 0;

	if (pos >= sc->end)
		return -1;
	if (!sc->use_filter)
		return pos;
	bpf_for(k, 0, SIS_MAX_LLC_CPUS / 64) {
		u64 *w = filter_word(sc->llc, pos);

		if (!w)
			return -1;
		bits = READ_ONCE(*w) & (~0ULL << (pos & 63));
		if (bits)
			break;
		pos = (pos & ~63U) + 64;
		if (pos >= sc->end)
			return -1;
	}
	if (!bits)
		return -1;
	pos = (pos & ~63U) + ctz64(bits);
	return pos < sc->end ? (s32)pos : -1;
}

/*
 * One step of the wrap-around walk: moves to the next candidate and probes
 * it, or switches segment. True when the scan is over.
 */
__noinline int scan_step(struct task_struct *p __arg_trusted, struct scan_ctx *sc)
{
	s32 cpu, next;
	u32 pos;

	if (!sc)
		return true;
	next = scan_next_pos(sc);
	if (next < 0) {
		if (sc->seg) {
			sc->full = 1;
			return true;
		}
		sc->seg = 1;
		sc->from = 0;
		sc->end = sc->start;
		return false;
	}
	pos = next;
	sc->from = pos + 1;

	cpu = llc_cpu_at(sc->llc, pos);
	if (cpu < 0 || !sis_allowed(p, cpu))
		return false;
	/* linear mode's idle-core search is not depth-limited (CFS's select_idle_cpu) */
	if (!sc->has_idle_core && --sc->nr <= 0)
		return true;
	if (scan_probe(p, sc, cpu)) {
		sc->found = 1;
		return true;
	}
	return false;
}

/*
 * The filter modes' idle-core search: one probe, at the core the hint names
 * (the last one the idle path saw fill with idle threads). Walking the
 * filter for a whole idle core instead probed every candidate while one
 * existed anywhere: at 256 CPUs and a quarter idle, 74 probes a search, and
 * a bound of a few candidates still cost 1.8-2 probes a success. A partly
 * idle core there serves too: the probe is paid for. True when claimed.
 */
__noinline int scan_hinted_core(struct task_struct *p __arg_trusted, struct scan_ctx *sc, u32 hint)
{
	s32 cpu, s;

	/* before the walk: sc->end is the LLC's size */
	if (!sc || !hint || hint > sc->end)
		return false;
	cpu = llc_cpu_at(sc->llc, hint - 1);
	if (cpu < 0 || !sis_allowed(p, cpu))
		return false;
	sc->probes++;
	if (core_is_idle(cpu) && claim_cpu(cpu)) {
		sc->idle_cpu = cpu;
		return true;
	}
	s = idle_sibling(p, cpu, true);
	if (s < 0)
		return false;
	sc->idle_cpu = s;
	return true;
}

/*
 * The SIS scan over @llc's filter ∩ p->cpus_ptr, wrapping around from the
 * position after @target. The scan rules:
 *  - with the has_idle_cores hint, the filter modes probe the hinted core
 *    (scan_hinted_core), then scan as below; linear mode looks for a fully
 *    idle core over the whole LLC (an idle thread of a busy core is the
 *    fallback), as CFS does;
 *  - in full mode every scan checks each candidate's SMT siblings (true
 *    negatives) and removes the candidate when its whole core is busy: the
 *    proposal did so only after a failed scan of the same waker, and random
 *    wakers rarely repeat, so hidden idle threads and stale bits piled up;
 *  - in filter mode probe the candidate itself; a busy one stays (lazy);
 *  - afterwards: a failed full idle-core search resets the filter; any other
 *    failed scan, unless a full-mode one that went all the way (it removed
 *    what was stale), marks @target fail-prone.
 */
__noinline int sis_scan(struct task_struct *p __arg_trusted, s32 target, u32 llc,
				 struct scan_result *res)
{
	struct llc_topo *lt = llc_topo(llc);
	struct llc_ctx *l = llc_ctx(llc);
	struct cpu_topo *tt = cpu_topo(target);
	struct cpu_ctx *tc = cpu_ctx(target);
	struct scan_ctx *sc;
	u32 zero = 0, n, i;

	if (!res)
		return -1;
	res->cpu = -1;
	res->probes = 0;
	res->full = false;
	res->fail_prone = false;
	sc = bpf_map_lookup_elem(&scan_ctx_map, &zero);
	if (!sc || !lt || !l || !tc || !lt->nr_cpus || lt->nr_cpus > SIS_MAX_LLC_CPUS)
		return -1;

	n = lt->nr_cpus;
	sc->llc = llc;
	sc->use_filter = sis_mode != SIS_MODE_LINEAR;
	sc->has_idle_core = smt_enabled && READ_ONCE(l->has_idle_cores);
	sc->core_search = sc->has_idle_core;
	sc->fail_prone = 0;
	/* the idle-core search consumes the flag too */
	if (sis_mode == SIS_MODE_FULL && READ_ONCE(tc->fail_prone))
		sc->fail_prone = __sync_val_compare_and_swap(&tc->fail_prone, 1, 0) == 1;
	if (sc->has_idle_core)
		sc->fail_prone = 0;
	sc->scan_sibling = sis_mode == SIS_MODE_FULL;
	sc->nr = scan_depth(n, READ_ONCE(l->nr_busy)) + 1;
	sc->start = (tt && tt->llc == llc) ? tt->llc_pos + 1 : 0;
	if (sc->start >= n)
		sc->start = 0;
	sc->from = sc->start;
	sc->end = n;
	sc->seg = 0;
	sc->probes = 0;
	sc->idle_cpu = -1;
	sc->full = 0;
	sc->found = 0;

	stat_inc(STAT_SCAN);
	llc_stat_inc(llc, LLC_STAT_SCAN);
	if (sc->fail_prone)
		stat_inc(STAT_FAILPRONE_SCAN);

	if (sc->has_idle_core && sc->use_filter) {
		/* the hint is used up either way: the idle path sets it again */
		sc->has_idle_core = 0;
		if (scan_hinted_core(p, sc, READ_ONCE(l->has_idle_cores)))
			sc->found = 1;
		WRITE_ONCE(l->has_idle_cores, 0);
	}

	/* an empty filter has no candidate: the walk would go all the way for none */
	if (sc->use_filter && !sc->found && filter_empty(llc, n))
		sc->full = 1;
	/* each step consumes a candidate or a segment: n + 2 bound it */
	bpf_for(i, 0, SIS_MAX_LLC_CPUS + 2) {
		if (sc->found || sc->full || scan_step(p, sc))
			break;
	}

	res->probes = sc->probes;
	res->full = sc->full;
	res->fail_prone = sc->fail_prone;
	stat_add(STAT_SCAN_PROBE, sc->probes);
	llc_stat_add(llc, LLC_STAT_PROBE, sc->probes);

	if (!sc->found && sc->has_idle_core) {
		/*
		 * Linear mode's search for a fully idle core failed: the hint goes
		 * even when an idle thread of a busy core serves, or every later
		 * wakeup would repeat the full search.
		 */
		WRITE_ONCE(l->has_idle_cores, 0);
		if (sc->idle_cpu >= 0 && claim_cpu(sc->idle_cpu))
			sc->found = 1;
	}
	if (sc->found)
		goto found;

	/*
	 * A failed full scan that began with the idle-core hint resets the
	 * filter; a failed full-mode full scan already removed what was stale.
	 */
	if (sc->full && sc->core_search && sc->use_filter)
		filter_reset(llc);
	/*
	 * The waker's CPU probably fails again: marked fail-prone, as the
	 * proposal has it. Full mode checks siblings in every scan already, so
	 * the mark only labels the next scan (stats, the bench's path split).
	 */
	if (sis_mode == SIS_MODE_FULL)
		WRITE_ONCE(tc->fail_prone, 1);
	stat_inc(STAT_SCAN_FAIL);
	llc_stat_inc(llc, LLC_STAT_SCAN_FAIL);
	return -1;

found:
	res->cpu = sc->idle_cpu;
	stat_inc(STAT_SCAN_SUCCESS);
	llc_stat_inc(llc, LLC_STAT_SCAN_SUCCESS);
	return sc->idle_cpu;
}

/*
 * The first CPU of @llc idle by record other than @self (-1: any) and, when
 * @p is given, allowed for it; or -1. Shared by the oracle and the stealer kicks.
 */
static __always_inline s32 llc_first_idle(u32 llc, s32 self, struct task_struct *p)
{
	struct llc_topo *lt = llc_topo(llc);
	u32 pos;

	if (!lt)
		return -1;
	bpf_for(pos, 0, SIS_MAX_LLC_CPUS) {
		s32 cpu;

		if (pos >= lt->nr_cpus)
			break;
		cpu = llc_cpu_at(llc, pos);
		if (cpu >= 0 && cpu != self && cpu_is_idle(cpu) && (!p || sis_allowed(p, cpu)))
			return cpu;
	}
	return -1;
}

/*
 * Missed idle, judged by the state of record: an allowed CPU of @llc is
 * idle although the scan found nothing. Telemetry only.
 */
__noinline int missed_idle_by_record(struct task_struct *p __arg_trusted, u32 llc)
{
	return llc_first_idle(llc, -1, p) >= 0;
}

/*
 * The record misses idle entries made while sched_ext bypasses the BPF
 * scheduler (around an attach): ops.update_idle is not called then, while
 * ops.running is. A CPU that ran a task in that window and has idled since
 * stays busy by record: no stealer kick reaches it (CI saw a CPU idle for 4 s
 * beside one with two spinners) and its LLC's nr_busy counts it. So, where
 * the kernel keeps its idle mask, a busy CPU's tick now and then
 * (filter_heal_due) checks one other CPU of its LLC, round robin, and one
 * idle by that mask and busy by record is put back (filter_heal). A heal
 * that races the CPU's wakeup leaves it idle by record while it runs, until
 * its first tick (reconcile_busy).
 */

/*
 * This tick of @cpu checks another CPU: one in SIS_HEAL_EVERY. The check
 * reads the kernel's mask through three kfunc calls, and a tick runs cold
 * after a switch (under TCG that put it at a third of the tick's time); a
 * CPU left unhealed waits tens of ms more, against the seconds it waited
 * before the heal.
 */
static __always_inline bool filter_heal_due(s32 cpu)
{
	struct cpu_ctx *c = cpu_ctx(cpu);

	if (!c || ++c->heal_ticks < SIS_HEAL_EVERY)
		return false;
	c->heal_ticks = 0;
	return true;
}

/* The CPU of @cpu's LLC that @cpu's tick checks next (never @cpu), or -1. */
static __always_inline s32 filter_heal_pick(s32 cpu)
{
	struct cpu_topo *t = cpu_topo(cpu);
	struct cpu_ctx *c = cpu_ctx(cpu);
	struct llc_topo *lt;
	u32 pos;

	if (!t || !c || !(lt = llc_topo(t->llc)) || lt->nr_cpus < 2)
		return -1;
	pos = c->heal_pos + 1;
	if (pos >= lt->nr_cpus)
		pos = 0;
	if (pos == t->llc_pos)
		pos = pos + 1 < lt->nr_cpus ? pos + 1 : 0;
	c->heal_pos = pos;
	return llc_cpu_at(t->llc, pos);
}

/* @cpu is idle by the kernel's mask: make the record say so. True if it did not. */
__noinline int filter_heal(s32 cpu)
{
	struct cpu_ctx *c = cpu_ctx(cpu);

	if (!c || READ_ONCE(c->idle))
		return false;
	filter_cpu_idle(cpu);
	stat_inc(STAT_IDLE_HEALED);
	return true;
}

/* Start state: every CPU idle by record and in the filter at core granule. */
__noinline int filter_init_cpu(s32 cpu)
{
	struct cpu_topo *t = cpu_topo(cpu);
	struct cpu_ctx *c = cpu_ctx(cpu);
	struct llc_ctx *l;
	u64 *w;

	if (!t || !c || !t->nr_siblings || !(l = llc_ctx(t->llc)))
		return 0;
	if (!l->gen)
		l->gen = 1;
	c->idle = 1;
	c->busy = 0;
	c->heal_pos = t->llc_pos;
	c->heal_ticks = 0;
	c->fail_prone = 0;
	c->filter_gen = 0;
	/* every core is idle: the hint may name the first */
	if (smt_enabled)
		l->has_idle_cores = 1;
	/* the first thread stands for the core */
	if (t->siblings[0] == (u32)cpu && (w = filter_word(t->llc, t->llc_pos))) {
		*w |= 1ULL << (t->llc_pos & 63);
		c->filter_gen = l->gen;
	}
	return 0;
}

#endif /* __SIS_IDLE_FILTER_BPF_H */
