#!/bin/bash
# One fair-sleep probe (a 50 ms sleeper beside 2 hogs per CPU) under `perf sched record`, in the
# test VM, through prof.sh (it runs PROF_CMD under EEVDF, then under each of PROF_CONFS, then
# EEVDF again); the probe's output and `perf script` go to $SCX_SIS_OUT/ps-<state>-<ns>.*:
#   tests/vm/run.sh --kernel 6.12 --env "PROF_CMD=$PWD/docs/lab-notes/data/2026-11-26-sleepperf.sh" --env "PROF_CONFS=" prof
# then, on the host: python3 docs/lab-notes/data/2026-11-26-sleeper-cycles.py FILE.script SLEEPER_PID
# (the sleeper's pid: the `__fairness` process, the hogs are its children).
s=$(cat /sys/kernel/sched_ext/state); n=$(date +%s%N)
d=/tmp/ps-$s-$n
perf sched record -q -o $d.data -- "$SCX_SIS" __fairness sleep --secs 5 --warmup 1 > $d.out 2>&1
cp $d.out "$SCX_SIS_OUT/ps-$s-$n.out"
perf script -i $d.data -F cpu,time,event,trace 2>/dev/null > "$SCX_SIS_OUT/ps-$s-$n.script"
grep -h "metric\|overshoot" $d.out
