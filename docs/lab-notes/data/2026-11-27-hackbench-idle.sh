#!/bin/bash
# hackbench -g 8 under EEVDF and scx_sis, interleaved: wall time, the vCPUs' idle share (/proc/stat),
# Lab notes 2026-11-27. One boot per kernel, side by side, scx_sis copied into $d:
#   d=target/s33/idle-6.12; mkdir -p $d; cp target/release/scx_sis $d/
#   tests/vm/vm.sh --kernel $(tests/vm/kernels.sh 6.12) -- env SCX_SIS_OUT=$PWD/$d bash $PWD/docs/lab-notes/data/2026-11-27-hackbench-idle.sh   # and 7.3
# and the time tasks waited runnable (/proc/schedstat run_delay), per LLC (0-3, 4-7)
O=$SCX_SIS_OUT
echo "detect-virt: $(systemd-detect-virt 2>&1)" | tee $O/idle.txt
dmesg | grep -i -m3 "hypervisor\|tcg" | tee -a $O/idle.txt
grep -m1 -o 'hypervisor' /proc/cpuinfo | tee -a $O/idle.txt
# every $O/scx_sis* binary is a column (scx_sis_NAME: NAME)
cp $O/scx_sis* /dev/shm/; cd /dev/shm
VS="eevdf $(cd $O && ls scx_sis* | sed 's/^scx_sis_//')"
waitst() { for j in $(seq 1 1200); do [ "$(cat /sys/kernel/sched_ext/state)" = $1 ] && break; sleep 0.05; done; }
snap() { { awk '/^cpu[0-9]/{print $1, $5+$6}' /proc/stat; awk '/^cpu[0-9]/{print $1"s", $8, $9}' /proc/schedstat; date +%s.%N; } ; }
calc() { python3 - "$1" "$2" "$3" "$4" <<'PY'
import sys
def parse(s):
    d={}; t=None
    for l in s.strip().split('\n'):
        f=l.split()
        if len(f)==1: t=float(f[0])
        else: d[f[0]]=[int(x) for x in f[1:]]
    return d,t
a,ta=parse(sys.argv[1]); b,tb=parse(sys.argv[2]); w=tb-ta
out=[]
for llc,cpus in (("llc0",range(0,4)),("llc1",range(4,8))):
    idle=sum(b[f"cpu{c}"][0]-a[f"cpu{c}"][0] for c in cpus)/100/(4*w)
    run=sum(b[f"cpu{c}s"][0]-a[f"cpu{c}s"][0] for c in cpus)/1e9/(4*w)
    wait=sum(b[f"cpu{c}s"][1]-a[f"cpu{c}s"][1] for c in cpus)/1e9/(4*w)
    out.append(f"{llc} idle {idle*100:4.1f}% run {run*100:4.1f}% waiting tasks/CPU {wait:5.2f}")
print(f"{sys.argv[3]:8s} round {sys.argv[4]} wall {w:6.2f} | " + " | ".join(out))
PY
}
for r in 1 2 3 4 5; do
  for v in $VS; do
    bin=./scx_sis; [ $v = scx_sis ] || bin=./scx_sis_$v
    if [ $v != eevdf ]; then $bin > /dev/null 2>&1 & pid=$!; waitst enabled; [ "$(cat /sys/kernel/sched_ext/state)" = enabled ] || { echo "scx_sis did not attach"; exit 1; }; sleep 1; fi
    a=$(snap); hackbench -p -g 8 -l 100 > /dev/null; b=$(snap)
    calc "$a" "$b" $v $r | tee -a $O/idle.txt
    if [ $v != eevdf ]; then kill -INT $pid; wait $pid; waitst disabled; fi
  done
done
echo done
