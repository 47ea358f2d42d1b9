#!/bin/bash
# where guest time goes, EEVDF vs scx_sis, with perf record -a -e cpu-clock (no PMU under TCG: time with
# interrupts off is charged where they come back on, e.g. finish_task_switch, _raw_spin_unlock_irqrestore)
# run in the guest: tests/vm/vm.sh --kernel <7.3 bzImage> --mttcg --cpus 2 --sockets 1 --cores 1 --threads 2 --
#   env SCX_SIS=<scx_sis> OUT=<a dir under target/> <this dir>/prof.sh
out=${OUT:?}; mkdir -p "$out"
B=${SCX_SIS:?}; cp $B /dev/shm/scx_sis; B=/dev/shm/scx_sis
sysctl -qw kernel.kptr_restrict=0 kernel.perf_event_paranoid=-1 net.core.bpf_jit_kallsyms=1
netserver -D -4 -L 127.0.0.1 -p 12866 >/dev/null 2>&1 &
(cd /tmp && tbench_srv >/dev/null 2>&1 &)
sleep 1
rr() { netperf -4 -H 127.0.0.1 -p 12866 -t TCP_RR -l ${1:-5} -P 0 -- -r 1,1 | awk 'NF>=6{print $6; exit}'; }
tb() { (cd /tmp && tbench -t ${1:-5} 2 127.0.0.1 2>&1 | grep -o 'Throughput [0-9.]*' | tail -1); }
att() { "$@" >/tmp/sched.log 2>&1 & pid=$!; for i in $(seq 120); do [ "$(cat /sys/kernel/sched_ext/state)" = enabled ] && break; sleep 0.5; done; sleep 1; }
det() { kill -INT $pid; wait $pid; sleep 1; }
prof() { # name workload
  perf record -e cpu-clock -a -F 4999 -g -o /tmp/$1.data -- bash -c "$2" > $out/$1.rate 2>$out/$1.rec.err
  perf report -i /tmp/$1.data --no-children --sort sym --stdio 2>/dev/null | grep -v '^#' | grep -v '^$' | grep '%' | head -70 > $out/$1.top
  perf report -i /tmp/$1.data --no-children --sort dso --stdio 2>/dev/null | grep -v '^#' | grep -v '^$' | head -12 > $out/$1.dso
  perf report -i /tmp/$1.data --children --sort sym --stdio -g none 2>/dev/null | grep -v '^#' | grep -v '^$' | grep '%' | head -90 > $out/$1.children
}
declare -f rr tb > /tmp/fns.sh
for round in 1 2; do
  prof eevdf-rr-$round "source /tmp/fns.sh; rr 5"
  prof eevdf-tb-$round "source /tmp/fns.sh; tb 5"
  att $B
  prof sis-rr-$round "source /tmp/fns.sh; rr 5"
  prof sis-tb-$round "source /tmp/fns.sh; tb 5"
  det
done
dmesg | grep -iE "oops|bug:|panic" | head
