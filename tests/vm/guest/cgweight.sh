#!/usr/bin/env bash
# cgweight: cgroup cpu.weight, scx_sis against EEVDF in the same boot, through
# `scx_sis_bench --suite cgroups` (1 run per case, EEVDF and scx_sis only):
#  - cg-weight: cgroups of cpu.weight 300 and 100, one hog each, one CPU: scx_sis's CPU-time
#    ratio within TOL_PCT of 3.00.
#  - cg-threads: a 4-hog and a 1-hog cgroup of equal weight, one CPU: within TOL_PCT of 1.00.
#  - cg-nested: a/{x: 1 hog, y: 2 hogs} vs b: 1 hog, equal weights, one CPU: every cgroup's
#    share within TOL_PCT of its ideal (1/4, 1/4, 1/2).
#  - cg-deep: a hog 20 cgroups below a cpu.weight-25 cgroup vs a hog in a 100 cgroup, one CPU:
#    within CHECK_PCT of 0.25. Deeper than scx_sis tracks (16 levels) the hog counts in its
#    deepest tracked ancestor; before, it ran with its own weight, as in the root (1.00).
#  - cg-wide: 300 with one hog per CPU vs 100 with two per CPU, unpinned (ideal 3.00), its own
#    session of WIDE_RUNS runs: the 5% target is printed; what is asserted is the mean within
#    WIDE_CHECK_PCT, or, when EEVDF itself is further off in the same boot, WIDE_EEVDF_PCT of
#    EEVDF's mean and never below WIDE_FLOOR. Across CPUs the share rests on which hogs share a
#    CPU, and one run is a draw: two 300 hogs on one CPU and seven 100 hogs on another are even
#    by load (no move narrows the gap), and such a run ends at 2.3-2.4 under either scheduler
#    (EEVDF 2.27-2.48 in five runs of one 7.3 boot; scx_sis 2.32 in one CI run on 6.12). It
#    broke when loads dropped the fraction of a cgroup task's weight, when busy CPUs did not
#    balance tasks lighter than nice 0, and when balance pulled hogs away from a CPU where a root
#    task ran for a moment, and back (pulls now wait for a gap that lasts).
# TOL_PCT is the 5% target, printed as met / NOT met; one 3 s run is asserted within
# CHECK_PCT (5%). Charged from its own timestamps rather than the kernel's run-time account,
# scx_sis drifted towards 1:1 (cg-weight 2.79-2.98, cg-threads up to 1.06, cg-deep 0.258-0.269),
# which the 8% allowed before; charged as the kernel accounts, 2.99-3.01, 1.00 and 0.249-0.251
# (EEVDF alike). A scheduler without cgroup weights gets 4.0 for cg-threads, 1.0 for cg-weight.
# docs/results.md holds the averaged figures.
#  - gb-wide: cg-wide's load with the two cgroups as groups of the group balancer
#    (--gb-parent), settled on distinct partitions: cpu.weight must hold across partitions too,
#    asserted like cg-wide. The balancer's swaps once traded a 300-weight task for a 100-weight
#    one, far under 3.00; a swap now needs about equal weights.
#    The mean of 3 runs is asserted.
#  - cg-full: scx_sis --max-cgroups FULL_MAX (a separate bench session, EEVDF beside it): the
#    25 vs 100 of cg-deep with the hog in a cgroup made once the map is full (the probe fills it
#    under the 25 cgroup and fails unless that cgroup is the one left out); within CHECK_PCT of
#    0.25. The map's size is what a user with a delegated subtree could exhaust for everyone.
# Then cpu.weight writes racing activations: two cgroups whose tasks wake every ms while their
# cpu.weight is rewritten; afterwards the parent's books (bpftool) must hold exactly its active
# children's weights (host-side race test: tests/cgroup_weight.rs).
# Then cgroup churn while attached: create, move a hog in and out, change cpu.weight, delete,
# 20 rounds: scx_sis stays attached, clean kernel log.
# env: SCX_SIS and SCX_SIS_BENCH (required), CG_SECS (measured window per case, default 3)
source "$(dirname "$0")/lib.sh"
require_scx_sis
require_scx_sis_bench
trap cleanup_sched EXIT

TOL_PCT=5
CHECK_PCT=5
WIDE_CHECK_PCT=20
WIDE_EEVDF_PCT=95
WIDE_FLOOR=2.10
WIDE_RUNS=3
# cg-full's map: room for the guest's own cgroups and the bench tree, filled in a second
FULL_MAX=256
secs=${CG_SECS:-3}
out="$SCX_SIS_OUT/cgweight"
rm -rf "$out" "$out-cg-wide" "$out-gb-wide" "$out-full"
kmsg_mark
check_eq "state before" "$(sched_state)" disabled
bench_session "$out" cg-weight,cg-threads,cg-nested,cg-deep "$secs"
grep -h "group run_ms" "$out"/raw/cg-*/*.txt 2>/dev/null | sed 's/^/  | /'

bench_vals "$out"
log_placements
require_vals cg-weight cg-threads cg-nested cg-deep

for c in "cg-weight 3.00" "cg-threads 1.00"; do
  set -- $c
  e=$(val "$1" EEVDF) x=$(val "$1" scx_sis)
  note "$1 target: scx_sis ratio ${x:-?} within ${TOL_PCT}% of $2: $(within "$x" "$2" "$TOL_PCT" && echo met || echo NOT met)"
  check "$1: scx_sis ratio ${x:-?} within ${CHECK_PCT}% of $2 (EEVDF ${e:-?})" within "$x" "$2" "$CHECK_PCT"
done
e=$(val cg-deep EEVDF) x=$(val cg-deep scx_sis)
check "cg-deep: scx_sis ratio ${x:-?} within ${CHECK_PCT}% of 0.25 with the hog 20 cgroups below the 25 one (EEVDF ${e:-?})" \
  within "$x" 0.25 "$CHECK_PCT"
e=$(val cg-nested EEVDF) x=$(val cg-nested scx_sis)
note "cg-nested target: worst share ${x:-?}% off <= ${TOL_PCT}%: $(awk -v g="$x" -v l="$TOL_PCT" 'BEGIN { exit !(g != "" && g + 0 <= l + 0) }' && echo met || echo NOT met)"
check "cg-nested: scx_sis worst share ${x:-?}% off its ideal <= ${CHECK_PCT}% (EEVDF ${e:-?}%)" \
  awk -v g="$x" -v l="$CHECK_PCT" 'BEGIN { exit !(g != "" && g + 0 <= l + 0) }'
# wide_ok X E: X within WIDE_CHECK_PCT of 3.00, or >= WIDE_EEVDF_PCT of E (EEVDF's) and >= WIDE_FLOOR
wide_ok() {
  within "$1" 3.00 "$WIDE_CHECK_PCT" ||
    awk -v g="$1" -v r="$2" -v p="$WIDE_EEVDF_PCT" -v f="$WIDE_FLOOR" \
      'BEGIN { exit !(g != "" && r > 0 && g + 0 >= r * p / 100 && g + 0 >= f + 0) }'
}

# wide_session SUITE RUNS COLUMN LABEL [BENCH-OPTIONS...]: SUITE against EEVDF, RUNS runs each,
# COLUMN's mean ratio asserted by wide_ok
wide_session() {
  local suite=$1 runs=$2 col=$3 label=$4 dir="$out-$1" e x
  shift 4
  BENCH_RUNS=$runs bench_session "$dir" "$suite" "$secs" "$@"
  grep -h "group run_ms" "$dir"/raw/"$suite"/*.txt 2>/dev/null | sed 's/^/  | /'
  bench_vals "$dir"
  log_placements
  e=$(val_mean "$suite" EEVDF) x=$(val_mean "$suite" "$col")
  note "$suite target: $label mean ratio ${x:-?} within ${TOL_PCT}% of 3.00: $(within "$x" 3.00 "$TOL_PCT" && echo met || echo NOT met)"
  check "$suite: $label mean ratio of $runs runs ${x:-?} within ${WIDE_CHECK_PCT}% of 3.00, or >= ${WIDE_EEVDF_PCT}% of EEVDF's ${e:-?} and >= $WIDE_FLOOR" wide_ok "$x" "$e"
}

# ---- cpu.weight across CPUs ----
wide_session cg-wide "$WIDE_RUNS" scx_sis scx_sis

# ---- cpu.weight across the group balancer's partitions ----
# 3 runs, their mean asserted: single runs spread 2.1-2.9, across the 2.40 line (CI runs on 6.12
# gave means of 2 runs of 2.39 and 2.18 where re-runs of the same binary gave 2.53-2.84); a run
# costs its 2 x 3 s, not an attach (bench_session)
wide_session gb-wide 3 gb "scx_sis --gb-parent" --variant "gb=--gb-parent /sys/fs/cgroup/scx_sis_gb"

# ---- a full cgroup map ----
bench_session "$out-full" cg-full "$secs" --no-default-variant --variant "small=--max-cgroups $FULL_MAX"
grep -h "group run_ms\|cgroup map\|cgroup state" "$out-full"/raw/cg-full/*.txt 2>/dev/null | sed 's/^/  | /'
bench_vals "$out-full"
e=$(val cg-full EEVDF) x=$(val cg-full small)
check "cg-full: scx_sis --max-cgroups $FULL_MAX ratio ${x:-?} within ${CHECK_PCT}% of 0.25 with the hog's cgroup left out of the full map (EEVDF ${e:-?})" \
  within "$x" 0.25 "$CHECK_PCT"

# ---- churn while attached ----
# cgroups with state in scx_sis (entries of its id -> slot map; bpftool from the shared root filesystem)
nr_cg_state() { bpftool -j map dump name cg_slot_map 2>/dev/null | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))' 2>/dev/null; }
# cg_books DIR...: 'weight nr_active child_weight task_weight' of each cgroup's state, '-' if it
# has none (cgroup.bpf.h: the slots of cg_sched_map name their cgroup; state = weight << 32 |
# nr_active + 2^31)
cg_books() {
  local ids=() d
  for d in "$@"; do ids+=("$(stat -c %i "$d")"); done
  bpftool -j map dump name cg_sched_map 2>/dev/null | python3 -c '
import json, struct, sys
m = {}
for e in json.load(sys.stdin):
    f = e.get("formatted")
    if f:
        v = f["value"]
        cgid, state, task, child = v["cgid"], v["state"], v["task_weight"], v["child_weight"]
    else:
        raw = lambda h: bytes(int(b, 16) for b in h)
        cgid, state, task, child = struct.unpack("<QQqq", raw(e["value"])[:32])
    if cgid:
        m[int(cgid)] = (state, child, task)
for i in sys.argv[1:]:
    v = m.get(int(i))
    print("-" if v is None else "%d %d %d %d" % (v[0] >> 32, (v[0] & 0xffffffff) - 2**31, v[1], v[2]))
' "${ids[@]}"
}
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

# ---- cpu.weight writes racing activations ----
race="$base/race"
mkdir "$race" && echo +cpu >"$race/cgroup.subtree_control" && mkdir "$race/w1" "$race/w2"
# a task that sleeps 1 ms and wakes, without a fork (each wakeup an activation of its cgroup)
waker() { local fd; exec {fd}<> <(:); while :; do read -r -t 0.001 -u "$fd" _; done; }
waker & w1=$!
waker & w2=$!
echo "$w1" >"$race/w1/cgroup.procs" && echo "$w2" >"$race/w2/cgroup.procs" || errs=$((errs + 1))
for i in $(seq 1 400); do
  echo $((i % 2 ? 300 : 50)) >"$race/w1/cpu.weight"
  echo $((i % 3 ? 7 : 900)) >"$race/w2/cpu.weight"
done
echo 100 >"$race/w1/cpu.weight"; echo 200 >"$race/w2/cpu.weight"
kill "$w1" "$w2"; wait "$w1" "$w2" 2>/dev/null
snooze 0.5
books=$(cg_books "$race" "$race/w1" "$race/w2" | tr '\n' ';')
check_eq "weight writes racing activations: parent, w1, w2 books (weight nr_active child_weight task_weight) with every task gone" \
  "$books" "100 0 0 0;100 0 0 0;200 0 0 0;"
echo "$hog" >"$race/w2/cgroup.procs"
snooze 0.5
books=$(cg_books "$race" | tr '\n' ';')
check_eq "... with a hog in w2 (weight 200): the parent's child_weight" "${books%% *}/$(cut -d' ' -f3 <<<"$books")" "100/200"
echo "$hog" >"$base/home/cgroup.procs"
rmdir "$race/w1" "$race/w2" "$race" || errs=$((errs + 1))
check_eq "cgroup race: failed operations" "$errs" 0
check_eq "cgroup state entries after churn (before: ${n0:-?}, +2 for the churn parent and home)" "$(nr_cg_state)" "$((n0 + 2))"
check_eq "hog alive on scx_sis" "$(on_ext "$hog")" 1
kill "$hog" "$hog_sleep"; wait "$hog" "$hog_sleep" 2>/dev/null
rmdir "$base/home" "$base"
check_eq "cgroup state entries after removing them" "$(nr_cg_state)" "$n0"
check_eq "still attached after churn" "$(sched_state)/$(enable_seq)" "enabled/$seq0"
stop_sched
dmesg_check
finish
