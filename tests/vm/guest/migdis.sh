#!/usr/bin/env bash
# migdis: a task switched out while migration-disabled stays where it is and keeps running.
# MD_WORKERS workers (migdis.c) spend nearly all their time in a test run of a sleepable syscall
# BPF program, which the kernel runs pinned to its CPU (migrate_disable()) with preemption on.
# Under full preemption (switched on through debugfs for the test, put back after) a slice that
# ends there switches the worker out migration-disabled (6.12 then passes it to ops.enqueue, 7.x
# keeps it in the local DSQ itself). 2 hogs per CPU and a hackbench run beside
# them, so the balance, the rotations and the steals have queued work to move around them. First
# under EEVDF (NOTE lines, the gaps for reference), then under scx_sis in the same boot.
# Asserted under scx_sis: it counted such switches in ops.stopping (at least MD_MIN_SEEN, so the
# case was made);
# every worker completed test runs with no gap over MD_GAP_MS (a worker left in a queue its CPU
# never runs stops completing, and the watchdog ejects the scheduler); still attached, no
# re-attach, a clean exit and kernel log (a move the kernel refuses is a runtime error there).
# env: SCX_SIS (required), MD_SECS (10), MD_WORKERS (NPROC), MD_MIN_SEEN (100), MD_GAP_MS (5000)
source "$(dirname "$0")/lib.sh"
require_scx_sis

MD_SECS=${MD_SECS:-10}
MD_WORKERS=${MD_WORKERS:-$NPROC}
MD_MIN_SEEN=${MD_MIN_SEEN:-100}
MD_GAP_MS=${MD_GAP_MS:-5000}
# bpf_loop() rounds a test run: 1 ms on a host CPU, tens of ms under TCG beside the hogs
MD_LOOPS=131072

PRE=/sys/kernel/debug/sched/preempt
[ -e "$PRE" ] || mount -t debugfs nodev /sys/kernel/debug 2>/dev/null
if [ ! -w "$PRE" ]; then
  fail "no $PRE (CONFIG_PREEMPT_DYNAMIC and debugfs): cannot switch to full preemption"; finish; exit 1
fi
# the mode in use is the one in parentheses: "none voluntary (full) lazy"
pre_saved=$(sed -n 's/.*(\([a-z]*\)).*/\1/p' "$PRE")
load_pids=() HB_PGID=""
stop_load() {
  [ ${#load_pids[@]} -gt 0 ] && kill -- "${load_pids[@]}" 2>/dev/null
  [ -n "$HB_PGID" ] && kill -- "-$HB_PGID" 2>/dev/null
  wait "${load_pids[@]}" 2>/dev/null
  load_pids=() HB_PGID=""
}
trap 'stop_load; cleanup_sched; [ -n "$pre_saved" ] && echo "$pre_saved" > "$PRE"' EXIT
echo full > "$PRE" || { fail "cannot write 'full' to $PRE"; finish; exit 1; }
log "preemption: full for the test (was: ${pre_saved:-?})"

MD_BIN="$SCX_SIS_OUT/migdis"
cc -O2 -Wall -o "$MD_BIN" "$LIB_DIR/migdis.c" || { fail "cannot build migdis.c"; finish; exit 1; }
MD_DIR=$SCX_SIS_OUT
[ -d /dev/shm ] && MD_DIR=/dev/shm/scx_sis-test && mkdir -p "$MD_DIR"

# run NAME: the load and the workers for MD_SECS; sets CALLS_MIN GAP_MAX DONE (workers that reported)
run() {
  local name=$1 i p workers=()
  rm -f "$MD_DIR"/migdis-"$name"-*.out
  stress-ng --cpu $((2 * NPROC)) --timeout $((MD_SECS + 60)) >/dev/null 2>&1 & load_pids+=($!)
  setsid hackbench -p -g 1 -l 100000000 >/dev/null 2>&1 & HB_PGID=$!
  for ((i = 0; i < MD_WORKERS; i++)); do
    "$MD_BIN" "$MD_SECS" "$MD_LOOPS" >"$MD_DIR/migdis-$name-$i.out" 2>&1 & workers+=($!)
  done
  for p in "${workers[@]}"; do wait "$p"; done
  stop_load
  CALLS_MIN="" GAP_MAX=0 DONE=0
  local calls gap cpus
  for ((i = 0; i < MD_WORKERS; i++)); do
    read -r _ _ calls _ gap _ cpus < "$MD_DIR/migdis-$name-$i.out" 2>/dev/null || continue
    is_num "$calls" && is_num "$gap" || continue
    DONE=$((DONE + 1))
    [ -z "$CALLS_MIN" ] || [ "$calls" -lt "$CALLS_MIN" ] && CALLS_MIN=$calls
    [ "$gap" -gt "$GAP_MAX" ] && GAP_MAX=$gap
    log "$name: worker $i: $calls test runs, longest gap $gap ms, on $cpus CPU(s)"
  done
  cp "$MD_DIR"/migdis-"$name"-*.out "$SCX_SIS_OUT/" 2>/dev/null
}

kmsg_mark
run eevdf
note "EEVDF: $DONE of $MD_WORKERS workers reported, fewest test runs ${CALLS_MIN:-?}, longest gap $GAP_MAX ms"

start_sched --stats-out "$SCX_SIS_OUT/migdis-stats.json" || { fail "scx_sis did not attach"; finish; exit 1; }
seq0=$(enable_seq)
run scx_sis
check_eq "scx_sis: workers that reported" "$DONE" "$MD_WORKERS"
check_gt "scx_sis: fewest test runs of a worker" "${CALLS_MIN:-0}" 0
check_lt "scx_sis: longest gap between a worker's test runs, ms" "$GAP_MAX" "$MD_GAP_MS"
check "still attached" kill -0 "$SCHED_PID"
check_eq "no re-attach (enable_seq)" "$(enable_seq)" "$seq0"
stop_sched INT || fail "no clean detach"
check_eq "exit code" "$SCHED_RC" 0
if stats_load "$SCX_SIS_OUT/migdis-stats.json"; then
  check_gt "scx_sis: runnable tasks switched out migration-disabled" "${STATS[migration_disabled]:-}" "$MD_MIN_SEEN"
else
  fail "no stats in $SCX_SIS_OUT/migdis-stats.json"
fi
dmesg_check
finish
