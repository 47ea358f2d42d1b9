#!/bin/bash
# TLB flushes on task switch (tlb:tlb_flush) and switches per netperf TCP_RR transaction and per
# perf-bench pipe op, under EEVDF and scx_sis configurations: does the pair share a CPU (an mm
# switch, which under TCG flushes QEMU's whole soft TLB) or alternate with idle on two?
# run in the guest: tests/vm/vm.sh --kernel <7.3 bzImage> --mttcg --cpus 2 --sockets 1 --cores 1 --threads 2 --
#   env SCX_SIS=<scx_sis> [CONFS='|--wake-affine off|--steal off'] <this dir>/flush.sh
B=${SCX_SIS:?}; cp $B /dev/shm/scx_sis; B=/dev/shm/scx_sis
netserver -D -4 -L 127.0.0.1 -p 12866 >/dev/null 2>&1 &
sleep 0.5
att() { "$@" >/tmp/sched.log 2>&1 & pid=$!; for i in $(seq 120); do [ "$(cat /sys/kernel/sched_ext/state)" = enabled ] && break; sleep 0.5; done; sleep 1; }
det() { kill -INT $pid; wait $pid; sleep 1; }
one() {
  perf stat -a -x, -e tlb:tlb_flush -e sched:sched_switch -o /tmp/ps.txt -- netperf -4 -H 127.0.0.1 -p 12866 -t TCP_RR -l 3 -P 0 -- -r 1,1 > /tmp/np.txt 2>&1
  r=$(awk 'NF>=6{print $6; exit}' /tmp/np.txt)
  awk -F, -v r=$r -v who="$1" '/tlb_flush/{f=$1} /sched_switch/{s=$1} END{n=r*3; printf "%-28s TCP_RR %7.0f/s  flushes/trans %.2f  switches/trans %.2f\n", who, r, f/n, s/n}' /tmp/ps.txt
  for m in "" -T; do
    perf stat -a -x, -e tlb:tlb_flush -e sched:sched_switch -o /tmp/ps.txt -- perf bench sched pipe -l 10000 $m > /tmp/pb.txt 2>&1
    u=$(awk '/usecs\/op/{print $1}' /tmp/pb.txt)
    awk -F, -v u=$u -v who="$1 pipe$m" '/tlb_flush/{f=$1} /sched_switch/{s=$1} END{printf "%-28s pipe %6.1f us/op  flushes/op %.2f  switches/op %.2f\n", who, u, f/20000, s/20000}' /tmp/ps.txt
  done
}
IFS='|' read -r -a CONFS <<<"${CONFS:-|--wake-affine off|--steal off}"
for round in 1 2; do
  one EEVDF
  for c in "${CONFS[@]}"; do att $B $c; one "scx_sis '$c'"; det; done
done
dmesg | grep -iE "oops|bug:|panic|unstable" | head
