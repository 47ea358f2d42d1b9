#!/usr/bin/env bash
# cgweight: cgroup cpu.weight (issue 9), scx_sis against EEVDF in the same boot, through
# `scx_sis bench --suite cgroups` (1 run per case, EEVDF and scx_sis only):
#  - cg-weight: cgroups of cpu.weight 300 and 100, one hog each, one CPU: scx_sis's CPU-time
#    ratio within TOL_PCT of 3.00.
#  - cg-threads: a 4-hog and a 1-hog cgroup of equal weight, one CPU: within TOL_PCT of 1.00.
#  - cg-nested: a/{x: 1 hog, y: 2 hogs} vs b: 1 hog, equal weights, one CPU: every cgroup's
#    share within TOL_PCT of its ideal (1/4, 1/4, 1/2).
#  - cg-wide: 300 with one hog per CPU vs 100 with two per CPU, unpinned (ideal 3.00): the 5%
#    target is printed; what is asserted is WIDE_CHECK_PCT, or, when EEVDF itself is further off
#    in the same boot, WIDE_EEVDF_PCT of EEVDF's ratio and never below WIDE_FLOOR. Across CPUs
#    the share rests on which hogs share a CPU. Before loads kept the fraction of a cgroup task's
#    weight and busy CPUs balanced tasks lighter than nice 0 (2026-11-24, BENCHMARKS.md) scx_sis
#    gave 2.3-5.1 (it would fail this about half the time); since, 2.66-3.06 in 10 bench runs
#    (EEVDF 1.8-3.0). A CI run on 7.3 gave 2.20 beside EEVDF's 2.30: balance pulled hogs away
#    from a CPU where a root task ran for a moment, and back (2.43-2.90 in 6 bench runs); since
#    pulls wait for a gap that lasts (2026-11-25, session 23), 2.71-3.01 in 9 runs on both kernels.
# TOL_PCT is issue 9's target (5%), printed as met / NOT met; one 3 s run is asserted within
# CHECK_PCT (8%): a 6.12 run beside another VM and a build once gave 0.947 for cg-threads, while
# a scheduler without cgroup weights gets 4.0 there and 1.0 for cg-weight. BENCHMARKS.md holds
# the averaged figures (2.97 / 0.96 / 2.7%).
#  - gb-wide: cg-wide's load with the two cgroups as groups of the group balancer
#    (--gb-parent), settled on distinct partitions: cpu.weight must hold across partitions too,
#    asserted like cg-wide. The balancer's swaps once traded a 300-weight task for a 100-weight
#    one and gave 1.25-2.00 (BENCHMARKS.md 2026-11-24, session 17); since, 2.36-2.91 in single
#    runs, one CI run on 7.3 at 2.36 beside EEVDF's 2.28.
#    The mean of 2 runs is asserted.
# Then cgroup churn while attached: create, move a hog in and out, change cpu.weight, delete,
# 20 rounds: scx_sis stays attached, clean kernel log.
# env: SCX_SIS (required), CG_SECS (measured window per case, default 3)
source "$(dirname "$0")/lib.sh"
require_scx_sis
trap cleanup_sched EXIT

TOL_PCT=5
CHECK_PCT=8
WIDE_CHECK_PCT=20
WIDE_EEVDF_PCT=95
WIDE_FLOOR=2.10
secs=${CG_SECS:-3}
out="$SCX_SIS_OUT/cgweight"
rm -rf "$out" "$out-gb"
kmsg_mark
check_eq "state before" "$(sched_state)" disabled
bench_session "$out" cgroups "$secs"
grep -h "group run_ms" "$out"/raw/cg-*/*.txt 2>/dev/null | sed 's/^/  | /'

bench_vals "$out"
log_placements
require_vals cg-weight cg-threads cg-nested cg-wide

for c in "cg-weight 3.00" "cg-threads 1.00"; do
  set -- $c
  e=$(val "$1" EEVDF) x=$(val "$1" scx_sis)
  note "$1 target (issue 9): scx_sis ratio ${x:-?} within ${TOL_PCT}% of $2: $(within "$x" "$2" "$TOL_PCT" && echo met || echo NOT met)"
  check "$1: scx_sis ratio ${x:-?} within ${CHECK_PCT}% of $2 (EEVDF ${e:-?})" within "$x" "$2" "$CHECK_PCT"
done
e=$(val cg-nested EEVDF) x=$(val cg-nested scx_sis)
note "cg-nested target (issue 9): worst share ${x:-?}% off <= ${TOL_PCT}%: $(awk -v g="$x" -v l="$TOL_PCT" 'BEGIN { exit !(g != "" && g + 0 <= l + 0) }' && echo met || echo NOT met)"
check "cg-nested: scx_sis worst share ${x:-?}% off its ideal <= ${CHECK_PCT}% (EEVDF ${e:-?}%)" \
  awk -v g="$x" -v l="$CHECK_PCT" 'BEGIN { exit !(g != "" && g + 0 <= l + 0) }'
# wide_ok X E: X within WIDE_CHECK_PCT of 3.00, or >= WIDE_EEVDF_PCT of E (EEVDF's) and >= WIDE_FLOOR
wide_ok() {
  within "$1" 3.00 "$WIDE_CHECK_PCT" ||
    awk -v g="$1" -v r="$2" -v p="$WIDE_EEVDF_PCT" -v f="$WIDE_FLOOR" \
      'BEGIN { exit !(g != "" && r > 0 && g + 0 >= r * p / 100 && g + 0 >= f + 0) }'
}
e=$(val cg-wide EEVDF) x=$(val cg-wide scx_sis)
note "cg-wide target (issue 9): scx_sis ratio ${x:-?} within ${TOL_PCT}% of 3.00: $(within "$x" 3.00 "$TOL_PCT" && echo met || echo NOT met)"
check "cg-wide: scx_sis ratio ${x:-?} within ${WIDE_CHECK_PCT}% of 3.00, or >= ${WIDE_EEVDF_PCT}% of EEVDF's ${e:-?} and >= $WIDE_FLOOR" wide_ok "$x" "$e"

# ---- cpu.weight across the group balancer's partitions ----
# 2 runs, their mean asserted: single runs spread 2.36-2.91, across the 2.40 line (a CI run on
# 6.12 gave 2.39 where two re-runs of the same binary gave 2.84 and 2.83)
BENCH_RUNS=2 bench_session "$out-gb" gb-wide "$secs" --variant "gb=--gb-parent /sys/fs/cgroup/scx_sis_gb"
grep -h "group run_ms" "$out-gb"/raw/gb-wide/*.txt 2>/dev/null | sed 's/^/  | /'
bench_vals "$out-gb"
log_placements
e=$(val_mean gb-wide EEVDF) x=$(val_mean gb-wide gb)
note "gb-wide target (issue 9): scx_sis --gb-parent ratio ${x:-?} within ${TOL_PCT}% of 3.00: $(within "$x" 3.00 "$TOL_PCT" && echo met || echo NOT met)"
check "gb-wide: scx_sis --gb-parent ratio ${x:-?} within ${WIDE_CHECK_PCT}% of 3.00, or >= ${WIDE_EEVDF_PCT}% of EEVDF's ${e:-?} and >= $WIDE_FLOOR" wide_ok "$x" "$e"

# ---- churn while attached ----
# entries of scx_sis's cgroup state map (bpftool from the shared root filesystem)
nr_cg_state() { bpftool -j map dump name cg_sched_map 2>/dev/null | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))' 2>/dev/null; }
if ! command -v bpftool >/dev/null; then fail "bpftool missing (scripts/setup.sh installs it): the churn cannot be checked"; finish; exit; fi
if ! start_sched; then fail "attach for the churn"; finish; exit; fi
seq0=$(enable_seq)
n0=$(nr_cg_state)
# an unreadable map would compare '' with ''
check "cgroup state entries readable before the churn (${n0:-none})" is_num "$n0"
cg=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
base="$cg/scx_sis-churn.$$"
# processes live in leaves only (cgroup v2): "home" is where the hogs go between rounds
mkdir "$base" && echo +cpu >"$base/cgroup.subtree_control" && mkdir "$base/home"
sleep 1000 & hog_sleep=$!
( while :; do :; done ) & hog=$!
errs=0
for i in $(seq 1 20); do
  d="$base/c$i"
  mkdir "$d" || errs=$((errs + 1))
  echo $((i * 37 % 9999 + 1)) >"$d/cpu.weight" || errs=$((errs + 1))
  echo "$hog" >"$d/cgroup.procs" || errs=$((errs + 1))
  echo "$hog_sleep" >"$d/cgroup.procs" || errs=$((errs + 1))
  echo $((i % 2 ? 10000 : 1)) >"$d/cpu.weight" || errs=$((errs + 1))
  echo "$hog" >"$base/home/cgroup.procs" || errs=$((errs + 1))
  echo "$hog_sleep" >"$base/home/cgroup.procs" || errs=$((errs + 1))
  rmdir "$d" || errs=$((errs + 1))
done
check_eq "cgroup churn: failed operations" "$errs" 0
check_eq "cgroup state entries after churn (before: ${n0:-?}, +2 for the churn parent and home)" "$(nr_cg_state)" "$((n0 + 2))"
check_eq "hog alive on scx_sis" "$(on_ext "$hog")" 1
kill "$hog" "$hog_sleep"; wait "$hog" "$hog_sleep" 2>/dev/null
rmdir "$base/home" "$base"
check_eq "cgroup state entries after removing them" "$(nr_cg_state)" "$n0"
check_eq "still attached after churn" "$(sched_state)/$(enable_seq)" "enabled/$seq0"
stop_sched
dmesg_check
finish
