#!/bin/bash
# per-call BPF cost (bpf_stats) of two scx_sis builds A and B in one boot, interleaved, on
# perf bench sched pipe (processes and threads) and netperf TCP_RR
# run in the guest: tests/vm/vm.sh --kernel <7.3 bzImage> --mttcg --cpus 2 --sockets 1 --cores 1 --threads 2 --
#   env A=<build>/scx_sis B=<build>/scx_sis <this dir>/percall.sh
for b in A B; do cp ${!b} /dev/shm/scx_sis_$b; done
netserver -D -4 -L 127.0.0.1 -p 12866 >/dev/null 2>&1 &
att() { "$@" >/tmp/sched.log 2>&1 & pid=$!; for i in $(seq 120); do [ "$(cat /sys/kernel/sched_ext/state)" = enabled ] && break; sleep 0.5; done; sleep 1; }
det() { kill -INT $pid; wait $pid; sleep 1; }
table() { python3 "$(dirname "$0")/bpfstats.py" $1 $2 name; }
w() { case $1 in
  pipe) perf bench sched pipe -l 10000 2>&1 | awk '/usecs\/op/{print $1}' ;;
  pipeT) perf bench sched pipe -l 10000 -T 2>&1 | awk '/usecs\/op/{print $1}' ;;
  rr) netperf -4 -H 127.0.0.1 -p 12866 -t TCP_RR -l 3 -P 0 -- -r 1,1 | awk 'NF>=6{print $6; exit}' ;;
esac; }
for round in 1 2 3; do
  for b in A B; do
    att /dev/shm/scx_sis_$b
    for k in pipe pipeT rr; do
      bpftool prog show -j > /tmp/p0.json; sysctl -qw kernel.bpf_stats_enabled=1
      r=$(w $k); sysctl -qw kernel.bpf_stats_enabled=0; bpftool prog show -j > /tmp/p1.json
      echo "$b $k $r"; table /tmp/p0.json /tmp/p1.json
    done
    det
  done
done
dmesg | grep -iE "oops|bug:|panic|unstable|sched_ext" | tail -5
