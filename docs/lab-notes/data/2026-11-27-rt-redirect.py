#!/usr/bin/env python3
"""Where a CPU's queue goes when RT takes the CPU (2026-11-27).

2 hogs per CPU, forked by this script; once they settle, a SCHED_FIFO spinner is pinned for 2 s
to the CPU with the most hogs (RT throttling off, restored after). This script samples as
SCHED_FIFO 60, so its timing does not depend on the scheduler under test.
Prints: `pile:` the most hogs on one other CPU 0.2 s after the spinner starts; `metric:` the
least-served hog's share of a CPU over the spinner's first second, in % (the rt VM test's bound
is 15%; 16 hogs on 7 CPUs is 44% each if even).
"""
import os
import signal
import sys
import time

RT_KNOB = "/proc/sys/kernel/sched_rt_runtime_us"


def hog():
    os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    while True:
        pass


def last_cpu(pid):
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[36])


def runtime_ns(pid):
    with open(f"/proc/{pid}/schedstat") as f:
        return int(f.read().split()[0])


def main():
    ncpu = os.cpu_count()
    hogs = []
    for _ in range(2 * ncpu):
        pid = os.fork()
        if pid == 0:
            hog()
        hogs.append(pid)
    saved = open(RT_KNOB).read().strip()
    spin = None
    try:
        time.sleep(1.5)
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(60))
        per_cpu = {}
        for p in hogs:
            c = last_cpu(p)
            per_cpu[c] = per_cpu.get(c, 0) + 1
        n = max(per_cpu, key=lambda c: (per_cpu[c], c))
        with open(RT_KNOB, "w") as f:
            f.write("-1")
        spin = os.fork()
        if spin == 0:
            os.sched_setaffinity(0, {n})
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(50))
            end = time.monotonic() + 2.0
            while time.monotonic() < end:
                pass
            os._exit(0)
        time.sleep(0.02)
        t0 = time.monotonic()
        r0 = {p: runtime_ns(p) for p in hogs}
        time.sleep(0.2)
        after = {}
        for p in hogs:
            c = last_cpu(p)
            after[c] = after.get(c, 0) + 1
        pile = max(v for c, v in after.items() if c != n) if any(c != n for c in after) else 0
        time.sleep(max(0.0, t0 + 1.0 - time.monotonic()))
        win = time.monotonic() - t0
        least = min(runtime_ns(p) - r0[p] for p in hogs)
        print(f"spinner CPU {n} had {per_cpu[n]} hogs; 0.2 s later per CPU: "
              + " ".join(f"{c}:{after.get(c, 0)}" for c in range(ncpu)))
        print(f"pile: {pile}")
        print(f"metric: {100.0 * least / 1e9 / win:.1f}")
    finally:
        if spin:
            os.waitpid(spin, 0)
        with open(RT_KNOB, "w") as f:
            f.write(saved)
        for p in hogs:
            os.kill(p, signal.SIGKILL)
        for p in hogs:
            os.waitpid(p, 0)


if __name__ == "__main__":
    sys.exit(main())
