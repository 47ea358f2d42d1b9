#!/bin/bash
# guest: does the overloaded bit agree with the DSQ's count at the sync step? env BIN=path
cp $BIN /dev/shm/scx_sis_a
att() { "$@" >/tmp/sched.log 2>&1 & pid=$!; for i in $(seq 120); do [ "$(cat /sys/kernel/sched_ext/state)" = enabled ] && break; sleep 0.5; done; sleep 1; }
det() { kill -INT $pid; wait $pid; sleep 1; }
dump() {
  m=$(bpftool map show | awk '/\.bss/{print $1}' | tr -d : | head -1)
  bpftool map dump id $m -j > /tmp/bss.json
  python3 - "$1" <<'PY'
import json, sys
d = json.load(open('/tmp/bss.json')); out = {}
def walk(o):
    if isinstance(o, dict):
        for k, v in o.items():
            if k in ('ovl_agree', 'claim_self'): out[k] = v
            else: walk(v)
    elif isinstance(o, list):
        for x in o: walk(x)
walk(d)
a = out['ovl_agree']; c = out['claim_self']
print(f"{sys.argv[1]}: sync step looks: bit clear & DSQ empty {a[0]}, bit clear & DSQ not empty {a[1]} (false negative), bit set & DSQ empty {a[2]} (stale), bit set & DSQ not empty {a[3]}; enqueue claims: other CPU {c[0]}, own CPU {c[1]}")
PY
}
att /dev/shm/scx_sis_a
for i in 1 2 3; do hackbench -p -g 4 -l 100 | grep Time; done
dump "hackbench -p -g 4 -l 100 x3"
for i in 1 2 3; do hackbench -p -g 1 -l 100 | grep Time; done
dump "+ hackbench -p -g 1 -l 100 x3"
tbench_srv >/dev/null 2>&1 &
sleep 1
tbench -t 5 2 127.0.0.1 2>&1 | awk '/Throughput/{print "tbench 2:", $2}'
dump "+ tbench 2 clients 5 s"
det
dmesg | grep -iE "oops|bug:|panic" | tail -3
