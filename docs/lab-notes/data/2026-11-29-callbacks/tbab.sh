#!/bin/bash
# tbench 1 and 2 clients, interleaved: EEVDF and each build, $ROUNDS rounds, one line a run
# guest: env BUILDS="name=path ..." ROUNDS=N tbab.sh
for b in $BUILDS; do cp ${b#*=} /dev/shm/scx_sis_${b%%=*}; done
att() { "$@" >/tmp/sched.log 2>&1 & pid=$!; for i in $(seq 120); do [ "$(cat /sys/kernel/sched_ext/state)" = enabled ] && break; sleep 0.5; done; sleep 1; }
det() { kill -INT $pid; wait $pid; sleep 1; }
tbench_srv >/dev/null 2>&1 &
sleep 1
run() { tbench -t ${SECS:-5} $1 127.0.0.1 2>&1 | awk '/Throughput/{print $2}'; }
for round in $(seq ${ROUNDS:-4}); do
  echo "EEVDF r$round c1 $(run 1) c2 $(run 2)"
  for b in $BUILDS; do
    n=${b%%=*}; att /dev/shm/scx_sis_$n
    echo "$n r$round c1 $(run 1) c2 $(run 2) state=$(cat /sys/kernel/sched_ext/state)"
    det
  done
done
dmesg | grep -iE "oops|bug:|panic|sched_ext" | tail -5
