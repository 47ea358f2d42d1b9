#!/usr/bin/env bash
# Run the scx_sis VM tests: one VM boot per kernel, running tests/vm/guest/all.sh inside.
#   tests/vm/run.sh [--kernel 6.12|7.3|all|PATH] [--cpus N] [--sockets S --cores C --threads T]
#                   [--memory 4G] [--timeout SECS] [--bin PATH] [--bench-bin PATH] [--env NAME=VALUE]...
#                   [--mttcg] [TESTS...]
# TESTS: guest test names (badinput smoke partial hotswap, or any other in guest/, e.g. kworker at --cpus 32;
#        default: those four).
# --bin: the scheduler binary (default: <repo>/target/release/scx_sis; build it first).
# --bench-bin: the bench harness the bench tests run (default: scx_sis_bench beside --bin).
# --env: a knob for the guest tests (e.g. SIS_MODES=full; each test script lists its own).
# --mttcg: boot on the parallel rig (vm.sh --mttcg: multi-threaded TCG, vCPUs <= host cores).
# Prints per-kernel summaries and a last line 'N passed, M failed' (N/M: test scripts over all
# kernels; a kernel whose VM died or timed out counts as one failure). Exit 1 if anything failed.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)

kernels=all bin="$repo/target/release/scx_sis" bench_bin="" timeout="" vmargs=() tests=() genv=()
while [ $# -gt 0 ]; do
  case "$1" in
    --kernel) kernels=${2:?}; shift 2 ;;
    --cpus|--sockets|--cores|--threads|--memory) vmargs+=("$1" "${2:?}"); shift 2 ;;
    --mttcg) vmargs+=(--mttcg); shift ;;
    --timeout) timeout=${2:?}; shift 2 ;;
    --bin) bin=${2:?}; shift 2 ;;
    --bench-bin) bench_bin=${2:?}; shift 2 ;;
    --env) case "${2:?}" in [A-Z_]*=*) genv+=("$2") ;; *) echo "run.sh: --env wants NAME=VALUE, not '$2'" >&2; exit 2 ;; esac; shift 2 ;;
    -h|--help) sed -n '2,13p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "run.sh: unknown option '$1'" >&2; exit 2 ;;
    *) tests+=("$1"); shift ;;
  esac
done
[ "$kernels" = all ] && kernels="6.12 7.3"
kernels=${kernels//,/ }

bin=$(realpath -m "$bin")
if [ ! -x "$bin" ]; then
  echo "run.sh: scheduler binary $bin not found: build it first (cargo build --release)" >&2
  echo "0 passed, 1 failed"
  exit 1
fi
# a missing harness fails only the tests that need it (lib.sh: require_scx_sis_bench)
bench_bin=$(realpath -m "${bench_bin:-$(dirname "$bin")/scx_sis_bench}")
case "$bin" in "$repo"/*) ;; *) echo "run.sh: note: $bin is outside the repo; the guest sees the host's root fs read-only, fine" >&2 ;; esac

total_pass=0 total_fail=0 lines=()
for k in $kernels; do
  if [ -f "$k" ]; then kpath=$k; else
    kpath=$("$here/kernels.sh" "$k") || { echo "run.sh: no kernel for $k" >&2; total_fail=$((total_fail + 1)); lines+=("$k: FAIL (no kernel)"); continue; }
  fi
  kname=$(basename "$kpath")
  # the pid too: two runs started in the same second must not share a log
  log="$repo/target/vm-logs/run-$kname-$(date +%Y%m%d-%H%M%S)-$$.log"
  # default timeout: boot + ~3 min a test, generous for TCG on 2 busy cores
  t=${timeout:-$(( 300 + 300 * ( ${#tests[@]} > 0 ? ${#tests[@]} : 4 ) ))}
  echo "=============== $kname: tests ${tests[*]:-all} (timeout ${t}s) ==============="
  out=$(mktemp)
  sumfile="$repo/target/vm-logs/summary-$kname-$$.txt"; rm -f "$sumfile"
  # mitigations=off: the test guests run only these tests, and retpolines and the RSB fill at
  # every context switch are emulated instructions too: a fixed guest load (hackbench, execs, an
  # attach, stress-ng) took markedly less time without them (docs/lab-notes/2026-11-26.md).
  # Benchmarks (bench/run-vm.sh) keep a production kernel's default. SCX_SIS_VM_APPEND adds more.
  SCX_SIS_VM_APPEND="mitigations=off${SCX_SIS_VM_APPEND:+ $SCX_SIS_VM_APPEND}" \
  "$here/vm.sh" --kernel "$kpath" "${vmargs[@]}" --timeout "$t" --log "$log" -- \
    env "${genv[@]}" SCX_SIS="$bin" SCX_SIS_BENCH="$bench_bin" SCX_SIS_SUMMARY="$sumfile" bash "$here/guest/all.sh" "${tests[@]}" | tee "$out"
  vrc=${PIPESTATUS[0]}
  # the guest writes its last line to $sumfile (the console may interleave kernel messages)
  summary=$(grep -hE '^[0-9]+ passed, [0-9]+ failed$' "$sumfile" "$out" 2>/dev/null | head -n 1)
  rm -f "$out" "$sumfile"
  if [ -n "$summary" ]; then
    p=${summary%% passed*}; f=${summary#*passed, }; f=${f%% failed*}
    total_pass=$((total_pass + p)); total_fail=$((total_fail + f))
    if [ "$vrc" -ne 0 ] && [ "$f" -eq 0 ]; then total_fail=$((total_fail + 1)); summary="$summary, vm.sh exit $vrc"; fi
    lines+=("$kname: $summary (log $log)")
  else
    total_fail=$((total_fail + 1))
    lines+=("$kname: FAIL: no summary from the guest, vm.sh exit $vrc (VM died/timed out?) (log $log)")
  fi
done
echo "=============== summary ==============="
printf '%s\n' "${lines[@]}"
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
