#!/bin/bash
# perf bench sched pipe, processes vs threads (-T: no mm switch between the pair), EEVDF and
# scx_sis, with each scx_sis program's cost per call (bpf_stats)
# run in the guest: tests/vm/vm.sh --kernel <7.3 bzImage> --mttcg --cpus 2 --sockets 1 --cores 1 --threads 2 --
#   env SCX_SIS=<scx_sis> <this dir>/pipe.sh
B=${SCX_SIS:?}; cp $B /dev/shm/scx_sis; B=/dev/shm/scx_sis
att() { "$@" >/tmp/sched.log 2>&1 & pid=$!; for i in $(seq 120); do [ "$(cat /sys/kernel/sched_ext/state)" = enabled ] && break; sleep 0.5; done; sleep 1; }
det() { kill -INT $pid; wait $pid; sleep 1; }
pb() { perf bench sched pipe -l ${L:-20000} $1 2>&1 | awk '/usecs\/op/{print $1}'; }
table() { python3 "$(dirname "$0")/bpfstats.py" $1 $2 cost; }
for round in 1 2 3; do
  for m in "" -T; do echo "EEVDF pipe$m usecs/op $(pb $m)"; done
  att $B ${FLAGS:-}
  for m in "" -T; do
    bpftool prog show -j > /tmp/p0.json; sysctl -qw kernel.bpf_stats_enabled=1
    r=$(pb $m); sysctl -qw kernel.bpf_stats_enabled=0; bpftool prog show -j > /tmp/p1.json
    echo "scx_sis pipe$m usecs/op $r"; table /tmp/p0.json /tmp/p1.json
    echo "scx_sis pipe$m (no stats) usecs/op $(pb $m)"
  done
  det
done
dmesg | grep -iE "oops|bug:|panic|unstable" | head
