import sys, re, collections
wake = collections.Counter(); sw = collections.Counter(); mig = collections.Counter(); prevst = collections.Counter()
for line in sys.stdin:
    m = re.match(r'\s*(.+?)\s+\[(\d+)\]\s+(\S+):\s+(.*)', line)
    if not m: continue
    comm, cpu, ev, tr = m.group(1), int(m.group(2)), m.group(3), m.group(4)
    if ev.endswith('sched_wakeup'):
        c = re.search(r'comm=(\S+)', tr).group(1); t = int(re.search(r'target_cpu=(\d+)', tr).group(1))
        if c.startswith('net'): wake[(c, 'by ' + comm.strip()[:10], 'same' if t == cpu else 'other')] += 1
    elif ev.endswith('sched_switch'):
        pc = re.search(r'prev_comm=(\S+)', tr).group(1); nc = re.search(r'next_comm=(\S+)', tr).group(1)
        ps = re.search(r'prev_state=(\S+)', tr).group(1)
        sw[(cpu, pc[:10], nc[:10])] += 1
        if pc.startswith('net'): prevst[(pc, ps)] += 1
    elif ev.endswith('sched_migrate_task'):
        c = re.search(r'comm=(\S+)', tr).group(1)
        if c.startswith('net'): mig[c] += 1
print("wakeups (wakee, waker, target cpu vs waker's):")
for k, v in wake.most_common(12): print("  ", k, v)
print("switches (cpu, prev, next):")
for k, v in sw.most_common(12): print("  ", k, v)
print("net* switched out with state:", dict(prevst))
print("migrations:", dict(mig))
