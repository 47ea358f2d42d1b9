#!/bin/bash
# Idle attach time, A/B (lab notes 2026-11-26): each binary once with the
# verifier's statistics (SCX_SIS_VERIFIER_STATS=1 -v), then ROUNDS rounds of plain attaches,
# interleaved, from tmpfs copies. One boot per kernel, e.g.:
#   d=target/s28/ab-6.12; mkdir -p $d; cp OLD $d/base; cp NEW $d/gb
#   SCX_SIS_VM_APPEND="mitigations=off" tests/vm/vm.sh --kernel $(tests/vm/kernels.sh 6.12) -- \
#     env SCX_SIS_OUT=$PWD/$d BINS="base=$PWD/$d/base gb=$PWD/$d/gb" ROUNDS=3 bash docs/lab-notes/data/2026-11-26-attach-ab.sh
O=$SCX_SIS_OUT; cd /dev/shm
waitst() { for j in $(seq 1 900); do [ "$(cat /sys/kernel/sched_ext/state)" = $1 ] && return 0; sleep 0.05; done; return 1; }
names=()
for nb in $BINS; do n=${nb%%=*}; cp ${nb#*=} /dev/shm/$n; names+=($n); done
for n in "${names[@]}"; do
  SCX_SIS_VERIFIER_STATS=1 ./$n -v > /dev/shm/vs-$n.txt 2>&1 & pid=$!
  if waitst enabled; then sleep 1; kill -INT $pid; wait $pid; waitst disabled
  else echo "$n: NOT ATTACHED"; kill -INT $pid; wait $pid; tail -30 /dev/shm/vs-$n.txt; fi
  echo "$n processed $(grep -o 'processed [0-9]*' /dev/shm/vs-$n.txt | awk '{s+=$2} END {print s}') $(grep -E 'loaded \(verified\)' /dev/shm/vs-$n.txt)"
  cp /dev/shm/vs-$n.txt $O/
done
for r in $(seq 1 ${ROUNDS:-3}); do
  for n in "${names[@]}"; do
    s=$(date +%s.%N); ./$n > /dev/shm/o.txt 2>&1 & pid=$!; waitst enabled
    echo "round $r $n attach $(echo "$(date +%s.%N) - $s" | bc)"; sleep 0.5; kill -INT $pid; wait $pid; waitst disabled
  done
done
echo done
