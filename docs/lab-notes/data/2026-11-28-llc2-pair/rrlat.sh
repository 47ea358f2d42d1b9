#!/bin/bash
# rrlat.sh [--by-target]: netperf TCP_RR: where a wakee's wait goes (sched_waking -> sched_wakeup -> switch-in), one traced 3 s run
here=$(cd "$(dirname "$0")" && pwd)
netserver -D -4 -L 127.0.0.1 -p 12866 >/dev/null 2>&1 & s=$!
sleep 0.5
perf record -q -e sched:sched_waking -e sched:sched_wakeup -e sched:sched_switch -a -o /tmp/rr.data -- netperf -4 -H 127.0.0.1 -p 12866 -t TCP_RR -l 3 -- -r 1,1 2>&1 | tail -n 1
kill $s
perf script -i /tmp/rr.data -F comm,pid,cpu,time,event,trace 2>/dev/null | python3 $here/rrlat.py "$@"
