#!/usr/bin/env bash
# Boot a sched_ext test kernel under qemu (TCG, single-threaded unless --mttcg) with virtme-ng and
# run one command inside it. The guest sees the host's root filesystem (read-only, over 9p) with the
# repo's target/ directory writable, so guest scripts use repo paths directly.
#
#   tests/vm/vm.sh --kernel PATH [--cpus N] [--sockets S --cores C --threads T]
#                  [--memory 4G] [--timeout SECS] [--log FILE] [--quiet]
#                  [--boot-timeout SECS] [--mttcg [--oversubscribe]] -- COMMAND...
#
# Defaults: 8 vCPUs as 2 sockets x 2 cores x 2 threads (2 LLCs: 0-3, 4-7; SMT pairs),
# 4G memory, 900 s timeout. --cpus N without a topology picks threads=2, 4 sockets (LLCs) for
# N >= 16, else N/4 sockets; e.g. --cpus 32 -> 4x4x2 (4 LLCs of 8 CPUs).
#
# --mttcg: the parallel rig: multi-threaded TCG (one host thread per vCPU) on QEMU >= 10
# ($SCX_SIS_QEMU, else the copy scripts/setup.sh unpacks into ~/.cache/scx_sis/qemu10): the only
# rig here whose throughput grows with vCPUs. It refuses more vCPUs than host cores (vCPU threads
# would then take turns, and throughput would measure the host) unless --oversubscribe.
#
# SCX_SIS_VM_QEMU_RT=1 (with --mttcg): run qemu's main thread SCHED_FIFO (priority 5, reset on
# fork; needs root). That thread fires the guest's timers, and at normal priority the host runs it
# behind the two vCPU threads whenever both spin: beside 2 CPU hogs cyclictest's wakeups then come
# 3-5 ms late under any guest scheduler. Raised, the timers fire on time, but the thread preempts
# a vCPU thread at each wakeup, and hackbench ran 20-40% slower under both schedulers. So it is a
# choice of what to measure: latency beside hogs with it, throughput without (the default).
#
# --boot-timeout SECS: give up (qemu killed, exit 124, 'boot hung' in the log) when the guest has
# not started the command SECS after qemu started: a boot that hangs (the parallel rig, rarely: an
# RCU stall before init) then costs SECS, not the whole --timeout.
#
# Exit status: the guest command's exit status; 124 on timeout (qemu killed); 125 when the
# guest died or never ran the command (no rc file written); 126 on a usage/setup error; with
# --mttcg, 123 when the command finished but the guest kernel logged an Oops, BUG or panic (its
# results are suspect: multi-threaded TCG can break kernel text patching, rarely, at scheduler
# attach/detach).
# The whole console (kernel log at loglevel 7 + command output) goes to the log file (default
# target/vm-logs/<kernel>-<stamp>.log); the guest's final `dmesg` is appended to it. Lines of the
# console that are kernel messages are not echoed to the terminal (unless --verbose).
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)

usage() { sed -n '2,37p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 126; }
die() { echo "vm.sh: error: $*" >&2; exit 126; }

kernel="" cpus="" sockets="" cores="" threads="" memory=4G timeout=900 log="" quiet=0 verbose=0
mttcg=0 oversub=0 boot_timeout=0
while [ $# -gt 0 ]; do
  case "$1" in
    --kernel) kernel=${2:?}; shift 2 ;;
    --cpus) cpus=${2:?}; shift 2 ;;
    --sockets) sockets=${2:?}; shift 2 ;;
    --cores) cores=${2:?}; shift 2 ;;
    --threads) threads=${2:?}; shift 2 ;;
    --memory) memory=${2:?}; shift 2 ;;
    --timeout) timeout=${2:?}; shift 2 ;;
    --boot-timeout) boot_timeout=${2:?}; shift 2 ;;
    --log) log=${2:?}; shift 2 ;;
    --quiet) quiet=1; shift ;;
    --verbose) verbose=1; shift ;;
    --mttcg) mttcg=1; shift ;;
    --oversubscribe) oversub=1; shift ;;
    -h|--help) usage ;;
    --) shift; break ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done
[ $# -gt 0 ] || die "no command given (usage: vm.sh --kernel PATH [...] -- COMMAND...)"
[ -n "$kernel" ] || die "--kernel PATH is required (tests/vm/kernels.sh 6.12 prints one)"
[ -f "$kernel" ] || die "kernel image '$kernel' not found"
kernel=$(realpath "$kernel")
command -v vng >/dev/null || die "vng (virtme-ng) not found: run scripts/setup.sh"
qemu=qemu-system-x86_64 qemu_fw=()
if [ "$mttcg" = 1 ]; then
  qdir=${SCX_SIS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/scx_sis}/qemu10
  qemu=${SCX_SIS_QEMU:-$qdir/usr/bin/qemu-system-x86_64}
  qver=$("$qemu" --version 2>/dev/null | sed -n 's/.*version \([0-9]*\)\..*/\1/p' | head -n 1)
  [ -n "$qver" ] || die "--mttcg: no QEMU at $qemu: run scripts/setup.sh (or set SCX_SIS_QEMU)"
  [ "$qver" -ge 10 ] || die "--mttcg needs QEMU >= 10 ($qemu is $qver: older ones oops guests at attach/detach)"
  # the firmware of that QEMU's own packages, before the system's
  # its own firmware and modules: the system's are qemu 7.2's (which fail to load into 10)
  if [ -z "${SCX_SIS_QEMU:-}" ]; then
    qemu_fw=(-L "$qdir/usr/share/qemu" -L "$qdir/usr/share/seabios")
    export QEMU_MODULE_DIR="$qdir/usr/lib/x86_64-linux-gnu/qemu"
  fi
fi
command -v "$qemu" >/dev/null || die "$qemu not found: run scripts/setup.sh"

# ---- topology -------------------------------------------------------------------------------
if [ -z "$cpus" ] && [ -z "$sockets$cores$threads" ]; then cpus=8; fi
if [ -n "$sockets$cores$threads" ]; then
  sockets=${sockets:-1} cores=${cores:-1} threads=${threads:-1}
  prod=$((sockets * cores * threads))
  [ -z "$cpus" ] && cpus=$prod
  [ "$prod" -eq "$cpus" ] || die "--cpus $cpus != sockets*cores*threads ($sockets*$cores*$threads)"
else
  [ "$cpus" -ge 1 ] 2>/dev/null || die "--cpus must be a positive integer"
  if [ $((cpus % 2)) -eq 0 ]; then threads=2; else threads=1; fi
  cores_total=$((cpus / threads))
  if [ "$cpus" -ge 16 ]; then sockets=4; else sockets=$(( cores_total >= 2 ? cores_total / 2 : 1 )); fi
  while [ $((cores_total % sockets)) -ne 0 ]; do sockets=$((sockets - 1)); done
  cores=$((cores_total / sockets))
fi

if [ "$mttcg" = 1 ] && [ "$oversub" = 0 ] && [ "$cpus" -gt "$(nproc)" ]; then
  die "--mttcg with $cpus vCPUs on $(nproc) host cores: vCPU threads would take turns and throughput would measure the host (--oversubscribe to run anyway)"
fi

# ---- files ----------------------------------------------------------------------------------
mkdir -p "$repo/target/vm-logs" || die "cannot create $repo/target/vm-logs"
stamp=$(date +%Y%m%d-%H%M%S)-$$
kname=$(basename "$kernel")
id="$repo/target/vm-logs/$kname-$stamp"
[ -n "$log" ] || log="$id.log"
mkdir -p "$(dirname "$log")"
log=$(realpath -m "$log")
rcfile="$id.rc" dmesgfile="$id.dmesg" gscript="$id.guest.sh"
rm -f "$rcfile" "$dmesgfile"

# The guest-side wrapper: run the command, record its rc and the kernel log on the rw 9p mount.
{
  echo '#!/bin/bash'
  echo "cd $(printf %q "$repo") || exit 125"
  echo 'echo "vm.sh: guest up: $(uname -r), $(nproc) CPUs" >/dev/kmsg 2>/dev/null'
  # the guest has only lo: glibc's AI_ADDRCONFIG then refuses IPv4 names, 127.0.0.1 included
  # (netperf: "could not resolve 127.0.0.1"); a non-127 address on lo counts as configured
  echo 'ip link set lo up 2>/dev/null; ip addr add 10.254.0.1/32 dev lo 2>/dev/null'
  printf '%q ' "$@"; echo
  echo 'rc=$?'
  echo "dmesg > $(printf %q "$dmesgfile") 2>&1"
  echo "echo \$rc > $(printf %q "$rcfile.tmp") && mv $(printf %q "$rcfile.tmp") $(printf %q "$rcfile")"
  echo 'sync'
  echo 'exit $rc'
} > "$gscript"
chmod +x "$gscript"

# scx_sis_rig= on the guest's command line tells `scx_sis_bench` which rig its numbers come from
tcg=single rig=tcg-serial; [ "$mttcg" = 1 ] && tcg=multi rig=mttcg
qemu_rt=0; [ "$mttcg" = 1 ] && [ "${SCX_SIS_VM_QEMU_RT:-0}" = 1 ] && qemu_rt=1 rig=mttcg-rt
qopts="-smp $cpus,sockets=$sockets,cores=$cores,threads=$threads -cpu max -accel tcg,thread=$tcg ${qemu_fw[*]}"
# tsc=reliable: single-threaded TCG runs the vCPUs in turn, so the kernel's TSC sync check fails
# and it falls back to the HPET; every clock read (vDSO included) then becomes an emulated MMIO
# access. The TCG TSC is one global virtual clock, so it is in fact synchronized.
# SCX_SIS_VM_APPEND: more kernel parameters (tests/vm/run.sh passes mitigations=off).
# vng takes --qemu as a path; the serial rig leaves it to vng (the system's qemu-system-x86_64)
qemu_opt=(); [ "$mttcg" = 1 ] && qemu_opt=(--qemu "$qemu")
vngcmd=(vng --verbose --force-9p --disable-kvm "${qemu_opt[@]}" --run "$kernel" --cpus "$cpus" --memory "$memory"
        --append "tsc=reliable scx_sis_rig=$rig${SCX_SIS_VM_APPEND:+ $SCX_SIS_VM_APPEND}"
        --user root --rwdir "$repo/target" --cwd "$repo" --qemu-opts="$qopts" --exec "$gscript")

{
  echo "vm.sh: $(date -Is) kernel=$kernel cpus=$cpus (sockets=$sockets cores=$cores threads=$threads) memory=$memory timeout=${timeout}s tcg=$tcg qemu=$("$qemu" --version | head -n 1)"
  echo "vm.sh: command: $*"
  echo "vm.sh: $(printf '%q ' "${vngcmd[@]}")"
} > "$log"
[ "$quiet" = 1 ] || echo "vm.sh: booting $kname: $cpus vCPUs ($sockets sockets x $cores cores x $threads threads), log: $log" >&2

start=$(date +%s)
hungfile="$log.boot-hung"
rm -f "$hungfile"
# boot_watch PID: with --boot-timeout, TERM timeout(1) (PID; it passes the signal to vng/qemu's
# group) when the console has not shown the guest starting the command in time
boot_watch() {
  local t=0
  while kill -0 "$1" 2>/dev/null; do
    grep -q 'virtme-ng-init: starting script' "$log" && return
    if [ "$t" -ge "$boot_timeout" ]; then : > "$hungfile"; kill -TERM "$1"; return; fi
    sleep 5; t=$((t + 5))
  done
}
# qemu_main_rt PID: find qemu among PID's descendants and raise its main thread to SCHED_FIFO 5
# (reset on fork: threads it starts later, I/O workers, stay normal). The vCPU threads exist by
# then and keep their policy (SCX_SIS_VM_QEMU_RT in the header).
qemu_main_rt() {
  local t=0 q="" kids p
  while [ -z "$q" ] && [ "$t" -lt 600 ] && kill -0 "$1" 2>/dev/null; do
    kids=$1
    while [ -n "$kids" ] && [ -z "$q" ]; do
      kids=$(for p in $kids; do pgrep -P "$p"; done)
      for p in $kids; do
        [ "$(cat "/proc/$p/comm" 2>/dev/null)" = qemu-system-x86 ] && q=$p
      done
    done
    [ -n "$q" ] || { sleep 1; t=$((t + 1)); }
  done
  [ -n "$q" ] || return 0
  if chrt -R -f -p 5 "$q" >/dev/null 2>&1; then
    echo; echo "vm.sh: qemu's main thread (pid $q) runs SCHED_FIFO 5: the guest's timers fire on time while its vCPUs spin"
  else
    echo; echo "vm.sh: note: could not raise qemu's main thread (pid $q) to SCHED_FIFO (not root?): guest timers may fire late while both vCPUs spin"
  fi
}
# timeout(1) runs vng/qemu in its own process group and kills the whole group.
if [ "$quiet" = 1 ]; then
  # through a pipe, as below: given the log itself, the console wrote from its start over the header
  timeout -k 20 "$timeout" "${vngcmd[@]}" </dev/null > >(cat >>"$log") 2>&1 &
else
  # terminal: the command's output only (from 'starting script' on, minus kernel messages)
  timeout -k 20 "$timeout" "${vngcmd[@]}" </dev/null > >(tee -a "$log" |
    awk -v all="$verbose" 'all == 1 || (on && !/^\[ *[0-9]+\.[0-9]+\] /) { print; fflush() }
                           /virtme-ng-init: starting script/ { on = 1 }') 2>&1 &
fi
tpid=$!
[ "$boot_timeout" -gt 0 ] && boot_watch "$tpid" &
wpid=$!
rpid=""
if [ "$qemu_rt" = 1 ]; then
  qemu_main_rt "$tpid" >> "$log" 2>&1 &
  rpid=$!
fi
wait "$tpid"; vrc=$?
kill "$wpid" $rpid 2>/dev/null; wait "$wpid" $rpid 2>/dev/null
elapsed=$(( $(date +%s) - start ))

if [ -s "$dmesgfile" ]; then
  { echo; echo "===== vm.sh: guest dmesg at exit ($dmesgfile) ====="; cat "$dmesgfile"; } >> "$log"
fi

fail() {
  local msg=$1 code=$2
  {
    echo "vm.sh: FAILURE: $msg (after ${elapsed}s)"
    echo "vm.sh: ---- last 40 lines of the console (guest dmesg at exit: $dmesgfile) ----"
    sed '/^===== vm.sh: guest dmesg at exit/,$d' "$log" | tail -n 40 | sed 's/^/  | /'
    echo "vm.sh: ---- full log: $log"
  } >&2
  echo "vm.sh: FAILURE: $msg (after ${elapsed}s)" >> "$log"
  exit "$code"
}

if [ -f "$hungfile" ]; then
  rm -f "$hungfile"
  fail "boot hung: the guest had not started the command ${boot_timeout}s after qemu started" 124
fi
if [ "$vrc" -eq 124 ] || [ "$vrc" -eq 137 ]; then
  fail "timeout: guest did not finish within ${timeout}s, qemu killed" 124
fi
if [ ! -f "$rcfile" ]; then
  reason="guest died or never ran the command: no rc file (vng exit $vrc)"
  grep -qE 'Kernel panic|end Kernel panic' "$log" && reason="$reason; kernel PANIC in log"
  grep -qE 'BUG:|Oops' "$log" && reason="$reason; kernel BUG/Oops in log"
  fail "$reason" 125
fi
grc=$(cat "$rcfile")
[ "$grc" -eq "$grc" ] 2>/dev/null || fail "garbled rc file '$rcfile': '$grc'" 125
if [ "$grc" != "$vrc" ]; then
  echo "vm.sh: note: vng exited $vrc but the guest command exited $grc (using the guest's)" | tee -a "$log" >&2
fi
echo "vm.sh: guest command exited $grc after ${elapsed}s" >> "$log"
[ "$quiet" = 1 ] || echo "vm.sh: guest command exited $grc after ${elapsed}s (log: $log)" >&2
if [ "$grc" -ne 0 ]; then
  fail "guest command exited $grc" "$grc"
fi
if [ "$mttcg" = 1 ] && oops=$(grep -m 1 -E 'Oops:|BUG:|Kernel panic|general protection fault' "$log"); then
  fail "the guest kernel logged: $oops" 123
fi
exit 0
