#!/usr/bin/env bash
# The parallel rig's smoke: on each kernel, a short A/B on multi-threaded TCG (QEMU 10, 2 vCPUs as 2
# LLCs): EEVDF and scx_sis in blocks (scx_sis attached once per block), hackbench --quick, then the
# checks: every run measured, each scheduler attached once per block, the table says which rig it
# came from, runqueue locks were timed under both (--lock-time: own and other CPUs' rq locks
# counted, scx_sis's remote ones within 8x EEVDF's; every contended rq-lock wait counted at a
# named site), the workloads ran 2 cgroup levels deep
# (--cgroup-depth 2), the host's CPU times were sampled over the boot on the guest's clock
# (host-stat.txt covers every run, so `scx_sis_bench --pool` gives the boot's steal), and the kernel
# log stayed clean across every switch (a boot that faulted is discarded and run again by
# bench/run-vm.sh; that is reported, and a second fault fails).
#   tests/vm/mttcg_smoke.sh [--bin PATH] [KERNEL...]     (default kernels: 7.3 6.12)
# Last line: 'N passed, M failed', N and M counting kernels. Needs as many host cores as vCPUs (2).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
bin="$repo/target/release/scx_sis"
[ "${1:-}" = --bin ] && { bin=$2; shift 2; }
kernels=("$@"); [ ${#kernels[@]} -gt 0 ] || kernels=(7.3 6.12)
pass=0 fail=0 kfail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; kfail=$((kfail + 1)); }
for k in "${kernels[@]}"; do
  out="$repo/target/mttcg-smoke-$k" kfail=0
  rm -rf "$out"
  echo "== mttcg smoke, $k: EEVDF vs scx_sis, hackbench --quick, 2 runs in blocks of 1"
  "$repo/bench/run-vm.sh" --mttcg --kernel "$k" --sockets 2 --cores 1 --threads 1 --retries 1 --timeout 900 \
    --bin "$bin" --out "$out" -- --suite hackbench --quick --runs 2 --warmup 0 --block 1 --lock-time \
    --cgroup-depth 2
  rc=$?
  [ "$rc" -eq 0 ] && ok "$k: the bench exited 0" || bad "$k: bench/run-vm.sh exited $rc"
  if [ -s "$out/discarded-boots.txt" ]; then
    echo "note: $k: a boot faulted and was discarded: $(cat "$out/discarded-boots.txt")"
  fi
  verdict=$(python3 - "$out" <<'PY'
import json, sys, pathlib
d = pathlib.Path(sys.argv[1])
try:
    r = json.loads((d / "results.json").read_text())
except Exception as e:
    print(f"FAIL no results.json: {e}"); sys.exit()
runs = r["runs"]
names = [v["name"] for v in r["variants"]]
print("ok" if names == ["EEVDF", "scx_sis"] else "FAIL", f"columns {names}")
bad = [f"{x['variant']} {x['param']} r{x['round']}: {x.get('error')}" for x in runs if not x["ok"]]
print("ok" if len(runs) == 8 and not bad else "FAIL", f"{len(runs)} of 8 runs measured, failed: {bad}")
# the rq-lock timer saw each column take its CPUs' own rq locks and each other's
for v in names:
    sysd = [x.get("system") or {} for x in runs if x["variant"] == v and x["ok"]]
    lk = {k: sum(d.get(k) or 0 for d in sysd) for k in ("rq_lock_local_n", "rq_lock_remote_n", "rq_lock_remote_ns")}
    print("ok" if lk["rq_lock_local_n"] > 0 and lk["rq_lock_remote_n"] > 0 and lk["rq_lock_remote_ns"] > 0
          else "FAIL", f"{v}: rq locks timed {lk}")
# every contended rq-lock wait, from any caller, in every run, each counted at a named site (the
# sites are read just after the totals, at each end of a run: a few waits between the reads)
for v in names:
    sysd = [x.get("system") or {} for x in runs if x["variant"] == v and x["ok"]]
    have = sum(1 for d in sysd if d.get("rq_wait_other_n") is not None and d.get("rq_wait_sites") is not None)
    waits = sum((d.get("rq_wait_own_n") or 0) + (d.get("rq_wait_other_n") or 0) for d in sysd)
    at = sum(n for d in sysd for n, _ in (d.get("rq_wait_sites") or {}).values())
    unnamed = sum((d.get("rq_wait_sites") or {}).get("?", [0])[0] for d in sysd)
    print("ok" if sysd and have == len(sysd) and abs(waits - at) <= max(5, waits // 20) and unnamed * 2 <= at
          else "FAIL",
          f"{v}: rq-lock waits in {have} of {len(sysd)} runs, {waits} waits, {at} at sites, {unnamed} unnamed")
# the same messages under both: scx_sis's remote rq locks stay within 8x EEVDF's (a kick that
# cannot take the rq lock ops.enqueue holds becomes an irq_work and a remote lock: 13x on 6.12)
rl = {v: sum((x.get("system") or {}).get("rq_lock_remote_n") or 0 for x in runs if x["variant"] == v and x["ok"])
      for v in names}
if set(rl) == {"EEVDF", "scx_sis"}:
    print("ok" if rl["scx_sis"] <= 8 * max(rl["EEVDF"], 1) else "FAIL",
          f"remote rq locks: scx_sis {rl['scx_sis']}, EEVDF {rl['EEVDF']} (at most 8x)")
print("ok" if r["host"].get("rig") == "mttcg" and r["config"].get("block") == 1 else "FAIL",
      f"rig {r['host'].get('rig')!r}, block {r['config'].get('block')}")
# one attach per block: the scheduler's log has one start line per attach
starts = (d / "logs" / "scx_sis.log").read_text().count("===== ") if (d / "logs" / "scx_sis.log").exists() else -1
print("ok" if starts == 2 else "FAIL", f"scx_sis attached {starts} times for 2 blocks")
# --cgroup-depth 2: each run names the cgroup it ran in, 2 levels below the cgroup2 root
named = [t[len("(cgroup: "):-1] for f in (d / "raw").rglob("*.txt")
         for t in f.read_text().splitlines() if t.startswith("(cgroup: ")]
where, runs_in = set(named), len(named)
deep = len(where) == 1 and named[0].endswith("/l2")
print("ok" if r["config"].get("cgroup_depth") == 2 and runs_in == 8 and deep else "FAIL",
      f"{runs_in} of 8 runs named a cgroup, {sorted(where)}, depth {r['config'].get('cgroup_depth')}")
table = (d / "table.txt").read_text() if (d / "table.txt").exists() else ""
print("ok" if "# qemu multi-threaded TCG" in table and "CoeffVar" in table else "FAIL", "table names the rig and the spread")
# the host's /proc/stat once a second, and every run inside it on the guest's clock (2 s slack)
hs = d / "host-stat.txt"
ts = [float(l.split()[0]) for l in hs.read_text().splitlines() if " cpu " in l] if hs.exists() else []
spans = [(x["started"], x["started"] + (x.get("wall_s") or 0)) for x in runs]
cover = bool(ts) and all(ts[0] <= a + 2 and b - 2 <= ts[-1] for a, b in spans)
print("ok" if len(ts) >= 10 and cover else "FAIL", f"host-stat.txt: {len(ts)} samples, every run inside them: {cover}")
PY
)
  pooled=$("$(dirname "$bin")/scx_sis_bench" --pool "$out" 2>&1)
  if grep -qE '^# boot 1: .*host steal [0-9.]+% of the host.s CPU time, [0-9]+ of 8 runs' <<<"$pooled"; then
    verdict+=$'\nok scx_sis_bench --pool gives the boot\'s host steal'
  else
    verdict+=$'\nFAIL scx_sis_bench --pool: '"$(head -n 5 <<<"$pooled" | tr '\n' ' ')"
  fi
  while read -r word rest; do
    if [ "$word" = ok ]; then ok "$k: $rest"; else bad "$k: $rest"; fi
  done <<<"$verdict"
  cat "$out/table.txt" 2>/dev/null | sed -n '1,12p'
  if [ "$kfail" -eq 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
