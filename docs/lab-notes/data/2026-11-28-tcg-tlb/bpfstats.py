# bpfstats.py BEFORE.json AFTER.json [name|cost]: guest ns per call of each BPF program between two
# `bpftool prog show -j` snapshots taken with kernel.bpf_stats_enabled=1, on one line, in program
# name order (percall.sh) or by total cost (pipe.sh)
import json, sys
a = {p['id']: p for p in json.load(open(sys.argv[1]))}
b = json.load(open(sys.argv[2]))
rows = []
for p in b:
    o = a.get(p['id'], {})
    n = p.get('run_cnt', 0) - o.get('run_cnt', 0); t = p.get('run_time_ns', 0) - o.get('run_time_ns', 0)
    if n > 100: rows.append((p.get('name', '?'), n, t))
key = (lambda r: r[0]) if (sys.argv[3:] or ['name'])[0] == 'name' else (lambda r: -r[2])
print("   " + " ".join(f"{nm[4:]}={t/n:.0f}" for nm, n, t in sorted(rows, key=key)))
