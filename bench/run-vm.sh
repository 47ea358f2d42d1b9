#!/usr/bin/env bash
# Run the scx_sis benchmark set inside the test VM (8 vCPUs: 2 sockets x 2 cores x 2 threads, the
# 7.3 kernel) in one command, and collect the results into <repo>/bench-results/<stamp>-<kernel>/.
#
#   bench/run-vm.sh [--kernel 7.3|6.12|PATH] [--cpus N] [--sockets S --cores C --threads T]
#                   [--memory SIZE] [--timeout SECS] [--bin PATH] [--bench-bin PATH] [--out DIR] [--quick]
#                   [--mttcg [--retries N]] [-- BENCH-OPTIONS...]
#
# Without BENCH-OPTIONS it runs the full set: --suite hackbench,tbench,netperf,schbench --runs 5
# --warmup 1 with the variants nofilter (--sis-mode linear), nofailprone (--sis-mode filter),
# nosteal (--steal off, if this scx_sis has --steal) and every peer found on PATH (scx_bpfland,
# scx_cosmos). BENCH-OPTIONS replace that set entirely (e.g. -- --suite hackbench --runs 3).
# --quick: the tiny smoke sizes (--quick --runs 2 --warmup 0).
# --bin: the scx_sis binary (default target/release/scx_sis); --bench-bin: the harness (default
# scx_sis_bench beside --bin). Both are copied to one directory under target/vm-bin/ so a rebuild
# during the run does not change them; the harness runs the scx_sis beside it.
# --sockets/--cores/--threads/--memory go to tests/vm/vm.sh (e.g. 64 vCPUs in 8 LLCs).
# --mttcg: the parallel rig (vm.sh --mttcg: multi-threaded TCG on QEMU 10, vCPUs <= host cores;
# default vCPUs: the host's cores). A boot whose guest kernel logged an Oops/BUG (rare there, at
# a scheduler switch), or that hung (seen: an RCU stall before init; vm.sh --boot-timeout 300
# stops such a boot), is discarded, said so, and run again, up to --retries times (default 2);
# each discarded boot's fault line goes to <out>/discarded-boots.txt.
# Exit status: the bench's (0 ok; 2 usage error; 1 other), or vm.sh's (124 timeout, 125 VM died,
# 123 the guest kernel faulted on every try).
# The guest sees the host's root filesystem read-only with target/ writable: it writes to
# target/bench-results/<stamp>/ and this script copies that to --out (default bench-results/<stamp>-<kernel>).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)

die() { echo "run-vm.sh: error: $*" >&2; exit 2; }
# peers built by bench/setup-peers.sh
PATH="$PATH:${SCX_SIS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/scx_sis}/peers/bin"

kernel=7.3 cpus="" timeout=7200 bin="$repo/target/release/scx_sis" bench_bin="" out="" quick=0 bench=() vmopts=()
mttcg=0 retries=2 shape=0
while [ $# -gt 0 ]; do
  case "$1" in
    --kernel) kernel=${2:?}; shift 2 ;;
    --cpus) cpus=${2:?}; shift 2 ;;
    --sockets|--cores|--threads) vmopts+=("$1" "${2:?}"); shape=1; shift 2 ;;
    --memory) vmopts+=("$1" "${2:?}"); shift 2 ;;
    --mttcg) mttcg=1; vmopts+=(--mttcg --boot-timeout 300); shift ;;
    --retries) retries=${2:?}; shift 2 ;;
    --timeout) timeout=${2:?}; shift 2 ;;
    --bin) bin=${2:?}; shift 2 ;;
    --bench-bin) bench_bin=${2:?}; shift 2 ;;
    --out) out=${2:?}; shift 2 ;;
    --quick) quick=1; shift ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"; exit 0 ;;
    --) shift; bench=("$@"); break ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done

# vCPUs: as given; else 8 (2 LLCs with SMT), on the parallel rig the host's cores (unless a
# --sockets/--cores/--threads shape says how many)
if [ -z "$cpus" ] && [ "$shape" = 0 ]; then
  if [ "$mttcg" = 1 ]; then cpus=$(nproc); else cpus=8; fi
fi
[ -x "$bin" ] || die "scx_sis binary $bin not found: build it first (cargo build --release)"
bench_bin=${bench_bin:-$(dirname "$bin")/scx_sis_bench}
[ -x "$bench_bin" ] || die "scx_sis_bench binary $bench_bin not found: build it first (cargo build --release), or give --bench-bin"
if [ -f "$kernel" ]; then kpath=$(realpath "$kernel"); else
  kpath=$("$repo/tests/vm/kernels.sh" "$kernel") || die "no $kernel kernel (tests/vm/kernels.sh $kernel)"
fi

stamp=$(date +%Y-%m-%d-%H%M%S)
mkdir -p "$repo/target/vm-bin" "$repo/target/bench-results" || die "cannot write to $repo/target"
vdir="$repo/target/vm-bin/bench-$$"
mkdir -p "$vdir" && cp "$bin" "$vdir/scx_sis" && cp "$bench_bin" "$vdir/scx_sis_bench" || die "cannot copy $bin and $bench_bin to $vdir"
# the pid too: two runs started in the same second (two kernels side by side) must not share it
gout="$repo/target/bench-results/$stamp-$$"
# and the kernel in the default --out: two kernels side by side start in the same second
kver=$(basename "$kpath"); kver=${kver#bzImage-}
[ -n "$out" ] || out="$repo/bench-results/$stamp-$kver"

if [ ${#bench[@]} -eq 0 ]; then
  if [ "$quick" = 1 ]; then
    bench=(--quick --runs 2 --warmup 0 --suite hackbench,tbench,netperf,schbench)
  else
    bench=(--suite hackbench,tbench,netperf,schbench --runs 5 --warmup 1)
  fi
  bench+=(--variant "nofilter=--sis-mode linear" --variant "nofailprone=--sis-mode filter")
  if "$bin" --help 2>/dev/null | grep -q -- '--steal'; then
    bench+=(--variant "nosteal=--steal off")
  else
    echo "run-vm.sh: note: this scx_sis has no --steal option: no nosteal variant" >&2
  fi
  for p in scx_bpfland scx_cosmos; do
    if command -v "$p" >/dev/null; then bench+=(--peer "$p=$(command -v "$p")"); else echo "run-vm.sh: note: $p not on PATH: no $p column" >&2; fi
  done
fi

echo "run-vm.sh: $(basename "$kpath"), ${cpus:-shape ${vmopts[*]}} vCPUs$([ "$mttcg" = 1 ] && echo ', multi-threaded TCG'): scx_sis_bench ${bench[*]} --out $gout" >&2
# The host's CPU times once a second over the boot: this machine may itself be a VM whose
# hypervisor takes CPU time from it now and then (steal), which slows vCPUs unevenly
# (scx_sis_bench --pool reports it per boot and run).
hoststat() { while :; do echo "$(date +%s.%N) $(head -n 1 /proc/stat)"; sleep 1; done; }
hoststat > "$gout.host-stat.txt" &
hpid=$!
try=0 faults=()
while :; do
  "$repo/tests/vm/vm.sh" --kernel "$kpath" ${cpus:+--cpus "$cpus"} "${vmopts[@]}" --timeout "$timeout" \
    --log "$gout.console.log" -- "$vdir/scx_sis_bench" "${bench[@]}" --out "$gout"
  rc=$?
  fault=""
  if [ "$mttcg" = 1 ]; then
    fault=$(grep -m 1 -E 'Oops:|BUG:|kernel BUG at|general protection fault|Kernel panic' "$gout.console.log" 2>/dev/null)
    # a boot that hung before the bench began: stopped by --boot-timeout, or an RCU stall and
    # then nothing until the timeout
    if [ -z "$fault" ] && [ "$rc" = 124 ] && ! grep -q '^\[bench ' "$gout.console.log" 2>/dev/null; then
      fault=$(grep -m 1 -E 'vm.sh: FAILURE: boot hung|rcu: INFO: .*detected stalls' "$gout.console.log" 2>/dev/null)
    fi
  fi
  [ -n "$fault" ] || break
  faults+=("$(date -Is) try $((try + 1)): ${fault#*] }")
  echo "run-vm.sh: the guest kernel faulted or hung ('${fault#*] }'): this boot's results are discarded" >&2
  [ -d "$gout" ] && mv "$gout" "$gout.discarded-$try"
  mv "$gout.console.log" "$gout.discarded-$try.console.log"
  try=$((try + 1))
  if [ "$try" -gt "$retries" ]; then
    echo "run-vm.sh: faulted on all $try tries: giving up" >&2
    rc=123; break
  fi
  echo "run-vm.sh: booting again (try $((try + 1)) of $((retries + 1)))" >&2
done
kill "$hpid" 2>/dev/null; wait "$hpid" 2>/dev/null
[ -f "$gout.console.log" ] && [ -d "$gout" ] && cp "$gout.console.log" "$gout/console.log"
[ -d "$gout" ] && cp "$gout.host-stat.txt" "$gout/host-stat.txt"
if [ ${#faults[@]} -gt 0 ] && [ -d "$gout" ]; then printf '%s\n' "${faults[@]}" > "$gout/discarded-boots.txt"; fi
rm -rf "$vdir"

if [ -d "$gout" ]; then
  mkdir -p "$(dirname "$out")"
  if [ "$(realpath -m "$out")" != "$(realpath -m "$gout")" ]; then
    rm -rf "$out" && cp -a "$gout" "$out" || die "cannot copy $gout to $out"
  fi
  echo "run-vm.sh: results in $out (table.txt, results.json, runs.csv, *.png, logs/, raw/)" >&2
  [ -f "$out/table.txt" ] || echo "run-vm.sh: no table.txt: the session stopped early; 'scx_sis_bench --report $out' rebuilds it from results.json" >&2
else
  echo "run-vm.sh: the guest wrote no results ($gout missing)" >&2
fi
exit $rc
