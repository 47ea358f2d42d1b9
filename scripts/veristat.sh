#!/usr/bin/env bash
# BPF verifier cost of each scx_sis program, per kernel, into docs/veristat/<kernel>.json.
# Boots each kernel once (tests/vm/vm.sh, one VM at a time), loads scx_sis there with
# SCX_SIS_VERIFIER_STATS=1 -v until it attaches (tests/vm/guest/veristat.sh), detaches it, and
# turns libbpf's load logs into one record per program: instructions processed, states, stack
# depth, verification time. Rerun it after a BPF change and commit the JSON with it.
#   scripts/veristat.sh [--bin PATH] [KERNEL...]     (default: 6.12 7.3; build scx_sis first)
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin="$repo/target/release/scx_sis" kernels=()
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bin=$(realpath -m "${2:?}"); shift 2 ;;
    -h|--help) sed -n '2,7p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "veristat.sh: error: unknown option '$1'" >&2; exit 2 ;;
    *) kernels+=("$1"); shift ;;
  esac
done
[ ${#kernels[@]} -gt 0 ] || kernels=(6.12 7.3)
[ -x "$bin" ] || { echo "veristat.sh: error: no scheduler binary at $bin (cargo build --release)" >&2; exit 2; }
mkdir -p "$repo/docs/veristat"
rc=0
for k in "${kernels[@]}"; do
  image=$("$repo/tests/vm/kernels.sh" "$k") || { echo "veristat.sh: no $k kernel" >&2; rc=1; continue; }
  out="$repo/target/veristat/$k"; rm -rf "$out"; mkdir -p "$out"
  echo "== $k: loading scx_sis with verifier statistics"
  if ! "$repo/tests/vm/vm.sh" --kernel "$image" --timeout 900 -- \
      env SCX_SIS="$bin" SCX_SIS_OUT="$out" bash "$repo/tests/vm/guest/veristat.sh"; then
    echo "veristat.sh: the $k guest run failed; docs/veristat/$k.json left as it was" >&2; rc=1; continue
  fi
  python3 - "$out" "$repo/docs/veristat/$k.json" <<'PY' || rc=1
import json, re, sys
out, dest = sys.argv[1], sys.argv[2]
text = open(f"{out}/veristat.out", errors="replace").read()
progs = []
# libbpf prints each program's log as: prog 'NAME': -- BEGIN PROG LOAD LOG --\n...\n-- END PROG LOAD LOG --
for m in re.finditer(r"prog '([^']+)': -- BEGIN PROG LOAD LOG --\n(.*?)-- END PROG LOAD LOG --", text, re.S):
    name, log = m.group(1), m.group(2)
    rec = {"program": name}
    p = re.search(r"processed (\d+) insns \(limit (\d+)\) max_states_per_insn (\d+) total_states (\d+) "
                  r"peak_states (\d+) mark_read (\d+)", log)
    if p:
        for key, v in zip(["insns_processed", "insns_limit", "max_states_per_insn", "total_states",
                           "peak_states", "mark_read"], p.groups()):
            rec[key] = int(v)
    t = re.search(r"verification time (\d+) usec", log)
    if t:
        rec["verification_time_us"] = int(t.group(1))
    s = re.search(r"stack depth ([0-9+]+)", log)
    if s:
        rec["stack_depth"] = s.group(1)
    progs.append(rec)
if not progs or any("insns_processed" not in p for p in progs):
    sys.exit(f"veristat.sh: no complete verifier counts in {out}/veristat.out")
progs.sort(key=lambda p: p["program"])
doc = {
    "kernel": open(f"{out}/veristat.kernel").read().strip(),
    "scx_sis": open(f"{out}/veristat.version").read().strip(),
    "rig": "qemu single-threaded TCG, 8 vCPUs (2 LLCs x 2 cores x 2 threads), tests/vm/vm.sh",
    "note": "verification time is guest time under emulation: compare kernels and builds, not absolutes",
    "total_insns_processed": sum(p["insns_processed"] for p in progs),
    "programs": progs,
}
json.dump(doc, open(dest, "w"), indent=1)
open(dest, "a").write("\n")
print(f"{dest}: {len(progs)} programs, {doc['total_insns_processed']} instructions processed")
PY
done
exit $rc
