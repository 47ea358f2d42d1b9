#!/bin/bash
# tbench 2 clients: throughput of EEVDF and each build (interleaved rounds), then for each build a
# run with bpf_stats on: BPF ns per call per program, calls per MB
# guest: env BUILDS="name=path ..." ROUNDS=N tbladder.sh
for b in $BUILDS; do cp ${b#*=} /dev/shm/scx_sis_${b%%=*}; done
att() { "$@" >/tmp/sched.log 2>&1 & pid=$!; for i in $(seq 120); do [ "$(cat /sys/kernel/sched_ext/state)" = enabled ] && break; sleep 0.5; done; sleep 1; }
det() { kill -INT $pid; wait $pid; sleep 1; }
tbench_srv >/dev/null 2>&1 &
sleep 1
run() { tbench -t 5 2 127.0.0.1 2>&1 | awk '/Throughput/{print $2}'; }
cost() {
  bpftool prog show -j > /tmp/p0.json; sysctl -qw kernel.bpf_stats_enabled=1
  t0=$(date +%s.%N); r=$(run); t1=$(date +%s.%N)
  sysctl -qw kernel.bpf_stats_enabled=0; bpftool prog show -j > /tmp/p1.json
  echo "  with bpf_stats: $r MB/s"
  python3 - /tmp/p0.json /tmp/p1.json $t0 $t1 "$r" <<'PY'
import json, sys
a = {p['id']: p for p in json.load(open(sys.argv[1]))}
b = json.load(open(sys.argv[2])); secs = float(sys.argv[4]) - float(sys.argv[3]); mb = float(sys.argv[5] or 0) * secs
rows = []; tot = 0
for p in b:
    o = a.get(p['id'], {})
    n = p.get('run_cnt', 0) - o.get('run_cnt', 0); t = p.get('run_time_ns', 0) - o.get('run_time_ns', 0)
    if n > 100: rows.append((p.get('name', '?'), n, t)); tot += t
print(f"   BPF {tot/1e6:.0f} ms over {secs:.1f} s x 2 CPUs = {100*tot/(2e9*secs):.1f}% of the CPUs, {tot/mb/1e3:.0f} us per MB")
for nm, n, t in sorted(rows, key=lambda r: -r[2]):
    print(f"   {nm:24s} calls/MB {n/mb:8.0f}  ns/call {t/n:6.0f}  us/MB {t/mb/1e3:6.0f}")
PY
}
for round in $(seq ${ROUNDS:-3}); do
  echo "EEVDF r$round c2 $(run)"
  for b in $BUILDS; do
    n=${b%%=*}; att /dev/shm/scx_sis_$n
    echo "$n r$round c2 $(run)"
    [ "$round" = 1 ] && cost
    det
  done
done
dmesg | grep -iE "oops|bug:|panic" | tail -3
