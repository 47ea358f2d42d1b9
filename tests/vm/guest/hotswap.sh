#!/usr/bin/env bash
# hotswap: with a progress-counting workload on all CPUs, attach/detach scx_sis 4 times
# (each cycle takes tens of seconds under TCG, start-up and the verifier sharing a host thread
# with 8 vCPUs: 10 took 5-6 min per kernel in CI; HOTSWAP_CYCLES=100 is the long mode).
# Asserts: enable_seq grew by exactly the cycle count, every cycle attached and detached,
# the workload's max gap between progress stamps < 1 s, all workers alive, kernel log clean.
# env: SCX_SIS, HOTSWAP_CYCLES (4), HOTSWAP_HOLD (1 s attached per cycle), HOTSWAP_MAX_GAP_MS,
#      HOTSWAP_SPIN_US / HOTSWAP_SLEEP_US: the workers' duty cycle (default 2000/38000: 5% busy,
#      each worker woken 25 times a second). One host thread emulates all 8 vCPUs, and both the
#      spinning (guest time is host time under TCG) and each wakeup (a timer interrupt and a
#      switch, emulated) take it from the loader and the verifier: at 20% busy each attach took
#      25-43 s in CI; in one boot, side by side, 5% at 100 wakeups/s gave 33-41 s, 5% at 25/s
#      19-33 s (2026-11-26); idle 10-12 s. SLEEP_US=0, pure spinners: ~8x slower still).
source "$(dirname "$0")/lib.sh"
require_scx_sis
cycles=${HOTSWAP_CYCLES:-4}
hold=${HOTSWAP_HOLD:-1}
max_gap_ms=${HOTSWAP_MAX_GAP_MS:-1000}
wpid=""
trap 'cleanup_sched; [ -n "$wpid" ] && kill -TERM $wpid 2>/dev/null' EXIT

kmsg_mark
if ! build_progress; then fail "cannot compile progress.c"; finish; exit 1; fi
pidfile="$SCX_SIS_OUT/hotswap-progress.pids"; rm -f "$pidfile"
spin_us=${HOTSWAP_SPIN_US:-2000} sleep_us=${HOTSWAP_SLEEP_US:-38000}
log "workload: $NPROC workers, spin ${spin_us}us / sleep ${sleep_us}us"
"$PROGRESS_BIN" "$NPROC" "$pidfile" "$spin_us" "$sleep_us" >"$SCX_SIS_OUT/hotswap-progress.out" 2>&1 &
wpid=$!
for i in $(seq 100); do [ -s "$pidfile" ] && break; sleep 0.1; done
check_eq "progress workers started" "$(wc -l <"$pidfile" 2>/dev/null)" "$NPROC"

seq0=$(enable_seq)
t_all=$(ts); ok=0; attach_max=0.0; detach_max=0.0
for c in $(seq "$cycles"); do
  tc=$(ts)
  if ! start_sched ${SCX_SIS_ARGS:-}; then fail "cycle $c: attach failed"; cleanup_sched; break; fi
  sleep "$hold"
  if ! stop_sched INT; then fail "cycle $c: detach failed (state $(sched_state))"; break; fi
  if [ "$SCHED_RC" != 0 ]; then fail "cycle $c: scx_sis exit code $SCHED_RC"; tail -n 10 "$SCHED_OUT" | sed 's/^/  | /'; break; fi
  ok=$((ok + 1))
  # N.D seconds compare as integers once the dot is gone (no awk: execs are slow under TCG)
  [ "${ATTACH_S/./}" -gt "${attach_max/./}" ] && attach_max=$ATTACH_S
  [ "${DETACH_S/./}" -gt "${detach_max/./}" ] && detach_max=$DETACH_S
  log "cycle $c/$cycles: attach ${ATTACH_S}s detach ${DETACH_S}s total $(since "$tc")s"
done
seq1=$(enable_seq)
check_eq "clean attach/detach cycles" "$ok" "$cycles"
check_eq "enable_seq growth ($seq0 -> $seq1)" "$((seq1 - seq0))" "$cycles"
note "cycles took $(since "$t_all")s in all; slowest attach ${attach_max}s, slowest detach ${detach_max}s"

alive=0; total=0
for p in $(cat "$pidfile"); do total=$((total + 1)); kill -0 "$p" 2>/dev/null && alive=$((alive + 1)); done
check_eq "workers alive after the cycles" "$alive/$total" "$NPROC/$NPROC"
kill -TERM "$wpid"; wait "$wpid"; wpid=""
summary=$(head -n 1 "$SCX_SIS_OUT/hotswap-progress.out")
log "workload: $summary"
gap=$(echo "$summary" | sed -n 's/.*max_gap_ms=\([0-9.]*\).*/\1/p')
if [ -n "$gap" ]; then check_lt "workload max progress gap ms" "$gap" "$max_gap_ms"
else fail "no max_gap_ms from the workload: $(cat "$SCX_SIS_OUT/hotswap-progress.out")"; fi
dmesg_check
finish
