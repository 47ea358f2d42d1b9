#!/usr/bin/env python3
# fork+exec+wait of /bin/true beside 2 hogs per CPU, with the child's rusage: where the op's time goes
# (child CPU time, voluntary/involuntary switches), and the parent's.
import os, subprocess, time, sys, resource
n = os.cpu_count()
hogs = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(2 * n)]
time.sleep(1.5)
rows = []
end = time.monotonic() + float(sys.argv[1] if len(sys.argv) > 1 else 8)
r0 = resource.getrusage(resource.RUSAGE_SELF)
while time.monotonic() < end or len(rows) < 5:
    t0 = time.monotonic()
    pid = os.posix_spawn("/bin/true", ["/bin/true"], os.environ)
    _, st, ru = os.wait4(pid, 0)
    t2 = time.monotonic()
    rows.append(((t2 - t0) * 1e3, (ru.ru_utime + ru.ru_stime) * 1e3, ru.ru_nvcsw, ru.ru_nivcsw, ru.ru_minflt, ru.ru_majflt))
r1 = resource.getrusage(resource.RUSAGE_SELF)
for h in hogs: h.kill()
for h in hogs: h.wait()
k = len(rows)
m = lambda i: sum(r[i] for r in rows) / k
print(f"ops {k} wall_ms {m(0):.0f} child_cpu_ms {m(1):.1f} child_nvcsw {m(2):.2f} child_nivcsw {m(3):.2f} minflt {m(4):.0f} majflt {m(5):.1f}")
print(f"parent cpu_ms/op {((r1.ru_utime+r1.ru_stime)-(r0.ru_utime+r0.ru_stime))*1e3/k:.1f} nvcsw/op {(r1.ru_nvcsw-r0.ru_nvcsw)/k:.2f} nivcsw/op {(r1.ru_nivcsw-r0.ru_nivcsw)/k:.2f}")
print("ops: " + " ".join(f"{r[0]:.0f}/{r[1]:.0f}/{r[2]}/{r[3]}" for r in rows[:60]))
print(f"metric: {m(0):.1f}")
