#!/bin/bash
# two scx_sis builds and scx_bpfland against EEVDF on netperf TCP_RR: the rate, 3 runs per attach,
# 3 rounds, and in round 1 a wake-to-run trace of each build (rrlat.sh --by-target)
# run in the guest: tests/vm/vm.sh --kernel <7.3 bzImage> --mttcg --cpus 2 ... --
#   env A=<build without the flag>/scx_sis B=<build with it>/scx_sis <this dir>/qab.sh
here=$(cd "$(dirname "$0")" && pwd)
rr=$here/../2026-11-28-llc2-pair/rrlat.sh
export PATH=${SCX_SIS_CACHE:-$HOME/.cache/scx_sis}/peers/bin:$PATH   # bench/setup-peers.sh puts the peers there
netserver -D -4 -L 127.0.0.1 -p 12867 >/dev/null 2>&1 &
sleep 0.5
rate() { for i in 1 2 3; do echo "$1 $(netperf -4 -H 127.0.0.1 -p 12867 -t TCP_RR -l 3 -P 0 -- -r 1,1 | awk 'NF>=6{print $6; exit}')"; done; }
att() { "$@" >/tmp/sched.log 2>&1 & pid=$!; for i in $(seq 60); do [ "$(cat /sys/kernel/sched_ext/state)" = enabled ] && break; sleep 1; done; sleep 2; }
det() { kill -INT $pid; wait $pid; sleep 1; }
for round in 1 2 3; do
  rate EEVDF
  att ${A:?}; rate base; [ $round = 1 ] && { echo "== base"; $rr --by-target; }; det
  att ${B:?}; rate queued; [ $round = 1 ] && { echo "== queued"; $rr --by-target; }; det
  att scx_bpfland; rate bpfland; det
done
dmesg | grep -iE "oops|bug:|panic|sched_ext" | tail -20
