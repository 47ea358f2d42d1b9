#!/bin/bash
# in the guest: pipelat unpinned under each scheduler given, placement sampled
B=target/release/scx_sis_bench
for S in "$@"; do
  echo "=== $S"
  if [ "$S" != EEVDF ]; then $S > /tmp/sched.log 2>&1 & sp=$!; sleep 6; cat /sys/kernel/sched_ext/state; fi
  $B __pipelat --secs 3 --warmup 1 > /tmp/pl.out 2>&1 & pp=$!
  sleep 1.5
  for i in $(seq 1 40); do ps -eLo tid,psr,stat,comm | awk '$4=="scx_sis_bench"{printf "%s:%s:%s ", $1,$2,$3} END{print ""}'; sleep 0.05; done
  wait $pp; cat /tmp/pl.out
  if [ "$S" != EEVDF ]; then kill -INT $sp; wait $sp; tail -30 /tmp/sched.log; fi
done
