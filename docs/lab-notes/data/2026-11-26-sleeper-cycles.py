"""The cycles of a 50 ms sleeper in a `perf script` of sched events (2026-11-26-sleepperf.sh):
each from its switch-out asleep (S) to the waking (late: past 50 ms, the timer under TCG), to its
first run after it (wait), to its next switch-out asleep (run-to-sleep: a few us of work, longer
when it is preempted on the way). Usage: sleeper-cycles.py FILE.script SLEEPER_PID"""
import re, sys
fn, sp = sys.argv[1], sys.argv[2]
cyc=[]; cur=None
for line in open(fn):
    m=re.match(r'\s*\[(\d+)\]\s+([\d.]+):\s+(\S+):\s+(.*)',line)
    if not m: continue
    c=int(m.group(1)); t=float(m.group(2)); e=m.group(3); tr=m.group(4)
    if e.endswith('sched_switch'):
        if 'prev_pid=%s '%sp in tr:
            st=re.search(r'prev_state=(\S+)',tr).group(1)
            if st.startswith('S'):
                if cur and 'run' in cur: cur['end']=t; cyc.append(cur)
                cur={'out':t,'pre':0,'off':0.0}
            elif cur and 'run' in cur:
                cur['pre']+=1; cur['poff']=t
        if 'next_pid=%s '%sp in tr and cur:
            if 'wake' in cur and 'run' not in cur: cur['run']=t
            elif 'poff' in cur: cur['off']+=t-cur.pop('poff')
    elif e.endswith('sched_waking') and 'pid=%s '%sp in tr and cur and 'wake' not in cur:
        cur['wake']=t
c50=[x for x in cyc if 0.0495<x['wake']-x['out']<0.2]
q=lambda v,f: sorted(v)[min(len(v)-1,int(len(v)*f))]*1e3 if v else 0
late=[x['wake']-x['out']-0.05 for x in c50]; wait=[x['run']-x['wake'] for x in c50]; tail=[x['end']-x['run'] for x in c50]; off=[x['off'] for x in c50]
pre=sum(x['pre'] for x in c50)
print('%s n=%d late p50 %.1f p90 %.1f | wait p50 %.1f p90 %.1f | run-to-sleep p50 %.1f p90 %.1f max %.1f (preempted %d times, off %.0f ms in all)'%(fn[-32:],len(c50),q(late,.5),q(late,.9),q(wait,.5),q(wait,.9),q(tail,.5),q(tail,.9),q(tail,1),pre,sum(off)*1e3))
