#!/bin/bash
# tbench 2 clients: where its 4 tasks run (sampled), switches and migrations per task, per scheduler
# run in the guest (mttcg, 2 vCPUs): env BUILDS="name=path ..." tbprobe.sh
for b in $BUILDS; do cp ${b#*=} /dev/shm/scx_sis_${b%%=*}; done
att() { "$@" >/tmp/sched.log 2>&1 & pid=$!; for i in $(seq 120); do [ "$(cat /sys/kernel/sched_ext/state)" = enabled ] && break; sleep 0.5; done; sleep 1; }
det() { kill -INT $pid; wait $pid; sleep 1; }
tbench_srv >/dev/null 2>&1 &
sleep 1
probe() {
  local name=$1
  tbench -t 8 2 127.0.0.1 > /tmp/tb.out 2>&1 & local tb=$!
  sleep 2
  local pids; pids=$(pgrep -x tbench | grep -v "^$tb\$"; pgrep -x tbench_srv | tail -n +2)
  python3 - $pids <<'PY'
import sys, time, collections
pids = sys.argv[1:]
def counters(p):
    d = {}
    for l in open(f"/proc/{p}/status"):
        if "ctxt_switches" in l:
            k, v = l.split(":"); d[k.strip()] = int(v)
    for l in open(f"/proc/{p}/sched"):
        if l.startswith("se.nr_migrations"): d["migr"] = int(l.split()[-1])
    return d
c0 = {p: counters(p) for p in pids}
hist = collections.Counter(); run = collections.Counter(); together = 0
t0 = time.time(); n = 0
while time.time() - t0 < 4:
    cpus = []
    for p in pids:
        f = open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()
        cpus.append((f[0], f[36]))
    key = " ".join(f"{s}{c}" for s, c in cpus)
    hist[key] += 1; n += 1
    if len({c for s, c in cpus}) == 1: together += 1
    for s, c in cpus:
        if s == "R": run[c] += 1
    time.sleep(0.05)
c1 = {p: counters(p) for p in pids}
print(f"samples {n}; all 4 on one CPU {together}; R per cpu: {dict(run)}")
for k, v in hist.most_common(6): print(f"  {v:4d} {k}")
for p in pids:
    print("  pid", p, open(f"/proc/{p}/comm").read().strip(), {k: c1[p][k] - c0[p][k] for k in c0[p]})
PY
  wait $tb
  echo "$name: $(grep -E 'Throughput' /tmp/tb.out | tail -1)"
}
for round in 1 2; do
  echo "== EEVDF r$round"; probe EEVDF
  for b in $BUILDS; do
    n=${b%%=*}; att /dev/shm/scx_sis_$n --stats-out /tmp/st-$n.json
    echo "== $n r$round"; probe $n
    det
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print({k:v for k,v in d.items() if isinstance(v,(int,float)) and v and any(w in k for w in ("steal","preempt","kick","wake","balance","rotat","direct","local","sync"))})' /tmp/st-$n.json
  done
done
dmesg | grep -iE "oops|bug:|panic|unstable" | tail -5
