/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Time spent taking runqueue locks (the bench's --lock-time): every rq lock
 * the kernel takes goes through raw_spin_rq_lock_nested (rq_lock,
 * task_rq_lock, double_rq_lock, sched_ext's moves between local DSQs), so
 * its entry to exit is the wait for the lock plus a few instructions. Split
 * by whose rq it is: a remote one is what cross-CPU moves and wakeups pay,
 * and where one CPU waits while another holds its rq. Per-CPU sums, read and
 * added up by user space. A tracing program: nothing of sched_ext, so it
 * loads under any scheduler, the fair class included.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

char _license[] SEC("license") = "GPL";

struct rq_lock_sum {
	__u64 local_ns;
	__u64 local_n;
	__u64 remote_ns;
	__u64 remote_n;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct rq_lock_sum);
	__uint(max_entries, 1);
} rq_lock_sums SEC(".maps");

/* when this CPU entered the lock: rq locks are taken with interrupts off, so they never nest here */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 1);
} rq_lock_start SEC(".maps");

SEC("fentry/raw_spin_rq_lock_nested")
int BPF_PROG(rq_lock_enter, struct rq *rq, int subclass)
{
	__u32 zero = 0;
	__u64 *t = bpf_map_lookup_elem(&rq_lock_start, &zero);

	if (t)
		*t = bpf_ktime_get_ns();
	return 0;
}

SEC("fexit/raw_spin_rq_lock_nested")
int BPF_PROG(rq_lock_exit, struct rq *rq, int subclass)
{
	__u32 zero = 0;
	__u64 *t = bpf_map_lookup_elem(&rq_lock_start, &zero), dt;
	struct rq_lock_sum *s = bpf_map_lookup_elem(&rq_lock_sums, &zero);

	if (!t || !s || !*t)
		return 0;
	dt = bpf_ktime_get_ns() - *t;
	*t = 0;
	if (BPF_CORE_READ(rq, cpu) == (int)bpf_get_smp_processor_id()) {
		s->local_ns += dt;
		s->local_n++;
	} else {
		s->remote_ns += dt;
		s->remote_n++;
	}
	return 0;
}
