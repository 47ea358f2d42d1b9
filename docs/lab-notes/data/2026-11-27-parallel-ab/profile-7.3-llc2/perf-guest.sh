#!/bin/bash
# where the time goes at 2 vCPUs, EEVDF vs scx_sis, hackbench -p -g 2 -l 300 (perf record, cpu-clock); run as
#   tests/vm/vm.sh --mttcg --kernel $(tests/vm/kernels.sh 7.3) --sockets 2 --cores 1 --threads 1 -- bash THIS
out=${OUT:-$PWD/target/prof}; mkdir -p "$out"  # vm.sh runs the command in the repo; target/ is writable
PERF=/usr/bin/perf
sysctl -qw kernel.kptr_restrict=0 kernel.perf_event_paranoid=-1
run() { # name
  for i in 1 2 3; do TIMEFORMAT="$1 run $i: %R s"; time hackbench -p -g 2 -l 300 >/dev/null; done 2>&1
  $PERF record -e cpu-clock -a -F 499 -o /tmp/$1.data -- hackbench -p -g 2 -l 300 >/dev/null 2>$out/$1.rec.err
  $PERF report -i /tmp/$1.data --no-children --sort sym --stdio 2>$out/$1.rep.err | grep -v '^#' | grep -v '^$' | head -45 > $out/$1.top
  $PERF report -i /tmp/$1.data --no-children --sort comm,dso --stdio 2>$out/$1.rep.err | grep -v '^#' | grep -v '^$' | head -15 > $out/$1.dso
  awk '/^ctxt/{print "ctxt", $2}' /proc/stat
}
run eevdf
target/release/scx_sis > $out/sched.out 2>&1 &
pid=$!
for i in $(seq 50); do [ "$(cat /sys/kernel/sched_ext/state)" = enabled ] && break; sleep 0.2; done
cat /sys/kernel/sched_ext/state
run scx_sis
kill -INT $pid; wait $pid

