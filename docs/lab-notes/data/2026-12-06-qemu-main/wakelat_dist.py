#!/usr/bin/env python3
"""Pool cyclictest histograms of wakelat runs by column: share of wakeups above each latency and
the quantiles. Usage: wakelat_dist.py SESSION_DIR... (each with raw/wakelat/*.txt as scx_sis_bench
writes them; warm-up runs, *w.txt, are left out)."""
import collections
import glob
import re
import sys

THRESHOLDS_US = [200, 500, 1000, 1500, 2000, 3000, 4000, 5000, 6000, 8000, 10000]


def load(path):
    hist = collections.Counter()
    for line in open(path):
        m = re.match(r'^(\d{6})\s+(.*)$', line)
        if m:
            hist[int(m.group(1))] += sum(int(x) for x in m.group(2).split())
    return hist


pooled = collections.defaultdict(collections.Counter)
for d in sys.argv[1:]:
    for f in glob.glob(d + '/raw/wakelat/*.txt'):
        if not f.endswith('w.txt'):
            pooled[f.split('/')[-1].split('-')[1]] += load(f)
for col, h in sorted(pooled.items()):
    n = sum(h.values())
    above = ' '.join('>%dus %.2f%%' % (t, 100 * sum(c for u, c in h.items() if u > t) / n)
                     for t in THRESHOLDS_US)
    acc, q = 0, {}
    for u in sorted(h):
        acc += h[u]
        for p in (0.5, 0.9, 0.95, 0.99, 0.999):
            if p not in q and acc >= p * n:
                q[p] = u
    print('%-10s wakeups %d; p50 %d p90 %d p95 %d p99 %d p99.9 %d us' % (col, n, q[0.5], q[0.9], q[0.95], q[0.99], q[0.999]))
    print('           ' + above)
