#!/usr/bin/env bash
# Build the peer schedulers the benchmarks compare against (scx_bpfland, scx_cosmos from
# crates.io, `cargo install --locked`) into a cache outside the repository, once:
# ${SCX_SIS_CACHE:-~/.cache/scx_sis}/peers/bin. bench/run-vm.sh puts that directory on PATH.
# About 40 minutes on 2 cores; not part of CI.
#   bench/setup-peers.sh [--nice]     --nice: build at nice 19 (beside other work)
set -euo pipefail
root=${SCX_SIS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/scx_sis}/peers
nice=()
[ "${1:-}" = --nice ] && nice=(nice -n 19)
peers=(scx_bpfland scx_cosmos)
# the scx build scripts read BPF_CLANG; Debian ships clang versioned (the repo's .cargo/config.toml
# says so for its own build, which cargo install does not read)
export BPF_CLANG=${BPF_CLANG:-clang-19}
for p in "${peers[@]}"; do
  if [ -x "$root/bin/$p" ]; then echo "setup-peers.sh: $p: present ($("$root/bin/$p" --version 2>/dev/null | head -n 1))"; continue; fi
  echo "setup-peers.sh: building $p into $root (cargo install --locked)"
  CARGO_TARGET_DIR="$root/build" "${nice[@]}" cargo install --locked --quiet --root "$root" "$p"
done
rm -rf "$root/build"
echo "setup-peers.sh: peers in $root/bin"
