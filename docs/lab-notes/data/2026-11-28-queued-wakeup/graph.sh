#!/bin/bash
# function_graph of do_idle (depth 4) on every CPU during a 2 s netperf TCP_RR, under EEVDF,
# scx_sis and scx_bpfland; graph-agg.py sums the durations per function
# run in the guest: tests/vm/vm.sh ... -- env SCX_SIS=<scx_sis> OUT=<rw dir> <this dir>/graph.sh
out=${OUT:?a directory the guest may write}; mkdir -p $out
export PATH=${SCX_SIS_CACHE:-$HOME/.cache/scx_sis}/peers/bin:$PATH
T=/sys/kernel/tracing
netserver -D -4 -L 127.0.0.1 -p 12866 >/dev/null 2>&1 &
sleep 0.5
trace() {
  echo 0 > $T/tracing_on; echo > $T/trace
  echo function_graph > $T/current_tracer
  echo ${DEPTH:-4} > $T/max_graph_depth
  echo do_idle > $T/set_graph_function
  echo funcgraph-tail > $T/trace_options
  echo funcgraph-irqs > $T/trace_options
  echo 20000 > $T/buffer_size_kb
  echo 1 > $T/tracing_on
  netperf -4 -H 127.0.0.1 -p 12866 -t TCP_RR -l 2 -- -r 1,1 >/dev/null 2>&1
  echo 0 > $T/tracing_on
  cat $T/trace > $out/$1.graph
  echo nop > $T/current_tracer
}
att() { "$@" >/tmp/sched.log 2>&1 & pid=$!; for i in $(seq 60); do [ "$(cat /sys/kernel/sched_ext/state)" = enabled ] && break; sleep 1; done; sleep 2; }
det() { kill -INT $pid; wait $pid; sleep 1; }
trace eevdf
att ${SCX_SIS:?}; trace sis; det
att scx_bpfland; trace bpfland; det
trace eevdf2
dmesg | grep -iE "oops|bug:|panic" | head
