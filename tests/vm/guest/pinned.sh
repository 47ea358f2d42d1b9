#!/usr/bin/env bash
# pinned: tasks pinned to one CPU (taskset) stay there while the scheduler balances around them
# (balancing never moves a task outside p->cpus_ptr). 2 spinners pinned to one CPU of
# each LLC among 2 unpinned hogs per CPU and a hackbench for wakeup churn, PINNED_SECS long.
# Checked from outside (/proc/PID/stat field 39 sampled every 0.1 s: never another CPU) and
# from inside (pinned.c's sched_getcpu samples: no violation, 1 CPU seen); every pinned
# spinner gets at least half the mean CPU share of the unpinned hogs in the same run, and never
# under PINNED_FLOOR_PCT (balancing must not starve a CPU's own tasks by stacking movable work
# on it). Measured against the hogs of the same run, not against EEVDF's run: which CPUs
# hackbench's 40 tasks crowd is a draw: on 6.12 the least share ranged 12-28% under EEVDF and
# 10-22% under scx_sis over boots, so a bar of half EEVDF's least failed by the draw. The same
# under EEVDF first (NOTE lines, with EEVDF against the same bar).
# env: SCX_SIS (required)
source "$(dirname "$0")/lib.sh"
require_scx_sis
trap 'cleanup_sched; kill $(jobs -p) 2>/dev/null' EXIT

# 10 s: where hackbench's tasks crowd averages out over more of the run than at 6 s
PINNED_SECS=10
PINNED_FLOOR_PCT=5
# one CPU per LLC (the second CPU of each, so not CPU 0 with its housekeeping)
cpulist() { local r; for r in ${1//,/ }; do seq "${r%-*}" "${r#*-}"; done; }
pcpus=()
for l in $(cat /sys/devices/system/cpu/cpu*/cache/index3/shared_cpu_list | sort -u); do
  mapfile -t cs < <(cpulist "$l"); pcpus+=("${cs[1]:-${cs[0]}}")
done
[ ${#pcpus[@]} -gt 0 ] || pcpus=(1)
# The sampling shell runs as SCHED_FIFO, so it takes its CPU whenever it samples; kept on a CPU
# without pinned spinners. Where it landed on theirs, their loss was the sampler's doing, not the
# scheduler's: 12% each beside hogs at 38% under scx_sis, 13% beside 26% under EEVDF (6.12, host
# under load), the failures this test used to draw.
sampler_cpu=0
for ((i = 0; i < NPROC; i++)); do [[ " ${pcpus[*]} " == *" $i "* ]] || { sampler_cpu=$i; break; }; done
# the spinners' reports in the guest's tmpfs, not over 9p
PIN_DIR=$SCX_SIS_OUT
[ -d /dev/shm ] && PIN_DIR=/dev/shm/scx_sis-test && mkdir -p "$PIN_DIR"
PINNED_BIN="$SCX_SIS_OUT/pinned"
cc -O2 -Wall -o "$PINNED_BIN" "$LIB_DIR/pinned.c" || { fail "cannot build pinned.c"; finish; exit 1; }
kmsg_mark

# scenario NAME: sets OFF (outside samples on another CPU), SAMPLES, VIOL, MAXCPUS, MIN_SHARE
# (the least pinned spinner's, % of a CPU), HOG_SHARE (the hogs' mean, over the sampling). The
# shell samples as SCHED_FIFO 60 without forking, so its timing does not depend on the scheduler
# under test, on a CPU without pinned spinners.
scenario() {
  local name=$1 pins=() hogs=() c i p
  local -A home
  rm -f "$PIN_DIR"/pinned-$name-*.out
  for ((i = 0; i < 2 * NPROC; i++)); do "$PINNED_BIN" 60 >/dev/null & hogs+=($!); done
  for c in "${pcpus[@]}"; do
    for i in 1 2; do
      taskset -c "$c" "$PINNED_BIN" "$PINNED_SECS" 1 >"$PIN_DIR/pinned-$name-$c-$i.out" & p=$!
      pins+=("$p"); home[$p]=$c
    done
  done
  # its own process group, so its workers die with it
  setsid hackbench -p -g 2 -l 100000 >/dev/null 2>&1 & local hb=$!
  taskset -pc "$sampler_cpu" $$ >/dev/null
  chrt -f -p 60 $$
  # sample once taskset has exec'd the spinner (before that the task may be anywhere)
  for p in "${pins[@]}"; do for ((i = 0; i < 300; i++)); do proc_comm "$p"; [ "$COMM" = pinned ] && break; snooze 0.02; done; done
  OFF=0 SAMPLES=0
  local -A ticks0; local h1=0 n=0
  for p in "${hogs[@]}"; do proc_stat "$p" && ticks0[$p]=$((STAT[11] + STAT[12])); done
  now_ms_set; local t0=$NOW_MS
  while now_ms_set; [ $((NOW_MS - t0)) -lt $(( (PINNED_SECS - 2) * 1000 )) ]; do
    for p in "${pins[@]}"; do
      proc_comm "$p"; [ "$COMM" = pinned ] || continue
      proc_stat "$p" || continue
      SAMPLES=$((SAMPLES + 1))
      [ "${STAT[36]}" = "${home[$p]}" ] || { OFF=$((OFF + 1)); log "$name: pinned $p (CPU ${home[$p]}) seen on CPU ${STAT[36]}"; }
    done
    snooze 0.1
  done
  now_ms_set; local t1=$NOW_MS
  for p in "${hogs[@]}"; do
    [ -n "${ticks0[$p]:-}" ] && proc_stat "$p" || continue
    h1=$((h1 + STAT[11] + STAT[12] - ticks0[$p])); n=$((n + 1))
  done
  chrt -o -p 0 $$
  taskset -pc "$(< /sys/devices/system/cpu/online)" $$ >/dev/null
  # clock ticks are 10 ms (USER_HZ 100): percent of a CPU = ticks * 10 / elapsed ms * 100
  HOG_SHARE=$(( n > 0 && t1 > t0 ? h1 * 1000 / n / (t1 - t0) : 0 ))
  wait "${pins[@]}"
  kill "${hogs[@]}" 2>/dev/null; kill -- -"$hb" 2>/dev/null; wait "${hogs[@]}" "$hb" 2>/dev/null
  local outs; outs=$(cat "$PIN_DIR"/pinned-$name-*.out | tr ' ' '\n')
  VIOL=$(awk -F= '$1 == "violations" { s += $2 } END { print s + 0 }' <<<"$outs")
  MAXCPUS=$(awk -F= '$1 == "cpus" && $2 > m { m = $2 } END { print m + 0 }' <<<"$outs")
  MIN_SHARE=$(cat "$PIN_DIR"/pinned-$name-*.out | awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
    s = v["window_ms"] > 0 ? 100 * v["cpu_ms"] / v["window_ms"] : 0; if (NR == 1 || s < m) m = s } END { printf "%.0f", m }')
  REPORTS=$(grep -c '^window_ms=' <<<"$outs")
  log "$name: ${#pins[@]} spinners pinned to CPUs ${pcpus[*]} among $((2 * NPROC)) hogs + hackbench: $SAMPLES outside samples, $OFF elsewhere; inside: $VIOL violations, max $MAXCPUS CPUs seen; least CPU share ${MIN_SHARE}%, hogs' mean ${HOG_SHARE}%"
}

scenario eevdf
note "EEVDF: pinned spinners seen elsewhere $OFF/$SAMPLES, violations $VIOL, least CPU share ${MIN_SHARE}%, hogs' mean ${HOG_SHARE}%"
# the bar: half the hogs' mean share in the same run, floor PINNED_FLOOR_PCT
bar() { local b=$(( HOG_SHARE / 2 )); [ "$b" -ge "$PINNED_FLOOR_PCT" ] || b=$PINNED_FLOOR_PCT; echo "$b"; }
want_share=$(bar)
note "EEVDF against the same bar: least ${MIN_SHARE}%, bar ${want_share}%: $([ "${MIN_SHARE:-0}" -ge "$want_share" ] && echo met || echo missed)"
start_sched || { fail "scx_sis did not attach"; finish; exit 1; }
scenario scx_sis
want_share=$(bar)
# busy vCPUs run in turn under single-threaded TCG: the 0.1 s sampling loop gets ~2 rounds a second
check_eq "pinned spinners' reports read" "$REPORTS" $((2 * ${#pcpus[@]}))
check "outside samples taken ($SAMPLES, >= 3 per spinner)" test "$SAMPLES" -ge $((3 * 2 * ${#pcpus[@]}))
check_eq "pinned spinners seen (field 39) on another CPU" "$OFF" 0
check_eq "pinned spinners' own samples outside their mask" "$VIOL" 0
check_eq "most CPUs a pinned spinner ran on" "$MAXCPUS" 1
check "every pinned spinner got >= ${want_share}% of its CPU (half the hogs' mean ${HOG_SHARE}%, floor ${PINNED_FLOOR_PCT}%; least ${MIN_SHARE}%)" test "${MIN_SHARE:-0}" -ge "$want_share"
check "hogs measured (mean share ${HOG_SHARE}% > 0)" test "$HOG_SHARE" -gt 0
check "still attached" kill -0 "$SCHED_PID"
stop_sched INT || fail "no clean detach"
check_eq "exit code" "$SCHED_RC" 0
dmesg_check
finish
