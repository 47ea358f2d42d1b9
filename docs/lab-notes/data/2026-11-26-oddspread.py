#!/usr/bin/env python3
# N*k+1 hogs on N CPUs (argv: per-CPU count, window s): each hog's CPU time over the window, as a
# share of the mean. Machine-wide fairness when the count does not divide: ideal min/mean = 1.
import os, subprocess, time, sys
n = os.cpu_count(); per = int(sys.argv[1]); win = float(sys.argv[2])
hogs = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(n * per + 1)]
tck = os.sysconf("SC_CLK_TCK")
def cpu(p):
    f = open(f"/proc/{p.pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / tck
time.sleep(1.0)
a = [cpu(p) for p in hogs]; time.sleep(win); b = [cpu(p) for p in hogs]
for h in hogs: h.kill()
for h in hogs: h.wait()
d = [y - x for x, y in zip(a, b)]; m = sum(d) / len(d)
print(f"hogs {len(d)} mean_s {m:.2f} min/mean {min(d)/m:.3f} max/mean {max(d)/m:.3f}")
print("shares: " + " ".join(f"{x/m:.2f}" for x in sorted(d)))
print(f"metric: {min(d)/m:.3f}")
