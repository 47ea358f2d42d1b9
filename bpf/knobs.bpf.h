/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Live knob changes (`scx_sis set`, `scx_sis top --control`). The knobs are
 * writable globals of the mechanism files (sis_mode, steal_mode, steal_scope,
 * oracle_every, slice_ns) that the loader writes through the mmapped .data;
 * most take effect at their next read. This file holds what a change needs
 * beyond the write, run by the loader through BPF_PROG_TEST_RUN, and the
 * hidden test knob inject_error.
 */
#ifndef __SIS_KNOBS_BPF_H
#define __SIS_KNOBS_BPF_H

#include "topology.bpf.h"
#include "idle_filter.bpf.h"

/*
 * Leaving linear mode: the filters were not kept meanwhile (stale bits, and
 * cached generations that skip the idle-path set), so rebuild every LLC's
 * from the state of record, as after a failed full scan.
 */
SEC("syscall")
int sis_filter_rebuild(void *ctx)
{
	u32 llc;

	bpf_for(llc, 0, nr_llcs)
		filter_reset(llc);
	return 0;
}

/*
 * Hidden test knob (`scx_sis set inject-error=1`): an error exit on demand, so
 * the VM tests can see the kernel eject scx_sis (SCX_EXIT_ERROR_BPF, with its
 * debug dump) and what the loader prints then (tests/vm/guest/faults.sh).
 * In .data with the other knobs although 0; costs one read per tick.
 */
u32 inject_error SEC(".data") = 0;

static __always_inline void tick_inject_error(void)
{
	if (inject_error)
		scx_bpf_error("error injected by scx_sis set inject-error=1 (a test of the exit path)");
}

#endif /* __SIS_KNOBS_BPF_H */
