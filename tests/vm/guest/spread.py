#!/usr/bin/env python3
"""Imbalance in a migration trace of spinners (pinned.c with PINNED_TRACE).

usage: spread.py [--sched-switch FILE] CPULIST FROM_S END_S TRACE...
Each TRACE holds 'T CPU' lines: the spinner found itself on CPU at time T. Spinners never
sleep, so a CPU of CPULIST with no spinner while another CPU holds two or more is imbalanced.
From FROM_S seconds after the first event to END_S seconds after it, prints
  imbalanced_ms=X [idle_ms=I idle_longest_ms=L] longest_ms=Y at_s=Z switches=N
X: total time in that state, Y: its longest stretch, Z: when that began (s after the first event).
A CPU without a spinner may be busy with another task (a kernel thread's burst, which TCG
stretches): the spinner it lost waits elsewhere, but nothing idles. --sched-switch FILE (the
sched:sched_switch tracepoint, trace_clock mono as the TRACEs) tells when each CPU ran its idle
task: I is the CPU time the spinner-less CPUs idled while imbalanced, L the most of it within one
stretch: a CPU idle while work waits.
"""
import re
import sys

SWITCH = re.compile(r"\[(\d+)\].*?\s(\d+\.\d+): sched_switch: .*next_pid=(\d+)")


def idle_spans(path):
    """{cpu: [(start, end), ...]}: when each CPU ran its idle task, from sched_switch lines."""
    spans, since = {}, {}
    with open(path, errors="replace") as f:
        for line in f:
            m = SWITCH.search(line)
            if not m:
                continue
            cpu, t, nxt = int(m.group(1)), float(m.group(2)), int(m.group(3))
            if cpu in since:
                spans.setdefault(cpu, []).append((since.pop(cpu), t))
            if nxt == 0:
                since[cpu] = t
    for cpu, t in since.items():
        spans.setdefault(cpu, []).append((t, float("inf")))
    return spans


def idle_within(spans, cpu, a, b):
    return sum(max(0.0, min(e, b) - max(s, a)) for s, e in spans.get(cpu, ()))


def cpulist(s):
    cpus = set()
    for part in s.split(","):
        a, _, b = part.partition("-")
        cpus.update(range(int(a), int(b or a) + 1))
    return cpus


def main():
    args, spans = sys.argv[1:], None
    if args and args[0] == "--sched-switch":
        spans, args = idle_spans(args[1]), args[2:]
    cpus, start, end, paths = cpulist(args[0]), float(args[1]), float(args[2]), args[3:]
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
    total = longest = idle_total = idle_longest = idle_stretch = 0.0
    began = None
    at = 0.0
    prev_t, empty = None, []

    def imbalanced():
        count = {c: 0 for c in cpus}
        for c in where.values():
            count[c] = count.get(c, 0) + 1
        bad = len(where) == len(paths) and min(count[c] for c in cpus) == 0 and max(count.values()) >= 2
        return bad, [c for c in cpus if count[c] == 0] if bad else []

    def idled(t):
        # the spinner-less CPUs' idle time since the last event, inside the window
        nonlocal idle_total, idle_stretch
        if spans is None or prev_t is None:
            return
        a, b = max(prev_t, lo), min(t, hi)
        if b > a:
            d = sum(idle_within(spans, c, a, b) for c in empty)
            idle_total += d
            idle_stretch += d

    def close(t):
        nonlocal total, longest, began, at, idle_longest, idle_stretch
        if began is None:
            return
        a, b = max(began, lo), min(t, hi)
        if b > a:
            total += b - a
            if b - a > longest:
                longest, at = b - a, a - t0
        idle_longest = max(idle_longest, idle_stretch)
        idle_stretch = 0.0
        began = None

    for t, i, cpu in events:
        idled(t)
        where[i] = cpu
        now_bad, empty = imbalanced()
        prev_t = t
        if now_bad and began is None:
            began = t
        elif not now_bad:
            close(t)
    idled(hi)
    close(hi)
    idle = f" idle_ms={idle_total * 1e3:.0f} idle_longest_ms={idle_longest * 1e3:.0f}" if spans is not None else ""
    print(f"imbalanced_ms={total * 1e3:.0f}{idle} longest_ms={longest * 1e3:.0f} at_s={at:.2f} switches={len(events)}")


if __name__ == "__main__":
    main()
