#!/bin/bash
# guest: wake-path counters of each build under tbench 2 clients. env BUILDS="name=path ..."
tbench_srv >/dev/null 2>&1 &
sleep 1
for b in $BUILDS; do
  n=${b%%=*}; cp ${b#*=} /dev/shm/scx_sis_$n
  /dev/shm/scx_sis_$n --stats-out /tmp/wakepath-$n.json >/tmp/sched.log 2>&1 & pid=$!
  for i in $(seq 120); do [ "$(cat /sys/kernel/sched_ext/state)" = enabled ] && break; sleep 0.5; done; sleep 1
  echo "$n $(tbench -t 5 2 127.0.0.1 2>&1 | awk '/Throughput/{print $2}')"
  kill -INT $pid; wait $pid; sleep 1
  python3 -c "
import json; d=json.load(open('/tmp/wakepath-$n.json'))
def walk(o,p=''):
    if isinstance(o,dict):
        for k,v in o.items(): walk(v,p+k+'.')
    elif isinstance(o,(int,float)) and ('wake' in p or 'direct' in p or 'sync' in p): print('  ',p[:-1],o)
walk(d)"
done
dmesg | grep -iE "oops|bug:" | tail -3
