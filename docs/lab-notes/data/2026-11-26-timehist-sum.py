#!/usr/bin/env python3
# Sum `perf sched timehist` lines per task name: off-CPU (wait), sch delay, run, switches, CPU changes;
# then one `true`'s whole life, switch by switch.
import sys, collections
agg = collections.defaultdict(lambda: [0, 0.0, 0.0, 0.0, 0])
last_cpu, lives = {}, collections.defaultdict(list)
for line in sys.stdin:
    f = line.split()
    if len(f) < 6 or not f[0][0].isdigit():
        continue
    try:
        name, tid = f[2].rsplit('[', 1); w, d, r = float(f[3]), float(f[4]), float(f[5])
    except (ValueError, IndexError):
        continue
    cpu = f[1]
    a = agg[name]; a[0] += 1; a[1] += w; a[2] += d; a[3] += r
    if tid in last_cpu and last_cpu[tid] != cpu:
        a[4] += 1
    last_cpu[tid] = cpu
    if name == "true":
        lives[tid].append(f"{f[0]} {cpu} w{w:.1f} d{d:.1f} r{r:.1f}")
for name in ("true", "python3", "sh"):
    if name in agg:
        c, w, d, r, m = agg[name]
        print(f"timehist {name}: switches {c} wait_ms {w:.0f} schdelay_ms {d:.0f} run_ms {r:.0f} cpu_changes {m} per-switch wait {w/max(c,1):.2f} delay {d/max(c,1):.2f} run {r/max(c,1):.2f}")
tids = list(lives)
for t in tids[2:4]:
    print(f"life {t}: " + " | ".join(lives[t]))
