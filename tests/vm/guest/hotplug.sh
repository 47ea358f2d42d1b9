#!/usr/bin/env bash
# hotplug: CPU hotplug while scx_sis runs. scx_sis implements no cpu_online/offline, so the
# kernel ends it with a restartable exit; the loader must re-discover the topology and attach
# again by itself, each time a CPU goes and comes back, with no stall.
# Known kernel bug, tolerated on 6.12 only: lib.sh, DL_SERVER_612_BUG.
source "$(dirname "$0")/lib.sh"
require_scx_sis
trap 'cleanup_sched; echo 1 > /sys/devices/system/cpu/cpu$last/online 2>/dev/null' EXIT
last=$((NPROC - 1))
kmsg_mark
start_sched || { fail "scx_sis did not attach"; finish; exit 1; }
seq0=$(enable_seq)
stress-ng -c "$NPROC" --timeout 20s --temp-path /tmp -q &
spid=$!
for state in 0 1; do
  echo "$state" > "/sys/devices/system/cpu/cpu$last/online" || fail "cpu$last online=$state"
  # the exit and the restart: enable_seq grows once the new instance is attached
  want=$((seq0 + 1 + state))
  for i in $(seq 300); do [ "$(enable_seq)" -ge "$want" ] && [ "$(sched_state)" = enabled ] && break; sleep 0.1; done
  check_eq "cpu$last online=$state: scx_sis attached again (enable_seq)" "$(enable_seq)" "$want"
  check "cpu$last online=$state: the same scx_sis process" kill -0 "$SCHED_PID"
done
grep -q "restarting (CPU hotplug)" "$SCHED_OUT" && pass "loader logged its restarts" || fail "no restart logged: $(tail -n 3 "$SCHED_OUT")"
grep -q "$((NPROC - 1)) CPUs" "$SCHED_OUT" && pass "topology re-read with cpu$last offline" || fail "topology not re-read"
wait "$spid"
stop_sched INT || fail "no clean detach"
check_eq "exit code" "$SCHED_RC" 0
# the hotplug exits are expected here; anything else is not
DMESG_BAD='BUG|WARNING|Oops|Call Trace|stall|failed to run for|errored|runtime error|watchdog failed|sched_ext: .*disabled \((?!unregistered from user space\)|unregistered from the main kernel\))|Kernel panic|segfault|general protection'
case "$(uname -r)" in
  6.12.*) DMESG_KNOWN=$DL_SERVER_612_BUG ;;
esac
dmesg_since | grep 'sched_ext:' | sed 's/^/  | /'
dmesg_check
finish
