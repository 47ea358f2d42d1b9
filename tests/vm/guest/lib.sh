# Helpers for the guest-side tests (source it; bash only). Runs inside the test VM as root.
#   SCX_SIS       absolute path of the scheduler binary (required)
#   SCX_SIS_OUT   where tests write their files (default <repo>/target/vm-tests/<kernel>)
#   SCX_ATTACH_TIMEOUT  seconds to wait for state 'enabled' after starting scx_sis (default 120:
#                 under qemu TCG the BPF verifier alone takes tens of seconds)
#   SCX_DETACH_TIMEOUT  seconds to wait for 'disabled' after SIGINT (default 30)
# Conventions: pass/fail/note print one line each, counted; `finish` prints the script's
# summary and returns non-zero if anything failed. Scheduler output goes to $SCX_SIS_OUT/*.out.

LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$LIB_DIR/../../.." && pwd)
SCX=/sys/kernel/sched_ext
TEST_NAME=${TEST_NAME:-$(basename "${0%.sh}")}
SCX_SIS_OUT=${SCX_SIS_OUT:-$REPO/target/vm-tests/$(uname -r)}
mkdir -p "$SCX_SIS_OUT"
NPROC=$(nproc)
ATTACH_TMO=${SCX_ATTACH_TIMEOUT:-120}
DETACH_TMO=${SCX_DETACH_TIMEOUT:-30}
N_PASS=0
N_FAIL=0

# Timing helpers use bash's EPOCHREALTIME, not date/awk: under TCG every exec costs tens of ms
# and competes with the workload under test (the attach/detach polls run in tight loops).
# ts: seconds with 3 decimals; now_ms: milliseconds
ts() { echo "${EPOCHREALTIME:0:14}"; }
now_ms() { local t=${EPOCHREALTIME/./}; echo "${t:0:${#t}-3}"; }
ts_ms() { local t=${1/./}; echo "$t"; }
# elapsed seconds (1 decimal) since a `ts` value
since() { local d=$(( $(now_ms) - $(ts_ms "$1") )); echo "$((d / 1000)).$(( (d % 1000) / 100 ))"; }
# each line ends with the seconds since the test started (bash's SECONDS): where a slow test's
# time goes, read from any CI log
log() { echo "[$TEST_NAME] $* [${SECONDS}s]"; }
pass() { N_PASS=$((N_PASS + 1)); echo "PASS $TEST_NAME: $* [${SECONDS}s]"; }
fail() { N_FAIL=$((N_FAIL + 1)); echo "FAIL $TEST_NAME: $* [${SECONDS}s]"; }
note() { echo "NOTE $TEST_NAME: $* [${SECONDS}s]"; }
# check DESC CMD...: pass if CMD succeeds, else fail
check() { local d=$1; shift; if "$@"; then pass "$d"; else fail "$d"; fi; }
# check_eq DESC GOT WANT
check_eq() { if [ "$2" = "$3" ]; then pass "$1 (= $3)"; else fail "$1: got '$2', want '$3'"; fi; }
# is_num V: V is a number (integer or decimal, optional sign and exponent); '' and 'n/a' are not
is_num() { [[ $1 =~ ^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$ ]]; }
# num_lt A B: A < B; integers in bash, else awk (fractions; an exec is costly in the guest).
# False when either is not a number: a missing reading must not pass a bound.
num_lt() {
  local i='^-?(0|[1-9][0-9]{0,17})$'
  if [[ $1 =~ $i && $2 =~ $i ]]; then (( $1 < $2 ))
  elif is_num "$1" && is_num "$2"; then awk -v g="$1" -v l="$2" 'BEGIN { exit !(g + 0 < l + 0) }'
  else return 1; fi
}
# check_lt DESC GOT LIMIT (numbers, may be fractional)
check_lt() { if num_lt "$2" "$3"; then pass "$1 ($2 < $3)"; else fail "$1: '$2', want < $3$(is_num "$2" || echo ' (not a number)')"; fi; }
# check_gt DESC GOT LIMIT
check_gt() { if num_lt "$3" "$2"; then pass "$1 ($2 > $3)"; else fail "$1: '$2', want > $3$(is_num "$2" || echo ' (not a number)')"; fi; }
finish() {
  echo "RESULT $TEST_NAME: $N_PASS passed, $N_FAIL failed"
  [ "$N_FAIL" -eq 0 ] && [ "$N_PASS" -gt 0 ]
}

# require_scx_sis: SCX_SIS is an executable and the kernel has sched_ext. Then SCX_SIS points at
# a copy in the guest's tmpfs (made once per boot): the guest reads the host's files over 9p,
# which beside a load crawls (each exec of the 52 MB binary pages it in over 9p; top's commands
# took 30-45 s each), and the tests check what scx_sis does, not how fast 9p serves it.
# SCX_SIS_NO_COPY=1 keeps the path as given.
require_scx_sis() {
  if [ -z "${SCX_SIS:-}" ] || [ ! -x "$SCX_SIS" ]; then
    fail "SCX_SIS='${SCX_SIS:-}' is not an executable (set SCX_SIS to the absolute path of scx_sis)"
    finish; exit 1
  fi
  if [ ! -d "$SCX" ]; then
    fail "kernel $(uname -r) has no $SCX (no sched_ext)"; finish; exit 1
  fi
  tmpfs_copy SCX_SIS scx_sis
}

# tmpfs_copy VAR NAME: point VAR (an executable's path) at its copy /dev/shm/scx_sis-test/NAME,
# made once per boot (see require_scx_sis); SCX_SIS_NO_COPY=1 keeps the path as given.
tmpfs_copy() {
  local var=$1 copy=/dev/shm/scx_sis-test/$2 src=${!1}
  if [ "${SCX_SIS_NO_COPY:-0}" != 1 ] && [ -d /dev/shm ]; then
    if [ ! -x "$copy" ]; then
      mkdir -p "${copy%/*}" && chmod 755 "${copy%/*}" && cp "$src" "$copy.tmp" && mv "$copy.tmp" "$copy" ||
        { rm -f "$copy.tmp"; note "cannot copy $src to $copy: running it over 9p"; return 0; }
    fi
    printf -v "$var" '%s' "$copy"
  fi
}

# require_scx_sis_bench: SCX_SIS_BENCH (the bench harness, scx_sis_bench) is an executable; then,
# as for SCX_SIS, it points at a tmpfs copy, beside scx_sis's.
require_scx_sis_bench() {
  if [ -z "${SCX_SIS_BENCH:-}" ] || [ ! -x "$SCX_SIS_BENCH" ]; then
    fail "SCX_SIS_BENCH='${SCX_SIS_BENCH:-}' is not an executable (set it to the absolute path of scx_sis_bench)"
    finish; exit 1
  fi
  tmpfs_copy SCX_SIS_BENCH scx_sis_bench
}

sched_state() { local s="?"; { read -r s < "$SCX/state"; } 2>/dev/null; echo "$s"; }
sched_ops() { cat "$SCX/root/ops" 2>/dev/null || true; }
enable_seq() { cat "$SCX/enable_seq" 2>/dev/null || echo -1; }

# wait_state STATE [TIMEOUT_S=20] [PID]: poll until state == STATE. Sets WAITED (seconds).
# Returns 1 on timeout, 2 if PID (the scheduler) exited first.
wait_state() {
  local want=$1 tmo=${2:-20} pid=${3:-} t0
  t0=$(ts)
  while :; do
    [ "$(sched_state)" = "$want" ] && { WAITED=$(since "$t0"); return 0; }
    if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then WAITED=$(since "$t0"); return 2; fi
    [ $(( $(now_ms) - $(ts_ms "$t0") )) -ge $((tmo * 1000)) ] && { WAITED=$(since "$t0"); return 1; }
    sleep 0.1
  done
}

# start_sched [ARGS...]: start scx_sis in the background at nice $SCHED_NICE (default -10; empty:
# the caller's) and wait until attached. Why -10: loading is seconds of verifier CPU time in the
# loader's own context, and a loader sharing its vCPU with nice-0 hogs got a fraction of it (an
# attach beside the tests' loads took 35-53 s, 6-8 s idle): the tests check what the attach
# does, not how fast a loaded guest verifies.
# Sets SCHED_PID, SCHED_OUT (stdout+stderr file, in $SCHED_OUT_DIR if set), ATTACH_S. Returns
# non-zero (and prints why) if it does not reach state enabled with ops scx_sis within $ATTACH_TMO s.
SCHED_N=0
SCHED_NICE=${SCHED_NICE--10}
start_sched() {
  SCHED_N=$((SCHED_N + 1))
  SCHED_OUT="${SCHED_OUT_DIR:-$SCX_SIS_OUT}/$TEST_NAME-sched-$SCHED_N.out"
  ${SCHED_NICE:+nice -n "$SCHED_NICE"} "$SCX_SIS" "$@" >"$SCHED_OUT" 2>&1 &
  SCHED_PID=$!
  wait_state enabled "$ATTACH_TMO" "$SCHED_PID"
  local r=$?
  ATTACH_S=$WAITED
  if [ $r -eq 2 ]; then
    wait "$SCHED_PID"; local rc=$?
    echo "[$TEST_NAME] scx_sis $* exited ($rc) before attaching; output:"; tail -n 20 "$SCHED_OUT" | sed 's/^/  | /'
    return 1
  elif [ $r -ne 0 ]; then
    echo "[$TEST_NAME] scx_sis $* not enabled after ${WAITED}s (state $(sched_state)); output:"; tail -n 20 "$SCHED_OUT" | sed 's/^/  | /'
    return 1
  fi
  case "$(sched_ops)" in
    scx_sis*) return 0 ;;
    *) echo "[$TEST_NAME] state enabled but root/ops is '$(sched_ops)', not scx_sis"; return 1 ;;
  esac
}

# stop_sched [SIG=INT]: signal scx_sis, wait for state disabled and for its exit.
# Sets SCHED_RC (its exit code; 137 if it had to be SIGKILLed) and DETACH_S.
# Returns non-zero if it did not detach within $DETACH_TMO s or exit within 20 s after that.
stop_sched() {
  local sig=${1:-INT} r=0 i
  SCHED_RC=""
  [ -n "${SCHED_PID:-}" ] || return 1
  kill -"$sig" "$SCHED_PID" 2>/dev/null
  wait_state disabled "$DETACH_TMO" || r=1
  DETACH_S=$WAITED
  for i in $(seq 200); do kill -0 "$SCHED_PID" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$SCHED_PID" 2>/dev/null; then
    echo "[$TEST_NAME] scx_sis (pid $SCHED_PID) still running 20 s after SIG$sig: SIGKILL"
    kill -9 "$SCHED_PID" 2>/dev/null; r=1
  fi
  wait "$SCHED_PID" 2>/dev/null; SCHED_RC=$?
  SCHED_PID=""
  return $r
}

# Make sure nothing of ours is left attached (for traps / between tests).
cleanup_sched() {
  if [ -n "${SCHED_PID:-}" ] && kill -0 "$SCHED_PID" 2>/dev/null; then
    kill -INT "$SCHED_PID" 2>/dev/null; wait_state disabled 10 >/dev/null
    kill -9 "$SCHED_PID" 2>/dev/null; wait "$SCHED_PID" 2>/dev/null
  fi
  SCHED_PID=""
}

# kmsg_mark: write a unique marker into the kernel log; sets KMSG_MARK. dmesg_since prints the
# kernel log after the last occurrence of the marker; it fails when the marker is not there.
kmsg_mark() {
  KMSG_MARK="scx_sis-test: begin $TEST_NAME $$-$RANDOM"
  echo "$KMSG_MARK" > /dev/kmsg
}
dmesg_since() {
  dmesg | awk -v m="${1:-$KMSG_MARK}" 'index($0, m) { buf = ""; found = 1; next } found { buf = buf $0 "\n" } END { printf "%s", buf; exit !found }'
}
# drop_injected: the kernel log on stdin without the ejections the test injected: a
# 'disabled (scx_bpf_error)' line is dropped only when the next line is scx_sis's message
# $DMESG_INJECTED, with that line and its backtrace; any other ejection stays.
drop_injected() {
  [ -n "${DMESG_INJECTED:-}" ] || { cat; return; }
  # the ops name is scx_sis_<version>_<target>; the message may start with "FILE:LINE: "
  awk -v m="$DMESG_INJECTED" '
    held != "" { if (/sched_ext: scx_sis[^ ]*: / && index($0, m)) { bt = 1; held = ""; next } print held; held = "" }
    bt && /^\[[ 0-9.]+\]   / { next }
    { bt = 0 }
    /sched_ext: BPF scheduler "scx_sis[^"]*" disabled \(scx_bpf_error\)/ { held = $0; next }
    { print }
    END { if (held != "") print held }'
}
# Kernel-log lines that mean trouble. A normal detach logs
# 'sched_ext: BPF scheduler "scx_sis" disabled (unregistered from user space)': allowed. A
# deprecation warning at attach (7.x: "ops->cpu_acquire/release() are deprecated") is trouble too:
# the kernel means to drop what it names.
DMESG_BAD='BUG|WARNING|Oops|Call Trace|stall|failed to run for|errored|runtime error|watchdog failed|sched_ext: .*disabled \((?!unregistered from user space\))|Kernel panic|segfault|general protection|are deprecated'
# DL_SERVER_612_BUG: a known 6.12.y kernel bug that CPU hotplug under any sched_ext scheduler can
# hit (hotplug.sh, faults.sh tolerate it on 6.12 only): sched_cpu_dying() calls dl_server_stop()
# on the fair server, and 6.12.y's dl_server_stop() lacks mainline's `!dl_server_active(dl_se)`
# guard, so a fair server that is not active (no fair task: they all run in sched_ext) still goes
# through dequeue_dl_entity() and bandwidth never added is subtracted: 'running_bw > old' WARNING
# in kernel/sched/deadline.c from task_non_contending, or later from inactive_task_timer. BPF
# code cannot reach that accounting; 7.3 has the guard and never showed it.
DL_SERVER_612_BUG='WARNING: CPU: [0-9]+ PID: [0-9]+ at kernel/sched/deadline\.c:[0-9]+ (inactive_task_timer|task_non_contending)'
# PUT_PREV_ENQ_LAST_BUG: a kernel WARN_ON_ONCE in put_prev_task_scx() (7.x): a runnable sched_ext
# task put for the idle task trips it unless the scheduler set SCX_OPS_ENQ_LAST. scx_sis sets that
# flag only with the group balancer; without it the kernel keeps such a task running itself, except
# on paths of its own: bypass mode around an attach or detach (seen once in `faults`, in state
# "enabling", as a new kthread set its policy on a CPU just brought online), and core scheduling's
# forced idle. The sched_ext maintainer calls it a kernel-side bug, harmless and one-shot (a fix was
# posted upstream in June 2026). BPF code cannot reach that path. Tolerated in every test.
PUT_PREV_ENQ_LAST_BUG='WARNING: kernel/sched/ext/ext\.c:[0-9]+ at put_prev_task_scx\+'
# dmesg_check [MARKER]: pass if the kernel log since the marker is clean, else fail with lines.
# DMESG_KNOWN (a test may set it): a regex for one known kernel bug's WARNING line; with
# PUT_PREV_ENQ_LAST_BUG, always. If every WARNING among the bad lines matches them and the rest are
# trace markers, the lines are shown as a NOTE instead of a failure; anything else still fails.
# DMESG_INJECTED (a test may set it): the message of an error the test injected (scx_sis set
# inject-error=1): see drop_injected.
# A missing marker (log cleared or unreadable) or a failing grep -P is a failure, not a clean log.
dmesg_check() {
  local log bad rc known rest apart="" mark=${1:-$KMSG_MARK}
  local known_re=${DMESG_KNOWN:+$DMESG_KNOWN|}$PUT_PREV_ENQ_LAST_BUG
  if ! log=$(dmesg_since "$mark"); then
    fail "kernel log: marker '$mark' not found (log unreadable or cleared): cannot tell whether it is clean"
    return 1
  fi
  bad=$(drop_injected <<<"$log" | grep -P "$DMESG_BAD"); rc=$?
  if [ "$rc" -gt 1 ]; then
    fail "kernel log: grep -P failed (exit $rc): cannot tell whether it is clean"
    return 1
  fi
  if [ -n "$bad" ]; then
    known=$(echo "$bad" | grep -P "$known_re")
    rest=$(echo "$bad" | grep -vP "$known_re" | grep -vP '^\[[ 0-9.]+\] (Call Trace:|------------\[ cut here \]------------)$')
    if [ -n "$known" ] && [ -z "$rest" ]; then
      note "kernel log has a known kernel bug (not scx_sis's; see lib.sh or the test's header):"
      echo "$bad" | head -n 10 | sed 's/^/  | /'
      bad="" apart=", apart from the known kernel bug"
    fi
  fi
  if [ -z "$bad" ]; then
    pass "kernel log clean since start$apart ($(grep -c 'sched_ext:' <<<"$log") sched_ext lines)"
  else
    fail "kernel log has $(echo "$bad" | wc -l) bad lines:"
    echo "$bad" | head -n 30 | sed 's/^/  | /'
  fi
}

# set_policy PID POLICY: sched_setscheduler(PID, POLICY) (7 = SCHED_EXT, 0 = SCHED_OTHER).
# util-linux chrt only knows --ext from 2.40 on, so use python3 (os.sched_setscheduler).
set_policy() {
  python3 -c 'import os, sys; os.sched_setscheduler(int(sys.argv[1]), int(sys.argv[2]), os.sched_param(0))' "$1" "$2"
}
# proc_sched PID FIELD: a field of /proc/PID/sched (e.g. policy, ext.enabled, se.sum_exec_runtime)
proc_sched() { awk -v f="$2" '$1 == f { print $3; exit }' "/proc/$1/sched" 2>/dev/null; }
# on_ext PID: prints 1 if the task is currently run by the sched_ext class, 0 if not.
# /proc/PID/sched has 'ext.enabled' on sched_ext kernels (6.12 and 7.3 both).
on_ext() { proc_sched "$1" ext.enabled; }

# build_progress: compile the progress-gap workload (guest/progress.c) into $SCX_SIS_OUT.
build_progress() {
  PROGRESS_BIN="$SCX_SIS_OUT/progress"
  if [ ! -x "$PROGRESS_BIN" ] || [ "$LIB_DIR/progress.c" -nt "$PROGRESS_BIN" ]; then
    cc -O2 -Wall -o "$PROGRESS_BIN.tmp" "$LIB_DIR/progress.c" && mv "$PROGRESS_BIN.tmp" "$PROGRESS_BIN" || return 1
  fi
}

# stats_load FILE: every top-level field of a --stats-out JSON file into STATS[field] (objects
# as compact JSON), in one python3: a python3 start is ~2 s in the idle TCG guest, and sis.sh
# read ~25 fields one python3 each (63 s of its full mode's checks). Returns 1 if unreadable.
declare -A STATS
stats_load() {
  local k v out
  STATS=()
  out=$(python3 -c 'import json,sys
for k, v in json.load(open(sys.argv[1])).items():
    print(k, v if isinstance(v, (int, float, str)) else json.dumps(v, separators=(",", ":")))' "$1" 2>/dev/null) || return 1
  while read -r k v; do STATS[$k]=$v; done <<<"$out"
}

# Fork-free helpers for sampling loops under saturation: with 2 hogs per CPU every fork+exec of
# the test shell (a `$(...)`, a `sleep`) can take seconds in the TCG guest.
# snooze SECS: sleep without exec (read -t on a pipe nobody writes to)
exec {SNOOZE_FD}<> <(:)
snooze() { read -r -t "$1" -u "$SNOOZE_FD" _; }
# proc_stat PID: STAT = fields of /proc/PID/stat from field 3 (state) on: STAT[11]+STAT[12] =
# utime+stime (clock ticks; the kernel scales them to the exact run time), STAT[36] = the CPU it
# last ran on, STAT[38] = policy (1 = SCHED_FIFO). Returns 1 if the task is gone.
proc_stat() { local l; { read -r l < "/proc/$1/stat"; } 2>/dev/null || return 1; read -r -a STAT <<<"${l##*) }"; }
# proc_comm PID: COMM = its comm ('' if gone)
proc_comm() { COMM=""; { read -r COMM < "/proc/$1/comm"; } 2>/dev/null; }
# NOW_MS = milliseconds now (no subshell)
now_ms_set() { local t=${EPOCHREALTIME/./}; NOW_MS=${t:0:${#t}-3}; }
CLK_TCK=$(getconf CLK_TCK 2>/dev/null || echo 100)
# proc_runtime_ms PID: RUNTIME_MS = the task's run time in whole ms, from /proc/PID/schedstat
# (exact, unlike the tick-granular /proc/PID/stat; it adds a running task's current run, which
# se.sum_exec_runtime of /proc/PID/sched leaves out); returns 1 (RUNTIME_MS=-1) if it is gone.
# One line to read, not /proc/PID/sched's fifty: under TCG each read of a sampling loop costs
# guest time. Needs CONFIG_SCHED_INFO.
proc_runtime_ms() {
  local ns _; RUNTIME_MS=-1
  { read -r ns _ < "/proc/$1/schedstat"; } 2>/dev/null || return 1
  [[ $ns =~ ^[0-9]+$ ]] || return 1
  RUNTIME_MS=$((ns / 1000000))
}

# spinner_totals FILE...: what pinned.c spinners printed ('samples=N violations=V cpus=C ...'):
# SPIN_REPORTS (lines with samples > 0), SPIN_VIOL (violations, summed), SPIN_CPUS (the most CPUs
# one spinner saw). Compare SPIN_REPORTS with the spinners started: a spinner that printed
# nothing has no violations either.
spinner_totals() {
  read -r SPIN_REPORTS SPIN_VIOL SPIN_CPUS < <(cat "$@" 2>/dev/null | tr ' ' '\n' | awk -F= '
    $1 == "samples" && $2 > 0 { r++ } $1 == "violations" { v += $2 } $1 == "cpus" && $2 > m { m = $2 }
    END { print r + 0, v + 0, m + 0 }')
}

# ---- `scx_sis_bench` sessions and their results (fairness, cgweight) ----
# bench_session DIR SUITES SECS [BENCH-OPTION...]: one quick `scx_sis_bench` of $SCX_SIS (BENCH_RUNS runs,
# default 1, no warm-up run) into DIR; checks its exit code and that nothing is left attached,
# shows its table. Each scheduler attaches once for the whole session (one block of every run):
# an attach is 15-30 s of guest time under TCG, most of a short case, and these tests ask what
# a share comes to, not what an attach changes (hotswap, soak and faults do). BENCH_BLOCK=0:
# one attach per run, interleaved, as the bench does by default.
bench_session() {
  local dir=$1 t0 rc
  t0=$(ts)
  "$SCX_SIS_BENCH" --scx-sis-bin "$SCX_SIS" --suite "$2" --quick --duration "$3" --runs "${BENCH_RUNS:-1}" \
    --warmup 0 --block "${BENCH_BLOCK:-${BENCH_RUNS:-1}}" --out "$dir" "${@:4}" \
    >"$dir.stdout" 2>"$dir.stderr"
  rc=$?
  check_eq "bench $2 exit code (after $(since "$t0")s)" "$rc" 0
  [ "$rc" = 0 ] || tail -n 25 "$dir.stderr" | sed 's/^/  | /'
  check_eq "state after" "$(sched_state)" disabled
  sed 's/^/  | /' "$dir/table.txt" 2>/dev/null
}
# bench_vals DIR: one python3 for the whole readout (every exec is slow in the guest): 'SUITE
# VARIANT VALUE' per measured run (VALUE 'failed: why' for a failed one), then 'placement SUITE
# RUN hogs per CPU ...' for each run that printed where its hogs ended. Goes into $BENCH_VALS.
bench_vals() {
  BENCH_VALS=$(python3 - "$1" <<'EOF2' 2>&1
import glob, json, os, sys
r = json.load(open(os.path.join(sys.argv[1], "results.json")))
for x in r["runs"]:
    if not x["warmup"]:
        v = x["value"] if x["ok"] and x["value"] is not None else "failed: " + str(x.get("error"))
        print(x["suite"], x["variant"], v)
for f in sorted(glob.glob(os.path.join(sys.argv[1], "raw", "*", "*.txt"))):
    for l in open(f):
        if l.startswith(("hogs per CPU", "sleep overshoot")):
            print("placement", os.path.basename(os.path.dirname(f)), os.path.basename(f)[:-4], l.strip())
EOF2
)
}
# val SUITE VARIANT: the number from $BENCH_VALS, or empty if the run failed or is missing
val() { local s v x; while read -r s v x; do [ "$s" = "$1" ] && [ "$v" = "$2" ] && [[ $x =~ ^[-0-9.e+]+$ ]] && { echo "$x"; return; }; done <<<"$BENCH_VALS"; }
# val_mean SUITE VARIANT: the mean over its runs in $BENCH_VALS; empty if any run failed or none
val_mean() {
  awk -v s="$1" -v v="$2" '$1 == s && $2 == v { if ($3 !~ /^[-0-9.e+]+$/) bad = 1; t += $3; n++ }
    END { if (n && !bad) printf "%.4f", t / n }' <<<"$BENCH_VALS"
}
# require_vals SUITE...: a FAIL for each suite without a number under EEVDF or scx_sis
require_vals() {
  local s v
  for s in "$@"; do
    for v in EEVDF scx_sis; do
      [ -n "$(val "$s" $v)" ] || fail "$s under $v: no number ($(grep "^$s $v " <<<"$BENCH_VALS" | cut -c1-200))"
    done
  done
}
# log_placements: where the hogs ended, per run (and fair-sleep's sleep overshoot)
log_placements() { grep '^placement ' <<<"$BENCH_VALS" | while read -r _ s run rest; do log "$s $run: $rest"; done; }
# within GOT REF PCT: |GOT/REF - 1| <= PCT %
within() { awk -v g="$1" -v r="$2" -v p="$3" 'BEGIN { d = g / r - 1; if (d < 0) d = -d; exit !(r > 0 && g != "" && d * 100 <= p) }'; }
# pct GOT REF: GOT in % of REF
pct() { awk -v g="$1" -v r="$2" 'BEGIN { if (r > 0) printf "%.0f", 100 * g / r; else print "?" }'; }
