/* Each program runs its operation 2000 times in a loop and returns the mean in 0.1 ns. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
extern u64 scx_bpf_now(void) __ksym __weak;
extern s32 scx_bpf_dsq_nr_queued(u64 dsq_id) __ksym __weak;
#define bpf_for(i, s, e) for (i = (s); i < (e); i++)
#define SCX_DSQ_GLOBAL (1ULL << 63 | 1)
char _license[] SEC("license") = "GPL";
#define N 2000
struct tv { u64 a; };
struct { __uint(type, BPF_MAP_TYPE_TASK_STORAGE); __uint(map_flags, BPF_F_NO_PREALLOC); __type(key, int); __type(value, struct tv); } stor SEC(".maps");
struct { __uint(type, BPF_MAP_TYPE_ARRAY); __uint(max_entries, 64); __type(key, u32); __type(value, struct tv); } arr SEC(".maps");
u64 sink, ctr;
volatile u64 dv = 1000003, dd = 7;
#define BODY(name, expr) SEC("syscall") int name(void *c) { u64 t0 = bpf_ktime_get_ns(), s = 0; u32 i; \
  bpf_for(i, 0, N) { expr; } sink = s; return (bpf_ktime_get_ns() - t0) * 10 / N; }
BODY(m_empty, s += i)
BODY(m_ktime, s += bpf_ktime_get_ns())
BODY(m_now, s += scx_bpf_now())
BODY(m_nrq, s += scx_bpf_dsq_nr_queued(SCX_DSQ_GLOBAL))
BODY(m_div, s += dv / (dd + i))
BODY(m_atomic, __sync_fetch_and_add(&ctr, 1))
BODY(m_arr, { u32 k = i & 63; struct tv *v = bpf_map_lookup_elem(&arr, &k); if (v) s += v->a; })
BODY(m_tstore, { struct tv *v = bpf_task_storage_get(&stor, bpf_get_current_task_btf(), 0, BPF_LOCAL_STORAGE_GET_F_CREATE); if (v) s += v->a; })
BODY(m_cpu, s += bpf_get_smp_processor_id())
