#!/bin/bash
# Where an idle attach's time goes (lab notes 2026-11-26): two -v attaches with
# their phase times, then one under `perf record -g`, reported in the guest (its kallsyms):
#   d=target/s28/prof-6.12; mkdir -p $d; cp target/release/scx_sis $d/
#   SCX_SIS_VM_APPEND="mitigations=off" tests/vm/vm.sh --kernel $(tests/vm/kernels.sh 6.12) -- \
#     env SCX_SIS_OUT=$PWD/$d bash docs/lab-notes/data/2026-11-26-attach-prof.sh
O=$SCX_SIS_OUT
cp $O/scx_sis /dev/shm/scx_sis
cd /dev/shm
waitst() { for j in $(seq 1 600); do [ "$(cat /sys/kernel/sched_ext/state)" = $1 ] && break; sleep 0.05; done; }
for i in 1 2; do
  s=$(date +%s.%N); ./scx_sis -v > /dev/shm/v$i.txt 2>&1 & pid=$!; waitst enabled
  echo "attach-v$i $(echo "$(date +%s.%N) - $s" | bc)"; sleep 1; kill -INT $pid; wait $pid; waitst disabled
  grep -E 'opened in|loaded \(verified\)|attached \(every' /dev/shm/v$i.txt
done
s=$(date +%s.%N); ./scx_sis --help >/dev/null; echo "help $(echo "$(date +%s.%N) - $s" | bc)"
s=$(date +%s.%N); bpftool btf dump file /sys/kernel/btf/vmlinux format raw > /dev/null; echo "bpftool-btf-dump $(echo "$(date +%s.%N) - $s" | bc)"
perf record -F 499 -g -o /dev/shm/p.data -- ./scx_sis > /dev/shm/p.txt 2>&1 & ppid=$!
waitst enabled; sleep 1; pkill -INT -x scx_sis; wait $ppid; waitst disabled
perf report -i /dev/shm/p.data --no-children --sort dso --stdio 2>&1 | grep -v '^#' | grep '%' | head -20 > $O/perf-dso.txt
perf report -i /dev/shm/p.data --no-children --sort sym --stdio -g none 2>&1 | grep -v '^#' | grep '%' | head -60 > $O/perf-sym.txt
perf report -i /dev/shm/p.data --children --sort sym --stdio -g none 2>&1 | grep -v '^#' | grep '%' | head -80 > $O/perf-children.txt
cp /dev/shm/v1.txt $O/
echo done
