import json,sys
d=json.load(open(sys.argv[1]))[0]['formatted']
def find(o,name):
    if isinstance(o,dict):
        for k,v in o.items():
            if k==name: return v
            r=find(v,name)
            if r is not None: return r
    if isinstance(o,list):
        for v in o:
            r=find(v,name)
            if r is not None: return r
    return None
val=find(d,'diag')
names={1:'owed, min run',2:'owed, hog gives way',3:'hog gives way, not alone',4:'curr not a hog',5:'hog, vtime short',6:'affine',7:'something waits there',8:'idle CPU claimed'}
rows=[(r,val[r]) for r in range(20) if sum(val[r])]
print("reason                             <250us 250-500 0.5-1ms  1-2ms  2-4ms   >4ms   total  >=1ms")
for r,row in rows:
    nm=('remote ' if r>=10 else 'local  ')+names.get(r%10,str(r))
    print(f"{nm:34s}"+" ".join(f"{x:6d}" for x in row)+f" {sum(row):7d} {sum(row[3:]):6d}")
print("total",sum(sum(r) for _,r in rows), "  >=1ms", sum(sum(row[3:]) for r,row in rows), " >=2ms", sum(sum(row[4:]) for r,row in rows))
v2=find(d,'diag2')
if v2:
    lab=["owed (hog charged - wakee), 0.5ms bins from <0", "wakee lag+slice, 0.5ms bins (bin1 = at cap)", "hog's curr_vtime - vclock + slice, 0.5ms bins", "hog ran since picked, 0.5ms bins", "hog since woke, 2ms bins"]
    for i,l in enumerate(lab): print(f"{l:50s}", v2[i])
