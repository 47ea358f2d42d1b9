#!/usr/bin/env bash
# Boot-to-boot spread of the parallel rig with and without KASLR: BOOTS boots a layout, the two
# layouts alternating, each boot the same short A/B (EEVDF and scx_sis, blocks rotating).
#   boots.sh OUT KERNEL BOOTS [BENCH-OPTIONS...]
# Each boot lands in OUT/<n>-<kaslr|nokaslr>/; scx_sis_bench --pool over one layout's boots pools them.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../../.." && pwd)
out=${1:?OUT} kernel=${2:?KERNEL} boots=${3:?BOOTS}; shift 3
bench=("$@")
[ ${#bench[@]} -gt 0 ] || bench=(--suite tbench,hackbench --hackbench-groups 2 --hackbench-loops 300
                                  --runs 8 --warmup 1 --block 4)
mkdir -p "$out"
n=0
for ((i = 0; i < boots; i++)); do
  for layout in kaslr nokaslr; do
    n=$((n + 1))
    append=""; [ "$layout" = nokaslr ] && append=nokaslr
    d="$out/$(printf %02d $n)-$layout"
    echo "boots.sh: boot $n ($layout) -> $d"
    SCX_SIS_VM_APPEND="$append" "$repo/bench/run-vm.sh" --mttcg --kernel "$kernel" \
      --sockets 1 --cores 1 --threads 2 --timeout 1800 --out "$d" -- "${bench[@]}" > "$d.log" 2>&1
    echo "boots.sh: boot $n rc=$?"
  done
done
