/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The hooks: what the mechanism files call but leave to their includer to
 * define. The scheduler (main.bpf.c) defines them over sched_ext; the host
 * tests (sis_test.bpf.c) over test-controlled state, and only those the
 * mechanisms they include call. Static, so a hook a file calls and its
 * includer lacks fails the build.
 *
 * Every other name a mechanism file uses comes from intf.h or the mechanism
 * files it includes itself: the include order of main.bpf.c carries no
 * contract (tests/bpf_headers.rs compiles each file on its own).
 */
#ifndef __SIS_HOOKS_BPF_H
#define __SIS_HOOKS_BPF_H

#include "intf.h"

/* @cpu is in @p->cpus_ptr (idle_filter, balance, group, steal) */
static __always_inline bool sis_allowed(const struct task_struct *p, s32 cpu);

/* claim @cpu through the kernel's built-in idle mask (idle_filter, with builtin_idle) */
static __always_inline bool sis_claim_builtin(s32 cpu);

/* the id of @cgrp's ancestor at @level (cgroup: untracked cgroups charge one) */
static __always_inline u64 cg_ancestor_id(struct cgroup *cgrp, u32 level);

/* the weight @p, queued, adds to its CPU's load: what moving it changes (steal; task storage) */
static __always_inline u32 task_load_weight(struct task_struct *p);

#endif /* __SIS_HOOKS_BPF_H */
