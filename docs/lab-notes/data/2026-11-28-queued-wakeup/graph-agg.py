# graph-agg.py TRACE [FUNCTION...]: per function, calls and mean/p50/total duration in a function_graph trace
import re,sys,statistics as st
pat=re.compile(r'^\s*\d+\)\s+[+!#*@$ ]?\s*([\d.]+) us\s+\|\s+(?:\} /\* (\S+) \*/|(\S+)\(\);)')
want=sys.argv[2:] 
d={}
for l in open(sys.argv[1]):
    m=pat.match(l)
    if not m: continue
    name=m.group(2) or m.group(3)
    d.setdefault(name,[]).append(float(m.group(1)))
rows=[(k,v) for k,v in d.items() if (not want or k in want)]
rows.sort(key=lambda kv:-sum(kv[1]))
for k,v in rows[:40]:
    print(f"{k:40s} n={len(v):6d} mean={st.mean(v):8.1f} p50={st.median(v):8.1f} tot={sum(v)/1000:8.1f}ms")
