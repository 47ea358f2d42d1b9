#!/bin/bash
# tbench at 2 clients under EEVDF and each build, rounds interleaved; each run between two marks
# of the insncount plugin (mark START, mark END), with the loopback bytes and switches between
# them. With KSYMS=DIR, the kernel's text symbols go to DIR/kallsyms and, while each build is
# attached, its BPF programs' and trampolines' to DIR/bpf.<end mark>.
# guest: env BUILDS="name=path ..." ROUNDS=N MARK=/path/to/mark [KSYMS=DIR] insnab.sh
for b in $BUILDS; do cp ${b#*=} /dev/shm/scx_sis_${b%%=*}; done
att() { "$@" >/tmp/sched.log 2>&1 & pid=$!; for i in $(seq 120); do [ "$(cat /sys/kernel/sched_ext/state)" = enabled ] && break; sleep 0.5; done; sleep 1; }
det() { kill -INT $pid; wait $pid; sleep 1; }
lo() { awk '/^ *lo:/{print $10}' /proc/net/dev; }
ctxt() { awk '/^ctxt/{print $2}' /proc/stat; }
[ -n "${KSYMS:-}" ] && mkdir -p "$KSYMS" && grep -iE ' t ' /proc/kallsyms > "$KSYMS/kallsyms"
tbench_srv >/dev/null 2>&1 &
sleep 1
tag=0
one() {
  tag=$((tag + 2)); l0=$(lo); c0=$(ctxt); $MARK $tag
  r=$(tbench -t 5 2 127.0.0.1 2>&1 | awk '/Throughput/{print $2}')
  $MARK $((tag + 1)); l1=$(lo); c1=$(ctxt)
  [ -n "${KSYMS:-}" ] && grep -E ' \[?bpf' /proc/kallsyms > "$KSYMS/bpf.$((tag + 1))"
  echo "run $1 round $2 mark $tag lo_bytes $((l1 - l0)) ctxt $((c1 - c0)) mbs $r"
}
for round in $(seq ${ROUNDS:-3}); do
  one EEVDF $round
  for b in $BUILDS; do
    n=${b%%=*}; att /dev/shm/scx_sis_$n
    one $n $round
    det
  done
done
dmesg | grep -iE "oops|bug:|panic" | tail -3
