#!/usr/bin/env bash
# rt: an RT hog must not starve the normal tasks queued on its CPU ("nothing can stall").
# RT throttling off (sched_rt_runtime_us = -1, restored after), 2 unpinned hogs per CPU; once
# they run, a SCHED_FIFO spinner (chrt -f 50) pinned to CPU N, the CPU with the most hogs, takes
# N for RT_SPIN_SECS. Sampled RT_WITHIN_S after the spinner starts, every hog has made progress
# (run time grew by >= RT_MIN_SHARE_PCT of its own window, those that waited on N included): what
# waited on N was handed to other CPUs (ops.cpu_release or, 6.19+, the sched_switch tracepoint,
# then a re-enqueue), not left behind the spinner; how many hogs still had N as their last CPU is
# printed. Which of the two mechanisms is loaded is checked against the kernel's BTF. The spinner
# runs <= RT_SPIN_SECS: the sched_ext watchdog (5 s here) would eject the scheduler over the
# per-CPU kthreads of N, which cannot run anywhere else. Afterwards scx_sis is still attached,
# never re-attached, and the kernel log is clean. The same scenario under EEVDF first, for
# reference (NOTE lines). The test shell samples as SCHED_FIFO 60 without forking, so its own
# timing does not depend on the scheduler under test; still, single-threaded TCG runs busy vCPUs
# in turn, so the sample comes RT_WITHIN_S or up to ~2 s later (logged): it must come while the
# spinner still runs.
# env: SCX_SIS (required)
source "$(dirname "$0")/lib.sh"
require_scx_sis

RT_WITHIN_S=0.5
# a hog must get >= this share of a CPU over its window (between its two reads): a hog balanced
# away gets 30-50% (2 per CPU); one left behind the spinner gets, on 7.x, the ext DL server's
# 50 ms per second (5%): 10% is twice that. On 6.12 (ops.cpu_release) nothing of ours runs on
# N, so one left behind gets 0: 5% there. Why not 10% on 6.12 too: about one run in 4-8 serves
# one hog at 8-14% for 1-2 s after the takeover (EEVDF's least over any 1 s in the same boot:
# 28%), served, not left behind; that unevenness is open in docs/results.md, and the test
# prints each run's least share beside EEVDF's.
RT_SPIN_SECS=3

rt_knob=/proc/sys/kernel/sched_rt_runtime_us
rt_saved=$(cat "$rt_knob")
trap 'chrt -o -p 0 $$ 2>/dev/null; cleanup_sched; kill $(jobs -p) 2>/dev/null; echo "$rt_saved" > "$rt_knob"' EXIT
PINNED_BIN="$SCX_SIS_OUT/pinned"
cc -O2 -Wall -o "$PINNED_BIN" "$LIB_DIR/pinned.c" || { fail "cannot build pinned.c"; finish; exit 1; }
# how the release reaches scx_sis: the sched_switch tracepoint where the kernel re-enqueues from
# anywhere (6.19+), else ops.cpu_release (6.12); dmesg_check below catches 7.x's deprecation line
if bpftool btf dump file /sys/kernel/btf/vmlinux 2>/dev/null | grep -qE "FUNC '(scx_bpf_reenqueue_local___v2|scx_bpf_dsq_reenq)'"; then
  want_tp=1 RT_MIN_SHARE_PCT=10
else
  want_tp=0 RT_MIN_SHARE_PCT=5
fi
kmsg_mark
echo -1 > "$rt_knob" || { fail "cannot turn RT throttling off"; finish; exit 1; }
check_eq "RT throttling off" "$(cat "$rt_knob")" -1

# scenario NAME: sets N (the spinner's CPU), WERE_ON_N, STUCK (hogs below RT_MIN_SHARE_PCT),
# ON_N (hogs last on N at the sample), MIN_MS/MIN_WIN_MS (the least share: progress in its own
# window), WIN_MS (the whole sample),
# SPIN_ALIVE (1 if the spinner still ran at the sample), SPIN_MS/SPIN_WIN_MS/SPIN_VIOL (its
# CPU time, its own wall time, samples off N)
scenario() {
  local name=$1 hogs=() i p spin c best=-1
  local -A r0 t_r0 per_cpu last was_on_n
  local on_n_progress=""
  for ((i = 0; i < 2 * NPROC; i++)); do "$PINNED_BIN" 60 >/dev/null & hogs+=($!); done
  # every hog past its exec, then a second to settle
  for p in "${hogs[@]}"; do for ((i = 0; i < 300; i++)); do proc_comm "$p"; [ "$COMM" = pinned ] && break; snooze 0.02; done; done
  snooze 1
  for p in "${hogs[@]}"; do proc_stat "$p" && per_cpu[${STAT[36]}]=$(( ${per_cpu[${STAT[36]}]:-0} + 1 )) && last[$p]=${STAT[36]}; done
  N=$((NPROC - 1))
  for c in "${!per_cpu[@]}"; do
    if [ "${per_cpu[$c]}" -gt "$best" ] || { [ "${per_cpu[$c]}" -eq "$best" ] && [ "$c" -gt "$N" ]; }; then best=${per_cpu[$c]}; N=$c; fi
  done
  WERE_ON_N=${per_cpu[$N]:-0}
  for p in "${hogs[@]}"; do [ "${last[$p]:-}" = "$N" ] && was_on_n[$p]=1; done
  taskset -c "$N" chrt -f 50 "$PINNED_BIN" "$RT_SPIN_SECS" >"$SCX_SIS_OUT/rt-$name-spin.out" & spin=$!
  chrt -f -p 60 $$
  # the window opens once the spinner runs its own code as SCHED_FIFO
  for ((i = 0; i < 500; i++)); do proc_comm $spin; proc_stat $spin; [ "$COMM" = pinned ] && [ "${STAT[38]}" = 1 ] && break; snooze 0.01; done
  now_ms_set; local t0=$NOW_MS
  for p in "${hogs[@]}"; do proc_runtime_ms "$p"; r0[$p]=$RUNTIME_MS; now_ms_set; t_r0[$p]=$NOW_MS; done
  snooze "$RT_WITHIN_S"
  STUCK=0 ON_N=0 MIN_MS=-1 MIN_WIN_MS=-1 SPIN_ALIVE=0 LATE=0
  local min_pm=0
  # running, not its comm: an exited spinner keeps its comm as a zombie until the shell reaps it
  spin_runs() { proc_stat "$spin" && [ "${STAT[0]}" = R ]; }
  spin_runs && SPIN_ALIVE=1
  # last CPUs first, before the run times: a hog's last CPU says something only while the
  # spinner still holds N, and reading all the hogs took up to 1.4 s of guest time under TCG.
  # The spinner is checked after every 4 hogs (each read costs guest time): a hog read before a
  # check that finds it running was read while it held N.
  local k=0 pend_on=0 pend=0
  for p in "${hogs[@]}"; do
    proc_stat "$p" && [ "${STAT[36]}" = "$N" ] && pend_on=$((pend_on + 1))
    pend=$((pend + 1)) k=$((k + 1))
    if [ $((k % 4)) -eq 0 ] || [ "$k" -eq ${#hogs[@]} ]; then
      if spin_runs; then ON_N=$((ON_N + pend_on)); else LATE=$((LATE + pend)); fi
      pend_on=0 pend=0
    fi
  done
  now_ms_set; WIN_MS=$((NOW_MS - t0))
  # each hog against its own window, between its two reads: a pass over the hogs takes up to
  # 1.4 s of guest time, so a hog's window is not the whole sample's
  for p in "${hogs[@]}"; do
    local d=-1 w pm
    proc_runtime_ms "$p" && d=$((RUNTIME_MS - ${r0[$p]:-0}))
    now_ms_set; w=$((NOW_MS - ${t_r0[$p]:-$t0}))
    [ "${was_on_n[$p]:-}" ] && on_n_progress+=" $d/$w"
    pm=$((d * 1000 / (w > 0 ? w : 1)))
    { [ "$MIN_MS" -lt 0 ] || [ "$pm" -lt "$min_pm" ]; } && MIN_MS=$d MIN_WIN_MS=$w min_pm=$pm
    [ $((d * 100)) -ge $((RT_MIN_SHARE_PCT * w)) ] || STUCK=$((STUCK + 1))
  done
  chrt -o -p 0 $$
  wait "$spin"
  SPIN_MS=$(sed -n 's/.*cpu_ms=\([0-9]*\).*/\1/p' "$SCX_SIS_OUT/rt-$name-spin.out")
  SPIN_WIN_MS=$(sed -n 's/.*window_ms=\([0-9]*\).*/\1/p' "$SCX_SIS_OUT/rt-$name-spin.out")
  SPIN_VIOL=$(sed -n 's/.*violations=\([0-9]*\).*/\1/p' "$SCX_SIS_OUT/rt-$name-spin.out")
  kill "${hogs[@]}" 2>/dev/null; wait "${hogs[@]}" 2>/dev/null
  log "$name: $((2 * NPROC)) hogs, $WERE_ON_N last on CPU $N; FIFO spinner on CPU $N: ${SPIN_MS:-?} ms CPU in ${SPIN_WIN_MS:-?} ms; after ${WIN_MS} ms (spinner running: $SPIN_ALIVE): least hog share ${MIN_MS} ms in its ${MIN_WIN_MS} ms, $STUCK below ${RT_MIN_SHARE_PCT}% of their own (those that were on CPU $N, ms/ms:$on_n_progress), $ON_N still last on CPU $N (of the hogs read while the spinner ran; $LATE read after it ended)"
}

scenario eevdf
note "EEVDF: least hog share ${MIN_MS} ms in ${MIN_WIN_MS} ms beside the spinner, $STUCK hogs below ${RT_MIN_SHARE_PCT}%, $ON_N left on CPU $N (of $WERE_ON_N)"

start_sched || { fail "scx_sis did not attach"; finish; exit 1; }
seq0=$(enable_seq)
progs=$(bpftool prog show 2>/dev/null)
check_eq "sched_switch tracepoint attached (re-enqueue from anywhere: $want_tp)" \
  "$(grep -c 'name sis_sched_switch' <<<"$progs")" "$want_tp"
check_eq "ops.cpu_release loaded" "$(grep -c 'name sis_cpu_release' <<<"$progs")" $((1 - want_tp))
scenario scx_sis
check "hogs waited on CPU $N when the spinner started ($WERE_ON_N)" test "$WERE_ON_N" -gt 1
check "the spinner had CPU $N (${SPIN_MS:-?} ms CPU, >= 80% of ${RT_SPIN_SECS} s)" test "${SPIN_MS:-0}" -ge $((RT_SPIN_SECS * 800))
check_eq "the spinner's samples off CPU $N" "${SPIN_VIOL:-?}" 0
check "the spinner ran <= ${RT_SPIN_SECS}.5 s (${SPIN_WIN_MS:-?} ms; the sched_ext watchdog is 5 s)" test "${SPIN_WIN_MS:-99999}" -le $((RT_SPIN_SECS * 1000 + 500))
check_eq "sampled while the spinner ran" "$SPIN_ALIVE" 1
check_eq "hogs with < ${RT_MIN_SHARE_PCT}% of a CPU beside the spinner, each between its two reads (least: ${MIN_MS} ms in ${MIN_WIN_MS} ms)" "$STUCK" 0
# Not asserted: a hog's last CPU being N. On 7.x the ext DL server gives sched_ext 50 ms a
# second on N beside the spinner; N then steals a hog, RT takes N back, and the release
# re-enqueues the hog elsewhere, where it waits with N still its last CPU (2 of 2 targeted runs
# on 7.3: one such hog, 675-860 ms of progress). Left behind, a hog would fail the progress check.
note "hogs last on CPU $N while the spinner held it: $ON_N ($LATE of $((2 * NPROC)) read after it ended)"
check "still attached" kill -0 "$SCHED_PID"
check_eq "state" "$(sched_state)" enabled
check_eq "no re-attach (enable_seq)" "$(enable_seq)" "$seq0"
stop_sched INT || fail "no clean detach"
check_eq "exit code" "$SCHED_RC" 0
echo "$rt_saved" > "$rt_knob"
check_eq "RT throttling restored" "$(cat "$rt_knob")" "$rt_saved"
dmesg_check
finish
