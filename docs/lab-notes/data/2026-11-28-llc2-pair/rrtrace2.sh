#!/bin/bash
# netperf TCP_RR: how a pair gets onto one CPU (events before each migration of a net* task)
here=$(cd "$(dirname "$0")" && pwd)
netserver -D -4 -L 127.0.0.1 -p 12866 >/dev/null 2>&1 & s=$!
sleep 0.5
perf record -q -e sched:sched_switch -e sched:sched_wakeup -e sched:sched_migrate_task -a -o /tmp/rr.data -- netperf -4 -H 127.0.0.1 -p 12866 -t TCP_RR -l 3 -- -r 1,1 2>&1 | tail -n 2
kill $s
perf script -i /tmp/rr.data -F comm,pid,cpu,time,event,trace 2>/dev/null > /tmp/rr.txt
python3 $here/rrwhy.py < /tmp/rr.txt
