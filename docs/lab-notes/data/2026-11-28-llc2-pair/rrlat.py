import sys, re, statistics as st
pend = {}   # pid -> (t_waking, waker_cpu, t_wakeup, target)
rows = {}
def add(k, v): rows.setdefault(k, []).append(v)
curr = {}  # cpu -> pid running there (0: idle)
busy_after = []
for line in sys.stdin:
    m = re.match(r'\s*(.+?)\s+(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+(\S+):\s+(.*)', line)
    if not m: continue
    comm, pid, cpu, t, ev, tr = m.group(1), int(m.group(2)), int(m.group(3)), float(m.group(4)) * 1e6, m.group(5).split(':')[-1], m.group(6)
    if ev in ('sched_waking', 'sched_wakeup'):
        c = re.search(r'comm=(\S+)', tr).group(1)
        if not c.startswith('net'): continue
        p = int(re.search(r' pid=(\d+)', tr).group(1)); tgt = int(re.search(r'target_cpu=(\d+)', tr).group(1))
        if ev == 'sched_waking':
            pend[p] = [t, cpu, None, tgt, curr.get(tgt, -1) == 0]
        elif p in pend:
            if pend[p][3] != tgt: pend[p][4] = curr.get(tgt, -1) == 0
            pend[p][2] = t; pend[p][3] = tgt
    elif ev == 'sched_switch':
        np_ = int(re.search(r'next_pid=(\d+)', tr).group(1))
        curr[cpu] = np_
        if np_ in pend and pend[np_][2] is not None:
            tw, wc, tu, tgt, idle = pend.pop(np_)
            split = len(sys.argv) > 1 and sys.argv[1] == '--by-target'   # another CPU: idle or busy at the wakeup
            kind = 'same cpu as waker' if tgt == wc else (('other, idle' if idle else 'other, busy') if split else 'other cpu')
            add((kind, 'waking->wakeup'), tu - tw)
            add((kind, 'wakeup->running'), t - tu)
            add((kind, 'waking->running'), t - tw)
def q(v, f): v = sorted(v); return v[min(len(v) - 1, int(f * len(v)))]
for k in sorted(rows):
    v = rows[k]
    print('  %-18s %-16s n=%5d  mean %7.1f  p50 %7.1f  p90 %7.1f us' % (k[0], k[1], len(v), st.mean(v), q(v, .5), q(v, .9)))
