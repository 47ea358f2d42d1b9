#!/usr/bin/env bash
# partial: with scx_sis --partial, only SCHED_EXT (policy 7) tasks run on sched_ext.
# Checked through /proc/PID/sched: 'policy' and 'ext.enabled' (present on 6.12 and 7.3).
source "$(dirname "$0")/lib.sh"
require_scx_sis
pids=()
trap 'cleanup_sched; for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done' EXIT

spin() { exec bash -c 'while :; do :; done'; }
kmsg_mark
if ! start_sched --partial ${SCX_SIS_ARGS:-}; then fail "scx_sis --partial did not attach"; finish; exit 1; fi
pass "--partial attached in ${ATTACH_S}s"
check_eq "switch_all in partial mode" "$(cat $SCX/switch_all 2>/dev/null)" 0

( spin ) & ext_pid=$!; pids+=("$ext_pid")
( spin ) & oth_pid=$!; pids+=("$oth_pid")
if set_policy "$ext_pid" 7; then pass "sched_setscheduler(SCHED_EXT) on pid $ext_pid"
else fail "sched_setscheduler(SCHED_EXT) refused"; fi
sleep 1
check_eq "ext task policy" "$(proc_sched "$ext_pid" policy)" 7
check_eq "ext task ext.enabled" "$(on_ext "$ext_pid")" 1
check_eq "other task policy" "$(proc_sched "$oth_pid" policy)" 0
check_eq "other task ext.enabled" "$(on_ext "$oth_pid")" 0
check_eq "this shell ext.enabled" "$(on_ext $$)" 0
# the SCHED_EXT task must actually get CPU time from scx_sis
r0=$(proc_sched "$ext_pid" se.sum_exec_runtime); sleep 2; r1=$(proc_sched "$ext_pid" se.sum_exec_runtime)
ran=$(awk -v a="$r0" -v b="$r1" 'BEGIN { printf "%.0f", b - a }')
check_gt "ext task got CPU from scx_sis (ms run in 2 s)" "$ran" 100

# a task switched to SCHED_EXT while attached moves to ext; back to SCHED_OTHER leaves it
set_policy "$oth_pid" 7; sleep 0.5
check_eq "other task after setscheduler(7): ext.enabled" "$(on_ext "$oth_pid")" 1
set_policy "$oth_pid" 0; sleep 0.5
check_eq "other task after setscheduler(0): ext.enabled" "$(on_ext "$oth_pid")" 0

if stop_sched INT; then pass "detached in ${DETACH_S}s"; else fail "no clean detach"; fi
check_eq "scx_sis exit code" "$SCHED_RC" 0
check_eq "ext task after detach: ext.enabled" "$(on_ext "$ext_pid")" 0
check "ext task still alive after detach" kill -0 "$ext_pid"
dmesg_check
finish
