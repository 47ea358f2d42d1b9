#!/usr/bin/env bash
# The parallel A/B: scx_sis against EEVDF (and the peers, when bench/setup-peers.sh built them) on
# the parallel rig: multi-threaded TCG on QEMU 10 with 2 vCPUs (one host thread each), the one rig
# here whose throughput grows with CPUs. Schedulers run in blocks (each attached once per block,
# blocks in rotating order): few attach/detach transitions, which are that rig's risk; a boot
# whose kernel faulted is discarded and run again (bench/run-vm.sh --mttcg).
#
#   bench/parallel.sh [--kernel 7.3|6.12] [--topology llc2|smt2] [--runs N] [--block N] [--boots N]
#                     [--suites LIST] [--no-peers] [--rig-check] [--out DIR] [-- MORE-BENCH-OPTIONS...]
#
# --topology: llc2 = 2 LLCs x 1 CPU (default), smt2 = 1 core x 2 SMT threads.
# --runs N (10) measured runs per scheduler and row, after 1 warm-up; --block N (4) rounds a block.
# --boots N (1): the same session in N boots (OUT/boot-1 ...), then pooled (OUT/pooled.txt,
#   scx_sis_bench --pool): each boot counts as one sample. The boot moves every column by more
#   than its runs' spread predicts (with the kernel's layout fixed or not), so a verdict needs
#   boots; the pool also gives the host's steal time per boot.
# --rig-check: instead, is the rig sound? EEVDF (and scx_sis beside it), hackbench -g 2 and 4 at
#   1 vCPU and then at 2 vCPUs (llc2), --runs rounds each: 2 vCPUs must be clearly faster under
#   EEVDF, with a small CV.
# Suites (--suites: a subset, e.g. to split the A/B into shorter boots): hackbench over pipes and
# sockets (1, 2, 4 groups), tbench (1, 2 clients), netperf TCP_RR and UDP_RR, a pipe round trip
# between two processes and between two threads (perf bench sched pipe), wakelat (p99 and median wakeup
# latency beside a hog per CPU), fair-sleep and fair-fork rates.
# Results: --out (default bench-results/parallel-<kernel>-<topology>-<stamp>/): table.txt, ...
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
die() { echo "parallel.sh: error: $*" >&2; exit 2; }

kernel=7.3 topo=llc2 runs=10 block=4 boots=1 peers=1 rigcheck=0 out="" more=()
suites=hackbench,hackbench-socket,tbench,netperf-rr,pipe,wakelat,fair-sleep,fair-fork
while [ $# -gt 0 ]; do
  case "$1" in
    --kernel) kernel=${2:?}; shift 2 ;;
    --topology) topo=${2:?}; shift 2 ;;
    --runs) runs=${2:?}; shift 2 ;;
    --block) block=${2:?}; shift 2 ;;
    --boots) boots=${2:?}; shift 2 ;;
    --suites) suites=${2:?}; shift 2 ;;
    --no-peers) peers=0; shift ;;
    --rig-check) rigcheck=1; shift ;;
    --out) out=${2:?}; shift 2 ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"; exit 0 ;;
    --) shift; more=("$@"); break ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done
case "$topo" in
  llc2) shape=(--sockets 2 --cores 1 --threads 1) ;;
  smt2) shape=(--sockets 1 --cores 1 --threads 2) ;;
  *) die "--topology must be llc2 or smt2, not '$topo'" ;;
esac
[ "$runs" -ge 2 ] 2>/dev/null || die "--runs must be at least 2"
[ "$block" -ge 1 ] 2>/dev/null || die "--block must be at least 1"
[ "$boots" -ge 1 ] 2>/dev/null || die "--boots must be at least 1"
[ "$(nproc)" -ge 2 ] || die "the parallel rig needs 2 host cores for 2 vCPUs (this host has $(nproc))"
stamp=$(date +%Y-%m-%d-%H%M%S)

if [ "$rigcheck" = 1 ]; then
  base=${out:-$repo/bench-results/rig-check-$kernel-$stamp}
  rc=0
  for cpus in 1 2; do
    if [ "$cpus" = 1 ]; then s=(--cpus 1); else s=(--sockets 2 --cores 1 --threads 1); fi
    "$here/run-vm.sh" --mttcg --kernel "$kernel" "${s[@]}" --out "$base/cpus-$cpus" -- \
      --suite hackbench --hackbench-groups 2,4 --runs "$runs" --warmup 1 --block "$block" "${more[@]}" || rc=1
  done
  python3 - "$base" <<'PY'
import json, sys, statistics as st
base = sys.argv[1]
def vals(c, g, v):
    r = json.load(open(f"{base}/cpus-{c}/results.json"))
    return [x["value"] for x in r["runs"] if x["ok"] and not x["warmup"] and x["param"] == g and x["variant"] == v]
for v in ("EEVDF", "scx_sis"):
    for g in ("2", "4"):
        one, two = vals(1, g, v), vals(2, g, v)
        m1, m2 = st.mean(one), st.mean(two)
        print(f"rig check: {v} hackbench -p -g {g}: 1 vCPU {m1:.3f} s (CV {100*st.stdev(one)/m1:.1f}%, n={len(one)}), "
              f"2 vCPUs {m2:.3f} s (CV {100*st.stdev(two)/m2:.1f}%, n={len(two)}): 2 vCPUs {m1/m2:.2f}x as fast")
PY
  exit $rc
fi

bench=(--suite "$suites" --hackbench-groups 1,2,4 --runs "$runs" --warmup 1 --block "$block")
if [ "$peers" = 1 ]; then
  pdir=${SCX_SIS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/scx_sis}/peers/bin
  for p in scx_bpfland scx_cosmos; do
    if [ -x "$pdir/$p" ]; then bench+=(--peer "$p=$pdir/$p")
    else echo "parallel.sh: note: no $p in $pdir (bench/setup-peers.sh builds it): no $p column" >&2; fi
  done
fi
out=${out:-$repo/bench-results/parallel-$kernel-$topo-$stamp}
if [ "$boots" = 1 ]; then
  exec "$here/run-vm.sh" --mttcg --kernel "$kernel" "${shape[@]}" --out "$out" -- "${bench[@]}" "${more[@]}"
fi
rc=0 dirs=()
for ((i = 1; i <= boots; i++)); do
  echo "parallel.sh: boot $i of $boots" >&2
  "$here/run-vm.sh" --mttcg --kernel "$kernel" "${shape[@]}" --out "$out/boot-$i" -- "${bench[@]}" "${more[@]}" || rc=1
  [ -f "$out/boot-$i/results.json" ] && dirs+=("$out/boot-$i")
done
[ ${#dirs[@]} -gt 0 ] || die "no boot wrote results"
"$repo/target/release/scx_sis_bench" --pool "${dirs[@]}" | tee "$out/pooled.txt" || rc=1
echo "parallel.sh: pooled over ${#dirs[@]} boots: $out/pooled.txt" >&2
exit $rc
