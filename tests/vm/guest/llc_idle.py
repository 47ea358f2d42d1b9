#!/usr/bin/env python3
"""Each LLC's idle share while a command runs, and the tasks that waited there.

usage: llc_idle.py COMMAND...
Runs COMMAND (output discarded) between two snapshots of /proc/stat (idle + iowait, USER_HZ)
and /proc/schedstat (per-CPU run_delay: time tasks spent runnable but not running). The LLCs
come from sysfs (cache/index3/shared_cpu_list). Prints
  gap=G idle=I0,I1,... waiting=W0,W1,... wall=S
G: the idlest LLC's idle % minus the busiest one's; I: each LLC's idle %; W: the mean number of
tasks waiting per CPU of each LLC. One LLC idle while the other's tasks wait is a large G with
W > 1 on the busy side: work that could run, not running.
"""
import glob
import os
import subprocess
import sys
import time

from spread import cpulist  # beside this script


def llcs():
    seen = {}
    for path in glob.glob("/sys/devices/system/cpu/cpu[0-9]*/cache/index3/shared_cpu_list"):
        with open(path) as f:
            s = f.read().strip()
        seen[s] = cpulist(s)
    return sorted(seen.values(), key=min)


def snap():
    idle, delay = {}, {}
    with open("/proc/stat") as f:
        for line in f:
            x = line.split()
            if x[0].startswith("cpu") and x[0] != "cpu":
                idle[int(x[0][3:])] = int(x[4]) + int(x[5])
    with open("/proc/schedstat") as f:
        for line in f:
            x = line.split()
            if x[0].startswith("cpu"):
                delay[int(x[0][3:])] = int(x[8])
    return idle, delay, time.monotonic()


def main():
    groups = llcs()
    hz = os.sysconf("SC_CLK_TCK")
    i0, d0, t0 = snap()
    subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    i1, d1, t1 = snap()
    wall = t1 - t0
    idle = [100 * sum(i1[c] - i0[c] for c in g) / hz / (len(g) * wall) for g in groups]
    wait = [sum(d1[c] - d0[c] for c in g) / 1e9 / (len(g) * wall) for g in groups]
    print(f"gap={max(idle) - min(idle):.1f} idle={','.join(f'{x:.1f}' for x in idle)} "
          f"waiting={','.join(f'{x:.2f}' for x in wait)} wall={wall:.2f}")


if __name__ == "__main__":
    main()
