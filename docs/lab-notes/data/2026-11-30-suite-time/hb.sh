#!/bin/bash
# fixed work under each scheduler: wall seconds of hackbench (guest time)
HB="hackbench -p -g ${G:-8} -l ${L:-100}"
declare -A BIN=([head]=/tmp/head_scx_sis [c45]=/tmp/c45_scx_sis)
for n in "${!BIN[@]}"; do cp ${BIN[$n]} /dev/shm/$n; done
run() { local s=$(date +%s%N); $HB > /dev/null 2>&1; echo "$(( ($(date +%s%N)-s)/1000000 ))"; }
for order in "eevdf head c45" "c45 head eevdf"; do
 for who in $order; do
  if [ $who = eevdf ]; then echo "$who hb_ms $(run) $(run)"; continue; fi
  s=$(date +%s%N); nice -n -10 /dev/shm/$who > /tmp/$who.out 2>&1 & pid=$!
  while [ "$(cat /sys/kernel/sched_ext/state)" != enabled ]; do sleep 0.1; done
  a=$(( ($(date +%s%N)-s)/1000000 ))
  echo "$who attach_ms $a hb_ms $(run) $(run)"
  kill -INT $pid; wait $pid
  while [ "$(cat /sys/kernel/sched_ext/state)" != disabled ]; do sleep 0.1; done
 done
done
