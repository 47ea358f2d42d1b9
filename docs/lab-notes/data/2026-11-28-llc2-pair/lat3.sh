#!/bin/bash
# wake->run split under EEVDF, scx_sis, scx_bpfland, scx_cosmos, EEVDF (one boot)
export PATH=/root/.cache/scx_sis/peers/bin:$PATH
run() { echo "== $1"; /work/notes/s40/rrlat.sh ${TRACE_ARGS:-}; }   # TRACE_ARGS=--by-target: split by target state
att() { "$@" >/tmp/sched.log 2>&1 & pid=$!; for i in $(seq 60); do [ "$(cat /sys/kernel/sched_ext/state)" = enabled ] && break; sleep 1; done; cat /sys/kernel/sched_ext/root/ops 2>/dev/null; sleep 2; }
det() { kill -INT $pid; wait $pid; sleep 1; }
run EEVDF
att /work/notes/s40/base/scx_sis; run scx_sis; det
att scx_bpfland; run scx_bpfland; det
[ -n "${NO_COSMOS:-}" ] || { att scx_cosmos; run scx_cosmos; det; }
run EEVDF
dmesg | grep -iE "oops|bug:|panic" | head
