#!/bin/bash
# tbench at 2 clients under EEVDF and each build, rounds interleaved; each run between two marks
# of the insncount plugin (mark START, mark END), with the loopback bytes and switches between
# them. With KSYMS=DIR, the kernel's text symbols go to DIR/kallsyms and, while each build is
# attached, its BPF programs' and trampolines' to DIR/bpf.<end mark>.
# HB="G L": hackbench over pipes, G groups, L loops, instead of tbench; the unit of work is then
# 1000 messages (G x 20 x 20 x L), else an MB of loopback traffic. HB="G L socket": over sockets.
# A build may be a script that runs scx_sis with options (run.sh writes those for NAME=BIN,ARGS).
# guest: env BUILDS="name=path ..." ROUNDS=N MARK=/path/to/mark [KSYMS=DIR] [HB="G L [socket]"] insnab.sh
for b in $BUILDS; do cp ${b#*=} /dev/shm/scx_sis_${b%%=*}; done
# a build that did not attach is skipped, not counted as itself (its span would be EEVDF's)
att() {
  "$@" >/tmp/sched.log 2>&1 & pid=$!
  for i in $(seq 120); do [ "$(cat /sys/kernel/sched_ext/state)" = enabled ] && break; sleep 0.5; done
  sleep 1
  [ "$(cat /sys/kernel/sched_ext/state)" = enabled ] && return 0
  echo "insnab.sh: $1 did not attach: $(tail -1 /tmp/sched.log)" >&2
  return 1
}
det() { kill -INT $pid 2>/dev/null; wait $pid; sleep 1; }
lo() { awk '/^ *lo:/{print $10}' /proc/net/dev; }
ctxt() { awk '/^ctxt/{print $2}' /proc/stat; }
[ -n "${KSYMS:-}" ] && mkdir -p "$KSYMS" && grep -iE ' t ' /proc/kallsyms > "$KSYMS/kallsyms"
[ -z "${HB:-}" ] && { tbench_srv >/dev/null 2>&1 & }
sleep 1
tag=0
one() {
  tag=$((tag + 2)); l0=$(lo); c0=$(ctxt); $MARK $tag
  if [ -n "${HB:-}" ]; then
    set -- "$1" "$2" ${HB}
    r=$(hackbench $([ "${5:-}" = socket ] || echo -p) -g "$3" -l "$4" 2>&1 | awk '/^Time:/{print $2}')
    units=$(($3 * 400 * $4))
  else
    r=$(tbench -t 5 2 127.0.0.1 2>&1 | awk '/Throughput/{print $2}')
    units=
  fi
  $MARK $((tag + 1)); l1=$(lo); c1=$(ctxt)
  [ -n "${KSYMS:-}" ] && grep -E ' \[?bpf' /proc/kallsyms > "$KSYMS/bpf.$((tag + 1))"
  echo "run $1 round $2 mark $tag lo_bytes $((l1 - l0)) ctxt $((c1 - c0)) mbs $r${units:+ msgs $units}"
}
for round in $(seq ${ROUNDS:-3}); do
  one EEVDF $round
  for b in $BUILDS; do
    n=${b%%=*}
    att /dev/shm/scx_sis_$n && one $n $round
    det
  done
done
dmesg | grep -iE "oops|bug:|panic" | tail -3
