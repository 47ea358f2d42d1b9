#!/bin/bash
# tbench 2 clients, every round with bpf_stats on: per build and round the throughput, ns per call
# of the hot callbacks and all BPF per MB; EEVDF interleaved (without bpf_stats, nothing to count).
# guest: env BUILDS="name=path ..." ROUNDS=N selladder.sh
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
  python3 - /tmp/p0.json /tmp/p1.json $t0 $t1 "$r" "$1" <<'PY'
import json, sys
a = {p['id']: p for p in json.load(open(sys.argv[1]))}
b = json.load(open(sys.argv[2])); secs = float(sys.argv[4]) - float(sys.argv[3]); mbs = float(sys.argv[5] or 0); mb = mbs * secs
ns = {}; tot = 0
for p in b:
    o = a.get(p['id'], {})
    n = p.get('run_cnt', 0) - o.get('run_cnt', 0); t = p.get('run_time_ns', 0) - o.get('run_time_ns', 0)
    if n > 100: ns[p.get('name', '?')] = t / n; tot += t
g = lambda k: ns.get(k, 0)
print(f"{sys.argv[6]:10s} {mbs:7.2f} MB/s  select_cpu {g('sis_select_cpu'):6.0f}  running {g('sis_running'):5.0f}"
      f"  stopping {g('sis_stopping'):5.0f}  tick {g('sis_tick'):5.0f}  BPF us/MB {tot/mb/1e3:6.0f}" if mb else f"{sys.argv[6]} no run")
PY
}
for round in $(seq ${ROUNDS:-3}); do
  echo "EEVDF      $(run) MB/s  (round $round)"
  for b in $BUILDS; do
    n=${b%%=*}; att /dev/shm/scx_sis_$n
    cost $n
    det
  done
done
dmesg | grep -iE "oops|bug:|panic" | tail -3
