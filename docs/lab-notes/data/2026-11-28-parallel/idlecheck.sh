#!/bin/bash
# netperf TCP_RR for 3 s: the rate, idle share over both CPUs, and the tasks that used CPU meanwhile
# (run under EEVDF before and after a sched_ext scheduler was attached and detached: prof.sh does both)
netserver -D -4 -L 127.0.0.1 -p 12867 >/dev/null 2>&1 & s=$!
sleep 0.5
python3 - <<'PY'
import os, subprocess, re
def snap():
    t = {}
    for pid in os.listdir('/proc'):
        if not pid.isdigit(): continue
        try:
            for tid in os.listdir(f'/proc/{pid}/task'):
                s = open(f'/proc/{pid}/task/{tid}/stat').read()
                comm = s[s.index('(')+1:s.rindex(')')]; f = s[s.rindex(')')+2:].split()
                t[(tid, comm)] = int(f[11]) + int(f[12])
        except Exception: pass
    cpu = [int(x) for x in open('/proc/stat').readline().split()[1:]]
    return t, cpu
a, ca = snap()
out = subprocess.run(['netperf','-4','-H','127.0.0.1','-p','12867','-t','TCP_RR','-l','3','--','-r','1,1'], capture_output=True, text=True).stdout
b, cb = snap()
d = [y - x for x, y in zip(ca, cb)]
rate = out.strip().splitlines()[-2].split()[-1] if out.strip() else '?'
print(f"netperf TCP_RR {rate}/s, idle {100*(d[3]+d[4])/sum(d):.0f}%, softirq {100*d[6]/sum(d):.0f}%, system {100*d[2]/sum(d):.0f}%, user {100*d[0]/sum(d):.0f}%")
top = sorted(((b[k] - a.get(k, 0), k) for k in b), reverse=True)[:6]
print("  top: " + ", ".join(f"{k[1]}/{k[0]} {v}" for v, k in top if v > 0))
PY
kill $s
