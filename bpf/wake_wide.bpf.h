/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Wake-wide: the fair class's wake_wide() for the ttwu path. A waker that
 * keeps switching between wakees (one producer feeding many consumers:
 * hackbench's senders, a dispatcher thread) gains nothing from pulling each
 * wakee to its own CPU: the pulls only move the wakees back and forth, each
 * move a cross-CPU wakeup and a cold cache. Every task counts its wakee flips
 * (a wakeup of another task than the one it woke last), halved every second;
 * a wakeup is wide when both sides flip at least as often as the waker's LLC
 * has CPUs and one flips that many times more than the other. A wide wakee is
 * not pulled to its waker: it goes to prev, or an idle CPU near it.
 *
 * Owns: struct wakee_flips (in each task's context). Called from: select_ttwu.
 * Needs no sched_ext type.
 */
#ifndef __SIS_WAKE_WIDE_BPF_H
#define __SIS_WAKE_WIDE_BPF_H

#define WAKEE_FLIP_DECAY_NS	1000000000ULL	/* the fair class halves every HZ */

struct wakee_flips {
	u64 decay_at;
	u32 last_wakee;		/* pid */
	u32 flips;
};

/* @w's task (the waker) wakes @wakee at @now */
static __always_inline void wakee_record(struct wakee_flips *w, u32 wakee, u64 now)
{
	if (now >= w->decay_at) {
		w->flips >>= 1;
		w->decay_at = now + WAKEE_FLIP_DECAY_NS;
	}
	if (w->last_wakee != wakee) {
		w->last_wakee = wakee;
		w->flips++;
	}
}

/* @waker_flips / @wakee_flips: the two sides' flips; @llc_cpus: the waker's LLC size */
static __always_inline bool wakeup_is_wide(u32 waker_flips, u32 wakee_flips, u32 llc_cpus)
{
	u32 master = waker_flips, slave = wakee_flips;

	if (master < slave) {
		master = wakee_flips;
		slave = waker_flips;
	}
	return slave >= llc_cpus && master >= slave * llc_cpus;
}

#endif /* __SIS_WAKE_WIDE_BPF_H */
