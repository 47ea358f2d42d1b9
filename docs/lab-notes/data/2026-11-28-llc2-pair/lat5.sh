#!/bin/bash
# enqueue -> running by target state, scx_sis with each switch that could touch the idle path
# run in the guest: tests/vm/vm.sh --kernel <7.3 bzImage> --mttcg --cpus 2 ... -- env SCX_SIS=<scx_sis> <this dir>/lat5.sh
here=$(cd "$(dirname "$0")" && pwd)
run() { echo "== $1"; $here/rrlat.sh --by-target; }
att() { "$@" >/tmp/sched.log 2>&1 & pid=$!; for i in $(seq 60); do [ "$(cat /sys/kernel/sched_ext/state)" = enabled ] && break; sleep 1; done; sleep 2; }
det() { kill -INT $pid; wait $pid; sleep 1; }
B=${SCX_SIS:?the scx_sis binary to trace}
run EEVDF
for f in "" "--no-builtin-idle" "--no-balance" "--no-preempt" "--wake-affine off"; do att $B $f; run "scx_sis $f"; det; done
run EEVDF
dmesg | grep -iE "oops|bug:|panic" | head
