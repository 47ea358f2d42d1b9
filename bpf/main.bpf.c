/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_sis: wiring of the sched_ext ops. The mechanisms live one per file:
 *   topology.bpf.h     cached domain shortcuts (seed 001)
 *   idle_filter.bpf.h  SIS_CORE idle filter, fail-prone scans (seeds 000, 003)
 *   overload.bpf.h     overloaded-CPU map (seed 004)
 *   steal.bpf.h        steal-on-idle from overloaded CPUs (seed 004)
 *   stats.bpf.h        per-CPU counters
 *   llc_stats.bpf.h    per-CPU counters by LLC
 *   knobs.bpf.h        live changes of the writable knobs (scx_sis set)
 * and the wakeup paths (seed 001) are here: ttwu vs fork/exec.
 *
 * Queueing: one vtime-ordered user DSQ per CPU (DSQ id = CPU id), weighted
 * fair by p->scx.weight, bounded slice.
 */
#include <scx/common.bpf.h>
#include "intf.h"
#include "topology.bpf.h"
#include "stats.bpf.h"

static __always_inline bool sis_allowed(const struct task_struct *p, s32 cpu)
{
	return bpf_cpumask_test_cpu(cpu, p->cpus_ptr);
}

static __always_inline bool sis_claim_builtin(s32 cpu)
{
	return scx_bpf_test_and_clear_cpu_idle(cpu);
}

#include "idle_filter.bpf.h"
#include "overload.bpf.h"
#include "steal.bpf.h"
#include "knobs.bpf.h"

char _license[] SEC("license") = "GPL";

UEI_DEFINE(uei);

u64 slice_ns = SIS_DFL_SLICE_NS;	/* writable: `scx_sis set slice-us=` */

/* Largest vtime seen running: new and waking tasks start near it. */
static u64 vtime_now;

struct task_ctx {
	s32 recent_cpu;		/* prev of the wakeup before last (CFS's recent_used_cpu) */
	u32 exec_pending;	/* exec'd since its last placement */
	u32 sync_placed;	/* queued on its waker's CPU, which is about to idle */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_ctx);
} task_ctx_stor SEC(".maps");

static __always_inline struct task_ctx *lookup_task_ctx(struct task_struct *p)
{
	return bpf_task_storage_get(&task_ctx_stor, p, 0, 0);
}

/*
 * Missed idle: the scan of @llc failed while an allowed CPU there was idle by
 * the oracle (the kernel's idle mask when kept, else the state of record).
 */
__noinline int missed_idle(struct task_struct *p __arg_trusted, u32 llc)
{
	const struct cpumask *idle;
	struct llc_topo *lt;
	bool missed = false;
	u32 pos;

	if (!builtin_idle)
		return missed_idle_by_record(p, llc);
	lt = llc_topo(llc);
	if (!lt)
		return false;
	idle = scx_bpf_get_idle_cpumask();
	bpf_for(pos, 0, SIS_MAX_LLC_CPUS) {
		s32 cpu;

		if (pos >= lt->nr_cpus)
			break;
		cpu = llc_cpu_at(llc, pos);
		if (cpu >= 0 && bpf_cpumask_test_cpu(cpu, idle) && sis_allowed(p, cpu)) {
			missed = true;
			break;
		}
	}
	scx_bpf_put_idle_cpumask(idle);
	return missed;
}

/* Check 1 failed scan in oracle_every (a power of two; 0: never) against the oracle. */
u32 oracle_every = SIS_DFL_ORACLE_EVERY;	/* writable: `scx_sis set oracle-every=` */

/*
 * The oracle walks the LLC, as costly as the linear scan the filter avoids,
 * so it only samples failed scans: recall is estimated from the sample.
 */
static __always_inline bool oracle_sampled(void)
{
	u32 idx = STAT_SCAN_FAIL;
	u64 *fails;

	if (!oracle_every)
		return false;
	fails = bpf_map_lookup_elem(&stats, &idx);	/* this CPU's count, this failure included */
	return fails && !(*fails & (oracle_every - 1));
}

static __always_inline s32 scan_llc(struct task_struct *p, s32 target, u32 llc)
{
	struct scan_result res;
	s32 cpu;

	cpu = sis_scan(p, target, llc, &res);
	if (cpu < 0 && oracle_sampled()) {
		stat_inc(STAT_SCAN_ORACLE);
		llc_stat_inc(llc, LLC_STAT_ORACLE);
		if (missed_idle(p, llc)) {
			stat_inc(STAT_SCAN_MISSED);
			llc_stat_inc(llc, LLC_STAT_MISSED);
		}
	}
	return cpu;
}

/* @a has fewer busy CPUs than @b by the incrementally kept nr_busy. */
static __always_inline bool llc_less_loaded(s32 a, s32 b)
{
	struct llc_ctx *la, *lb;

	if (a < 0 || b < 0 || !(la = llc_ctx(a)) || !(lb = llc_ctx(b)))
		return false;
	return READ_ONCE(la->nr_busy) < READ_ONCE(lb->nr_busy);
}

/* Least loaded LLC by the incrementally kept nr_busy; @prev's LLC wins ties. */
static __always_inline s32 idlest_llc(s32 prev)
{
	s32 best = cpu_llc(prev), best_busy = 0x7fffffff, i;
	struct llc_ctx *l;

	if (best >= 0 && (l = llc_ctx(best)))
		best_busy = READ_ONCE(l->nr_busy);
	bpf_for(i, 0, nr_llcs) {
		l = llc_ctx(i);
		if (l && READ_ONCE(l->nr_busy) < best_busy) {
			best = i;
			best_busy = READ_ONCE(l->nr_busy);
		}
	}
	return best;
}

/* fork/exec: no cache to be affine to; place by load on the idlest LLC. */
__noinline int select_fork_exec(struct task_struct *p __arg_trusted, s32 prev, bool *idle)
{
	s32 llc = idlest_llc(prev), cpu;

	if (!idle)
		return prev;
	stat_inc(STAT_WAKE_FORK_EXEC);
	if (llc < 0)
		return prev;
	/* the scan starts after its target and marks it fail-prone: one of that LLC */
	cpu = scan_llc(p, cpu_llc(prev) == llc ? prev : llc_cpu_at(llc, 0), llc);
	if (cpu >= 0) {
		*idle = true;
		return cpu;
	}
	return prev;
}

/*
 * ttwu (select_idle_sibling's order): the wake-affine target or prev if idle
 * and cache-affine; the waker's CPU on a sync wakeup when it is about to
 * idle; a recently used CPU; then the LLC scan around the target.
 */
__noinline int select_ttwu(struct task_struct *p __arg_trusted, s32 prev, u64 wake_flags,
				    bool *idle)
{
	s32 this = bpf_get_smp_processor_id(), target = prev, recent, cpu, llc;
	bool sync = wake_flags & bpf_core_enum_value(enum scx_wake_flags, SCX_WAKE_SYNC);
	struct task_ctx *tctx = lookup_task_ctx(p);

	if (!idle)
		return prev;
	/*
	 * wake-affine: pull toward the waker only across LLCs, when allowed, and
	 * when the waker's LLC is the less loaded one: pulling blindly under
	 * overload piles wakees onto their wakers' CPUs.
	 */
	if (this != prev && !cpus_share_llc(this, prev) && sis_allowed(p, this) &&
	    !cpu_is_idle(prev) && llc_less_loaded(cpu_llc(this), cpu_llc(prev)))
		target = this;

	if (claim_cpu(target)) {
		stat_inc(STAT_WAKE_PREV);
		goto idle;
	}
	if (target != prev && cpus_share_llc(prev, target) && claim_cpu(prev)) {
		target = prev;
		stat_inc(STAT_WAKE_PREV);
		goto idle;
	}

	/* the waker goes to sleep and leaves its CPU, with a warm cache, to us */
	if (sync && sis_allowed(p, this) && !scx_bpf_dsq_nr_queued(this) &&
	    !scx_bpf_dsq_nr_queued(SCX_DSQ_LOCAL) &&
	    !(bpf_get_current_task_btf()->flags & PF_EXITING)) {
		stat_inc(STAT_WAKE_SYNC);
		if (tctx)
			tctx->sync_placed = 1;
		return this;
	}

	recent = tctx ? tctx->recent_cpu : -1;
	if (tctx)
		tctx->recent_cpu = prev;
	if (recent >= 0 && recent != prev && recent != target &&
	    cpus_share_llc(recent, target) && sis_allowed(p, recent) && claim_cpu(recent)) {
		target = recent;
		stat_inc(STAT_WAKE_RECENT);
		goto idle;
	}

	llc = cpu_llc(target);
	if (llc >= 0) {
		cpu = scan_llc(p, target, llc);
		if (cpu >= 0) {
			target = cpu;
			stat_inc(STAT_WAKE_SCAN);
			goto idle;
		}
	}
	/* nothing idle: stay where the cache is warm rather than pile on the waker */
	stat_inc(STAT_WAKE_NONE);
	return prev;
idle:
	*idle = true;
	return target;
}

s32 BPF_STRUCT_OPS(sis_select_cpu, struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	struct task_ctx *tctx = lookup_task_ctx(p);
	bool is_idle = false, exec = false;
	s32 cpu;

	if (tctx && tctx->exec_pending) {
		tctx->exec_pending = 0;
		exec = true;
	}
	if (exec || (wake_flags & bpf_core_enum_value(enum scx_wake_flags, SCX_WAKE_FORK)))
		cpu = select_fork_exec(p, prev_cpu, &is_idle);
	else
		cpu = select_ttwu(p, prev_cpu, wake_flags, &is_idle);

	if (is_idle) {
		stat_inc(STAT_DIRECT_IDLE);
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, slice_ns, 0);
	}
	return cpu;
}

/*
 * sched_ext never passes WF_EXEC to ops.select_cpu (the core keeps the task
 * on prev), so exec is marked here and placed like fork at its next wakeup.
 */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(sis_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	struct task_ctx *tctx = lookup_task_ctx(p);

	if (tctx)
		tctx->exec_pending = 1;
	return 0;
}

void BPF_STRUCT_OPS(sis_enqueue, struct task_struct *p, u64 enq_flags)
{
	u64 vtime = p->scx.dsq_vtime;
	struct task_ctx *tctx;
	s32 cpu;

	stat_inc(STAT_ENQUEUE);

	/* A per-CPU kthread can run nowhere else: never make it wait behind a DSQ. */
	if (is_pcpu_kthread(p)) {
		stat_inc(STAT_KTHREAD);
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, slice_ns, enq_flags);
		return;
	}

	/* Sleepers keep at most one slice of credit. */
	if (time_before(vtime, vtime_now - slice_ns))
		vtime = vtime_now - slice_ns;

	/*
	 * task_cpu is always allowed here: the core picked it through
	 * select_cpu/fallback, or the task is migration-disabled on it.
	 */
	cpu = scx_bpf_task_cpu(p);
	scx_bpf_dsq_insert_vtime(p, cpu, slice_ns, vtime, enq_flags);

	if (claim_cpu(cpu)) {
		stat_inc(STAT_KICK_IDLE);
		scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
		return;
	}
	/*
	 * Not idle by the mask, but it may be between a dispatch that found
	 * nothing and its idle entry: the kernel skips this kick unless the CPU
	 * is idle or still balancing, so it only closes that lost-wakeup window.
	 */
	if (cpu != bpf_get_smp_processor_id())
		scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
	/*
	 * It waits behind a running task: overloaded, and worth an idle stealer,
	 * unless it was placed on its waker's CPU that is about to idle.
	 */
	tctx = lookup_task_ctx(p);
	if (tctx && tctx->sync_placed) {
		tctx->sync_placed = 0;
		overload_set(cpu);
		return;
	}
	if (overload_set(cpu))
		steal_kick(cpu_llc(cpu), cpu);
}

void BPF_STRUCT_OPS(sis_dispatch, s32 cpu, struct task_struct *prev)
{
	if (scx_bpf_dsq_move_to_local(cpu, 0)) {
		stat_inc(STAT_DISPATCH_LOCAL);
		overload_update(cpu, scx_bpf_dsq_nr_queued(cpu));
		return;
	}
	overload_clear(cpu);

	/* Nothing else wants this CPU: let prev go on with a fresh slice. */
	if (prev && (prev->scx.flags & SCX_TASK_QUEUED)) {
		stat_inc(STAT_KEEP_PREV);
		prev->scx.slice = slice_ns;
		return;
	}

	/* about to go idle */
	steal_task(cpu);
}

void BPF_STRUCT_OPS(sis_tick, struct task_struct *p)
{
	steal_tick(bpf_get_smp_processor_id(), scx_bpf_now(), slice_ns);
}

void BPF_STRUCT_OPS(sis_running, struct task_struct *p)
{
	if (time_before(vtime_now, p->scx.dsq_vtime))
		vtime_now = p->scx.dsq_vtime;
}

void BPF_STRUCT_OPS(sis_stopping, struct task_struct *p, bool runnable)
{
	u64 used = slice_ns - p->scx.slice;

	/* slice can be refilled above slice_ns by the kernel default; clamp */
	if ((s64)used < 0)
		used = 0;
	p->scx.dsq_vtime += scale_by_task_weight_inverse(p, used);
}

void BPF_STRUCT_OPS(sis_enable, struct task_struct *p)
{
	p->scx.dsq_vtime = vtime_now;
}

s32 BPF_STRUCT_OPS(sis_init_task, struct task_struct *p, struct scx_init_task_args *args)
{
	struct task_ctx *tctx;

	tctx = bpf_task_storage_get(&task_ctx_stor, p, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!tctx)
		return -ENOMEM;
	tctx->recent_cpu = -1;
	tctx->exec_pending = 0;
	tctx->sync_placed = 0;
	return 0;
}

void BPF_STRUCT_OPS(sis_exit_task, struct task_struct *p, struct scx_exit_task_args *args)
{
	bpf_task_storage_delete(&task_ctx_stor, p);
}

void BPF_STRUCT_OPS(sis_update_idle, s32 cpu, bool idle)
{
	if (idle)
		filter_cpu_idle(cpu);
	else
		filter_cpu_busy(cpu);
}

s32 BPF_STRUCT_OPS_SLEEPABLE(sis_init)
{
	s32 cpu, ret;

	bpf_for(cpu, 0, nr_cpu_ids) {
		struct cpu_topo *t = cpu_topo(cpu);

		filter_init_cpu(cpu);
		ret = scx_bpf_create_dsq(cpu, t ? (s32)t->node : -1);
		if (ret) {
			scx_bpf_error("failed to create DSQ %d: %d", cpu, ret);
			return ret;
		}
	}
	return 0;
}

void BPF_STRUCT_OPS(sis_exit, struct scx_exit_info *ei)
{
	UEI_RECORD(uei, ei);
}

/*
 * Flags are set by the loader from the running kernel's BTF (never here):
 * a flag this kernel lacks would make the attach fail with -EINVAL.
 */
SCX_OPS_DEFINE(sis_ops,
	       .select_cpu	= (void *)sis_select_cpu,
	       .enqueue		= (void *)sis_enqueue,
	       .dispatch	= (void *)sis_dispatch,
	       .tick		= (void *)sis_tick,
	       .running		= (void *)sis_running,
	       .stopping	= (void *)sis_stopping,
	       .enable		= (void *)sis_enable,
	       .init_task	= (void *)sis_init_task,
	       .exit_task	= (void *)sis_exit_task,
	       .update_idle	= (void *)sis_update_idle,
	       .init		= (void *)sis_init,
	       .exit		= (void *)sis_exit,
	       .timeout_ms	= 5000,
	       .name		= "scx_sis");
