#!/usr/bin/env bash
# fair64_check DIR KERNEL: the numbers of scripts/test.sh --long's saturation-fairness bench at
# 64 vCPUs (bench/run-vm.sh --out DIR, --suite fair-nice8,fair-spread), checked on the host with
# the guest tests' helpers (tests/vm/guest/lib.sh). Ends with 'N passed, M failed'.
#  - fair-nice8: scx_sis's mean ratio >= NICE8_FLOOR_PCT of the lower of EEVDF's and the ideal
#    (1024/110), as tests/vm/guest/fairness.sh at 8 vCPUs. Recorded at 64 vCPUs (docs/lab-notes,
#    2026-11-24/25): scx_sis 9.18-10.31, EEVDF 4.20-6.50; a scheduler that ignores nice gets ~1.
#  - fair-spread: scx_sis's worst hog off the mean <= SPREAD64_MAX_PCT. Recorded on 7.3: scx_sis
#    14.8-24.5%, EEVDF 11.6-27% (TCG's clock at 64 vCPUs sets that floor); a hog left behind
#    reads ~100%. On 6.12 both schedulers' runs timed out there: when EEVDF has no number in
#    the boot either, the case is reported as SKIP, not counted.
set -uo pipefail
dir=${1:?usage: fair64_check.sh DIR KERNEL} kernel=${2:?usage: fair64_check.sh DIR KERNEL}
NICE8_IDEAL=9.31
NICE8_FLOOR_PCT=60
SPREAD64_MAX_PCT=40
TEST_NAME="fair64-$kernel"
SCX_SIS_OUT=$(mktemp -d)
trap 'rm -rf "$SCX_SIS_OUT"' EXIT
source "$(dirname "$0")/guest/lib.sh"

if [ ! -f "$dir/results.json" ]; then
  fail "no $dir/results.json: the bench wrote no results"
else
  bench_vals "$dir"
  log_placements
  e=$(val_mean fair-nice8 EEVDF) x=$(val_mean fair-nice8 scx_sis)
  floor=$(awk -v r="$e" -v i="$NICE8_IDEAL" -v f="$NICE8_FLOOR_PCT" 'BEGIN { lo = (r > 0 && r < i) ? r : i; printf "%.2f", lo * f / 100 }')
  check "fair-nice8: scx_sis ratio ${x:-none} >= ${NICE8_FLOOR_PCT}% of the lower of EEVDF's ${e:-none} and $NICE8_IDEAL ($floor)" \
    awk -v g="$x" -v f="$floor" 'BEGIN { exit !(g != "" && g + 0 >= f + 0) }'
  e=$(val_mean fair-spread EEVDF) x=$(val_mean fair-spread scx_sis)
  if [ -z "$x" ] && [ -z "$e" ]; then
    echo "SKIP $TEST_NAME: fair-spread: no number under either scheduler (both timed out, as recorded on 6.12 at 64 vCPUs): not judged"
  else
    check_lt "fair-spread: scx_sis worst hog % off the mean (EEVDF ${e:-none})" "$x" "$SPREAD64_MAX_PCT"
  fi
fi
finish
echo "$N_PASS passed, $N_FAIL failed"
[ "$N_FAIL" -eq 0 ] && [ "$N_PASS" -gt 0 ]
