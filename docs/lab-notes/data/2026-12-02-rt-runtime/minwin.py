import sys
W=int(sys.argv[1])
for fn in sys.argv[2:]:
    rows=[]
    for line in open(fn):
        f=line.split()
        rows.append((int(f[0]),[int(x.split(':')[3]) for x in f[1:]],[int(x.split(':')[1]) for x in f[1:]]))
    worst=(1e9,)
    for a in range(len(rows)):
        for b in range(a,len(rows)):
            if rows[b][0]-rows[a][0]>=W:
                for i in range(len(rows[a][1])):
                    d=rows[b][1][i]-rows[a][1][i]
                    if d<worst[0]: worst=(d,i,rows[a][0],rows[b][0])
                break
    print(fn.split('/')[-1], "min progress over %d ms: %s"%(W,worst))
