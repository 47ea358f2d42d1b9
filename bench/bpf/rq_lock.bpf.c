/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Time spent taking runqueue locks (the bench's --lock-time): every rq lock
 * the kernel takes goes through raw_spin_rq_lock_nested (rq_lock,
 * task_rq_lock, double_rq_lock, sched_ext's moves between local DSQs), so
 * its entry to exit is the wait for the lock plus a few instructions. Split
 * by whose rq it is: a remote one is what cross-CPU moves and wakeups pay,
 * and where one CPU waits while another holds its rq. Only calls to the
 * function itself are seen: where the compiler inlined it into its callers in
 * kernel/sched/core.c (the wakeup's lock of the wakee's rq, __schedule's own
 * lock), they are not, under any scheduler.
 *
 * So the wait itself is timed too, from every caller: the spinlock's slow
 * path (queued_spin_lock_slowpath, entered on contention only; the lock
 * tracepoints fired nothing in the test VM, where a guest's spinlock can
 * take the virt_spin_lock loop before them), kept when the lock is some CPU's rq
 * lock, split by whether it is the waiting CPU's own, and counted by the
 * waiter's kernel stack (rq_lock_sites): which path waited (a wakeup, a
 * pull, a kick, a balance).
 *
 * Per-CPU sums, read and added up by user space. Tracing programs: nothing
 * of sched_ext, so they load under any scheduler, the fair class included.
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
	/* contended waits for an rq lock, from any caller: the CPU's own, another's */
	__u64 wait_own_ns;
	__u64 wait_own_n;
	__u64 wait_other_ns;
	__u64 wait_other_n;
};

extern struct rq runqueues __ksym __weak;

/* the contended rq lock this CPU waits for */
struct rq_lock_waiting {
	__u64 lock;
	__u64 since;
	__s32 cpu;	/* whose rq */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct rq_lock_waiting);
	__uint(max_entries, 1);
} rq_lock_waiting SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct rq_lock_sum);
	__uint(max_entries, 1);
} rq_lock_sums SEC(".maps");

#define RQ_LOCK_STACK_DEPTH	8

/* a wait's kernel stack, innermost first, zero-filled: enough to name its site */
struct rq_lock_stack {
	__u64 ip[RQ_LOCK_STACK_DEPTH];
};

struct rq_lock_site {
	__u64 n;
	__u64 ns;
};

/* contended waits by stack (keyed by the stack itself: a stack-id map's buckets collide) */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__type(key, struct rq_lock_stack);
	__type(value, struct rq_lock_site);
	__uint(max_entries, 8192);
} rq_lock_sites SEC(".maps");

/* the stack being read: too big for the BPF stack beside the rest */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct rq_lock_stack);
	__uint(max_entries, 1);
} rq_lock_stack_buf SEC(".maps");

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

/* @lock's CPU if it is an rq lock, else -1 */
static __always_inline int rq_of_lock(void *lock)
{
	struct rq *rq = (void *)lock - bpf_core_field_offset(struct rq, __lock);
	int cpu = -1;

	if (!&runqueues)
		return -1;
	if (bpf_probe_read_kernel(&cpu, sizeof(cpu), &rq->cpu) || cpu < 0)
		return -1;
	return bpf_per_cpu_ptr(&runqueues, cpu) == (void *)rq ? cpu : -1;
}

/* an rq lock's wait: not one nested in it (an irq's, on another lock), which is not timed */
SEC("fentry/queued_spin_lock_slowpath")
int BPF_PROG(rq_lock_wait_begin, void *lock, __u32 val)
{
	__u32 zero = 0;
	struct rq_lock_waiting *w = bpf_map_lookup_elem(&rq_lock_waiting, &zero);
	int cpu;

	if (!w || w->lock)
		return 0;
	cpu = rq_of_lock(lock);
	if (cpu < 0)
		return 0;
	w->lock = (__u64)lock;
	w->since = bpf_ktime_get_ns();
	w->cpu = cpu;
	return 0;
}

SEC("fexit/queued_spin_lock_slowpath")
int BPF_PROG(rq_lock_wait_end, void *lock, __u32 val)
{
	__u32 zero = 0;
	struct rq_lock_waiting *w = bpf_map_lookup_elem(&rq_lock_waiting, &zero);
	struct rq_lock_sum *s = bpf_map_lookup_elem(&rq_lock_sums, &zero);
	struct rq_lock_stack *st = bpf_map_lookup_elem(&rq_lock_stack_buf, &zero);
	struct rq_lock_site *site, zero_site = {};
	__u64 dt;

	if (!w || !s || !w->lock || w->lock != (__u64)lock)
		return 0;
	dt = bpf_ktime_get_ns() - w->since;
	w->lock = 0;
	if (w->cpu == (int)bpf_get_smp_processor_id()) {
		s->wait_own_ns += dt;
		s->wait_own_n++;
	} else {
		s->wait_other_ns += dt;
		s->wait_other_n++;
	}
	if (!st)
		return 0;
	__builtin_memset(st, 0, sizeof(*st));
	/* a stack that cannot be read counts under the all-zero one */
	bpf_get_stack(ctx, st->ip, sizeof(st->ip), 0);
	site = bpf_map_lookup_elem(&rq_lock_sites, st);
	if (!site) {
		bpf_map_update_elem(&rq_lock_sites, st, &zero_site, BPF_NOEXIST);
		site = bpf_map_lookup_elem(&rq_lock_sites, st);
	}
	if (site) {
		site->n++;
		site->ns += dt;
	}
	return 0;
}
