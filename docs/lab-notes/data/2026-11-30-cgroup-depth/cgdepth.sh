#!/bin/bash
# tbench 2 clients and hackbench -p -g 2, in the root cgroup and 3 levels deep (cpu controller on
# at each level, as systemd's user.slice/user-N.slice/session-M.scope), under EEVDF and each build,
# interleaved rounds; for each build one tbench run per place with bpf_stats (ns per call).
# guest: env BUILDS="name=path ..." ROUNDS=N cgdepth.sh
for b in $BUILDS; do cp ${b#*=} /dev/shm/scx_sis_${b%%=*}; done
CG=/sys/fs/cgroup
mountpoint -q $CG || mount -t cgroup2 none $CG
echo +cpu > $CG/cgroup.subtree_control
mkdir -p $CG/l1/l2/l3
echo +cpu > $CG/l1/cgroup.subtree_control
echo +cpu > $CG/l1/l2/cgroup.subtree_control
att() { "$@" >/tmp/sched.log 2>&1 & pid=$!; for i in $(seq 120); do [ "$(cat /sys/kernel/sched_ext/state)" = enabled ] && break; sleep 0.5; done; sleep 1; }
det() { kill -INT $pid; wait $pid; sleep 1; }
# run PLACE CMD...: the command in the root cgroup or in l1/l2/l3
inplace() { local place=$1; shift; if [ $place = deep ]; then sh -c "echo \$\$ > $CG/l1/l2/l3/cgroup.procs; exec \"\$@\"" sh "$@"; else "$@"; fi; }
tb() { inplace $1 tbench_srv >/dev/null 2>&1 & local srv=$!; sleep 0.5
  inplace $1 tbench -t 5 2 127.0.0.1 2>&1 | awk '/Throughput/{print $2}'; pkill tbench_srv; wait $srv 2>/dev/null; }
hb() { inplace $1 hackbench -p -g 2 -l 300 2>&1 | awk '/^Time/{print $2}'; }
cost() {
  bpftool prog show -j > /tmp/p0.json; sysctl -qw kernel.bpf_stats_enabled=1
  t0=$(date +%s.%N); r=$(tb $1); t1=$(date +%s.%N)
  sysctl -qw kernel.bpf_stats_enabled=0; bpftool prog show -j > /tmp/p1.json
  echo "  $1 with bpf_stats: $r MB/s"
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
for nm, n, t in sorted(rows, key=lambda r: -r[2])[:6]:
    print(f"   {nm:24s} calls/MB {n/mb:8.0f}  ns/call {t/n:6.0f}  us/MB {t/mb/1e3:6.0f}")
PY
}
one() { for place in root deep; do echo "$1 r$2 $place tbench2 $(tb $place)"; echo "$1 r$2 $place hackbench $(hb $place)"; done; }
for round in $(seq ${ROUNDS:-3}); do
  one EEVDF $round
  for b in $BUILDS; do
    n=${b%%=*}; att /dev/shm/scx_sis_$n
    one $n $round
    if [ "$round" = 1 ]; then cost root; cost deep; fi
    det
  done
done
dmesg | grep -iE "oops|bug:|panic" | tail -3
