#!/usr/bin/env python3
"""Imbalance in a migration trace of spinners (pinned.c with PINNED_TRACE).

usage: spread.py CPULIST FROM_S END_S TRACE...
Each TRACE holds 'T CPU' lines: the spinner found itself on CPU at time T. Spinners never
sleep, so a CPU of CPULIST with no spinner while another CPU holds two or more is a CPU idle
while work waits. From FROM_S seconds after the first event to END_S seconds after it, prints
  imbalanced_ms=X longest_ms=Y at_s=Z switches=N
X: total time in that state, Y: its longest stretch, Z: when that began (s after the first event).
"""
import sys


def cpulist(s):
    cpus = set()
    for part in s.split(","):
        a, _, b = part.partition("-")
        cpus.update(range(int(a), int(b or a) + 1))
    return cpus


def main():
    cpus, start, end, paths = cpulist(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), sys.argv[4:]
    events = []
    for i, path in enumerate(paths):
        with open(path) as f:
            for line in f:
                t, cpu = line.split()
                events.append((float(t), i, int(cpu)))
    if not events:
        print("imbalanced_ms=-1 longest_ms=-1 at_s=0 switches=0")
        return
    events.sort()
    t0 = events[0][0]
    lo, hi = t0 + start, t0 + end
    where = {}
    total = longest = 0.0
    began = None
    at = 0.0

    def imbalanced():
        count = {c: 0 for c in cpus}
        for c in where.values():
            count[c] = count.get(c, 0) + 1
        return len(where) == len(paths) and min(count[c] for c in cpus) == 0 and max(count.values()) >= 2

    def close(t):
        nonlocal total, longest, began, at
        if began is None:
            return
        a, b = max(began, lo), min(t, hi)
        if b > a:
            total += b - a
            if b - a > longest:
                longest, at = b - a, a - t0
        began = None

    for t, i, cpu in events:
        where[i] = cpu
        now_bad = imbalanced()
        if now_bad and began is None:
            began = t
        elif not now_bad:
            close(t)
    close(hi)
    print(f"imbalanced_ms={total * 1e3:.0f} longest_ms={longest * 1e3:.0f} at_s={at:.2f} switches={len(events)}")


if __name__ == "__main__":
    main()
