#!/bin/bash
# in the guest: start each build with -v until attached, then stop it; 3 rounds alternating
out=$1; shift
for r in 1 2 3; do
  for b in "$@"; do
    log=$(mktemp)
    t0=$(date +%s.%N)
    $b -v > "$log" 2>&1 & pid=$!
    for i in $(seq 600); do sleep 0.2; grep -q "^enabled" /sys/kernel/sched_ext/state && break; done
    t1=$(date +%s.%N)
    kill -INT $pid; wait $pid
    echo "$r $b wall=$(echo "$t1 - $t0" | bc) $(grep -oE 'loaded \(verified\) in [0-9]+ ms|[0-9]+ ms since start-up began' "$log" | tr '\n' ' ')" >> "$out"
    sleep 2
  done
done
