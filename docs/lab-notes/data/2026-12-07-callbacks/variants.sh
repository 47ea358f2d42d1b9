#!/bin/bash
# Per-callback BPF time of several scx_sis builds over pinned pipelat runs, interleaved.
# BUILDS (main nokick noacct): the builds, each a directory under V holding its scx_sis;
# ROUNDS (3): rounds of one run a build.
BUILDS=${BUILDS:-main nokick noacct}
V=${V:?a directory holding a directory with its scx_sis for each of: $BUILDS}
sysctl -qw kernel.bpf_stats_enabled=1
snap() { bpftool -j prog show | python3 -c '
import json,sys
for p in json.load(sys.stdin):
    if p.get("type")=="struct_ops": print(p.get("name"), p.get("run_time_ns",0), p.get("run_cnt",0))'; }
for round in $(seq ${ROUNDS:-3}); do
for v in $BUILDS; do
  $V/$v/scx_sis > /dev/null 2>&1 & pid=$!
  sleep 4
  a=$(snap)
  out=$(target/release/scx_sis_bench __pipelat --secs 3 --warmup 1 --pinned)
  b=$(snap)
  kill -INT $pid; wait $pid; sleep 1
  echo "== round $round $v: $out"
  python3 - "$a" "$b" "$out" <<'PY'
import sys,re
a={l.split()[0]:(int(l.split()[1]),int(l.split()[2])) for l in sys.argv[1].splitlines() if l.strip()}
b={l.split()[0]:(int(l.split()[1]),int(l.split()[2])) for l in sys.argv[2].splitlines() if l.strip()}
trips=int(re.search(r'(\d+) round trips',sys.argv[3]).group(1))
tot=0
for k in ("sis_enqueue","sis_dispatch","sis_stopping","sis_running","sis_tick"):
    ns=b.get(k,(0,0))[0]-a.get(k,(0,0))[0]; n=b.get(k,(0,0))[1]-a.get(k,(0,0))[1]
    if n: print(f"  {k:14s} calls/trip {n/trips:5.2f} us/call {ns/n/1e3:6.2f} us/trip {ns/trips/1e3:6.2f}")
tot=sum(b[k][0]-a.get(k,(0,0))[0] for k in b)
print(f"  all us/trip {tot/trips/1e3:.1f} over {trips} trips")
PY
done; done
