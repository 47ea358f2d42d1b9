#!/usr/bin/env bash
# fairness: the fair class's promises under saturation, scx_sis against EEVDF in the same boot, through
# `scx_sis_bench --suite fairness` (1 run per case, no warm-up run, EEVDF and scx_sis only;
# each case's own warm-up stays):
#  - fair-nice1: nice 0 vs nice 5 pinned to one CPU: the target, scx_sis's CPU-time ratio
#    within NICE1_TOL_PCT of NICE1_IDEAL (the kernel's weights, 1024/335), is printed; asserted is
#    NICE1_ASSERT_PCT. scx_sis sat a few % low (2.92 in a run where EEVDF read 3.06) while it
#    charged run time from its own timestamps; charged as the kernel accounts, 3.05 (lab notes
#    2026-11-29). A scheduler that ignores nice gets about 1.
#  - fair-nice8: nproc nice-0 + nproc nice-10 hogs unpinned: the target is scx_sis's ratio
#    within NICE8_TOL_PCT of EEVDF's from this very run or of the kernel's own ratio (NICE8_IDEAL
#    = 1024/110, one of each per CPU), whichever is lower, and not past the higher of the two by
#    more than NICE8_TOL_PCT. A bench parent that polled every 5 ms made scx_sis miss it in many
#    runs; with the parent quiet it is met. The target is printed (NOTE, met or not) and what is
#    asserted is NICE8_FLOOR_PCT of the lower of EEVDF's and the ideal: a scheduler that ignores
#    nice gets about 1.
#  - fair-spread: 3 hogs per CPU forked by one parent, measured 4 s after a 1 s warm-up: the
#    target, no hog's CPU time further than SPREAD_MAX_PCT from the mean, is printed. A bench
#    parent polling every 5 ms (a 25th task among 24 hogs) once spread it far past the target.
#    What is asserted: no hog further than
#    SPREAD_ASSERT_PCT (twice the target: one run of 3 s is noisier than the bench's) from the
#    mean, and no hog starves: the least-served one gets at least SPREAD_LEAST_PCT of the mean
#    CPU time (a hog left behind gets ~0).
#  - fair-odd: one hog per CPU and one more, forked by one parent: no placement divides them, so
#    only moving them around evens out their CPU time (rotation, bpf/balance.bpf.h). Printed: the
#    worst hog within ODD_MAX_PCT of the mean, the spread target. Asserted: within
#    ODD_ASSERT_PCT. Without rotation two hogs shared one CPU for good, a third or more off the
#    mean.
#  - fair-fork / fair-sleep: with 2 hogs per CPU, fork+exec+wait of /bin/true per second and
#    completed 50 ms sleeps per second at least SLEEP_MIN_FRAC of EEVDF's (fork: FORK_MIN_FRAC).
#    fair-sleep is the mean of SLEEP_RUNS interleaved runs: one 3 s run varies by +-5% under
#    either scheduler, and CI once failed on a single run. Its bound is SLEEP_MIN_FRAC; the
#    target (>= EEVDF) is printed. Sleepers queued behind hogs get about half EEVDF's rate
#    without wakeup preemption, and less than EEVDF when it goes through a kick rather than the
#    wakee's insert into its CPU's local DSQ (docs/design.md). Each run's sleep overshoot
#    (p50/p90/max) is in its raw output. SLEEP_MIN_FRAC is 0.75: 3-run means of a working
#    scheduler still dip under 0.85 of EEVDF's now and then; 0.75 still fails one that starves
#    sleepers (~0.5).
# EEVDF's own numbers are printed as NOTE lines (and whether EEVDF itself meets the absolute
# targets). Nothing is left attached; clean kernel log.
# env: SCX_SIS and SCX_SIS_BENCH (required), FAIR_SECS (measured window per case, default 3), FAIR_FORK_SECS (8),
# FAIR_SLEEP_RUNS (3)
source "$(dirname "$0")/lib.sh"
require_scx_sis
require_scx_sis_bench
trap cleanup_sched EXIT

# the targets
NICE1_IDEAL=3.06
NICE1_TOL_PCT=5
NICE1_ASSERT_PCT=5
NICE8_TOL_PCT=10
NICE8_IDEAL=9.31
NICE8_FLOOR_PCT=60
SPREAD_MAX_PCT=10
SPREAD_ASSERT_PCT=20
SPREAD_LEAST_PCT=50
ODD_MAX_PCT=10
ODD_ASSERT_PCT=20
SLEEP_MIN_FRAC=0.75
# fork+exec+wait of /bin/true takes 1-3 s each in the saturated TCG guest: a 3 s window counts
# one or two, so fair-fork gets its own FORK_SECS window, and its bound is FORK_MIN_FRAC: a
# scheduler that starves short tasks fails it (one without wakeup preemption got a quarter of
# EEVDF's rate); docs/results.md holds the averaged figure.
FORK_MIN_FRAC=0.5
FORK_SECS=${FAIR_FORK_SECS:-8}
SLEEP_RUNS=${FAIR_SLEEP_RUNS:-3}

secs=${FAIR_SECS:-3}
out="$SCX_SIS_OUT/fairness"
rm -rf "$out-main" "$out-fork" "$out-sleep"
kmsg_mark
check_eq "state before" "$(sched_state)" disabled
bench_session "$out-main" fair-nice1,fair-nice8,fair-spread,fair-odd "$secs"
bench_session "$out-fork" fair-fork "$FORK_SECS"
BENCH_RUNS=$SLEEP_RUNS bench_session "$out-sleep" fair-sleep "$secs"

vals=""
for d in "$out-main" "$out-fork" "$out-sleep"; do bench_vals "$d"; vals+="$BENCH_VALS"$'\n'; done
BENCH_VALS=$vals
log_placements
require_vals fair-nice1 fair-nice8 fair-spread fair-odd fair-fork fair-sleep

e=$(val fair-nice1 EEVDF) x=$(val fair-nice1 scx_sis)
note "EEVDF nice 0 : nice 5 on one CPU = ${e:-?} (ideal $NICE1_IDEAL$(within "$e" "$NICE1_IDEAL" "$NICE1_TOL_PCT" && echo ", within ${NICE1_TOL_PCT}%" || echo ", NOT within ${NICE1_TOL_PCT}%"))"
note "fair-nice1 target: scx_sis ratio ${x:-?} within ${NICE1_TOL_PCT}% of $NICE1_IDEAL: $(within "$x" "$NICE1_IDEAL" "$NICE1_TOL_PCT" && echo met || echo NOT met)"
check "fair-nice1: scx_sis ratio ${x:-?} within ${NICE1_ASSERT_PCT}% of $NICE1_IDEAL (EEVDF ${e:-?})" within "$x" "$NICE1_IDEAL" "$NICE1_ASSERT_PCT"

e=$(val fair-nice8 EEVDF) x=$(val fair-nice8 scx_sis)
note "EEVDF mean nice 0 / nice 10 over $NPROC+$NPROC unpinned hogs = ${e:-?}"
nice8_ok() {
  awk -v g="$x" -v r="$e" -v i="$NICE8_IDEAL" -v t="$NICE8_TOL_PCT" \
    'BEGIN { lo = r < i ? r : i; hi = r > i ? r : i
      exit !(g != "" && r > 0 && g + 0 >= (1 - t / 100) * lo && g + 0 <= (1 + t / 100) * hi) }'
}
note "fair-nice8 target: scx_sis ratio ${x:-?} within ${NICE8_TOL_PCT}% of [min, max] of EEVDF's ${e:-?} ($(pct "$x" "$e")%) and the ideal $NICE8_IDEAL: $(nice8_ok && echo met || echo NOT met)"
nice8_floor=$(awk -v r="$e" -v i="$NICE8_IDEAL" -v f="$NICE8_FLOOR_PCT" 'BEGIN { lo = (r > 0 && r < i) ? r : i; printf "%.2f", lo * f / 100 }')
check "fair-nice8: scx_sis ratio ${x:-?} >= ${NICE8_FLOOR_PCT}% of the lower of EEVDF's ${e:-?} and $NICE8_IDEAL ($nice8_floor)" \
  awk -v g="$x" -v f="$nice8_floor" 'BEGIN { exit !(g != "" && g + 0 >= f + 0) }'

e=$(val fair-spread EEVDF) x=$(val fair-spread scx_sis)
note "EEVDF worst hog off the mean with 3 hogs per CPU = ${e:-?}%"
note "fair-spread target: scx_sis worst hog ${x:-?}% off the mean <= ${SPREAD_MAX_PCT}%: $(awk -v g="$x" -v l="$SPREAD_MAX_PCT" 'BEGIN { exit !(g != "" && g + 0 <= l + 0) }' && echo met || echo NOT met)"
# the least-served hog's CPU time against the mean, from the run's own per-hog lines
spread_raw=$(ls "$out-main"/raw/fair-spread/*-scx_sis-r0.txt 2>/dev/null | head -n 1)
least=$(awk -F'run_ms=' '/^hog / { split($2, a, " "); v = a[1] + 0; s += v; n++; if (n == 1 || v < m) m = v }
  END { if (n && s > 0) printf "%.1f", 100 * m / (s / n) }' "${spread_raw:-/dev/null}")
note "fair-spread: scx_sis $(grep -h '^hogs per CPU' "${spread_raw:-/dev/null}")"
check "fair-spread: scx_sis worst hog ${x:-?}% off the mean <= ${SPREAD_ASSERT_PCT}% (EEVDF ${e:-?}%)" \
  awk -v g="$x" -v l="$SPREAD_ASSERT_PCT" 'BEGIN { exit !(g != "" && g + 0 <= l + 0) }'
check "fair-spread: no hog starves: the least-served got ${least:-?}% of the mean CPU time >= ${SPREAD_LEAST_PCT}% (worst off the mean ${x:-?}%, EEVDF ${e:-?}%)" \
  awk -v g="$least" -v l="$SPREAD_LEAST_PCT" 'BEGIN { exit !(g != "" && g + 0 >= l + 0) }'

# migrations over the measured window (the probe's own count, without its fork and its reads
# after): the overhead target is 1.2x EEVDF's, noted; checked is that the count is there
win_migr() {
  python3 -c 'import json, sys
runs = [r for r in json.load(open(sys.argv[1]))["runs"] if r["suite"] == sys.argv[2] and r["variant"] == sys.argv[3] and r["ok"] and not r["warmup"]]
m = [(r.get("window") or {}).get("migrations") for r in runs]
print(sum(m) / len(m) if m and None not in m else "")' "$out-main/results.json" "$1" "$2" 2>/dev/null
}
for s in fair-spread fair-odd; do
  e=$(win_migr $s EEVDF) x=$(win_migr $s scx_sis)
  note "$s: migrations over the window: EEVDF ${e:-?}, scx_sis ${x:-?} ($(pct "$x" "$e")% of EEVDF's; target: at most 120%)"
  check "$s: migrations over the window counted under both (EEVDF ${e:-?}, scx_sis ${x:-?})" test -n "$e" -a -n "$x"
done

e=$(val fair-odd EEVDF) x=$(val fair-odd scx_sis)
note "EEVDF worst hog off the mean with $NPROC+1 hogs = ${e:-?}%"
note "fair-odd target: scx_sis worst hog ${x:-?}% off the mean <= ${ODD_MAX_PCT}%: $(awk -v g="$x" -v l="$ODD_MAX_PCT" 'BEGIN { exit !(g != "" && g + 0 <= l + 0) }' && echo met || echo NOT met)"
check "fair-odd: scx_sis worst of $NPROC+1 hogs ${x:-?}% off the mean <= ${ODD_ASSERT_PCT}% (EEVDF ${e:-?}%)" \
  awk -v g="$x" -v l="$ODD_ASSERT_PCT" 'BEGIN { exit !(g != "" && g + 0 <= l + 0) }'

e=$(val_mean fair-sleep EEVDF) x=$(val_mean fair-sleep scx_sis)
note "EEVDF fair-sleep with 2 hogs per CPU = ${e:-?}/s (mean of $SLEEP_RUNS runs)"
note "fair-sleep target: scx_sis ${x:-?}/s >= EEVDF's ${e:-?}/s ($(pct "$x" "$e")%): $(awk -v g="$x" -v r="$e" 'BEGIN { exit !(g != "" && r > 0 && g + 0 >= r) }' && echo met || echo NOT met)"
check "fair-sleep: scx_sis ${x:-?}/s >= $SLEEP_MIN_FRAC x EEVDF's ${e:-?}/s ($(pct "$x" "$e")%)" \
  awk -v g="$x" -v r="$e" -v f="$SLEEP_MIN_FRAC" 'BEGIN { exit !(g != "" && r > 0 && g + 0 >= f * r) }'
# fair-fork: the target (>= EEVDF's rate) is printed; asserted is FORK_MIN_FRAC of it (single
# runs have read 0.73x EEVDF's at the worst pairing: docs/results.md).
e=$(val fair-fork EEVDF) x=$(val fair-fork scx_sis)
note "EEVDF fair-fork with 2 hogs per CPU = ${e:-?}/s"
note "fair-fork target: scx_sis ${x:-?}/s >= EEVDF's ${e:-?}/s ($(pct "$x" "$e")%): $(awk -v g="$x" -v r="$e" 'BEGIN { exit !(g != "" && r > 0 && g + 0 >= r) }' && echo met || echo NOT met)"
check "fair-fork: scx_sis ${x:-?}/s >= $FORK_MIN_FRAC x EEVDF's ${e:-?}/s ($(pct "$x" "$e")%)" \
  awk -v g="$x" -v r="$e" -v f="$FORK_MIN_FRAC" 'BEGIN { exit !(g != "" && r > 0 && g + 0 >= f * r) }'
dmesg_check
finish
