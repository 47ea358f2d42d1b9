#!/bin/bash
# tbench at 2 clients: per run, idle share of each CPU, switches, each tbench task's CPU over
# time (sampled), its run delay per timeslice, and how often one CPU idled with 2+ runnable
# guest: env BUILDS="name=path ..." ROUNDS=N tbdiag.sh
for b in $BUILDS; do cp ${b#*=} /dev/shm/scx_sis_${b%%=*}; done
att() { "$@" >/tmp/sched.log 2>&1 & pid=$!; for i in $(seq 120); do [ "$(cat /sys/kernel/sched_ext/state)" = enabled ] && break; sleep 0.5; done; sleep 1; }
det() { kill -INT $pid; wait $pid; sleep 1; }
tbench_srv >/dev/null 2>&1 &
sleep 1
run() {
  local tag=$1
  tbench -t 5 2 127.0.0.1 >/tmp/tb.out 2>&1 &
  local tb=$!
  python3 - "$tag" $tb <<'PY'
import os, sys, time, re
tag, tb = sys.argv[1], int(sys.argv[2])
def cpustat():
    d = {}
    for l in open('/proc/interrupts'):
        f = l.split()
        if f and f[0] in ('RES:', 'CAL:', 'TLB:', 'LOC:', 'IWI:'):
            d[f[0][:-1]] = sum(int(x) for x in f[1:3] if x.isdigit())
    for l in open('/proc/stat'):
        f = l.split()
        if re.match(r'cpu\d', f[0]): d[f[0]] = [int(x) for x in f[1:]]
        elif f[0] == 'ctxt': d['ctxt'] = int(f[1])
    return d
def tasks():
    out = {}
    for pid in os.listdir('/proc'):
        if not pid.isdigit(): continue
        try:
            comm = open(f'/proc/{pid}/comm').read().strip()
            if comm not in ('tbench', 'tbench_srv'): continue
            for tid in os.listdir(f'/proc/{pid}/task'):
                st = open(f'/proc/{pid}/task/{tid}/stat').read()
                rest = st[st.rindex(')')+2:].split()
                cpu, state = int(rest[36]), rest[0]
                ss = [int(x) for x in open(f'/proc/{pid}/task/{tid}/schedstat').read().split()]
                out[int(tid)] = (comm, cpu, state, ss)
        except (OSError, ValueError, IndexError):
            pass
    return out
# wait for the 2 clients and their 2 server children, then sample only them
pids = []
for i in range(100):
    t = tasks()
    nc = sum(1 for v in t.values() if v[0] == 'tbench'); ns = sum(1 for v in t.values() if v[0] == 'tbench_srv')
    if nc >= 3 and ns >= 3:
        pids = list(t); break
    time.sleep(0.1)
if not pids:
    print(f"  {tag}: tasks not found: {nc} tbench, {ns} tbench_srv")
def tasks():
    out = {}
    for tid in pids:
        try:
            st = open(f'/proc/{tid}/stat').read()
            comm = st[st.index('(')+1:st.rindex(')')]
            rest = st[st.rindex(')')+2:].split()
            ss = [int(x) for x in open(f'/proc/{tid}/schedstat').read().split()]
            out[tid] = (comm, int(rest[36]), rest[0], ss)
        except (OSError, ValueError, IndexError):
            pass
    return out
time.sleep(1.0)
s0, t0, w0 = cpustat(), tasks(), time.time()
samples = []
for i in range(20):
    time.sleep(0.1)
    t = tasks()
    samples.append({k: (v[1], v[2]) for k, v in t.items()})
s1, t1, w1 = cpustat(), tasks(), time.time()
cpus = sorted(k for k in s0 if k.startswith('cpu'))
idle = [((s1[c][3]+s1[c][4]) - (s0[c][3]+s0[c][4])) / max(1, sum(s1[c]) - sum(s0[c])) for c in cpus]
ctxt = (s1['ctxt'] - s0['ctxt']) / (w1 - w0)
irq = ' '.join(f"{k} {(s1.get(k,0)-s0.get(k,0))/max(1,s1['ctxt']-s0['ctxt'])*1000:.0f}" for k in ('RES','CAL','TLB','LOC','IWI'))
rd = run = slices = 0
for k, v in t1.items():
    if k in t0:
        run += v[3][0] - t0[k][3][0]; rd += v[3][1] - t0[k][3][1]; slices += v[3][2] - t0[k][3][2]
# pairs: for each sample, CPUs of the runnable (R) tbench tasks
rr = {}
for s in samples:
    r = sorted(c for c, st in s.values() if st == 'R')
    key = ','.join(map(str, r)); rr[key] = rr.get(key, 0) + 1
place = {}
for k in t1:
    cs = [s[k][0] for s in samples if k in s]
    place[k] = ''.join(str(c) for c in cs)
print(f"  {tag}: idle {' '.join(f'{100*x:.0f}%' for x in idle)}  switches/s {ctxt:.0f}  "
      f"run delay/slice {rd/max(1,slices)/1e3:.0f} us  run/slice {run/max(1,slices)/1e3:.0f} us  "
      f"slices/s {slices/(w1-w0):.0f}  per 1000 switches: {irq}")
print(f"  {tag}: runnable CPUs per sample {sorted(rr.items(), key=lambda x: -x[1])[:6]}")
for k in sorted(t1):
    print(f"  {tag}: {t1[k][0]:10s} {k} cpus {place[k]}")
PY
  wait $tb
  echo "$tag tput $(awk '/Throughput/{print $2}' /tmp/tb.out) per s: $(awk '/execute/{printf "%s ", $3}' /tmp/tb.out)"
}
for round in $(seq ${ROUNDS:-3}); do
  run "EEVDF r$round a"; run "EEVDF r$round b"
  for b in $BUILDS; do
    n=${b%%=*}; att /dev/shm/scx_sis_$n
    run "$n r$round a"; run "$n r$round b"
    det
  done
done
dmesg | grep -iE "oops|bug:|panic" | tail -3
