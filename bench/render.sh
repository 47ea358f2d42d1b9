#!/usr/bin/env bash
# Rebuild table.txt, runs.csv and the PNG plots of a results directory from its results.json,
# and print the table (no scheduler is attached; runs on any host).
#   bench/render.sh DIR [--bin PATH]        (default bin: target/release/scx_sis_bench)
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir=${1:?usage: bench/render.sh DIR [--bin PATH]}
bin="$repo/target/release/scx_sis_bench"
if [ "${2:-}" = --bin ]; then bin=${3:?--bin needs a path}; fi
[ -x "$bin" ] || { echo "render.sh: $bin not found: cargo build --release" >&2; exit 2; }
exec "$bin" --report "$dir"
