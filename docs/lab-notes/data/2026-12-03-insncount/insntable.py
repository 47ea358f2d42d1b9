#!/usr/bin/env python3
"""Per unit of work (an MB of loopback traffic, or 1000 hackbench messages), per scheduler:
insntable.py PLUGIN_OUT GUEST_OUT"""
import re, sys, statistics as st
marks = {}
for l in open(sys.argv[1]):
    w = l.split()
    if w and w[0] == 'mark':
        marks[int(w[1])] = {w[i]: int(w[i + 1]) for i in range(4, len(w), 2)}
rows = {}
for l in open(sys.argv[2]):
    m = re.match(r'run (\S+) round (\d+) mark (\d+) lo_bytes (\d+) ctxt (\d+) mbs ([\d.]+)(?: msgs (\d+))?', l)
    if not m or int(m[3]) not in marks or int(m[3]) + 1 not in marks:
        continue
    a, b = marks[int(m[3])], marks[int(m[3]) + 1]
    mb = int(m[7]) / 1e3 if m[7] else int(m[4]) / 1e6
    d = {k: (b[k] - a[k]) / mb for k in a}
    d['ctxt'] = int(m[5]) / mb
    d['mbs'] = float(m[6])
    rows.setdefault(m[1], []).append(d)
keys = ['user', 'kernel', 'bpf', 'tbs', 'ctxt', 'mbs']
# first-touch mode (pages=1): CR3 writes and first touches per MB; code and data pages per CR3 write
first = next(iter(rows.values()))[0] if rows else {}
if 'cr3' in first:
    for rs in rows.values():
        for r in rs:
            r['code'] = sum(r[k] for k in r if k.startswith('c_'))
            r['data'] = sum(r[k] for k in r if k.startswith('d_'))
            if 'by_bpf' in r:
                r['d_bpf/cr3'] = r['by_bpf'] / r['cr3']
                r['d_kern/cr3'] = r['by_kernel'] / r['cr3']
            r['code/cr3'] = r['code'] / r['cr3']
            r['data/cr3'] = r['data'] / r['cr3']
            r['bpfc/cr3'] = r['c_bpf'] / r['cr3']
            r['kern/cr3'] = r['c_kernel'] / r['cr3']
    keys = keys[:3] + ['cr3', 'code', 'data', 'code/cr3', 'kern/cr3', 'bpfc/cr3', 'data/cr3', 'mbs']
    if 'by_bpf' in first:
        keys[-1:-1] = ['d_kern/cr3', 'd_bpf/cr3']
print(f"{'per 1000 msgs' if 'msgs' in open(sys.argv[2]).read() else 'per MB of loopback':12s}" + ''.join(f"{k:>14s}" for k in keys) + f"{'kernel+bpf':>14s}  runs")
base = None
for name, rs in rows.items():
    mean = {k: st.mean(r[k] for r in rs) for k in keys}
    kb = st.mean(r['kernel'] + r['bpf'] for r in rs)
    sd = st.stdev([r['kernel'] + r['bpf'] for r in rs]) if len(rs) > 1 else 0
    base = base or kb
    print(f"{name:12s}" + ''.join(f"{mean[k]:14.2f}" if k == 'mbs' or '/' in k else f"{mean[k]:14.0f}" for k in keys)
          + f"{kb:14.0f}  {len(rs)}  (sd {100 * sd / kb:.1f}%, x{kb / base:.3f} of the first)")
