#!/usr/bin/env python3
# fork+exec+wait of /bin/true beside 2 hogs per CPU: each op's latency, and where it goes:
# fork->child's exec done (the child's /proc start time is not fine enough, so the parent times
# spawn() separately from wait()). Prints percentiles and "metric: p90_ms".
import os, subprocess, time, sys
n = os.cpu_count()
hogs = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(2 * n)]
time.sleep(1.5)
spawn, wait, tot = [], [], []
end = time.monotonic() + float(sys.argv[1] if len(sys.argv) > 1 else 8)
while time.monotonic() < end or len(tot) < 5:
    t0 = time.monotonic()
    p = subprocess.Popen(["/bin/true"])   # returns once the child has exec'd (vfork/pipe handshake)
    t1 = time.monotonic()
    p.wait()
    t2 = time.monotonic()
    spawn.append((t1 - t0) * 1e3); wait.append((t2 - t1) * 1e3); tot.append((t2 - t0) * 1e3)
for h in hogs: h.kill()
for h in hogs: h.wait()
def pct(v, q): v = sorted(v); return v[min(len(v) - 1, int(q * len(v)))]
for name, v in (("spawn", spawn), ("wait", wait), ("total", tot)):
    print(f"{name} ms: n {len(v)} p50 {pct(v,.5):.0f} p90 {pct(v,.9):.0f} max {max(v):.0f} mean {sum(v)/len(v):.0f}")
print("ops: " + " ".join(f"{s:.0f}+{w:.0f}" for s, w in zip(spawn, wait)))
print(f"metric: {sum(tot)/len(tot):.1f}")
