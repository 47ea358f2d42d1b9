import glob,re,sys,collections
for d in sys.argv[1:]:
    for suite in ['fair-odd','fair-spread','fair-nice8']:
        acc=collections.defaultdict(lambda: collections.Counter()); n=collections.Counter()
        for f in sorted(glob.glob(f'{d}/raw/{suite}/*.txt')):
            v=re.search(r'-([A-Za-z0-9_]+)-r\d+\.txt$',f).group(1)
            t=open(f).read()
            m=re.search(r'window system: .*"migrations":(\d+)',t)
            if not m: continue
            n[v]+=1; acc[v]['migr']+=int(m.group(1))
            hdr=re.search(r'per-CPU counters over the window \(([^)]*)\)',t)
            if hdr:
                names=hdr.group(1).split()
                for line in re.findall(r'^  cpu\d+ (.*)$',t,re.M):
                    for k,x in zip(names,line.split()): acc[v][k]+=int(x)
        print(d.split('/')[-1],suite,' | '.join(f"{v}: "+' '.join(f"{k}={acc[v][k]/n[v]:.0f}" for k in ['migr','pull','pull_xllc','rotate','rotate_xllc','steal']) for v in n))
