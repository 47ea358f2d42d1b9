#!/usr/bin/env bash
# soak: scx_sis attached for SOAK_SECS in all under a mixed load: stress-ng cpu + fork +
# affinity churn, a hackbench loop, cgroup churn (create, move tasks in and out, change
# cpu.weight, delete; processes in leaf cgroups only), and a progress-counting workload
# (progress.c, one worker per CPU, 20% duty) as the stall checker. The same load runs for
# SOAK_REF_SECS (default: as long) under EEVDF, in turns with scx_sis (SOAK_TURNS phases each,
# EEVDF first, A B B A): TCG dilates guest time under load, and the host's speed drifts, so
# EEVDF's pauses in this boot, over windows as long and interleaved, are the yardstick. Two
# bars, on each side's phases pooled: the 99.9th percentile of the workers' pauses (their
# spin-sleep cycles' longest gaps, tens of thousands of them) within SOAK_GAP_FACTOR x EEVDF's,
# which is what a user would feel as latency, and the longest pause under SOAK_STALL_FACTOR x
# EEVDF's longest, which catches a stall. The longest alone is one sample of a heavy tail: at
# 2x it failed CI with 1355 ms against EEVDF's 516, and reruns of such boots passed (EEVDF's
# own longest read 516-1060 ms).
# Asserts: scx_sis attached through its phases with enable_seq unchanged, both bars (at least
# SOAK_P999_MIN_MS and SOAK_MAX_GAP_MS), every worker alive, stress-ng exit 0, every
# hackbench run OK, no failed cgroup operation, the cgroup churn (a shell of short commands)
# at least half EEVDF's pace, exit 0, clean kernel log.
# Long mode (opt-in, `scripts/test.sh --long` sets SOAK_SECS=600 SOAK_CYCLES=100): SOAK_CYCLES=N
# then attaches/detaches scx_sis N times under cpu + fork + affinity churn (stress-ng at 30% and
# a fork loop: lighter than the mixed soak's, see below) with the same progress checker (the
# `hotswap` test does 4 under the progress workload alone in CI): every cycle clean,
# enable_seq +N, no pause over the same limit, every worker alive, the churn alive and forking.
# env: SCX_SIS (required), SOAK_SECS (120; CI: 120: at 60 s, a 1034 ms pause failed against 2x EEVDF's 513 ms, whose
#      longest pause over a shorter window is a smaller yardstick), SOAK_REF_SECS (SOAK_SECS), SOAK_MAX_GAP_MS (1000),
#      SOAK_TURNS (2: phases of SOAK_SECS / 2 each), SOAK_GAP_FACTOR (2, on the 99.9th percentile), SOAK_P999_MIN_MS (100),
#      SOAK_STALL_FACTOR (4, on the longest), SOAK_CYCLES (0), SOAK_HOLD (1 s attached per cycle),
#      SOAK_LOADER_NICE (-10: the loader's nice in the cycles), SOAK_ATTACH_TMO (300 s an attach),
#      SOAK_LOADER_ARGS (the loader's options in the cycles, e.g. -v to diagnose one)
source "$(dirname "$0")/lib.sh"
require_scx_sis
secs=${SOAK_SECS:-120}
max_gap_ms=${SOAK_MAX_GAP_MS:-1000}
ref_secs=${SOAK_REF_SECS:-$secs}
ref_factor=${SOAK_GAP_FACTOR:-2}
stall_factor=${SOAK_STALL_FACTOR:-4}
p999_min_ms=${SOAK_P999_MIN_MS:-100}
turns=${SOAK_TURNS:-2}
cycles=${SOAK_CYCLES:-0}
hold=${SOAK_HOLD:-1}
wpid="" bg=() base=""
cleanup() {
  cleanup_sched
  [ ${#bg[@]} -gt 0 ] && kill -9 "${bg[@]}" 2>/dev/null
  [ -n "$wpid" ] && kill -TERM "$wpid" 2>/dev/null
  [ -n "$base" ] && [ -d "$base" ] && { rmdir "$base"/c* "$base/home" "$base" 2>/dev/null; }
}
trap cleanup EXIT
kmsg_mark
if ! build_progress; then fail "cannot compile progress.c"; finish; exit 1; fi

# progress_start NAME / progress_check NAME: the stall checker around a phase
progress_start() {
  PIDFILE="$SCX_SIS_OUT/soak-$1.pids"; POUT="$SCX_SIS_OUT/soak-$1-progress.out"; rm -f "$PIDFILE"
  "$PROGRESS_BIN" "$NPROC" "$PIDFILE" 2000 8000 >"$POUT" 2>&1 &
  wpid=$!
  for i in $(seq 100); do [ -s "$PIDFILE" ] && break; sleep 0.1; done
  check_eq "$1: progress workers started" "$(wc -l <"$PIDFILE" 2>/dev/null)" "$NPROC"
}
# progress_check NAME [LIMIT_MS [P999_LIMIT_MS]]: workers alive, longest pause (GAP) under
# LIMIT_MS and the 99.9th percentile (P999) under P999_LIMIT_MS if given
progress_check() {
  local alive=0 p summary
  for p in $(cat "$PIDFILE"); do kill -0 "$p" 2>/dev/null && alive=$((alive + 1)); done
  check_eq "$1: progress workers alive" "$alive" "$NPROC"
  kill -TERM "$wpid"; wait "$wpid"; wpid=""
  summary=$(head -n 1 "$POUT")
  log "$1: workload: $summary"
  GAP=$(echo "$summary" | sed -n 's/.*max_gap_ms=\([0-9]*\).*/\1/p')
  P999=$(echo "$summary" | sed -n 's/.*p999_ms=\([0-9.]*\).*/\1/p')
  if [ -z "$GAP" ] || [ -z "$P999" ]; then fail "$1: no max_gap_ms or p999_ms from the workload: $(cat "$POUT")"
  elif [ -n "${2:-}" ]; then
    check_lt "$1: workload max progress gap ms" "$GAP" "$2"
    if [ -n "${3:-}" ]; then check_lt "$1: workload 99.9th percentile pause ms" "$P999" "$3"; fi
  else [ "$GAP" -lt 30000 ] || fail "$1: a progress worker paused ${GAP} ms"; fi
}

# mixed_load NAME SECS [soak]: the mixed load for SECS, its own checks prefixed with NAME
mixed_load() {
  local name=$1 secs=$2 under=${3:-} spid hbpid src hb_ok hb_bad alive p d
  log "$name: load for ${secs}s: stress-ng -c 2 -f 2 --affinity 2, hackbench loop, cgroup churn"
  stress-ng -c 2 -f 2 --affinity 2 --timeout "${secs}s" --metrics-brief --temp-path /tmp \
    >"$SCX_SIS_OUT/soak-$name-stress-ng.out" 2>&1 &
  spid=$!
  ( hb_ok=0 hb_bad=0; end=$(( $(now_ms) + secs * 1000 ))
    while [ "$(now_ms)" -lt "$end" ]; do
      if hackbench -g 2 -f 10 -l 100 >/dev/null 2>&1; then hb_ok=$((hb_ok + 1)); else hb_bad=$((hb_bad + 1)); fi
    done
    echo "$hb_ok $hb_bad" >"$SCX_SIS_OUT/soak-$name-hackbench.count" ) &
  hbpid=$!

  cg=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
  base="$cg/scx_sis-soak.$$"
  # cpu.weight needs the cpu controller enabled from the root down
  { grep -qw cpu "$cg/cgroup.subtree_control" || echo +cpu >"$cg/cgroup.subtree_control"; } &&
    mkdir "$base" && echo +cpu >"$base/cgroup.subtree_control" && mkdir "$base/home" || fail "$name: cgroup setup under $cg"
  # the churned tasks: a spinner and a sleeper-waker (short sleeps), in leaf cgroups only
  ( while :; do :; done ) & bg+=($!)
  ( while :; do snooze 0.005; done ) & bg+=($!)
  errs=0 rounds=0 end=$(( $(now_ms) + secs * 1000 ))
  while [ "$(now_ms)" -lt "$end" ]; do
    rounds=$((rounds + 1)); d="$base/c$rounds"
    mkdir "$d" || churn_err "mkdir $d"
    echo $((rounds * 37 % 9999 + 1)) >"$d/cpu.weight" || churn_err "cpu.weight"
    for p in "${bg[@]}"; do echo "$p" >"$d/cgroup.procs" || churn_err "move $p in"; done
    snooze 0.2
    echo $((rounds % 2 ? 10000 : 1)) >"$d/cpu.weight" || churn_err "cpu.weight change"
    snooze 0.2
    for p in "${bg[@]}"; do echo "$p" >"$base/home/cgroup.procs" || churn_err "move $p out"; done
    rmdir "$d" || churn_err "rmdir $d"
    snooze 0.1
  done
  check_eq "$name: cgroup churn: failed operations in $rounds rounds" "$errs" 0
  # a round takes 2-15 s under this load in the TCG guest: its pace is judged against EEVDF's
  CHURN_ROUNDS=$rounds
  wait "$spid"; src=$?
  check_eq "$name: stress-ng exit code" "$src" 0
  [ "$src" = 0 ] || tail -n 15 "$SCX_SIS_OUT/soak-$name-stress-ng.out" | sed 's/^/  | /'
  wait "$hbpid"
  read -r hb_ok hb_bad <"$SCX_SIS_OUT/soak-$name-hackbench.count"
  check_eq "$name: hackbench runs failed (of $((hb_ok + hb_bad)))" "$hb_bad" 0
  check_gt "$name: hackbench runs" "$hb_ok" 0
  alive=0; for p in "${bg[@]}"; do kill -0 "$p" 2>/dev/null && alive=$((alive + 1)); done
  check_eq "$name: churned tasks alive" "$alive" "${#bg[@]}"
  [ "$under" = soak ] && check_eq "$name: churned spinner on sched_ext" "$(on_ext "${bg[0]}")" 1
  kill -9 "${bg[@]}"; wait "${bg[@]}" 2>/dev/null; bg=()
  rmdir "$base/home" "$base" || fail "$name: cgroup cleanup"; base=""
}
churn_err() { errs=$((errs + 1)); [ "$errs" -le 3 ] && log "cgroup churn round $rounds: $1 failed"; }

# ---- the mixed load in phases, EEVDF and scx_sis in turn (A B B A for two turns) ----
# One phase each, EEVDF first, made each comparison a single sample of the host too: a CI run
# failed the 2x bar at 738 ms against 336 where reruns of the build read 0.7-1.4x, and both
# phases of that run were 20% slower than on a quiet host. In turns, a slow stretch of the host
# weighs on both sides, and A B B A cancels a drift across the run. scx_sis is attached while
# no load runs (an attach's pause under load is hotswap's business) and stays attached through
# its back-to-back phases; the bars hold on each side's phases pooled (progress merge).
# (TCG dilates guest time under load: a 50 ms sleep once took 0.9 s under EEVDF)
phase_secs=$(( (secs + turns - 1) / turns )) ref_phase_secs=$(( (ref_secs + turns - 1) / turns ))
eevdf_outs=() soak_outs=() ref_rounds=0 soak_rounds=0 attached=0 seq0=""
attach() {
  start_sched || { fail "scx_sis did not attach"; finish; exit 1; }
  attached=1 seq0=$(enable_seq) t_attach=$(now_ms)
}
detach() {
  local held=$(( ($(now_ms) - t_attach) / 1000 ))
  check_eq "after ${held}s attached: state/enable_seq" "$(sched_state)/$(enable_seq)" "enabled/$seq0"
  check "after ${held}s attached: the same scx_sis" kill -0 "$SCHED_PID"
  stop_sched INT || fail "no clean detach after the soak"
  check_eq "exit code" "$SCHED_RC" 0
  [ "$SCHED_RC" = 0 ] || tail -n 20 "$SCHED_OUT" | sed 's/^/  | /'
  attached=0
}
# phase eevdf|soak ROUND: one phase of the mixed load under that scheduler
phase() {
  local name="$1-$2" len=$ref_phase_secs
  [ "$1" = soak ] && len=$phase_secs
  progress_start "$name"
  mixed_load "$name" "$len" "$1"
  progress_check "$name"
  if [ "$1" = soak ]; then soak_outs+=("$POUT") soak_rounds=$((soak_rounds + CHURN_ROUNDS))
  else eevdf_outs+=("$POUT") ref_rounds=$((ref_rounds + CHURN_ROUNDS)); fi
}
for r in $(seq "$turns"); do
  order="eevdf soak"; [ $((r % 2)) = 0 ] && order="soak eevdf"
  for who in $order; do
    if [ "$who" = soak ] && [ "$attached" = 0 ]; then attach; fi
    if [ "$who" = eevdf ] && [ "$attached" = 1 ]; then detach; fi
    phase "$who" "$r"
  done
done
[ "$attached" = 1 ] && detach

# pooled NAME OUT...: the phases' workers as one run, into GAP and P999
pooled() {
  local name=$1 summary; shift
  summary=$("$PROGRESS_BIN" merge "$@")
  log "$name, $# phases pooled: $summary"
  GAP=$(echo "$summary" | sed -n 's/.*max_gap_ms=\([0-9]*\).*/\1/p')
  P999=$(echo "$summary" | sed -n 's/.*p999_ms=\([0-9.]*\).*/\1/p')
  [ -n "$GAP" ] && [ -n "$P999" ] || { fail "$name: no pooled pauses: $summary"; return 1; }
}
pooled eevdf "${eevdf_outs[@]}"
ref_gap=${GAP:-0} ref_p999=${P999:-0}
check_gt "eevdf: cgroup churn rounds" "$ref_rounds" 0
# bar FACTOR REF MIN: FACTOR x REF, at least MIN. Both readings are printed to 0.1 ms, so each
# may be 0.05 under its value: without that, a 99.9th percentile exactly 2x EEVDF's (one octave
# up, the same place in its bucket: 671.1 against 335.5) failed as 671.1 > 671.
# (the parentheses matter: a bare '>' in printf's arguments is awk's output redirection)
bar() { awk -v a="$3" -v g="$2" -v f="$1" 'BEGIN { l = f * (g + 0.05) + 0.05; printf "%.2f", (l > a ? l : a) }'; }
limit=$(bar "$stall_factor" "$ref_gap" "$max_gap_ms") p999_limit=$(bar "$ref_factor" "$ref_p999" "$p999_min_ms")
[ -n "$limit" ] && [ -n "$p999_limit" ] || { fail "no pause limits from EEVDF's run"; limit=$max_gap_ms p999_limit=$max_gap_ms; }
note "EEVDF's pauses under the mixed load: longest ${ref_gap} ms, 99.9th percentile ${ref_p999} ms; scx_sis's may be up to $limit ms (${stall_factor}x, at least ${max_gap_ms}) and $p999_limit ms (${ref_factor}x, at least ${p999_min_ms})"
if pooled soak "${soak_outs[@]}"; then
  check_lt "soak: workload max progress gap ms" "$GAP" "$limit"
  check_lt "soak: workload 99.9th percentile pause ms" "$P999" "$p999_limit"
fi
# the churning shell is a short-task loop: at least half EEVDF's pace (fair-fork's open part)
want=$(( (ref_rounds * secs / ref_secs + 1) / 2 ))
check "soak: cgroup churn rounds $soak_rounds in ${secs}s >= $want (half of EEVDF's $ref_rounds in ${ref_secs}s, scaled)" \
  test "$soak_rounds" -ge "$want"

# ---- long mode: attach/detach cycles under stress-ng ----
if [ "$cycles" -gt 0 ]; then
  progress_start cycles
  # cpu + fork + affinity churn, lighter than the mixed soak's. With stress-ng -c 2 -f 2
  # --affinity 2 the loader, even at nice -10, had not attached after 2 min (TCG runs all vCPUs
  # on one host thread). Attach times on 7.3 with one load at a time: idle 8.7 s, -c 2 -l 30
  # 11.1 s, this fork loop 19.7 s, the progress workers 26.3 s, --affinity 2 with 2 ms sleeps
  # 46.8 s (migration IPIs are dear under TCG); together they compound, so the affinity churn is
  # one worker with 20 ms sleeps and an attach may take SOAK_ATTACH_TMO (300 s).
  stress-ng -c 2 -l 30 --affinity 1 --affinity-sleep 20000000 --timeout 0 -q --temp-path /tmp & bg+=($!)
  ( n=0; trap 'echo "$n" >"$SCX_SIS_OUT/soak-cycles-forks.count"; exit 0' TERM
    while :; do for i in 1 2 3 4 5 6 7 8; do /bin/true & done; wait; n=$((n + 8)); snooze 0.2; done ) & bg+=($!)
  seq1=$(enable_seq) ok=0 t_all=$(ts) ATTACH_TMO=${SOAK_ATTACH_TMO:-300}
  # The loader starts at nice SOAK_LOADER_NICE (-10): at nice 0 beside these stressors its
  # start-up (BPF verification, emulated by TCG) had not reached the attach after 2 min, on both
  # kernels. The attach and detach under load are what is tested, not its start-up speed, so
  # neither is it slowed by the VM's 9p: no -v (its ~2800 libbpf lines went one write each to
  # the 9p log: attaches took 80-140 s with it, 41-64 s without) and the loader runs from tmpfs
  # (lib.sh: require_scx_sis).
  for c in $(seq "$cycles"); do
    # shellcheck disable=SC2086
    if ! SCHED_NICE=${SOAK_LOADER_NICE:--10} start_sched ${SOAK_LOADER_ARGS:-}; then fail "cycle $c: attach failed"; cleanup_sched; break; fi
    sleep "$hold"
    if ! stop_sched INT; then fail "cycle $c: detach failed (state $(sched_state))"; break; fi
    if [ "$SCHED_RC" != 0 ]; then fail "cycle $c: exit code $SCHED_RC"; tail -n 10 "$SCHED_OUT" | sed 's/^/  | /'; break; fi
    ok=$((ok + 1))
    log "cycle $c/$cycles: attach ${ATTACH_S}s detach ${DETACH_S}s"
  done
  check_eq "clean attach/detach cycles under stress-ng" "$ok" "$cycles"
  check_eq "enable_seq growth" "$(( $(enable_seq) - seq1 ))" "$cycles"
  note "cycles took $(since "$t_all")s"
  check "stress-ng alive through the cycles" kill -0 "${bg[0]}"
  check "fork churn alive through the cycles" kill -0 "${bg[1]}"
  kill -TERM "${bg[@]}"; wait "${bg[@]}" 2>/dev/null; bg=()
  check_gt "fork churn: short processes forked during the cycles" "$(cat "$SCX_SIS_OUT/soak-cycles-forks.count" 2>/dev/null || echo 0)" 0
  progress_check cycles "$limit" "$p999_limit"
fi
dmesg_check
finish
