#!/usr/bin/env python3
"""fair-nice8 under scx_sis with trace-printk.diff: pulls, and who woke beside the hogs.
   trace_summary.py DIR (the guest's target/dbg/<tag>, one sisN-nice8.trace per round)"""
import collections, glob, re, sys
for f in sorted(glob.glob(f"{sys.argv[1]}/sis*-nice8.trace")):
    text = open(f, errors="replace").read()
    pulls = re.findall(r"DBG pull (\d+)<-(\d+) nr (\d+)/(\d+) load (\d+)/(\d+) gap (\d+)", text)
    hog_mix = {2 * 102400 + 11000, 102400 + 2 * 11000, 102400 + 11000, 102400, 2 * 102400}
    # a victim of 3 tasks weighing 2 nice-0 and a nice-10: a nice-0 task beside its two hogs
    extra = sum(1 for p in pulls if int(p[3]) == 3 and int(p[5]) == 2 * 102400 + 11000)
    anyg = sum(1 for p in pulls if int(p[6]) > 1 << 60)
    migr = len(re.findall(r"sched_migrate_task:", text))
    sleeps = collections.Counter(re.findall(r"(\S+)-(\d+) +\[\d+\] \S+ +[\d.]+: bpf_trace_printk: DBG sleep pid \d+", text))
    top = ", ".join(f"{c}-{p} {n}" for (c, p), n in sleeps.most_common(4))
    print(f"{f.split('/')[-1]}: migrations {migr}, pulls {len(pulls)} (victim 2 nice-0 + 1 nice-10 of 3 tasks: {extra}; "
          f"from a CPU taken by RT: {anyg}); sleeps of tasks counted in a CPU's load: {top}")
