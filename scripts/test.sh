#!/usr/bin/env bash
# Every test: host tests of both crates (cargo test --workspace: unit, topology fixtures, CLI, BPF
# mechanisms through BPF_PROG_TEST_RUN, bench statistics; cargo fmt --check; cargo clippy
# -D warnings, on the workspace), then the VM tests on both kernels side by side, one guest per
# host core: 8 vCPUs in 2 LLCs, then 32 vCPUs in 4 LLCs, then the parallel rig's smoke
# (tests/vm/mttcg_smoke.sh, both kernels) and its pipe latency check (tests/vm/pipelat_check.sh,
# 6.12). Installs what it needs first.
#   scripts/test.sh [--host-only | --vm-only | --both | --long]
# By default the tests whose subject is the kernel's side (attach and detach, exits, stalls,
# pinned and RT tasks, the ways a task stops being runnable, bad input) run on both kernels and
# the others, whose subject is scx_sis's own logic, are shared between the two chains (see
# 'both' and 'only' below), to keep the suite short (48 minutes on the slower hosts). --both:
# every VM test on both kernels (about twice as long), VM only.
# --long: the opt-in long mode (hours under TCG), VM only, both kernels side by side:
# a 10-minute mixed soak then 100 attach/detach cycles under cpu + fork + affinity churn
# (soak), the faults with 5 rounds of CPU offline/online across both LLCs, then 64 vCPUs in 8
# LLCs: smoke, sis and the saturation-fairness bench (fair-nice8, fair-spread).
# Ends with the names of what failed, then one line 'N passed, M failed': each cargo test (from
# its 'test result:' lines), each check of tests/vm/guest/lib_selftest.sh, cargo fmt and clippy
# as one each, and the VM test scripts (the 64-vCPU fairness bench: its checks,
# tests/vm/fair64_check.sh). Exit 1 if anything failed.
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mode=${1:-all}
case "$mode" in all|--host-only|--vm-only|--both|--long) ;; *) echo "test.sh: unknown option '$mode'" >&2; exit 2 ;; esac
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
cd "$repo"
$SUDO scripts/setup.sh || exit 1
cargo build --release --quiet || { echo "0 passed, 1 failed"; exit 1; }

pass=0 fail=0 failed=()
# count_results FILE: add the 'N passed, M failed' counts of FILE's cargo test ('test result: ok.
# N passed; M failed; ...') or lib_selftest ('RESULT ...: N passed, M failed') lines; returns 1
# if it has none
count_results() {
  local c
  c=$(sed -nE 's/^test result: [A-Za-z]+\. ([0-9]+) passed; ([0-9]+) failed.*/\1 \2/p; s/^RESULT [^:]*: ([0-9]+) passed, ([0-9]+) failed$/\1 \2/p' "$1" |
    awk '{ p += $1; f += $2; n++ } END { if (n) print p, f }')
  [ -n "$c" ] || return 1
  pass=$((pass + ${c% *})); fail=$((fail + ${c#* }))
}
if [ "$mode" = all ] || [ "$mode" = --host-only ]; then
  hlog=$(mktemp)
  echo "== host tests (cargo test --workspace: the scheduler and the bench)"
  # BPF_PROG_TEST_RUN needs root (CAP_BPF + CAP_SYS_ADMIN for syscall programs)
  $SUDO env "PATH=$PATH" cargo test --release --workspace 2>&1 | tee "$hlog"; rc=${PIPESTATUS[0]}
  # a build error runs nothing, a crashed test binary prints no result: one failure each
  mapfile -t -O "${#failed[@]}" failed < <(sed -nE 's/^test (.*) \.\.\. FAILED$/cargo test: \1/p' "$hlog")
  if ! count_results "$hlog"; then echo "cargo test: no test ran (exit $rc)"; fail=$((fail + 1)); failed+=("cargo test: no test ran")
  elif [ "$rc" -ne 0 ] && ! grep -qE '^test result: FAILED' "$hlog"; then
    echo "cargo test: exit $rc with no failed test counted"; fail=$((fail + 1)); fi
  echo "== the guest tests' helpers (tests/vm/guest/lib_selftest.sh, on this host)"
  bash tests/vm/guest/lib_selftest.sh 2>&1 | tee "$hlog"
  count_results "$hlog" || { echo "lib_selftest: no result line"; fail=$((fail + 1)); }
  mapfile -t -O "${#failed[@]}" failed < <(sed -nE 's/^FAIL (lib_selftest: .*)/\1/p' "$hlog")
  rm -f "$hlog"
  echo "== formatting (cargo fmt --check, rustfmt.toml) and lints (cargo clippy -D warnings)"
  if cargo fmt --all --check; then pass=$((pass + 1)); else echo "cargo fmt --check: the code is not formatted (run cargo fmt)"; fail=$((fail + 1)); failed+=("cargo fmt --check"); fi
  if cargo clippy --release --quiet --workspace --all-targets -- -D warnings; then pass=$((pass + 1)); else echo "cargo clippy: lint findings"; fail=$((fail + 1)); failed+=("cargo clippy"); fi
  echo "host: $pass passed, $fail failed"
fi
# the names of what failed, then the totals: the last lines a CI log keeps
summary() {
  local f
  for f in "${failed[@]}"; do echo "failed: $f"; done
  echo "$pass passed, $fail failed"
}
if [ "$mode" = --host-only ]; then
  summary
  [ $fail -eq 0 ]; exit
fi
host_pass=$pass host_fail=$fail

# the guest runs copies: rebuilding meanwhile must not change a binary under a running test. The
# harness beside the scheduler: run.sh and bench/run-vm.sh look for it there.
bin="$repo/target/vm-bin/scx_sis"
mkdir -p "$(dirname "$bin")" && cp target/release/scx_sis "$bin" && cp target/release/scx_sis_bench "${bin}_bench"

logs=$(mktemp -d)
# vm NAME ARGS... for tests/vm/run.sh, in the background, output to $logs/NAME. The two kernels
# boot side by side: each guest is one single-threaded TCG process, one per host core.
vm() { local name=$1; shift; $SUDO tests/vm/run.sh --bin "$bin" "$@" >"$logs/$name" 2>&1 & }
# tally NAME...: print each run's output, add its 'N passed, M failed' to the totals
tally() {
  local name last
  for name in "$@"; do
    cat "$logs/$name"
    last=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$logs/$name" | tail -n 1)
    if [ -z "$last" ]; then fail=$((fail + 1)); failed+=("$name: no result (the run died or timed out)"); else
      pass=$((pass + ${last%% passed*})); last=${last#*, }; fail=$((fail + ${last%% failed*})); fi
    # run.sh's '== FAIL test (...)' and the guest's 'FAIL test: check', mttcg_smoke's 'FAIL: ...'
    mapfile -t -O "${#failed[@]}" failed < <(sed -nE "s/^== FAIL (.*)/$name: \1/p; s/^FAIL ([a-z0-9_]+: .*)/$name: \1/p; s/^FAIL: (.*)/$name: \1/p" "$logs/$name" | cut -c1-240)
  done
}
if [ "$mode" = --long ]; then
  long=(--timeout 14400 --env SOAK_SECS=600 --env SOAK_CYCLES=100 --env HOTPLUG_ROUNDS=5 soak faults)
  shape64=(--cpus 64 --sockets 8 --cores 4 --threads 2 --memory 8G)
  huge=(--timeout 10800 "${shape64[@]}" --env SIS_MODES=full smoke sis)
  # saturation fairness at 64 vCPUs: the fairness test's five cases time out there under EEVDF
  # too (TCG); the two saturation cases fit as a bench run, whose table is printed
  # and whose numbers tests/vm/fair64_check.sh checks (its last line is the run's count)
  fair64() {
    local out="bench-results/long-64-$1"
    $SUDO bench/run-vm.sh --kernel "$1" "${shape64[@]}" --timeout 3000 --bin "$bin" --out "$out" -- \
      --suite fair-nice8,fair-spread --runs 2 --warmup 0 --duration 4 || echo "bench/run-vm.sh: exit $?"
    cat "$out/table.txt" 2>/dev/null
    tests/vm/fair64_check.sh "$out" "$1"
  }
  lchain() {
    local k=$1; vm "l$k" --kernel "$k" "${long[@]}"; wait $!; vm "h$k" --kernel "$k" "${huge[@]}"; wait $!
    fair64 "$k" >"$logs/f$k" 2>&1
  }
  echo "== long mode, 6.12 and 7.3 side by side: soak (600 s + 100 cycles) and faults (5 hotplug rounds) at 8 vCPUs,"
  echo "   then smoke, sis and the saturation-fairness bench at 64 vCPUs in 8 LLCs (meanwhile: tail -f $logs/*)"
  lchain 6.12 & lchain 7.3 &
  wait
  tally l6.12 l7.3 h6.12 h7.3 f6.12 f7.3
  rm -rf "$logs"
  echo "VM: $pass passed, $fail failed"
  summary
  [ $fail -eq 0 ]; exit
fi

# hotplug.sh is not here: faults' hotplug phase covers it (5 restarts across both LLCs)
# On both kernels: what the kernel's side decides (attach, detach, the exit paths, stalls of
# pinned, RT and migration-disabled tasks, refusals). Shared out: scx_sis's own logic (the SIS
# mechanisms, stealing, weights, the group balancer, the views), each on the kernel where the
# two chains come out even (7.3 runs slower under TCG). --both runs all of them on both.
both="badinput smoke partial hotswap pinned rt migdis accounting"
only_6_12="fairness cgweight soak steal top"
only_7_3="sis gb faults"
# 32 vCPUs = 4 LLCs: the SIS mechanisms in the default mode (the variants run at 8), and unbound
# kworkers under overload (the watchdog work is one; it attaches and checks the log, as smoke would)
big=(--cpus 32 --sockets 4 --cores 4 --threads 2 --memory 6G --env SIS_MODES=full --env SIS_LOOPS=60)
big_6_12="" big_7_3="sis kworker"
# bench_smoke (the harness's files from a tiny A/B) only with --both: the parallel rig's smoke
# runs the harness end to end on both kernels, and its files are tested on the host
if [ "$mode" = --both ]; then
  all="$only_6_12 $only_7_3 bench_smoke"
  only_6_12=$all only_7_3=$all big_6_12=$big_7_3
fi
# one chain per kernel, 8 vCPUs then 32: a kernel done early goes on without waiting for the other
# soak: its default, 120 s under scx_sis and as long under EEVDF first (--long: 600 s)
chain() {
  local k=$1 t b
  if [ "$k" = 6.12 ]; then t="$both $only_6_12" b=$big_6_12; else t="$both $only_7_3" b=$big_7_3; fi
  vm "v$k" --kernel "$k" $t; wait $!
  [ -z "$b" ] || { vm "b$k" --kernel "$k" "${big[@]}" $b; wait $!; }
}
echo "== VM tests, 6.12 and 7.3 side by side, 8 vCPUs in 2 LLCs: on both: $both; 6.12: $only_6_12; 7.3: $only_7_3"
echo "   then 32 vCPUs in 4 LLCs: 6.12: ${big_6_12:-none}; 7.3: $big_7_3"
echo "   (each run's output follows when all are done; meanwhile: tail -f $logs/*)"
chain 6.12 & chain 7.3 &
wait
# the parallel rig needs both host cores: after the serial chains
echo "== the parallel rig's smoke (multi-threaded TCG, QEMU 10, 2 vCPUs): short A/B in blocks, both kernels"
tests/vm/mttcg_smoke.sh --bin "$bin" 7.3 6.12 >"$logs/mttcg" 2>&1
echo "== a pipe's round trip beside hogs on the parallel rig (qemu's main thread raised): 6.12"
tests/vm/pipelat_check.sh --bin "$bin" 6.12 >"$logs/pipelat" 2>&1
runs="v6.12 v7.3"; [ -z "$big_6_12" ] || runs+=" b6.12"; runs+=" b7.3 mttcg pipelat"
tally $runs
rm -rf "$logs"

echo "host: $host_pass passed, $host_fail failed; VM: $((pass - host_pass)) passed, $((fail - host_fail)) failed"
summary
[ $fail -eq 0 ]
