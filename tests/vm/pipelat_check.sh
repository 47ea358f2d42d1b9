#!/usr/bin/env bash
# A pipe's round trip beside hogs, on the parallel rig (multi-threaded TCG, QEMU 10, 2 vCPUs as one
# core x SMT2) with qemu's main thread raised (SCX_SIS_VM_QEMU_RT=1: the guest's ticks fire on
# time, which the serial rig cannot give: there the vCPUs' turns on one host thread swamp the
# figure). EEVDF and scx_sis in one block each, `pipelat` 5 runs of 2 s: two threads pass a byte
# over pipes (sync wakeups) beside one CPU hog per CPU, pinned one per CPU and unpinned.
# Checked, on scx_sis's median p99 round trip over the runs:
#  - unpinned: at most max(2 x EEVDF's, SLICE_US). A sync wakee put in line behind a hog waited
#    out the hog's slice on each half of the trip: 7-8 ms against EEVDF's 1.6-2.4 ms.
#  - pinned: under 1.2 x SLICE_US. A wakee that came while the hog beside it was being
#    dispatched waited out the hog's slice: 4.2-4.3 ms (CV 2-3%), where it now waits for a
#    tick: 1.7-2.6 ms (CV 23-34%).
# SLICE_US is scx_sis's default slice (--slice-us). The medians of the round trips are printed.
# The median over runs, not the mean: one run the host disturbed (its p99 2-3x the others')
# moves a mean of few runs past a bound.
# A disturbed rig measures nothing: another load on the host (steal, a second VM) stretches every
# round trip, EEVDF's with scx_sis's (once EEVDF's pinned p99 read 18.6 ms, its median 1.9 ms),
# and it comes in bursts: runs at 10-25% steal in a boot at 4% over all (p99s 2-3x the others).
# A boot is sound when the host's steal stayed under STEAL_PCT over each run (bench/run-vm.sh
# samples it once a second; a burst within one column does not show over the boot) and EEVDF's
# pinned p99 under 2 x SLICE_US (2.1-3.3 ms in every sound boot on 6.12); else it is booted
# again, up to BOOTS times, each disturbed boot named in the output. When none is sound, the
# last is checked against EEVDF in the same boot, stretched alike: pinned at most max(EEVDF's,
# 1.2 x SLICE_US).
#   tests/vm/pipelat_check.sh [--bin PATH] [KERNEL...]     (default kernel: 6.12)
# Last line: 'N passed, M failed', N and M counting kernels. Needs as many host cores as vCPUs (2).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
bin="$repo/target/release/scx_sis"
[ "${1:-}" = --bin ] && { bin=$2; shift 2; }
kernels=("$@"); [ ${#kernels[@]} -gt 0 ] || kernels=(6.12)
SLICE_US=3000
RUNS=5
STEAL_PCT=5
pass=0 fail=0
BOOTS=3
# verdict DIR [disturbed]: 'ok ...'/'FAIL ...' lines on scx_sis, or one 'DISTURBED ...' line
# (with 'disturbed': the bounds for a disturbed boot, and no DISTURBED line)
verdict() {
  python3 - "$1" "$SLICE_US" "${2:-sound}" "$RUNS" "$STEAL_PCT" <<'PY'
import json, sys, pathlib, statistics
d, slice_us, mode = pathlib.Path(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
nruns, steal_pct = int(sys.argv[4]), float(sys.argv[5])
try:
    r = json.loads((d / "results.json").read_text())
except Exception as e:
    print(f"FAIL no results.json: {e}"); sys.exit()
def median(suite, param, variant):
    v = [x["value"] for x in r["runs"] if x["suite"] == suite and x["param"] == param
         and x["variant"] == variant and x["ok"] and not x["warmup"] and x["value"] is not None]
    return statistics.median(v) if len(v) == nruns else None
# host steal: /proc/stat's first line, once a second (bench/run-vm.sh), over the boot and over
# each measured run (the samples that bracket it)
steal, worst = None, None
try:
    rows = [l.split() for l in (d / "host-stat.txt").read_text().splitlines()]
    rows = [(float(w[0]), [int(x) for x in w[2:10]]) for w in rows if len(w) >= 10 and w[1] == "cpu"]
    def pct(a, b):
        total = sum(b[1]) - sum(a[1])
        return 100.0 * (b[1][7] - a[1][7]) / total if total > 0 else 0.0
    steal = pct(rows[0], rows[-1])
    for x in r["runs"]:
        if x["suite"] != "pipelat" or x["warmup"] or not x.get("started"):
            continue
        t0, t1 = x["started"], x["started"] + (x.get("wall_s") or 0.0)
        a = [w for w in rows if w[0] <= t0] or rows[:1]
        b = [w for w in rows if w[0] >= t1] or rows[-1:]
        s = pct(a[-1], b[0])
        if worst is None or s > worst[0]:
            worst = (s, f'{x["variant"]} {x["param"]} run {x["round"] + 1}')
except Exception:
    pass
e_pinned = median("pipelat", "pinned", "EEVDF")
why = []
if worst is not None and worst[0] >= steal_pct:
    why.append(f"host steal {worst[0]:.1f}% of its CPU time over {worst[1]}")
if e_pinned is not None and e_pinned > 2 * slice_us:
    why.append(f"EEVDF's pinned p99 {e_pinned:.0f} us > 2 x the slice")
if why and mode != "disturbed":
    print("DISTURBED", "; ".join(why)); sys.exit()
for param in ("unpinned", "pinned"):
    e, x = median("pipelat", param, "EEVDF"), median("pipelat", param, "scx_sis")
    e50, x50 = median("pipelat-p50", param, "EEVDF"), median("pipelat-p50", param, "scx_sis")
    if e is None or x is None:
        print(f"FAIL {param}: not every run measured (EEVDF {e}, scx_sis {x})"); continue
    if param == "unpinned":
        bound, what = max(2 * e, slice_us), "max(2 x EEVDF's, the slice)"
    elif why:
        bound, what = max(e, 1.2 * slice_us), "max(EEVDF's, 1.2 x the slice) (a disturbed boot)"
    else:
        bound, what = 1.2 * slice_us, "1.2 x the slice"
    print("ok" if x <= bound else "FAIL",
          f"{param}: scx_sis median p99 round trip {x:.0f} us <= {what} {bound:.0f} us "
          f"(EEVDF {e:.0f} us; medians EEVDF {e50 or 0:.0f} us, scx_sis {x50 or 0:.0f} us; "
          f"host steal {steal if steal is None else round(steal, 1)}%, "
          f"at most {worst[0] if worst else 0:.1f}% a run)")
PY
}
for k in "${kernels[@]}"; do
  out="$repo/target/pipelat-check-$k" kfail=0 boot=1
  echo "== pipelat check, $k: EEVDF vs scx_sis, parallel rig, qemu's main thread raised"
  rm -rf "$out".disturbed-*
  while :; do
    rm -rf "$out"
    SCX_SIS_VM_QEMU_RT=1 "$repo/bench/run-vm.sh" --mttcg --kernel "$k" --sockets 1 --cores 1 --threads 2 \
      --retries 1 --timeout 900 --bin "$bin" --out "$out" -- --suite pipelat --quick --duration 2 --runs "$RUNS" \
      --warmup 0 --block "$RUNS"
    rc=$?
    sed -n '/^pipelat-pipe/,/^verdict/p' "$out/table.txt" 2>/dev/null
    v=$(verdict "$out")
    case "$v" in DISTURBED*) ;; *) break ;; esac
    echo "note: $k: boot $boot of $BOOTS: the rig was disturbed (${v#DISTURBED }): its figures do not count"
    [ -d "$out" ] && { rm -rf "$out.disturbed-$boot"; mv "$out" "$out.disturbed-$boot"; }
    boot=$((boot + 1))
    if [ "$boot" -gt "$BOOTS" ]; then
      echo "note: $k: no sound boot in $BOOTS: the last one is checked against EEVDF's, stretched alike"
      mv "$out.disturbed-$BOOTS" "$out"
      v=$(verdict "$out" disturbed)
      break
    fi
  done
  [ "$rc" -eq 0 ] && echo "ok: $k: the bench exited 0" || { echo "FAIL: $k: bench/run-vm.sh exited $rc"; kfail=1; }
  while read -r word rest; do
    if [ "$word" = ok ]; then echo "ok: $k: $rest"; else echo "FAIL: $k: $rest"; kfail=1; fi
  done <<<"$v"
  if [ "$kfail" -eq 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
