#!/bin/bash
# per-program BPF cost on netperf TCP_RR for several scx_sis configurations, then a function_graph
# of the scx entry points (callees of the BPF: kfuncs and helpers) under the default one
# run in the guest: tests/vm/vm.sh --kernel <7.3 bzImage> --mttcg --cpus 2 --sockets 1 --cores 1 --threads 2 --
#   env SCX_SIS=<scx_sis> OUT=<a dir under target/> [CONFS='|--steal off|...'] <this dir>/cost.sh
out=${OUT:?}; mkdir -p $out
B=${SCX_SIS:?}
cp $B /dev/shm/scx_sis; B=/dev/shm/scx_sis
T=/sys/kernel/tracing
netserver -D -4 -L 127.0.0.1 -p 12866 >/dev/null 2>&1 &
sleep 0.5
rr() { netperf -4 -H 127.0.0.1 -p 12866 -t TCP_RR -l ${1:-5} -P 0 -- -r 1,1 | awk 'NF>=6{print $6; exit}'; }
att() { "$@" >/tmp/sched.log 2>&1 & pid=$!; for i in $(seq 120); do [ "$(cat /sys/kernel/sched_ext/state)" = enabled ] && break; sleep 0.5; done; sleep 1; }
det() { kill -INT $pid; wait $pid; sleep 1; }
progs() { bpftool prog show -j > $1; }
table() { python3 - $1 $2 $3 <<'PY'
import json,sys
a={p['id']:p for p in json.load(open(sys.argv[1]))}
b=json.load(open(sys.argv[2])); tr=float(sys.argv[3]) or 1
tot=0; rows=[]
for p in b:
    o=a.get(p['id'],{})
    n=p.get('run_cnt',0)-o.get('run_cnt',0); t=p.get('run_time_ns',0)-o.get('run_time_ns',0)
    if n>0: rows.append((t,n,p.get('name','?'))); tot+=t
for t,n,name in sorted(rows,reverse=True)[:14]:
    print(f"  {name:26s} cnt {n:8d} avg {t/n:7.0f} ns  per-trans {t/tr/1000:6.1f} us")
print(f"  TOTAL {tot/1e9:.3f} s  per-trans {tot/tr/1000:.1f} us")
PY
}
IFS='|' read -r -a CONFS <<<"${CONFS:-|--steal off|--no-builtin-idle|--oracle-every 0}"
for round in 1 2; do
  echo "== EEVDF rate $(rr 5)"
  for c in "${CONFS[@]}"; do
    att $B $c
    sysctl -qw kernel.bpf_stats_enabled=1; progs /tmp/p0.json
    r=$(rr 5)
    progs /tmp/p1.json; sysctl -qw kernel.bpf_stats_enabled=0
    echo "== scx_sis '$c' rate $r"
    table /tmp/p0.json /tmp/p1.json $(awk -v r=$r 'BEGIN{print r*5}')
    det
  done
done
# function_graph from the scx entry points
att $B
echo 0 > $T/tracing_on; echo > $T/trace
echo function_graph > $T/current_tracer
echo ${DEPTH:-6} > $T/max_graph_depth
for f in select_task_rq_scx enqueue_task_scx dequeue_task_scx balance_scx pick_task_scx put_prev_task_scx set_next_task_scx task_tick_scx __scx_update_idle scx_tick; do
  grep -qx "$f" <(cut -d' ' -f1 $T/available_filter_functions) && echo $f >> $T/set_graph_function
done
cat $T/set_graph_function | tr '\n' ' '; echo
echo funcgraph-tail > $T/trace_options
echo 40000 > $T/buffer_size_kb
echo 1 > $T/tracing_on
rr 2 >/dev/null
echo 0 > $T/tracing_on
cat $T/trace > $out/sis.graph
echo nop > $T/current_tracer
det
dmesg | grep -iE "oops|bug:|panic" | head
