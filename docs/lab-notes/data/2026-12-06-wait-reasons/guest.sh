#!/bin/bash
# diagnostic: scx_sis attached, wakelat's workload six times, then the counters dumped
repo=$(cd "$(dirname "$0")/../../../.." && pwd)
B=$repo/target/release
OUT=$repo/target/diag-out; mkdir -p $OUT
cp $B/scx_sis $B/scx_sis_bench /tmp/
/tmp/scx_sis > $OUT/sched.log 2>&1 &
sp=$!
for i in $(seq 120); do [ "$(cat /sys/kernel/sched_ext/state)" = enabled ] && break; sleep 0.5; done
echo "state: $(cat /sys/kernel/sched_ext/state) after $i"
id=$(bpftool map show | awk -F: '/\.bss/ {print $1}' | tail -1)
echo "bss map id $id"
for r in 1 2 3 4 5 6; do
  /tmp/scx_sis_bench __wakelat --hogs 2 --warmup 1 -- cyclictest --policy=other -t 2 -i 1000 -D 5 -q -m -h 100000 > $OUT/wl-$r.txt 2>&1
  grep -i "p99\|wakelat" $OUT/wl-$r.txt | head -2
done
bpftool -j map dump id $id > $OUT/bss.json
kill -INT $sp; wait $sp
echo "sched rc $?"
dmesg | grep -i "sched_ext\|oops" | tail -5
