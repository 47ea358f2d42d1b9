#!/usr/bin/env bash
# Every test: host tests (cargo test: unit, topology fixtures, CLI, BPF mechanisms through
# BPF_PROG_TEST_RUN, bench statistics; cargo fmt --check; cargo clippy -D warnings) and the VM
# tests on both kernels (6.12 and 7.3, 8 vCPUs in 2 LLCs), plus smoke + sis with 32 vCPUs in
# 4 LLCs. Installs what it needs first.
#   scripts/test.sh [--host-only | --vm-only]
# Ends with one line 'N passed, M failed' summing the VM test scripts; exit 1 if anything failed.
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mode=${1:-all}
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
cd "$repo"
$SUDO scripts/setup.sh || exit 1
cargo build --release --quiet || { echo "0 passed, 1 failed"; exit 1; }

host_rc=0
if [ "$mode" != --vm-only ]; then
  echo "== host tests (cargo test)"
  # BPF_PROG_TEST_RUN needs root (CAP_BPF + CAP_SYS_ADMIN for syscall programs)
  $SUDO env "PATH=$PATH" cargo test --release 2>&1; host_rc=${PIPESTATUS[0]}
  echo "== formatting (cargo fmt --check, rustfmt.toml) and lints (cargo clippy -D warnings)"
  cargo fmt --check || { echo "cargo fmt --check: the code is not formatted (run cargo fmt)"; host_rc=1; }
  cargo clippy --release --quiet --all-targets -- -D warnings || { echo "cargo clippy: lint findings"; host_rc=1; }
fi
[ "$mode" = --host-only ] && exit $host_rc

# the guest runs a copy: rebuilding meanwhile must not change the binary under a running test
bin="$repo/target/vm-bin/scx_sis"
mkdir -p "$(dirname "$bin")" && cp target/release/scx_sis "$bin"

pass=0 fail=0
vm() { # ARGS... for tests/vm/run.sh; adds its 'N passed, M failed' to the totals
  local out; out=$(mktemp)
  $SUDO tests/vm/run.sh --bin "$bin" "$@" 2>&1 | tee "$out"
  local last; last=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$out" | tail -n 1)
  if [ -z "$last" ]; then fail=$((fail + 1)); else
    pass=$((pass + ${last%% passed*})); last=${last#*, }; fail=$((fail + ${last%% failed*})); fi
  rm -f "$out"
}
vm --kernel all badinput smoke partial hotswap hotplug sis steal bench_smoke top fairness cgweight rt pinned gb
# 32 vCPUs = 4 LLCs: the smoke, and the SIS mechanisms in the default mode (the variants ran above)
vm --kernel all --cpus 32 --sockets 4 --cores 4 --threads 2 --memory 6G --env SIS_MODES=full --env SIS_RUNS=2 smoke sis

[ $host_rc -eq 0 ] || { echo "host tests failed (cargo test, fmt or clippy)"; fail=$((fail + 1)); }
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
