#!/bin/bash
# Per-callback BPF time of scx_sis over pipelat runs (pinned, unpinned), qemu guest.
B=${B:-target/release}   # run from the repository root
sysctl -qw kernel.bpf_stats_enabled=1
$B/scx_sis > /dev/null 2>&1 &
sleep 4
snap() { bpftool -j prog show | python3 -c '
import json,sys
for p in json.load(sys.stdin):
    if p.get("type")=="struct_ops": print(p.get("name"), p.get("run_time_ns",0), p.get("run_cnt",0))'; }
for round in 1 2 3; do
for mode in --pinned ""; do
  a=$(snap)
  out=$($B/scx_sis_bench __pipelat --secs 3 --warmup 1 $mode)
  b=$(snap)
  echo "== round $round pipelat ${mode:-unpinned}: $out"
  python3 - "$a" "$b" "$out" <<'PY'
import sys,re
a={l.split()[0]:(int(l.split()[1]),int(l.split()[2])) for l in sys.argv[1].splitlines() if l.strip()}
b={l.split()[0]:(int(l.split()[1]),int(l.split()[2])) for l in sys.argv[2].splitlines() if l.strip()}
trips=int(re.search(r'(\d+) round trips',sys.argv[3]).group(1))
tot=0
for k in sorted(b, key=lambda k: -(b[k][0]-a.get(k,(0,0))[0])):
    ns=b[k][0]-a.get(k,(0,0))[0]; n=b[k][1]-a.get(k,(0,0))[1]
    if n==0: continue
    tot+=ns
    print(f"  {k:24s} calls/trip {n/trips:6.2f}  us/call {ns/n/1e3:7.2f}  us/trip {ns/trips/1e3:7.2f}")
print(f"  {'all':24s} us/trip {tot/trips/1e3:.1f} over {trips} trips")
PY
done; done
kill %1; wait
