#!/bin/bash
# tbench 2 clients: TLB flushes (mm switches) and switches per MB, EEVDF against scx_sis
# guest: env SCX_SIS=<scx_sis> tbflush.sh
B=${SCX_SIS:?}; cp $B /dev/shm/scx_sis; B=/dev/shm/scx_sis
tbench_srv >/dev/null 2>&1 &
sleep 1
att() { "$@" >/tmp/sched.log 2>&1 & pid=$!; for i in $(seq 120); do [ "$(cat /sys/kernel/sched_ext/state)" = enabled ] && break; sleep 0.5; done; sleep 1; }
det() { kill -INT $pid; wait $pid; sleep 1; }
one() {
  perf stat -a -x, -e tlb:tlb_flush -e sched:sched_switch -e irq_vectors:call_function_single_entry -e irq_vectors:reschedule_entry -o /tmp/ps.txt -- tbench -t 5 2 127.0.0.1 > /tmp/tb.txt 2>&1
  r=$(awk '/Throughput/{print $2}' /tmp/tb.txt)
  awk -F, -v r=$r -v who="$1" '/tlb_flush/{f=$1} /sched_switch/{s=$1} /call_function_single/{c=$1} /reschedule_entry/{q=$1} END{n=r*5; printf "%-10s tbench2 %6.2f MB/s  flushes/MB %6.0f  switches/MB %6.0f  ipi-csd/MB %5.0f  resched-ipi/MB %5.0f\n", who, r, f/n, s/n, c/n, q/n}' /tmp/ps.txt
}
for round in 1 2 3; do
  one EEVDF
  att $B; one scx_sis; det
done
dmesg | grep -iE "oops|bug:|panic" | head -3
