#!/usr/bin/env bash
# smoke: attach scx_sis, run ~20 s of stress-ng (cpu + fork, all CPUs) plus hackbench loops,
# check it is still attached, detach with SIGINT, exit 0, clean kernel log.
# Runs scx_sis with --stats 5 and checks its reports (>= 2, enqueues counted) and that the stats
# socket is root-only (0600).
# env: SCX_SIS (required), SMOKE_SECS (default 20), SCX_SIS_ARGS (extra scheduler options)
source "$(dirname "$0")/lib.sh"
require_scx_sis
secs=${SMOKE_SECS:-20}
trap cleanup_sched EXIT

kmsg_mark
check_eq "state before start" "$(sched_state)" disabled
if ! start_sched --stats 5 ${SCX_SIS_ARGS:-}; then
  fail "scx_sis did not attach"; finish; exit 1
fi
pass "attached in ${ATTACH_S}s"
check_eq "state" "$(sched_state)" enabled
# the stats socket is root-only without --stats-group
check_eq "stats socket mode" "$(stat -c %a /var/run/scx/root/stats 2>&1)" 600
case "$(sched_ops)" in scx_sis*) pass "root/ops = $(sched_ops)" ;; *) fail "root/ops = '$(sched_ops)'" ;; esac

log "load: stress-ng -c $NPROC -f $NPROC --affinity $NPROC --timeout ${secs}s + hackbench loop"
stress-ng -c "$NPROC" -f "$NPROC" --affinity "$NPROC" --timeout "${secs}s" --metrics-brief --temp-path /tmp \
  >"$SCX_SIS_OUT/smoke-stress-ng.out" 2>&1 &
spid=$!
hb_out="$SCX_SIS_OUT/smoke-hackbench.out"; : >"$hb_out"
t0=$(ts); hb_runs=0; hb_fail=0
while awk -v a="$t0" -v b="$(ts)" -v s="$secs" 'BEGIN { exit !(b - a < s) }'; do
  if hackbench -g 2 -f 10 -l 200 >>"$hb_out" 2>&1; then hb_runs=$((hb_runs + 1)); else hb_fail=$((hb_fail + 1)); break; fi
done
wait "$spid"; src=$?
check_eq "stress-ng exit code" "$src" 0
[ "$src" = 0 ] || tail -n 15 "$SCX_SIS_OUT/smoke-stress-ng.out" | sed 's/^/  | /'
if [ "$hb_fail" = 0 ] && [ "$hb_runs" -gt 0 ]; then pass "hackbench: $hb_runs runs OK ($(grep -m1 '^Time' "$hb_out" || true))"
else fail "hackbench: $hb_runs OK, $hb_fail failed"; tail -n 5 "$hb_out" | sed 's/^/  | /'; fi
grep -E 'bogo|stress-ng: (info|fail)' "$SCX_SIS_OUT/smoke-stress-ng.out" | tail -n 4 | sed 's/^/  | /'

check "scx_sis still running after the load" kill -0 "$SCHED_PID"
check_eq "state after the load" "$(sched_state)" enabled
case "$(sched_ops)" in scx_sis*) pass "still root/ops = scx_sis" ;; *) fail "root/ops after load = '$(sched_ops)'" ;; esac

if stop_sched INT; then pass "detached in ${DETACH_S}s after SIGINT"; else fail "no clean detach after SIGINT (state $(sched_state))"; fi
check_eq "scx_sis exit code" "$SCHED_RC" 0
[ "$SCHED_RC" = 0 ] || tail -n 20 "$SCHED_OUT" | sed 's/^/  | /'
check_eq "state after detach" "$(sched_state)" disabled
# a stats report, not the loader's start-up lines: '[scx_sis] wake ... | enq N direct ...'
n_rep=$(grep -c '^\[scx_sis\] wake prev/sync' "$SCHED_OUT")
last_enq=$(grep '^\[scx_sis\] wake prev/sync' "$SCHED_OUT" | tail -n 1 | sed -n 's/.*| enq \([0-9]*\) .*/\1/p')
check "--stats 5: >= 2 reports in ${secs}s of load (got $n_rep)" test "$n_rep" -ge 2
check "--stats 5: the last report counted enqueues (enq ${last_enq:-?})" test "${last_enq:-0}" -gt 0
dmesg_check
finish
