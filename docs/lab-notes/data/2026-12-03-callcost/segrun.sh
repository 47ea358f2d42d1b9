#!/bin/bash
# guest: segment profile of one build under tbench 2 clients. env BIN=path
cp $BIN /dev/shm/scx_sis_seg
att() { "$@" >/tmp/sched.log 2>&1 & pid=$!; for i in $(seq 120); do [ "$(cat /sys/kernel/sched_ext/state)" = enabled ] && break; sleep 0.5; done; sleep 1; }
det() { kill -INT $pid; wait $pid; sleep 1; }
tbench_srv >/dev/null 2>&1 &
sleep 1
run() { tbench -t ${1:-5} 2 127.0.0.1 2>&1 | awk '/Throughput/{print $2}'; }
echo "EEVDF c2 $(run)"
att /dev/shm/scx_sis_seg
echo "seg c2 $(run)"
m=$(bpftool map show | awk '/\.bss/{print $1}' | tr -d : | head -1)
bpftool map dump id $m -j > /tmp/bss0.json
echo "seg c2 $(run 10)"
bpftool map dump id $m -j > /tmp/bss1.json
cp /tmp/bss1.json ${OUT:-/tmp/x/seg}/bss1.json
python3 - <<'PY'
import json
def get(f):
    d = json.load(open(f))
    out = {}
    def walk(o):
        if isinstance(o, dict):
            for k, val in o.items():
                if k in ('segprof_ns', 'segprof_n'): out[k] = val
                else: walk(val)
        elif isinstance(o, list):
            for x in o: walk(x)
    walk(d)
    return out
a = get('/tmp/bss0.json'); b = get('/tmp/bss1.json')
names = {7:'sel: sync sis_allowed',8:'sel: nr_queued(this)',17:'sel: nr_queued(this) again',9:'sel: nr_queued(LOCAL)',0:'sel: task ctx lookup',1:'sel: rest after ttwu (non-sync: whole ttwu)',2:'sel: ttwu to sync step (affine, claims)',3:'sel: sync-step tests + stat',4:'sel: vtime_place',5:'sel: task_account',6:'sel: dsq_insert',
 10:'run: task ctx lookup',11:'run: scx_bpf_now',12:'run: reconcile_busy',13:'run: runnable_at+cg_account',14:'run: weight_kept+gb_running',15:'run: load_account',16:'run: vtime_running',
 20:'stop: task ctx lookup',21:'stop: scx_bpf_now',22:'stop: gb_charge_curr',23:'stop: vtime_stopping(+nr_queued)',24:'stop: task_unaccount'}
for i in sorted(names):
    n = b['segprof_n'][i] - a['segprof_n'][i]; t = b['segprof_ns'][i] - a['segprof_ns'][i]
    if n: print(f"{i:2d} {names[i]:45s} n {n:8d} ns/hit {t/n:7.0f}")
PY
sysctl -qw kernel.bpf_stats_enabled=1
bpftool prog show -j > /tmp/p0.json; echo "seg c2 bpf_stats $(run)"; bpftool prog show -j > /tmp/p1.json
sysctl -qw kernel.bpf_stats_enabled=0
python3 - <<'PY'
import json
a = {p['id']: p for p in json.load(open('/tmp/p0.json'))}
for p in json.load(open('/tmp/p1.json')):
    o = a.get(p['id'], {}); n = p.get('run_cnt',0)-o.get('run_cnt',0); t = p.get('run_time_ns',0)-o.get('run_time_ns',0)
    if n > 100: print(f"  {p.get('name','?'):24s} calls {n:8d} ns/call {t/n:6.0f} jited {p.get('bytes_jited')} xlated {p.get('bytes_xlated')}")
PY
bpftool prog show | grep -A3 sis_select_cpu | head -5
det
dmesg | grep -iE "oops|bug:|panic" | tail -3
