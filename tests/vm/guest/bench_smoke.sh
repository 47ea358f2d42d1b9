#!/usr/bin/env bash
# bench_smoke: a tiny `scx_sis_bench` session (hackbench --quick, 2 runs, no warm-up) with EEVDF,
# scx_sis and one variant (nofilter = --sis-mode linear); checks the exit code, results.json
# (parses, 4 ok runs per variant, scx_sis telemetry, runqueue-lock time: --lock-time), runs.csv,
# table.txt rows, the PNG, that nothing is left attached, and a clean kernel log. The workloads run
# 3 cgroup levels deep (--cgroup-depth 3, as a login session's tasks): each run says where, and the
# chain is gone afterwards.
# env: SCX_SIS and SCX_SIS_BENCH (required).
source "$(dirname "$0")/lib.sh"
require_scx_sis
require_scx_sis_bench
trap cleanup_sched EXIT

out="$SCX_SIS_OUT/bench-smoke"
rm -rf "$out"
bench_args=(--quick --runs 2 --warmup 0 --suite hackbench --lock-time --cgroup-depth 3 --out "$out" --variant "nofilter=--sis-mode linear")

kmsg_mark
check_eq "state before" "$(sched_state)" disabled
t0=$(ts)
log "harness: $SCX_SIS_BENCH ${bench_args[*]} --scx-sis-bin $SCX_SIS"
"$SCX_SIS_BENCH" "${bench_args[@]}" --scx-sis-bin "$SCX_SIS" >"$SCX_SIS_OUT/bench-smoke.stdout" 2>"$SCX_SIS_OUT/bench-smoke.stderr"
rc=$?
check_eq "bench exit code (after $(since "$t0")s)" "$rc" 0
if [ "$rc" != 0 ]; then tail -n 25 "$SCX_SIS_OUT/bench-smoke.stderr" | sed 's/^/  | /'; fi
check_eq "state after" "$(sched_state)" disabled

json="$out/results.json"
if python3 -m json.tool "$json" >/dev/null 2>&1; then pass "results.json parses"; else fail "results.json missing or not JSON"; fi
# one line per variant: NAME measured ok failed telemetry
counts=$(python3 - "$json" <<'EOF' 2>&1
import json, sys
r = json.load(open(sys.argv[1]))
for v in r["variants"]:
    runs = [x for x in r["runs"] if x["variant"] == v["name"] and not x["warmup"]]
    ok = [x for x in runs if x["ok"]]
    tel = [x for x in ok if isinstance(x.get("telemetry"), dict) and "recall_pct" in x["telemetry"]]
    print(v["name"], len(runs), len(ok), len(runs) - len(ok), len(tel))
    # runqueue locks taken over the variant's runs: remote and own, count and ns
    lk = lambda k: sum((x.get("system") or {}).get(k) or 0 for x in ok)
    print("lock", v["name"], *(lk(k) for k in ("rq_lock_remote_n", "rq_lock_remote_ns", "rq_lock_local_n", "rq_lock_local_ns")))
    # contended rq-lock waits: runs that have them, all waits, the sites' waits, waits at unnamed sites
    sysd = [x.get("system") or {} for x in ok]
    have = sum(1 for d in sysd if d.get("rq_wait_own_n") is not None and d.get("rq_wait_sites") is not None)
    sites = [d.get("rq_wait_sites") or {} for d in sysd]
    print("wait", v["name"], have, lk("rq_wait_own_n") + lk("rq_wait_other_n"),
          sum(n for m in sites for n, _ in m.values()), sum(m.get("?", [0])[0] for m in sites))
print("complete", r["complete"], r["aborted"])
EOF
)
echo "$counts" | sed 's/^/  | /'
check_eq "EEVDF runs (measured ok failed telemetry)" "$(echo "$counts" | awk '$1 == "EEVDF" { print $2, $3, $4, $5 }')" "4 4 0 0"
check_eq "scx_sis runs (measured ok failed telemetry)" "$(echo "$counts" | awk '$1 == "scx_sis" { print $2, $3, $4, $5 }')" "4 4 0 4"
check_eq "nofilter runs (measured ok failed telemetry)" "$(echo "$counts" | awk '$1 == "nofilter" { print $2, $3, $4, $5 }')" "4 4 0 4"
# every column took its own rq locks and others' (hackbench on several CPUs), and the timer saw them
for v in EEVDF scx_sis; do
  check "$v: remote and own rq locks timed (count, ns: $(echo "$counts" | awk -v v=$v '$1 == "lock" && $2 == v { print $3, $4, $5, $6 }'))" \
    test "$(echo "$counts" | awk -v v=$v '$1 == "lock" && $2 == v && $3 > 0 && $4 > $3 && $5 > 0 && $6 > $5 { print "ok" }')" = ok
done
# contended waits for rq locks, from any caller: in every run, and each one counted at a site
# (within 5% or 5: the sites are read just after the totals, at each end of a run)
for v in EEVDF scx_sis; do
  w=$(echo "$counts" | awk -v v=$v '$1 == "wait" && $2 == v { print $3, $4, $5, $6 }')
  check "$v: rq-lock waits in every run, each at a named site (runs, waits, at sites, unnamed: $w)" \
    test "$(echo "$w" | awk '{ d = $2 - $3; m = $2 / 20 > 5 ? $2 / 20 : 5 } $1 == 4 && d * d <= m * m && $4 * 2 <= $3 { print "ok" }')" = ok
done
check "rq-lock waits seen (hackbench contends for rq locks on several CPUs)" \
  test "$(echo "$counts" | awk '$1 == "wait" { n += $4 } END { print n + 0 }')" -gt 0
check_eq "session complete" "$(echo "$counts" | awk '$1 == "complete" { print $2, $3 }')" "True None"

csv="$out/runs.csv"
check_eq "runs.csv lines (header + 12)" "$(wc -l <"$csv" 2>/dev/null)" 13
table="$out/table.txt"
check "table.txt has the title" grep -q '^hackbench-process-pipes' "$table"
check "table header names EEVDF scx_sis nofilter" grep -qE '^ +EEVDF +scx_sis +nofilter$' "$table"
check "table row: groups 1" grep -qE '^Amean +1 +[0-9.]+ \(   0\.00%\) +[0-9.]+ [(*] *-?[0-9.]+%[)*] +[0-9.]+ [(*] *-?[0-9.]+%[)*]$' "$table"
check "table row: groups 2" grep -qE '^Amean +2 +[0-9.]+ \(   0\.00%\) ' "$table"
check "table has the verdict" grep -q '^verdict vs EEVDF' "$table"
check "table has the rq-lock columns" grep -qE 'rq-r (us/ku|ms/run)' "$table"
check "table has the rq-lock waits by site" grep -q '^rq-lock waits (contended' "$table"
check "table has the scx_sis telemetry footer" grep -qE '^  scx_sis +1 +[0-9.]+ +[0-9.]+ +[0-9.]+' "$table"
check "stdout is the table" cmp -s "$table" "$SCX_SIS_OUT/bench-smoke.stdout"
sed 's/^/  | /' "$table"
if [ "$(head -c 4 "$out/hackbench.png" 2>/dev/null | od -An -c | tr -d ' ')" = '211PNG' ]; then pass "hackbench.png is a PNG ($(stat -c %s "$out/hackbench.png") bytes)"
else fail "hackbench.png missing or not a PNG"; fi
check "scheduler logs kept" test -s "$out/logs/scx_sis.log"
# --cgroup-depth 3: every run entered level 3 (a run that cannot enter fails), and it is all removed
cgroot=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
deep=$(grep -rhs '^(cgroup: ' "$out" | sort -u)
check_eq "runs that said where they ran" "$(grep -rls '^(cgroup: ' "$out" | wc -l)" 12
check_eq "one cgroup, 3 levels below the root ($deep)" \
  "$(echo "$deep" | sed "s#^(cgroup: $cgroot/##; s#)\$##" | awk -F/ '{ print NF }')" 3
check "the chain is removed" test -z "$(ls -d "$cgroot"/scx_sis_bench_depth.* 2>/dev/null)"
check "table says how deep" grep -q '^# workloads ran 3 cgroup levels deep' "$table"
check "progress lines on stderr" grep -q '^\[bench 12/12\]' "$SCX_SIS_OUT/bench-smoke.stderr"
dmesg_check
finish
