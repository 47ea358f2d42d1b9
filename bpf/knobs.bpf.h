/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Live knob changes (`scx_sis set`, `scx_sis top --control`). The knobs are
 * writable globals of the mechanism files (sis_mode, steal_mode, steal_scope,
 * oracle_every, slice_ns) that the loader writes through the mmapped .data;
 * most take effect at their next read. This file holds what a change needs
 * beyond the write, run by the loader through BPF_PROG_TEST_RUN.
 */
#ifndef __SIS_KNOBS_BPF_H
#define __SIS_KNOBS_BPF_H

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

#endif /* __SIS_KNOBS_BPF_H */
