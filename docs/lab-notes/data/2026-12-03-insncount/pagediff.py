#!/usr/bin/env python3
"""Which kernel and BPF code pages one scheduler's switch intervals touch more than another's.
pagediff.py PLUGIN_OUT GUEST_OUT KSYMS_DIR A B: per page, the share of CR3 intervals that
touched it (mean over A's runs, over B's), biggest differences first, named by their symbols."""
import bisect, collections, re, sys
out, guest, ksyms, A, B = sys.argv[1:6]
marks = {}
for l in open(out):
    w = l.split()
    if w and w[0] == 'mark':
        marks[int(w[1])] = {w[i]: int(w[i + 1]) for i in range(4, len(w), 2)}
def syms(path):
    s = []
    for l in open(path):
        w = l.split()
        if len(w) >= 3:
            s.append((int(w[0], 16), w[2]))
    return s
kern = syms(f"{ksyms}/kallsyms")
share = {A: collections.defaultdict(float), B: collections.defaultdict(float)}
names = {}
nruns = collections.Counter()
for l in open(guest):
    m = re.match(r'run (\S+) round (\d+) mark (\d+)', l)
    if not m or m[1] not in share:
        continue
    end = int(m[3]) + 1
    epochs = marks[end]['cr3'] - marks[end - 1]['cr3']
    table = sorted(kern + syms(f"{ksyms}/bpf.{end}"))
    addrs = [a for a, _ in table]
    nruns[m[1]] += 1
    for pl in open(f"{out}.pages.{end}"):
        v, page, n = pl.split()
        page = int(page, 16)
        i = bisect.bisect_right(addrs, page) - 1
        j = bisect.bisect_left(addrs, page + 4096)
        inpage = [nm for _, nm in table[max(i, 0):j]]
        # a BPF page is named by its programs (addresses differ per attach), a kernel page by its address
        key = ('bpf:' + ','.join(sorted(set(re.sub(r'bpf_prog_[0-9a-f]+_', '', x) for x in inpage))[:4])
               if page >= 0xffffffffc0000000 else hex(page))
        names.setdefault(key, inpage[:6])
        share[m[1]][key] += int(n) / epochs
rows = []
for k in set(share[A]) | set(share[B]):
    a, b = share[A][k] / max(nruns[A], 1), share[B][k] / max(nruns[B], 1)
    rows.append((a - b, a, b, k))
rows.sort(reverse=True)
print(f"pages per CR3 interval: {A} {sum(r[1] for r in rows):.1f}, {B} {sum(r[2] for r in rows):.1f}")
print(f"{'diff':>6s} {A:>6s} {B:>6s}  page: its symbols")
for d, a, b, k in rows[:int(sys.argv[6]) if len(sys.argv) > 6 else 40]:
    print(f"{d:6.2f} {a:6.2f} {b:6.2f}  {k}: {' '.join(names[k])}")
