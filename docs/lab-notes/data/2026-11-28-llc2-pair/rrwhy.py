import sys, re, collections
ev = []
for line in sys.stdin:
    m = re.match(r'\s*(.+?)\s+(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+(\S+):\s+(.*)', line)
    if m:
        ev.append((m.group(1).strip(), int(m.group(2)), int(m.group(3)), float(m.group(4)), m.group(5).split(':')[-1], m.group(6)))
last = {}   # net* comm -> cpu it last switched in on
shown = 0
kinds = collections.Counter()
for i, (comm, pid, cpu, t, e, tr) in enumerate(ev):
    if e == 'sched_switch':
        nc = re.search(r'next_comm=(\S+)', tr).group(1)
        if nc.startswith('net'):
            last[nc] = cpu
    if e == 'sched_migrate_task':
        c = re.search(r'comm=(\S+)', tr).group(1)
        if not c.startswith('net'):
            continue
        dst = int(re.search(r'dest_cpu=(\d+)', tr).group(1))
        other = [v for k, v in last.items() if k != c]
        together = bool(other) and other[0] == dst
        kinds[(c, 'onto the other net task CPU' if together else 'apart', 'by ' + comm[:12])] += 1
        if together and shown < 12:
            shown += 1
            print('--- %s migrates to cpu %d (by %s on cpu %d)' % (c, dst, comm, cpu))
            for x in ev[max(0, i - 8):i + 2]:
                print('   %-14s [%d] %.6f %s %s' % (x[0][:14], x[2], x[3], x[4], x[5][:150]))
print('migrations of net*:', dict(kinds))
