#!/bin/bash
# A fixed guest workload that times the VM itself (lab notes 2026-11-26): run
# once per boot, with and without mitigations=off, one VM at a time on an idle host:
#   mkdir -p target/s27 && cp target/release/scx_sis target/s27/
#   SCX_SIS_VM_APPEND="mitigations=off" tests/vm/vm.sh --kernel $(tests/vm/kernels.sh 7.3) \
#     -- env SCX_SIS_OUT=$PWD/target/s27 docs/lab-notes/data/2026-11-26-vm-speed.sh        # and without SCX_SIS_VM_APPEND
cp $SCX_SIS_OUT/scx_sis /dev/shm/scx_sis
cd /dev/shm
t() { local s=$(date +%s.%N); "$@" >/dev/null 2>&1; echo "$(echo "$(date +%s.%N) - $s" | bc)"; }
echo "hackbench-eevdf $(t hackbench -p -g 8 -l 50)"
echo "exec100 $(t bash -c 'for i in $(seq 100); do /bin/true; done')"
s=$(date +%s.%N)
./scx_sis -v > $SCX_SIS_OUT/perf-attach.txt 2>&1 &
pid=$!
for j in $(seq 1 200); do [ "$(cat /sys/kernel/sched_ext/state)" = enabled ] && break; sleep 0.1; done
echo "attach $(echo "$(date +%s.%N) - $s" | bc)"
echo "hackbench-scx $(t hackbench -p -g 8 -l 50)"
kill -INT $pid; wait $pid
echo "stressng $(t stress-ng -c 8 --cpu-ops 800 )"
