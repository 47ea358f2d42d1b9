#!/bin/bash
# where hackbench's CPU time goes under scx_sis vs EEVDF: perf record -a -g in the guest
# Lab notes 2026-11-27. One boot per kernel, side by side, scx_sis copied into $d:
#   d=target/s33/perf-6.12; mkdir -p $d; cp target/release/scx_sis $d/
#   tests/vm/vm.sh --kernel $(tests/vm/kernels.sh 6.12) -- env SCX_SIS_OUT=$PWD/$d bash $PWD/docs/lab-notes/data/2026-11-27-hackbench-perf.sh   # and 7.3
# perf samples only where interrupts are on: scheduler and BPF time lands on finish_task_switch,
# _raw_spin_unlock_irqrestore and the like; read the idle (pv_native_safe_halt) share, not the BPF.
O=$SCX_SIS_OUT
cp $O/scx_sis /dev/shm/scx_sis
cd /dev/shm
sysctl -qw net.core.bpf_jit_kallsyms=1
waitst() { for j in $(seq 1 1200); do [ "$(cat /sys/kernel/sched_ext/state)" = $1 ] && break; sleep 0.05; done; }
for v in eevdf sis; do
  if [ $v = sis ]; then ./scx_sis > /dev/shm/s.txt 2>&1 & pid=$!; waitst enabled; sleep 1; fi
  hackbench -p -g 8 -l 100 > /dev/null
  perf record -a -g -F 499 -o /dev/shm/$v.data -- hackbench -p -g 8 -l 100 > $O/$v-hb.txt 2>&1
  perf report -i /dev/shm/$v.data --no-children --sort sym --stdio -g none 2>&1 | grep -v '^#' | grep '%' | head -70 > $O/$v-sym.txt
  perf report -i /dev/shm/$v.data --children --sort sym --stdio -g none 2>&1 | grep -v '^#' | grep '%' | head -90 > $O/$v-children.txt
  perf report -i /dev/shm/$v.data --no-children --sort sym --stdio -G -S native_queued_spin_lock_slowpath 2>&1 | grep -v '^#' | head -150 > $O/$v-lock-callers.txt
  if [ $v = sis ]; then kill -INT $pid; wait $pid; waitst disabled; fi
done
echo done
