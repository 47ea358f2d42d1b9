import re,sys,collections
for f in sys.argv[1:]:
    m=collections.Counter(); r=collections.Counter(); p=collections.Counter(); s=collections.Counter(); t0=None
    comms=collections.Counter()
    for line in open(f):
        mm=re.search(r' (\d+\.\d+): (\S+)',line)
        if not mm: continue
        t=float(mm.group(1))
        if 'sched_migrate_task' in line:
            if t0 is None: t0=t
            m[int(t-t0)]+=1
            c=re.search(r'comm=(\S+)',line).group(1); comms[c.split('/')[0]]+=1
        elif t0 is not None:
            b=int(t-t0)
            if 'DBG rot' in line: r[b]+=1
            elif 'DBG pull' in line: p[b]+=1
            elif 'DBG steal' in line: s[b]+=1
    mx=max(m) if m else 0
    print(f, ' '.join(f"{m[i]}/{r[i]}/{p[i]}/{s[i]}" for i in range(mx+1)), dict(comms.most_common(4)))
