#!/usr/bin/env python3
# vs-main.py RUNS.CSV...: each row of scx_sis against the peer `main` in the same boot: means, the
# difference and Welch's t (* where |t| > 2.1, about 95% two-sided at these degrees of freedom)
import csv, math, statistics as st, sys
for path in sys.argv[1:]:
    d = {}
    for r in csv.DictReader(open(path)):
        if r['warmup'] == 'false' and r['ok'] == 'true':
            d.setdefault((r['suite'], r['param'], r['variant']), []).append(float(r['value']))
    print(f"== {path}: scx_sis (queued wakeups) against main")
    for (s, p, v), a in sorted(d.items()):
        if v != 'scx_sis' or (s, p, 'main') not in d:
            continue
        b = d[(s, p, 'main')]
        ma, mb = st.mean(a), st.mean(b)
        va, vb = st.variance(a) / len(a), st.variance(b) / len(b)
        t = (ma - mb) / math.sqrt(va + vb)
        df = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1))
        print(f"{s:18s} {p:4s} queued {ma:9.2f} main {mb:9.2f} diff {100 * (ma / mb - 1):+6.1f}% "
              f"t={t:+.2f} df={df:.0f}{' *' if abs(t) > 2.1 else ''}")
