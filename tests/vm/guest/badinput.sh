#!/usr/bin/env bash
# badinput: every refused start prints one line 'scx_sis: error: ...' on stderr, exits 2,
# and changes nothing in /sys/kernel/sched_ext (nor disturbs an attached scx_sis).
source "$(dirname "$0")/lib.sh"
require_scx_sis
trap cleanup_sched EXIT

# expect_refusal DESC REGEX CMD...: run CMD (max 30 s), expect exit 2 + one stderr line
# 'scx_sis: error: ...' matching REGEX (case-insensitive), and state/ops/enable_seq unchanged.
expect_refusal() {
  local desc=$1 re=$2; shift 2
  local st0 ops0 seq0 rc err lines
  st0=$(sched_state); ops0=$(sched_ops); seq0=$(enable_seq)
  err="$SCX_SIS_OUT/badinput-stderr.txt"
  timeout 30 "$@" >/dev/null 2>"$err"; rc=$?
  lines=$(grep -c . "$err")
  if [ "$rc" = 2 ] && [ "$lines" = 1 ] && grep -q '^scx_sis: error: ' "$err" && grep -qiE "$re" "$err"; then
    pass "$desc: exit 2: $(head -c 200 "$err")"
  else
    fail "$desc: exit $rc (want 2), $lines stderr lines (want 1 'scx_sis: error: ...' matching /$re/):"
    head -n 10 "$err" | sed 's/^/  | /'
  fi
  if [ "$(sched_state)" = "$st0" ] && [ "$(sched_ops)" = "$ops0" ] && [ "$(enable_seq)" = "$seq0" ]; then
    pass "$desc: sched_ext unchanged (state $st0${ops0:+, ops $ops0}, enable_seq $seq0)"
  else
    fail "$desc: sched_ext changed: state $st0 -> $(sched_state), ops '$ops0' -> '$(sched_ops)', enable_seq $seq0 -> $(enable_seq)"
  fi
}

kmsg_mark
check_eq "state before" "$(sched_state)" disabled
expect_refusal "not root" 'root|permission|privile|CAP_' setpriv --reuid=65534 --regid=65534 --clear-groups "$SCX_SIS"
expect_refusal "--slice-us 0" 'slice' "$SCX_SIS" --slice-us 0
expect_refusal "--bogus" 'bogus' "$SCX_SIS" --bogus
expect_refusal "--stats-group of no group" 'group' "$SCX_SIS" --stats-group no-such-group-scx
expect_refusal "--exit-dump-len too large" 'exit-dump-len|dump' "$SCX_SIS" --exit-dump-len 999999999

if start_sched ${SCX_SIS_ARGS:-}; then
  pass "first scx_sis attached in ${ATTACH_S}s (pid $SCHED_PID)"
  expect_refusal "second scx_sis while one is attached" 'another|already|attached|busy' "$SCX_SIS"
  check "first scx_sis still running" kill -0 "$SCHED_PID"
  if stop_sched INT; then pass "first scx_sis detached in ${DETACH_S}s"; else fail "first scx_sis did not detach"; fi
  check_eq "first scx_sis exit code" "$SCHED_RC" 0
else
  fail "scx_sis did not attach (cannot test the second-scheduler case)"
fi
check_eq "state after" "$(sched_state)" disabled
dmesg_check
finish
