#!/usr/bin/env python3
# vs-main.py [--peer NAME] RUNS.CSV...: each row of scx_sis against the peer `main` (or NAME) in the
# same boot: means, the difference and Welch's t (* where |t| > 2.1, about 95% two-sided at these
# degrees of freedom)
import csv, math, statistics as st, sys
args = sys.argv[1:]
peer = 'main'
if args[:1] == ['--peer']:
    peer, args = args[1], args[2:]
for path in args:
    d = {}
    for r in csv.DictReader(open(path)):
        if r['warmup'] == 'false' and r['ok'] == 'true':
            d.setdefault((r['suite'], r['param'], r['variant']), []).append(float(r['value']))
    print(f"== {path}: scx_sis against {peer}")
    for (s, p, v), a in sorted(d.items()):
        if v != 'scx_sis' or (s, p, peer) not in d:
            continue
        b = d[(s, p, peer)]
        ma, mb = st.mean(a), st.mean(b)
        va, vb = st.variance(a) / len(a), st.variance(b) / len(b)
        t = (ma - mb) / math.sqrt(va + vb)
        df = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1))
        print(f"{s:18s} {p:4s} scx_sis {ma:9.2f} {peer} {mb:9.2f} diff {100 * (ma / mb - 1):+6.1f}% "
              f"t={t:+.2f} df={df:.0f}{' *' if abs(t) > 2.1 else ''}")
