#!/usr/bin/env python3
"""Instructions per unit of work by kernel function and BPF program, per scheduler, from a
`run.sh --prof` boot (the plugin's prof=1 files, the guest's symbols):
  profile.py PLUGIN_OUT GUEST_OUT KSYMS_DIR [TOP]
Per scheduler (mean of its runs): the total, the scheduler's share (functions whose names say
scheduling: SCHED below, a name list, so a heuristic), BPF programs by name, BPF trampolines and
dispatchers; the bound a scheduler that costs nothing would reach against the first scheduler;
then the TOP functions by their largest difference from the first scheduler."""
import bisect, collections, os, re, statistics as st, sys

SCHED = re.compile(
    r'^(__?schedule|schedule(_.*)?|preempt_schedule.*|.*_fair|.*_scx|scx_.*|.*_dl|.*_rt|.*_idle|'
    r'pick_(next|task|eevdf).*|put_prev_.*|set_next_.*|__?enqueue_.*|__?dequeue_.*|update_curr.*|update_load_.*|update_.*load_avg.*|update_se|'
    r'update_cfs_.*|__update_load_.*|update_rq_clock.*|update_min_vruntime|update_entity_.*|'
    r'place_entity|reweight_.*|avg_vruntime.*|entity_.*|vruntime_.*|'
    r'ttwu_.*|try_to_wake_up|wake_up_process|wake_up_q|wake_q_.*|select_task_rq.*|wake_up_new_task|'
    r'check_preempt.*|wakeup_preempt.*|resched_.*|__resched_.*|sched_.*|__sched_.*|'
    r'finish_task_switch.*|__switch_to.*|switch_mm.*|context_switch|prepare_task_switch|'
    r'psi_.*|cpuacct_.*|cgroup_account_.*|__cgroup_account_.*|account_.*|'
    r'raw_spin_rq_.*|_raw_spin_rq_.*|double_rq_.*|task_rq_lock|__task_rq_lock|rq_.*|'
    r'activate_task|deactivate_task|move_queued_task|migrate_.*|set_task_cpu|'
    r'balance_.*|newidle_.*|do_idle|cpu_startup_entry|hrtick.*|task_tick.*|'
    r'dispatch_.*|direct_dispatch|do_enqueue_task|consume_(local|remote|dispatch).*|move_.*_to_.*dsq.*|kick_cpus.*|'
    r'process_ddsp.*|find_.*dsq.*|local_dsq_.*|task_can_run_on_.*|ops_.*|run_deferred|'
    r'bpf_scx_.*|__bpf_prog_enter.*|__bpf_prog_exit.*|bpf_task_storage_.*|bpf_local_storage_.*|'
    r'bpf_iter_scx_.*|bpf_cpumask_.*|bpf_ktime_.*|bpf_get_smp_.*|bpf_map_.*|'
    r'__traceiter_sched_.*|perf_trace_sched_.*|trace_event_raw_event_sched_.*)$')


def symbols(path):
    out = []
    if os.path.exists(path):
        for l in open(path):
            w = l.split()
            if len(w) >= 3:
                out.append((int(w[0], 16), w[2]))
    return out


def main():
    plugin, guest, ksyms = sys.argv[1:4]
    top = int(sys.argv[4]) if len(sys.argv) > 4 else 40
    kern = symbols(os.path.join(ksyms, 'kallsyms'))
    runs = collections.defaultdict(list)
    for l in open(guest):
        m = re.match(r'run (\S+) round \d+ mark (\d+) lo_bytes (\d+) .* mbs \S+(?: msgs (\d+))?', l)
        if not m:
            continue
        end = int(m[2]) + 1
        prof = f'{plugin}.prof.{end}'
        if not os.path.exists(prof):
            continue
        units = int(m[4]) / 1e3 if m[4] else int(m[3]) / 1e6
        syms = sorted(kern + symbols(os.path.join(ksyms, f'bpf.{end}')))
        addrs = [a for a, _ in syms]
        per = collections.Counter()
        for l2 in open(prof):
            a, n = l2.split()
            a = int(a, 16)
            i = bisect.bisect_right(addrs, a) - 1
            name = syms[i][1] if i >= 0 else '?'
            if name.startswith('bpf_prog_'):
                # bpf_prog_<tag>_<name>: one name across builds and boots
                name = 'bpf:' + name.split('_', 3)[-1]
            elif name.startswith(('bpf_trampoline_', 'bpf_dispatcher_')):
                name = 'bpf:trampolines'
            per[name] += int(n) / units
        runs[m[1]].append(per)
    if not runs:
        sys.exit('profile.py: no prof files for the runs in ' + guest)
    unit = 'per 1000 msgs' if 'msgs' in open(guest).read() else 'per MB of loopback'
    mean = {}
    for s, rs in runs.items():
        names = set().union(*rs)
        mean[s] = {n: st.mean(r.get(n, 0) for r in rs) for n in names}
    scheds = list(mean)
    print(f'instructions {unit} (kernel and module area; mean of each scheduler\'s runs)')
    print(f"{'':28s}" + ''.join(f'{s:>14s}' for s in scheds))

    def row(label, f):
        print(f'{label:28s}' + ''.join(f'{f(mean[s]):14.0f}' for s in scheds))
    row('total', lambda m: sum(m.values()))
    row('  scheduling (by name)', lambda m: sum(v for n, v in m.items() if n.startswith('bpf:') or SCHED.match(n)))
    row('    of which BPF programs', lambda m: sum(v for n, v in m.items() if n.startswith('bpf:') and n != 'bpf:trampolines'))
    row('    of which trampolines', lambda m: m.get('bpf:trampolines', 0))
    row('  the rest', lambda m: sum(v for n, v in m.items() if not (n.startswith('bpf:') or SCHED.match(n))))
    # the most a scheduler could gain on work alone: the first one's, without its scheduling
    b = mean[scheds[0]]
    bt = sum(b.values())
    bs = sum(v for n, v in b.items() if n.startswith('bpf:') or SCHED.match(n))
    print(f'\n{scheds[0]} without its scheduling: {bt - bs:.0f}, a bound of x{bt / (bt - bs):.3f} '
          'on speed from fewer instructions (at equal idle time)')
    print(f"\nruns: {', '.join(f'{s} {len(runs[s])}' for s in scheds)}")
    print('\nBPF programs')
    progs = sorted({n for m in mean.values() for n in m if n.startswith('bpf:')},
                   key=lambda n: -max(m.get(n, 0) for m in mean.values()))
    for n in progs:
        row('  ' + n[4:], lambda m: m.get(n, 0))
    base = mean[scheds[0]]
    names = {n for m in mean.values() for n in m}
    diff = sorted(names, key=lambda n: -max(abs(m.get(n, 0) - base.get(n, 0)) for m in mean.values()))
    print(f'\nthe {top} functions that differ most from {scheds[0]} (s: scheduling by name)')
    for n in diff[:top]:
        tag = 's' if n.startswith('bpf:') or SCHED.match(n) else ' '
        row(f'{tag} {n[:25]}', lambda m: m.get(n, 0))


if __name__ == '__main__':
    main()
