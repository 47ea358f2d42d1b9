#!/bin/bash
# the sched domains the fair class sees on this rig, and where hackbench's wakeups land
mount -t debugfs none /sys/kernel/debug 2>/dev/null
for d in /sys/kernel/debug/sched/domains/cpu*/domain*; do echo "$d: $(cat $d/name) flags: $(cat $d/flags)"; done
grep . /sys/devices/system/cpu/cpu*/topology/{package_id,die_id,core_id} /sys/devices/system/node/node*/cpulist 2>/dev/null
perf record -q -e sched:sched_wakeup -e sched:sched_migrate_task -a -o /tmp/hb.data -- hackbench -p -g 2 -l 100 2>&1 | tail -n 1
perf script -i /tmp/hb.data -F comm,cpu,event,trace 2>/dev/null | python3 -c '
import sys, re, collections
c = collections.Counter()
for line in sys.stdin:
    m = re.match(r"\s*(.+?)\s+\[(\d+)\]\s+(\S+):\s+(.*)", line)
    if not m: continue
    comm, cpu, ev, tr = m.group(1).strip(), int(m.group(2)), m.group(3), m.group(4)
    if ev.endswith("sched_wakeup"):
        t = int(re.search(r"target_cpu=(\d+)", tr).group(1))
        c[("wakeup", "by " + ("idle" if comm.startswith("swapper") else "task"), "on waker cpu" if t == cpu else "other cpu")] += 1
    elif ev.endswith("sched_migrate_task"):
        c[("migrate",)] += 1
for k, v in sorted(c.items()): print(" ", k, v)
'
