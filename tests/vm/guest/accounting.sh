#!/usr/bin/env bash
# accounting: the runnable count of scx_sis's load accounting comes back to idle after every way
# a task stops being runnable. scx_sis counts a task on its CPU where its wakeup is placed
# (ops.select_cpu's direct inserts, ops.enqueue) and when it runs, and uncounts it when it sleeps
# (ops.stopping) or leaves sched_ext (ops.disable), not in ops.runnable/quiescent (two calls a
# wakeup). A path it missed would leave tasks counted that no longer run, more with each round.
# ACC_HOGS hogs per CPU (so some wait queued at any moment), beside a hackbench loop (sleeps and
# wakeups), go through ACC_ROUNDS rounds of: nice 5 and back, affinity to one CPU and back,
# SCHED_FIFO and back (out of sched_ext and in again, often while queued; CPUs - 1 hogs at a
# time), SCHED_IDLE and back, a move into a cgroup with its own cpu.weight and out. Then CPUs - 1
# of them leave sched_ext (SCHED_FIFO) and stop (SIGSTOP) there, the rest stop in it; then all
# are killed. The count (`runnable` of `scx_sis --monitor`, its least of ACC_SAMPLES reports) is
# read idle before, with the hogs stopped, and with them killed: each minus the first must be
# <= ACC_SLACK (a kworker or the monitor's own threads). The counts are printed. One python3 does
# the churn, at SCHED_FIFO 2 above the hogs it makes FIFO 1: a fork+exec per change would take
# seconds each beside the hogs in the TCG guest.
# env: SCX_SIS (required), ACC_HOGS (3), ACC_ROUNDS (6), ACC_SAMPLES (3), ACC_SLACK (2)
source "$(dirname "$0")/lib.sh"
require_scx_sis

ACC_HOGS=${ACC_HOGS:-3}
ACC_ROUNDS=${ACC_ROUNDS:-6}
ACC_SAMPLES=${ACC_SAMPLES:-3}
ACC_SLACK=${ACC_SLACK:-2}

cg=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
base="$cg/scx_sis-acc.$$"
hb_pid=""
HOGS_FILE="$SCX_SIS_OUT/accounting-hogs"
kill_hogs() { [ -s "$HOGS_FILE" ] && kill -9 $(cat "$HOGS_FILE") 2>/dev/null; rm -f "$HOGS_FILE"; }
trap 'kill $hb_pid 2>/dev/null; kill_hogs; rmdir "$base/w" "$base" 2>/dev/null; cleanup_sched' EXIT

# least_runnable: the least `runnable` of ACC_SAMPLES one-second --monitor reports; sets RUNNABLE
least_runnable() {
  local out
  out=$(timeout $((ACC_SAMPLES + 3)) "$SCX_SIS" --monitor 1 2>&1)
  RUNNABLE=$(grep -o 'runnable -\?[0-9]\+' <<<"$out" | awk '{ print $2 }' | head -n "$ACC_SAMPLES" |
    sort -n | head -n 1)
  [ -n "$RUNNABLE" ] ||
    { log "no runnable field from --monitor:"; tail -n 5 <<<"$out" | sed 's/^/  | /'; }
}

{ grep -qw cpu "$cg/cgroup.subtree_control" || echo +cpu >"$cg/cgroup.subtree_control"; } &&
  mkdir "$base" && echo +cpu >"$base/cgroup.subtree_control" && mkdir "$base/w" &&
  echo 300 >"$base/w/cpu.weight" || fail "cgroup setup under $cg"
kmsg_mark
start_sched || { fail "scx_sis did not attach"; finish; exit 1; }
seq0=$(enable_seq)
sleep 2
least_runnable; before=$RUNNABLE
note "runnable while idle, before the churn: ${before:-?}"

( while :; do hackbench -p -g 2 -l 200 >/dev/null 2>&1; done ) & hb_pid=$!
# the churner at SCHED_FIFO 2, above the hogs it makes FIFO 1: else it would wait behind them
chrt -f 2 python3 - "$((NPROC * ACC_HOGS))" "$ACC_ROUNDS" "$base/w" "$cg" "$HOGS_FILE" <<'PY' >"$SCX_SIS_OUT/accounting-churn.out" 2>&1
import os, signal, sys, time
n, rounds, cgw, root = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
cpus = sorted(os.sched_getaffinity(0))
hogs = []
for i in range(n):
    pid = os.fork()
    if pid == 0:
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
        while True:
            pass
    hogs.append(pid)
time.sleep(1)
ops = 0
def do(f, *a):
    global ops
    try:
        f(*a); ops += 1
    except OSError as e:
        print("failed:", f.__name__, a, e)
# never more FIFO hogs at once than CPUs - 1: 6.12 has no server for sched_ext under RT, so
# with every CPU held no sched_ext task runs, the RCU kthread among them, and a cgroup write
# (it waits for a grace period) would wait for ever (the fair class has its own server)
batch = max(1, len(cpus) - 1)
for r in range(rounds):
    for i, p in enumerate(hogs):
        do(os.setpriority, os.PRIO_PROCESS, p, 5)
        do(os.sched_setaffinity, p, {cpus[(i + r) % len(cpus)]})
    for b in range(0, n, batch):
        for p in hogs[b:b + batch]:
            do(os.sched_setscheduler, p, os.SCHED_FIFO, os.sched_param(1))
        time.sleep(0.02)
        for p in hogs[b:b + batch]:
            do(os.sched_setscheduler, p, os.SCHED_OTHER, os.sched_param(0))
    for p in hogs:
        do(os.setpriority, os.PRIO_PROCESS, p, 0)
        do(os.sched_setaffinity, p, set(cpus))
        with open(cgw + "/cgroup.procs", "w") as f:
            do(f.write, str(p))
    time.sleep(0.3)
    for p in hogs:
        do(os.sched_setscheduler, p, os.SCHED_IDLE, os.sched_param(0))
    time.sleep(0.05)
    for p in hogs:
        do(os.sched_setscheduler, p, os.SCHED_OTHER, os.sched_param(0))
        with open(root + "/cgroup.procs", "w") as f:
            do(f.write, str(p))
    time.sleep(0.3)
# the end: CPUs - 1 hogs leave sched_ext (SCHED_FIFO) and stop there, the rest stop in it; the
# shell reads the count with all of them stopped, then kills them
for i, p in enumerate(hogs):
    if i < batch:
        do(os.sched_setscheduler, p, os.SCHED_FIFO, os.sched_param(1))
    os.kill(p, signal.SIGSTOP)
with open(sys.argv[5], "w") as f:
    f.write(" ".join(map(str, hogs)))
print(f"hogs {n} rounds {rounds} changes {ops}")
PY
check_eq "churn ran (python3 exit code)" "$?" 0
churn_out="$SCX_SIS_OUT/accounting-churn.out"
grep -q '^failed' "$churn_out" &&
  fail "churn: $(grep -c '^failed' "$churn_out") changes failed: $(grep -m 1 '^failed' "$churn_out")"
log "churn: $(tail -n 1 "$churn_out")"
kill $hb_pid 2>/dev/null; wait $hb_pid 2>/dev/null; hb_pid=""
pkill -x hackbench; sleep 2

# acc_check WHEN: the count now against the one before the churn
acc_check() {
  least_runnable
  note "runnable while idle, $1: ${RUNNABLE:-?}"
  if [ -z "$before" ] || [ -z "$RUNNABLE" ]; then
    fail "runnable count unreadable (before '${before:-}', $1 '${RUNNABLE:-}')"
  else
    check "runnable count back to idle $1: $RUNNABLE - $before <= $ACC_SLACK" \
      test $((RUNNABLE - before)) -le "$ACC_SLACK"
  fi
}
acc_check "with the hogs stopped (in and out of sched_ext)"
kill_hogs
sleep 1
acc_check "with the hogs killed"
check "still attached" kill -0 "$SCHED_PID"
check_eq "no re-attach (enable_seq)" "$(enable_seq)" "$seq0"
stop_sched INT || fail "no clean detach"
check_eq "exit code" "$SCHED_RC" 0
dmesg_check
rmdir "$base/w" "$base" || fail "cgroup cleanup"
finish
