#!/usr/bin/env bash
# top: `scx_sis top` and live knobs, under a load (hackbench loop + stress-ng); the
# refusals of 3 run first, before the load (they need none).
#  1. `scx_sis top` in tmux: two captures of the pane a few refreshes apart both show the
#     overview, and the numbers in them differ (live); the per-LLC and per-CPU views show a row
#     per LLC and a cell per CPU; the group balancer view says it is off (no --gb-parent here).
#  2. `scx_sis set steal=off`: the stats show steal_mode off, and the steal counter, read over
#     the stats socket from 1 s after the change on, stops growing; `steal=on` makes it grow
#     again. The change is in the scheduler's log.
#  3. refused: a non-root `scx_sis set` (setpriv to nobody) exits 2, the control socket is 0600
#     and, opened up, still refuses nobody by its uid; an unknown key or a bad value exits 2 and
#     the knob stays. Other knobs: sis-mode, slice, oracle, scope show in the stats; linear mode
#     keeps no filter (no filter set, no false-positive probe), full mode again does (its filters
#     rebuilt) and its scans succeed.
#  4. the scheduler detaches: top shows "no scx_sis running - retrying"; a new scx_sis starts:
#     top shows live numbers again; q quits with exit 0.
# Also records `scx_sis top --json` replies into $SCX_SIS_OUT/top-record.jsonl (the source of
# the host tests' fixtures, tests/fixtures/top-*.jsonl).
# env: SCX_SIS (required)
source "$(dirname "$0")/lib.sh"
require_scx_sis
command -v tmux >/dev/null || { fail "tmux is not installed (scripts/setup.sh installs it)"; finish; exit 1; }
# tmux cannot make its socket on the 9p-shared target/: keep it in the guest's /run
TMUX_SOCK=/run/scx_sis-top.tmux
tm() { tmux -S "$TMUX_SOCK" "$@"; }
trap 'tm kill-server 2>/dev/null; cleanup_sched; kill $(jobs -p) 2>/dev/null' EXIT
kmsg_mark

# stats over the socket, read in bash (a python3 start beside the load took 30-45 s):
# top_field LINE FIELD: a top-level field of the "stats" object of one `top --json` line (nested
# objects, e.g. the per-LLC rows with their own "steals", are blanked first); strings unquoted
top_field() {
  local j=${1#*\"stats\":\{} re='\{[^{}]*\}'
  while [[ $j =~ $re ]]; do j=${j//"${BASH_REMATCH[0]}"/0}; done
  re="(^|,)\"$2\":(\"[^\"]*\"|[^,}]*)"
  [[ $j =~ $re ]] || return 1
  j=${BASH_REMATCH[2]}; echo "${j//\"/}"
}
# stats_sums N INTERVAL FIELD...: the sums of integer FIELDs over the same N replies of INTERVAL
# s (the first starts at connect), space-separated; nothing if no reply came or one lacks a field
stats_sums() {
  local l v f i n=$1 iv=$2 got=0 sums=(); shift 2
  for f in "$@"; do sums+=(0); done
  while read -r l; do
    i=0
    for f in "$@"; do
      v=$(top_field "$l" "$f") && [[ $v =~ ^[0-9]+$ ]] || return 1
      sums[i]=$((sums[i] + v)); i=$((i + 1))
    done
    got=$((got + 1))
  done < <("$SCX_SIS" top --json --count "$n" -i "$iv" 2>/dev/null)
  [ "$got" -gt 0 ] && echo "${sums[*]}"
}
stats_field() { # FIELD...: their values in one 0.5 s reply, space-separated
  local l f out=()
  read -r l < <("$SCX_SIS" top --json --count 1 -i 0.5 2>/dev/null)
  for f in "$@"; do out+=("$(top_field "$l" "$f")"); done
  echo "${out[*]}"
}

start_sched || { fail "scx_sis did not attach"; finish; exit 1; }
pass "attached in ${ATTACH_S}s"

NLLC=$(sort -u /sys/devices/system/cpu/cpu*/cache/index3/shared_cpu_list | wc -l)

# --- 3. refusals (first: they need no load, and python3 starts in seconds only without one)
check_eq "control socket mode" "$(stat -c %a /var/run/scx/scx_sis.ctl)" 600
setpriv --reuid=nobody --regid=nogroup --clear-groups "$SCX_SIS" set steal=off >"$SCX_SIS_OUT/top-nonroot.err" 2>&1; rc=$?
check_eq "non-root scx_sis set: exit code" "$rc" 2
log "non-root: $(head -n 1 "$SCX_SIS_OUT/top-nonroot.err")"
check_eq "non-root: one line on stderr" "$(wc -l <"$SCX_SIS_OUT/top-nonroot.err")" 1
# the peer's uid is checked too, not only the mode: opened up, the socket still refuses nobody
chmod 666 /var/run/scx/scx_sis.ctl
reply=$(setpriv --reuid=nobody --regid=nogroup --clear-groups python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
try:
    s.sendall(b"set steal=off\n")
except BrokenPipeError:
    pass  # refused before reading: the reply is there all the same
print(s.makefile().readline().strip())' /var/run/scx/scx_sis.ctl 2>&1)
chmod 600 /var/run/scx/scx_sis.ctl
check "socket opened to all: nobody is refused by uid ($reply)" grep -q '^error: permission denied' <<<"$reply"
"$SCX_SIS" set nosuch=1 2>/dev/null; check_eq "unknown key: exit code" "$?" 2
"$SCX_SIS" set steal=maybe 2>/dev/null; check_eq "bad value: exit code" "$?" 2
"$SCX_SIS" set gb=on 2>/dev/null; check_eq "group balancer (not a live knob): exit code" "$?" 2
check_eq "steal_mode after the refused changes" "$(stats_field steal_mode)" on
# load: stress-ng (a CPU hog on half the CPUs: the others idle now and then, and steal) and
# hackbench in a loop, until the test ends (one group: with two, every scx_sis and python3
# start of the test crawled, 330-350 s per kernel in CI)
stress-ng -c "$((NPROC / 2))" --timeout 600s >/dev/null 2>&1 &
load_pids=$!
( while :; do hackbench -g 1 -f 10 -l 100 >/dev/null 2>&1; done ) &
load_pids="$load_pids $!"
# the test's own commands at nice -10 from here on, the load above staying at 0: the test checks
# what they do, not how fast a loaded guest runs them. Most of their wait is elsewhere, though:
# each exec's 9p lookups (docs/testing.md), hence the tmpfs binary and the reads in bash.
renice -n -10 -p $$ >/dev/null

# --- recorded replies (fixtures for the host tests)
"$SCX_SIS" top --json --count 5 -i 1 >"$SCX_SIS_OUT/top-record.jsonl" 2>"$SCX_SIS_OUT/top-record.err"
mapfile -t rec <"$SCX_SIS_OUT/top-record.jsonl"
n=0; for l in "${rec[@]}"; do [[ $l == *'"stats"'* ]] && n=$((n + 1)); done
check_eq "top --json recorded replies" "$n" 5

# --- 1. the TUI in tmux
# Beside the load every exec costs seconds (its binary and libraries looked up over 9p), so the
# panes are read in bash: cap NAME puts one capture in CAP (lines) and $SCX_SIS_OUT/top-NAME.txt.
cap() { mapfile -t CAP < <(tm capture-pane -p -t top); printf '%s\n' "${CAP[@]}" >"$SCX_SIS_OUT/top-$1.txt"; }
has() { local l; for l in "${CAP[@]}"; do [[ $l == *"$1"* ]] && return 0; done; return 1; }
# the numbers of the overview (label then value; the value column: after the 16-column label,
# 10 wide): NUMS; SCANS: the scans/s value
nums() {
  local l v; NUMS="" SCANS=""
  for l in "${CAP[@]}"; do
    [[ $l =~ ^(wake|scans|success|recall|probes|steals) ]] || continue
    v=${l:16:10}; v=${v// /}; NUMS+="$v "
    [[ $l == scans/s* ]] && SCANS=$v
  done
}
rm -f "$SCX_SIS_OUT/top-exit.txt"
tm -f /dev/null new-session -d -s top -x 120 -y 40 "TERM=xterm-256color $SCX_SIS top -i 0.5; echo top-exit=\$? > $SCX_SIS_OUT/top-exit.txt"
# the first frame: starting the binary under load once took more than 4 s (CI), so wait for it
# (up to 30 s) instead of a fixed sleep
for i in $(seq 60); do
  snooze 0.5
  cap cap1
  has 'scans/s' && break
done
log "first frame after $((i / 2)).$((i % 2 * 5)) s"
check "capture 1 shows the live overview" has 'scans/s'
nums; n1=$NUMS
snooze 3
cap cap2
check "capture 2 shows the live overview" has 'scans/s'
nums; n2=$NUMS
log "capture 1: $n1"
log "capture 2: $n2"
check "the overview numbers change between captures" test -n "$n1" -a "$n1" != "$n2"
check_gt "scans/s shown under load" "${SCANS:-0}" 0
tm send-keys -t top 2; snooze 2; cap llc
n=0; for l in "${CAP[@]}"; do [[ $l =~ ^[0-9]+\ +[0-9] ]] && n=$((n + 1)); done
check_eq "per-LLC view: a row per LLC" "$n" "$NLLC"
tm send-keys -t top 3; snooze 2; cap cpu
# a cell per CPU: "N S" with S one of . B O F -, followed by a blank or the line's end
n=0; for l in "${CAP[@]}"; do
  l+=" "; while [[ $l =~ ([0-9]+\ [.BOF-]\ )(.*) ]]; do n=$((n + 1)); l=${BASH_REMATCH[2]}; done
done
check_eq "per-CPU view: a cell per CPU" "$n" "$NPROC"
tm send-keys -t top 4; snooze 2; cap gb
check "group balancer view: off" has 'group balancer off'
tm send-keys -t top 1

# --- 2. live toggle: steal off stops the counter within 1 s, on resumes it
base=$(stats_sums 2 1 steals)
check_gt "steals under the load before the toggle" "${base:-0}" 0
out=$("$SCX_SIS" set steal=off); rc=$?
check_eq "scx_sis set steal=off exit code" "$rc" 0
log "set steal=off: $out"
t_set=$(ts)
check_eq "stats show steal_mode" "$(stats_field steal_mode)" off
# from 1 s after the change on (stats_field took >= 0.5 s of it)
while [ $(( $(now_ms) - $(ts_ms "$t_set") )) -lt 1000 ]; do snooze 0.1; done
off=$(stats_sums 3 1 steals)
check_eq "steals over 3 s from 1 s after steal=off" "$off" 0
check "the change is logged" eval '[[ $(<"$SCHED_OUT") == *"set steal=off (was steal=on)"* ]]'
"$SCX_SIS" set steal=on >/dev/null; rc=$?
check_eq "scx_sis set steal=on exit code" "$rc" 0
on=$(stats_sums 3 1 steals)
check_gt "steals over 3 s after steal=on" "${on:-0}" 0

# --- other knobs (under the load: the filter must see wakeups)
out=$("$SCX_SIS" set sis-mode=linear slice-us=1000 oracle-every=0 steal-scope=all); rc=$?
check_eq "set four knobs: exit code" "$rc" 0
snooze 1
knobs=$(stats_field sis_mode slice_us oracle_every steal_scope oracle_checks)
check_eq "stats show the four knobs (oracle checks 0)" "$knobs" "linear 1000 0 all 0"
# linear scans probe CPUs in order: no filter is kept or probed; back in full mode the filters
# are rebuilt from the state of record and kept again
read -r fp fs <<<"$(stats_sums 2 1 fp_probes filter_sets)"
check_eq "sis-mode=linear: false-positive probes / filter sets over 2 s" "${fp:-?}/${fs:-?}" 0/0
"$SCX_SIS" set sis-mode=full >/dev/null; snooze 1
# the filter is kept again (filter_sets: a CPU going idle whose bit is clear) and scans find idle
# CPUs: in the first of up to 3 windows of 4 s that shows both. Both need hackbench's wakeups:
# right after the rebuild every idle CPU's bit is set already, and a wakeup onto an idle prev
# scans nothing, so a window between two hackbench runs (each starts with seconds of execs
# over 9p) can show 0 and 0 (one did on 7.3, 2026-11-26). False-positive probes need a filter bit
# gone stale under this load: over 2 s runs saw 0 to 137 (2026-11-26), so they are shown, not
# asserted.
for w in 1 2 3; do
  read -r fs ok fp <<<"$(stats_sums 4 1 filter_sets scan_success fp_probes)"
  log "sis-mode=full again, window $w of 4 s: filter sets ${fs:-?}, scan successes ${ok:-?}, false-positive probes ${fp:-?}"
  [ "${fs:-0}" -gt 0 ] && [ "${ok:-0}" -gt 0 ] && break
done
check_gt "sis-mode=full again: filter sets in window $w of 4 s (the filter is kept)" "${fs:-0}" 0
check_gt "sis-mode=full again: scans succeed in window $w of 4 s" "${ok:-0}" 0

# --- 4. detach, restart, quit
check "still attached" kill -0 "$SCHED_PID"
# without the load: what follows needs none, and an attach beside it took 50-60 s on 6.12
kill $load_pids 2>/dev/null; pkill -x hackbench 2>/dev/null
stop_sched INT || fail "no clean detach"
check_eq "exit code" "$SCHED_RC" 0
snooze 3
cap gone
check "after detach top says: no scx_sis running - retrying" has 'no scx_sis running - retrying'
"$SCX_SIS" set steal=off 2>/dev/null; check_eq "scx_sis set with none running: exit code" "$?" 1
start_sched || fail "second scx_sis did not attach"
snooze 4
cap back
check "after the restart top is live again" has 'live, every'
tm send-keys -t top q
for i in $(seq 50); do [ -s "$SCX_SIS_OUT/top-exit.txt" ] && break; snooze 0.1; done
check_eq "q quits top" "$(cat "$SCX_SIS_OUT/top-exit.txt" 2>/dev/null)" top-exit=0
stop_sched INT || fail "no clean detach (2)"
dmesg_check
finish
