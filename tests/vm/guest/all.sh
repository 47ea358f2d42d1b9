#!/usr/bin/env bash
# Run the guest tests in sequence inside one VM boot and sum up.
#   SCX_SIS=/abs/path/scx_sis tests/vm/guest/all.sh [TEST...]     (default: all of DEFAULT_TESTS)
# A TEST is a script name in this directory without .sh (smoke, hotswap, partial, badinput).
# Prints 'PASS test' / 'FAIL test' per script and a last line 'N passed, M failed' (scripts).
here=$(cd "$(dirname "$0")" && pwd)
DEFAULT_TESTS="badinput smoke partial hotswap"
tests=("$@")
[ ${#tests[@]} -gt 0 ] || read -r -a tests <<<"$DEFAULT_TESTS"
echo "== scx_sis VM tests on $(uname -r), $(nproc) CPUs, LLCs: $(cat /sys/devices/system/cpu/cpu*/cache/index3/shared_cpu_list 2>/dev/null | sort -u | tr '\n' ' ')"
echo "== SCX_SIS=${SCX_SIS:-<unset>} tests: ${tests[*]}"
passed=0 failed=0 results=()
for t in "${tests[@]}"; do
  t=${t%.sh}
  if [ ! -f "$here/$t.sh" ]; then
    echo "FAIL $t: no such test ($here/$t.sh)"; failed=$((failed + 1)); results+=("FAIL $t (missing)"); continue
  fi
  echo "== $t"
  t0=$(date +%s)
  # make sure a previous test left nothing attached
  if [ "$(cat /sys/kernel/sched_ext/state 2>/dev/null)" = enabled ]; then
    echo "NOTE: a scheduler is still attached before $t ($(cat /sys/kernel/sched_ext/root/ops 2>/dev/null))"
  fi
  bash "$here/$t.sh"; rc=$?
  dt=$(( $(date +%s) - t0 ))
  if [ $rc -eq 0 ]; then passed=$((passed + 1)); results+=("PASS $t (${dt}s)")
  else failed=$((failed + 1)); results+=("FAIL $t (exit $rc, ${dt}s)"); fi
  echo "== ${results[-1]}"
done
echo "== summary on $(uname -r):"
printf '  %s\n' "${results[@]}"
echo "$passed passed, $failed failed"
[ -n "${SCX_SIS_SUMMARY:-}" ] && echo "$passed passed, $failed failed" > "$SCX_SIS_SUMMARY"
[ $failed -eq 0 ]
