#!/usr/bin/env bash
# lib_selftest: lib.sh's own checks, on the host (scripts/test.sh runs it with the host tests; no
# VM, no root). A helper that lets a missing reading or an unreadable kernel log pass would pass
# every guest test built on it:
#  - num_lt / check_lt / check_gt: an empty or non-numeric value fails any bound;
#  - dmesg_check: a clean log since the marker passes; a bad line after it fails; a missing
#    marker and a failing grep -P fail; a known kernel bug (DMESG_KNOWN, and put_prev_task_scx's
#    ENQ_LAST warning in any test) is a NOTE; with another bad line, a failure;
#  - spread.py (steal): an imbalance whose spinner-less CPU runs another task counts as a stretch
#    but not as idle; its idle task's time within the stretch does, and only that.
SCX_SIS_OUT=$(mktemp -d)
trap 'rm -rf "$SCX_SIS_OUT"' EXIT
source "$(dirname "$0")/lib.sh"

# outcome CMD...: what CMD printed, run in a subshell (its counts stay there): pass, fail or none
outcome() {
  local out
  out=$("$@" 2>&1)
  case "$out" in *"FAIL "*) echo fail ;; *"PASS "*) echo pass ;; *) echo none ;; esac
}
# truth CMD...: true or false
truth() { if "$@"; then echo true; else echo false; fi; }

# ---- num_lt and the bounds built on it ----
check_eq "num_lt 1 2" "$(truth num_lt 1 2)" true
check_eq "num_lt 2 1" "$(truth num_lt 2 1)" false
check_eq "num_lt 1.5 2" "$(truth num_lt 1.5 2)" true
check_eq "num_lt -1 0" "$(truth num_lt -1 0)" true
check_eq "num_lt 1e3 2.5e3" "$(truth num_lt 1e3 2.5e3)" true
check_eq "num_lt '' 5 (empty is no number)" "$(truth num_lt '' 5)" false
check_eq "num_lt abc 1 (not 0 < 1)" "$(truth num_lt abc 1)" false
check_eq "num_lt 1 abc" "$(truth num_lt 1 abc)" false
check_eq "check_lt of an empty reading" "$(outcome check_lt "gap" "" 10)" fail
check_eq "check_gt of 'n/a' against -1" "$(outcome check_gt "rate" "n/a" -1)" fail
check_eq "check_lt 3 < 10" "$(outcome check_lt "gap" 3 10)" pass
check_eq "check_gt 0.5 > 0.25" "$(outcome check_gt "rate" 0.5 0.25)" pass

# ---- spinner_totals: a spinner that printed nothing is not a report ----
d=$SCX_SIS_OUT/spin
mkdir -p "$d"
echo "samples=5000 violations=0 cpus=2 cpu_ms=900 window_ms=1000" >"$d/1.out"
echo "samples=4000 violations=3 cpus=1 cpu_ms=800 window_ms=1000" >"$d/2.out"
: >"$d/3.out"
spinner_totals "$d"/*.out
check_eq "spinner_totals: reports, violations, most CPUs of 2 lines and an empty file" \
  "$SPIN_REPORTS $SPIN_VIOL $SPIN_CPUS" "2 3 2"
spinner_totals "$d/none-*.out"
check_eq "spinner_totals: no files" "$SPIN_REPORTS $SPIN_VIOL $SPIN_CPUS" "0 0 0"

# ---- dmesg_check, on a kernel log given by a stand-in for dmesg ----
KMSG_MARK="scx_sis-test: begin lib_selftest $$"
LOG=()
dmesg() { printf '%s\n' "${LOG[@]}"; }
enabled='[    3.000000] sched_ext: BPF scheduler "scx_sis_0.1.0_x86_64" enabled'
warn='[    4.000000] WARNING: CPU: 1 PID: 20 at kernel/sched/ext.c:100 scx_foo+0x10/0x20'
LOG=("$warn" "[    2.000000] $KMSG_MARK" "$enabled")
check_eq "dmesg_check: clean after the marker (a WARNING before it)" "$(outcome dmesg_check)" pass
LOG=("[    2.000000] $KMSG_MARK" "$enabled" "$warn")
check_eq "dmesg_check: a WARNING after the marker" "$(outcome dmesg_check)" fail
LOG=("$enabled")
check_eq "dmesg_check: marker missing" "$(outcome dmesg_check)" fail
LOG=()
check_eq "dmesg_check: empty log (unreadable)" "$(outcome dmesg_check)" fail
LOG=("[    2.000000] $KMSG_MARK" "$enabled")
check_eq "dmesg_check: grep -P failing (a bad pattern)" "$(DMESG_BAD='(' outcome dmesg_check)" fail
LOG=("[    2.000000] $KMSG_MARK" "$warn")
check_eq "dmesg_check: a known kernel bug only" "$(DMESG_KNOWN='at kernel/sched/ext\.c:100' outcome dmesg_check)" pass
putprev='[    3.000000] WARNING: kernel/sched/ext/ext.c:3254 at put_prev_task_scx+0x3bd/0x4e0, CPU#6: kworker/2:10/10289'
LOG=("[    2.000000] $KMSG_MARK" "$putprev" "[    3.100000] Call Trace:")
check_eq "dmesg_check: put_prev_task_scx's ENQ_LAST warning only (any test)" "$(outcome dmesg_check)" pass
LOG=("[    2.000000] $KMSG_MARK" "$putprev" "$warn")
check_eq "dmesg_check: that warning and another" "$(outcome dmesg_check)" fail

# ---- spread.py: spinners 1 and 2 on CPUs 0 and 1; at 2.5 s spinner 2 moves to CPU 0 and at
# 2.9 s back to CPU 1. CPU 1 runs pid 77 from 2.5 s, its idle task from 2.6 to 2.7 s ----
d=$SCX_SIS_OUT/spread
mkdir -p "$d"
printf '100.000000 0\n' > "$d/t1"
printf '100.000000 1\n102.500000 0\n102.900000 1\n' > "$d/t2"
sw() { echo "          <idle>-0       [00$1] d..2.  $2: sched_switch: prev_comm=a prev_pid=5 prev_prio=120 prev_state=R ==> next_comm=b next_pid=$3 next_prio=120"; }
{ sw 1 102.500000 77; sw 1 102.600000 0; sw 1 102.700000 77; sw 0 102.650000 0; } > "$d/sw"
line=$(python3 "$LIB_DIR/spread.py" --sched-switch "$d/sw" 0-1 2 4 "$d/t1" "$d/t2")
check_eq "spread.py: the stretch (${line})" "$(sed -n 's/.* longest_ms=\([0-9]*\).*/\1/p' <<<"$line")" 400
check_eq "spread.py: the spinner-less CPU's idle time in it, not CPU 0's" \
  "$(sed -n 's/.*idle_longest_ms=\([0-9]*\).*/\1/p' <<<"$line")" 100
check_eq "spread.py: without the sched_switch trace, no idle figure" \
  "$(python3 "$LIB_DIR/spread.py" 0-1 2 4 "$d/t1" "$d/t2" | grep -c idle_)" 0
# ---- proc_runtime_ms: a spinner's run time, read while it runs; a gone task ----
( while :; do :; done ) & spin=$!
sleep 0.1; proc_runtime_ms "$spin"; r0=$RUNTIME_MS
sleep 0.3; proc_runtime_ms "$spin"; r1=$RUNTIME_MS
kill "$spin"; wait "$spin" 2>/dev/null
check "proc_runtime_ms: a spinner ran >= 100 ms of the 300 ms between reads (${r0} -> ${r1} ms)" \
  test $((r1 - r0)) -ge 100 -a "$r0" -ge 0
check_eq "proc_runtime_ms: a task gone" "$(proc_runtime_ms "$spin"; echo "$? $RUNTIME_MS")" "1 -1"
finish
