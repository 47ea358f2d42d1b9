#!/bin/bash
# diagnostic: where migrations beside hogs come from (EEVDF vs scx_sis, same boot);
# CASES="nice8" for other cases than spread, sleep and odd
out=/work/main/target/dbg/$1; mkdir -p $out
B=/tmp/dbg-bin
TR=/sys/kernel/tracing
[ -d "$TR/events/sched" ] || mount -t tracefs nodev "$TR" 2>/dev/null
echo 16384 > $TR/buffer_size_kb
echo mono > $TR/trace_clock
run_case() { # tag case
  echo 0 > $TR/tracing_on; echo > $TR/trace
  echo 1 > $TR/events/sched/sched_migrate_task/enable
  echo 1 > $TR/tracing_on
  $B/scx_sis_bench __fairness $2 --secs 4 --warmup 2 > $out/$1-$2.out 2>&1
  echo 0 > $TR/tracing_on
  cp $TR/trace $out/$1-$2.trace
}
for round in 1 2; do
  for c in ${CASES:-spread sleep odd}; do run_case eevdf$round $c; done
  $B/scx_sis > $out/sched$round.log 2>&1 &
  pid=$!
  for i in $(seq 120); do [ "$(cat /sys/kernel/sched_ext/state)" = enabled ] && break; sleep 1; done
  sleep 2
  for c in ${CASES:-spread sleep odd}; do run_case sis$round $c; done
  kill -INT $pid; wait $pid
  sleep 2
done
echo done > $out/DONE
