import json, re, sys, os, statistics as st
d=sys.argv[1]
j=json.load(open(f'{d}/results.json'))
rows={}
for r in j['runs']:
    if r.get('warmup') or not r.get('ok'): continue
    sysd=r.get('system') or {}
    ns, calls = sysd.get('bpf_ns'), sysd.get('bpf_calls')
    raw=r.get('raw'); n=None; p50=None
    if raw and os.path.exists(f'{d}/{raw}'):
        t=open(f'{d}/{raw}').read()
        pat='(pinned' if r['param']=='pinned' else '(unpinned)'
        ls=[l for l in t.splitlines() if l.startswith('pipelat:') and pat in l]
        m=re.search(r'(\d+) round trips', ls[0]) if ls else None; n=int(m.group(1)) if m else None
        m=re.search(r'p50 ([\d.]+) us', ls[0]) if ls else None; p50=float(m.group(1)) if m else None
    key=(r['suite'], r['param'], r['variant'])
    rows.setdefault(key, []).append((ns, calls, n, p50, r.get('value'), sysd.get('ctxt') or sysd.get('context_switches')))
for k,v in sorted(rows.items()):
    ok=[x for x in v if x[0] is not None]
    if not ok: print(k,'no bpf'); continue
    ns=st.mean(x[0] for x in ok); calls=st.mean(x[1] for x in ok)
    line=f'{k}: bpf {ns/1e6:.1f} ms/run, {calls:.0f} calls/run, {ns/max(calls,1)/1e3:.2f} us/call'
    nn=[x for x in ok if x[2]]
    if nn:
        rt=st.mean(x[2] for x in nn)
        line+=f'; {rt:.0f} trips/run, bpf {st.mean(x[0]/x[2] for x in nn)/1e3:.1f} us/trip, {st.mean(x[1]/x[2] for x in nn):.1f} calls/trip, p50 {st.mean(x[3] for x in nn):.0f} us'
    print(line)
