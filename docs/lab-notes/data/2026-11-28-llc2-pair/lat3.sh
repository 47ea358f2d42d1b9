#!/bin/bash
# wake->run split under EEVDF, scx_sis, scx_bpfland, scx_cosmos, EEVDF (one boot)
# run in the guest: tests/vm/vm.sh --kernel <7.3 bzImage> --mttcg --cpus 2 ... -- env SCX_SIS=<scx_sis> <this dir>/lat3.sh
here=$(cd "$(dirname "$0")" && pwd)
export PATH=${SCX_SIS_CACHE:-$HOME/.cache/scx_sis}/peers/bin:$PATH   # bench/setup-peers.sh puts the peers there
run() { echo "== $1"; $here/rrlat.sh ${TRACE_ARGS:-}; }   # TRACE_ARGS=--by-target: split by target state
att() { "$@" >/tmp/sched.log 2>&1 & pid=$!; for i in $(seq 60); do [ "$(cat /sys/kernel/sched_ext/state)" = enabled ] && break; sleep 1; done; cat /sys/kernel/sched_ext/root/ops 2>/dev/null; sleep 2; }
det() { kill -INT $pid; wait $pid; sleep 1; }
run EEVDF
att ${SCX_SIS:?the scx_sis binary to trace}; run scx_sis; det
att scx_bpfland; run scx_bpfland; det
[ -n "${NO_COSMOS:-}" ] || { att scx_cosmos; run scx_cosmos; det; }
run EEVDF
dmesg | grep -iE "oops|bug:|panic" | head
