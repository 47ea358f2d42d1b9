#!/usr/bin/env bash
# (a copy of tests/vm/guest/pinned.sh that samples hog placement and runs 3 rounds; run it from
# tests/vm/guest/, where lib.sh and pinned.c are, e.g. by tests/vm/vm.sh --kernel <6.12> --cpus 8
# --sockets 2 --cores 2 --threads 2 -- env SCX_SIS=<scx_sis> bash <guest dir>/pinned_diag.sh)
# pinned: tasks pinned to one CPU (taskset) stay there while the scheduler balances around them
# (balancing never moves a task outside p->cpus_ptr). 2 spinners pinned to one CPU of
# each LLC among 2 unpinned hogs per CPU and a hackbench for wakeup churn, PINNED_SECS long.
# Checked from outside (/proc/PID/stat field 39 sampled every 0.1 s: never another CPU) and
# from inside (pinned.c's sched_getcpu samples: no violation, 1 CPU seen); every pinned
# spinner gets at least half the CPU share the least-served one gets under EEVDF in the same
# boot, and never under PINNED_FLOOR_PCT (balancing must not starve the CPU's own tasks by
# stacking movable work on it). A pinned CPU runs 2 spinners, ~2 hogs and hackbench's tasks, so
# a spinner's fair share is well under 25%: a fixed 15% bound failed once on 6.12 at 10%.
# The same under EEVDF first (NOTE lines).
# env: SCX_SIS (required)
source "$(dirname "$0")/lib.sh"
require_scx_sis
trap 'cleanup_sched; kill $(jobs -p) 2>/dev/null' EXIT

PINNED_SECS=6
PINNED_FLOOR_PCT=5
# one CPU per LLC (the second CPU of each, so not CPU 0 with its housekeeping)
cpulist() { local r; for r in ${1//,/ }; do seq "${r%-*}" "${r#*-}"; done; }
pcpus=()
for l in $(cat /sys/devices/system/cpu/cpu*/cache/index3/shared_cpu_list | sort -u); do
  mapfile -t cs < <(cpulist "$l"); pcpus+=("${cs[1]:-${cs[0]}}")
done
[ ${#pcpus[@]} -gt 0 ] || pcpus=(1)
PINNED_BIN="$SCX_SIS_OUT/pinned"
cc -O2 -Wall -o "$PINNED_BIN" "$LIB_DIR/pinned.c" || { fail "cannot build pinned.c"; finish; exit 1; }
kmsg_mark

# scenario NAME: sets OFF (outside samples on another CPU), SAMPLES, VIOL, MAXCPUS, MIN_SHARE
# (% of a CPU). The shell samples as SCHED_FIFO 60 without forking, so its timing does not
# depend on the scheduler under test.
scenario() {
  local name=$1 pins=() hogs=() c i p
  local -A home
  rm -f "$SCX_SIS_OUT"/pinned-$name-*.out
  for ((i = 0; i < 2 * NPROC; i++)); do "$PINNED_BIN" 60 >/dev/null & hogs+=($!); done
  for c in "${pcpus[@]}"; do
    for i in 1 2; do
      taskset -c "$c" "$PINNED_BIN" "$PINNED_SECS" 1 >"$SCX_SIS_OUT/pinned-$name-$c-$i.out" & p=$!
      pins+=("$p"); home[$p]=$c
    done
  done
  # its own process group, so its workers die with it
  setsid hackbench -p -g 2 -l 100000 >/dev/null 2>&1 & local hb=$!
  chrt -f -p 60 $$
  # sample once taskset has exec'd the spinner (before that the task may be anywhere)
  for p in "${pins[@]}"; do for ((i = 0; i < 300; i++)); do proc_comm "$p"; [ "$COMM" = pinned ] && break; snooze 0.02; done; done
  OFF=0 SAMPLES=0 HOGN=0; HOGAT=()
  now_ms_set; local t0=$NOW_MS
  while now_ms_set; [ $((NOW_MS - t0)) -lt $(( (PINNED_SECS - 2) * 1000 )) ]; do
    for p in "${pins[@]}"; do
      proc_comm "$p"; [ "$COMM" = pinned ] || continue
      proc_stat "$p" || continue
      SAMPLES=$((SAMPLES + 1))
      [ "${STAT[36]}" = "${home[$p]}" ] || { OFF=$((OFF + 1)); log "$name: pinned $p (CPU ${home[$p]}) seen on CPU ${STAT[36]}"; }
    done
    for p in "${hogs[@]}"; do proc_stat "$p" || continue; HOGAT[${STAT[36]}]=$(( ${HOGAT[${STAT[36]}]:-0} + 1 )); done
    HOGN=$((HOGN + 1))
    snooze 0.1
  done
  chrt -o -p 0 $$
  local hl=""; for ((i = 0; i < NPROC; i++)); do hl+=" cpu$i=$(awk -v a=${HOGAT[$i]:-0} -v n=$HOGN 'BEGIN{printf "%.2f", a/n}')"; done
  log "$name: mean hogs per CPU:$hl"
  for f in "$SCX_SIS_OUT"/pinned-$name-*.out; do log "$name: $(basename $f): $(cat $f)"; done
  wait "${pins[@]}"
  kill "${hogs[@]}" 2>/dev/null; kill -- -"$hb" 2>/dev/null; wait "${hogs[@]}" "$hb" 2>/dev/null
  local outs; outs=$(cat "$SCX_SIS_OUT"/pinned-$name-*.out | tr ' ' '\n')
  VIOL=$(awk -F= '$1 == "violations" { s += $2 } END { print s + 0 }' <<<"$outs")
  MAXCPUS=$(awk -F= '$1 == "cpus" && $2 > m { m = $2 } END { print m + 0 }' <<<"$outs")
  MIN_SHARE=$(cat "$SCX_SIS_OUT"/pinned-$name-*.out | awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
    s = v["window_ms"] > 0 ? 100 * v["cpu_ms"] / v["window_ms"] : 0; if (NR == 1 || s < m) m = s } END { printf "%.0f", m }')
  log "$name: ${#pins[@]} spinners pinned to CPUs ${pcpus[*]} among $((2 * NPROC)) hogs + hackbench: $SAMPLES outside samples, $OFF elsewhere; inside: $VIOL violations, max $MAXCPUS CPUs seen; least CPU share ${MIN_SHARE}%"
}

for round in 1 2 3; do
scenario eevdf
note "EEVDF r$round: least CPU share ${MIN_SHARE}%"
start_sched --stats-out "$SCX_SIS_OUT/diag-stats-$round.json" || { fail "scx_sis did not attach"; finish; exit 1; }
scenario scx_sis
note "scx_sis r$round: least CPU share ${MIN_SHARE}%"
stop_sched INT || fail "no clean detach"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print({k:v for k,v in d.items() if any(w in k for w in ("balance","steal","rotat","preempt","migr"))})' "$SCX_SIS_OUT/diag-stats-$round.json"
done
finish
