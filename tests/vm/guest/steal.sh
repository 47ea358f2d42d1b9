#!/usr/bin/env bash
# steal: the overloaded-CPU map and steal-on-idle (issue 4).
#  1. imbalance: nproc spinners start pinned to CPU 0, then are allowed everywhere. Spinners
#     never sleep, so only stealing moves them; the CPU time they get in the next window measures
#     work conservation: >= 90% of nproc CPUs means no CPU sat idle while work waited (sampled
#     over the window). Steal successes must be > 0. With --steal off the same load is printed
#     for contrast.
#  2. pinned tasks (taskset) never run outside their mask, checked from inside the task.
#  3. per-CPU kthreads (ksoftirqd/N) are never moved off their CPU; no stall.
# env: SCX_SIS (required), STEAL_SECS (window, default 4)
source "$(dirname "$0")/lib.sh"
require_scx_sis
trap 'cleanup_sched; kill $(jobs -p) 2>/dev/null' EXIT
win=${STEAL_SECS:-4}
kmsg_mark

PINNED_BIN="$SCX_SIS_OUT/pinned"
cc -O2 -Wall -o "$PINNED_BIN" "$LIB_DIR/pinned.c" || { fail "cannot build pinned.c"; finish; exit 1; }

cpu_ns() {
  local sum=0 p
  for p in "$@"; do sum=$((sum + $(cut -d' ' -f1 "/proc/$p/schedstat" 2>/dev/null || echo 0))); done
  echo $sum
}

imbalance() { # NAME ARGS...: prints utilisation (% of nproc CPUs) of the released spinners
  local name=$1; shift
  JSON="$SCX_SIS_OUT/steal-$name.json"; rm -f "$JSON"
  start_sched --stats-out "$JSON" "$@" || { fail "$name: scx_sis did not attach"; return 1; }
  local pids=() i
  for i in $(seq "$NPROC"); do taskset -c 0 "$PINNED_BIN" $((win + 6)) >"$SCX_SIS_OUT/steal-$name-spin-$i.out" & pids+=($!); done
  sleep 1
  for p in "${pids[@]}"; do taskset -pc "0-$((NPROC - 1))" "$p" >/dev/null; done
  sleep 1
  local a b t0 t1
  a=$(cpu_ns "${pids[@]}"); t0=$(date +%s%N)
  sleep "$win"
  b=$(cpu_ns "${pids[@]}"); t1=$(date +%s%N)
  UTIL=$(awk -v d=$((b - a)) -v w=$((t1 - t0)) -v n="$NPROC" 'BEGIN { printf "%.1f", 100 * d / (w * n) }')
  wait "${pids[@]}"
  VIOL=$(cat "$SCX_SIS_OUT"/steal-$name-spin-*.out | awk -F'violations=' '{ split($2, a, " "); s += a[1] } END { print s + 0 }')
  check "$name: still attached" kill -0 "$SCHED_PID"
  stop_sched INT || fail "$name: no clean detach"
  check_eq "$name: exit code" "$SCHED_RC" 0
}

imbalance steal
log "steal: $NPROC spinners released from CPU 0 got ${UTIL}% of $NPROC CPUs over ${win}s"
check_gt "steal: released spinners use >= 90% of the CPUs" "$UTIL" 89.9
check_eq "steal: affinity violations seen from inside" "$VIOL" 0
check_gt "steal: steals" "$(stat_of "$JSON" steals)" 0
check_gt "steal: overloaded transitions" "$(stat_of "$JSON" overload_sets)" 0
log "steal: $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(" ".join(f"{k}={d[k]}" for k in ["steal_attempts","steals","steal_empty","steal_not_migratable","overload_sets","overload_clears","llc_steals"]))' "$JSON")"

imbalance nosteal --steal off
log "steal off: the same spinners got ${UTIL}% (nothing moves a spinner that never sleeps)"
check_eq "steal off: no steals" "$(stat_of "$JSON" steals)" 0

# pinned tasks under an overloaded machine: 2 spinners per CPU, half pinned to {2,3}
JSON="$SCX_SIS_OUT/steal-pinned.json"
start_sched --stats-out "$JSON" || fail "pinned: scx_sis did not attach"
pids=()
for i in $(seq "$NPROC"); do taskset -c 2,3 "$PINNED_BIN" "$win" >"$SCX_SIS_OUT/steal-pinned-$i.out" & pids+=($!); done
for i in $(seq "$NPROC"); do "$PINNED_BIN" "$win" >/dev/null & pids+=($!); done
declare -A kcpu
for k in $(pgrep -x 'ksoftirqd/[0-9]+'); do kcpu[$k]=$(awk '{ print $39 }' "/proc/$k/stat"); done
hackbench -p -g "$NPROC" -l 100 >/dev/null 2>&1
wait "${pids[@]}"
VIOL=$(cat "$SCX_SIS_OUT"/steal-pinned-*.out | awk -F'violations=' '{ split($2, a, " "); s += a[1] } END { print s + 0 }')
SEEN=$(cat "$SCX_SIS_OUT"/steal-pinned-*.out | awk -F'cpus=' '{ if ($2 + 0 > m) m = $2 + 0 } END { print m + 0 }')
check_eq "pinned: samples outside the mask {2,3}" "$VIOL" 0
check "pinned: at most 2 CPUs seen by a pinned task (saw $SEEN)" test "$SEEN" -le 2
moved=0
for k in "${!kcpu[@]}"; do
  name=$(cat "/proc/$k/comm" 2>/dev/null) || continue
  now=$(awk '{ print $39 }' "/proc/$k/stat")
  [ "${name#ksoftirqd/}" = "$now" ] || { moved=$((moved + 1)); log "$name on CPU $now"; }
done
check_eq "per-CPU kthreads off their CPU" "$moved" 0
check "pinned: still attached" kill -0 "$SCHED_PID"
stop_sched INT || fail "pinned: no clean detach"
check_eq "pinned: exit code" "$SCHED_RC" 0
dmesg_check
finish
