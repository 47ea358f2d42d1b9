#!/usr/bin/env bash
# prof: a diagnostic, not in the suite. hackbench -p -g PROF_GROUPS (16), or the shell command
# PROF_CMD (e.g. 'tbench_srv & s=$!; sleep 1; tbench -t 10 1 127.0.0.1; kill $s'), under EEVDF, then under
# each of PROF_CONFS ('|'-separated; each "[/abs/scx_sis] [FLAGS]", default: scx_sis and
# scx_sis --no-balance), then EEVDF again: wall time, context switches (/proc/stat ctxt), and
# each scx_sis BPF program's run count and run time (kernel.bpf_stats_enabled; guest time, which
# single-threaded TCG dilates: compare programs and runs, not absolutes), and scx_sis's own
# counters over the attach (--stats-out: where the switches come from). How the 2026-11-24
# hackbench regression was traced (docs/lab-notes/2026-11-24.md):
#   tests/vm/run.sh --kernel 6.12 --env "PROF_CONFS=|--no-balance|/tmp/old/scx_sis" prof
source "$(dirname "$0")/lib.sh"
require_scx_sis
trap cleanup_sched EXIT
G=${PROF_GROUPS:-16}
CMD=${PROF_CMD:-hackbench -p -g $G -l 100}
rm -f "$SCX_SIS_OUT/prof-cmd.out"
ctxt() { awk '/^ctxt/{print $2}' /proc/stat; }
# the command's own voluntary (blocked) and involuntary (preempted, slice ended) switches: its
# children's rusage; for hackbench, few voluntary switches means big batches per run
run_cmd() { local t0=$EPOCHREALTIME c0 ru; c0=$(ctxt)
  ru=$(python3 -c 'import resource,subprocess,sys; subprocess.run(["bash","-c",sys.argv[1]],stdout=open(sys.argv[2],"a"),stderr=subprocess.STDOUT); r=resource.getrusage(resource.RUSAGE_CHILDREN); print(r.ru_nvcsw, r.ru_nivcsw)' "$CMD" "$SCX_SIS_OUT/prof-cmd.out")
  awk -v a="$t0" -v b="$EPOCHREALTIME" -v c="$(( $(ctxt) - c0 ))" -v r="$ru" 'BEGIN{split(r,x," "); printf "%.2f s, %d context switches (the command: %d voluntary, %d involuntary)", b-a, c, x[1], x[2]}'; }
# a throughput line of the command, if it prints one (tbench: "Throughput N MB/sec")
throughput() { grep -o 'Throughput [0-9.]* MB/sec' "$SCX_SIS_OUT/prof-cmd.out" | tail -n 1; }
log "command: $CMD"
log "EEVDF: $(run_cmd) $(throughput)"
IFS='|' read -r -a CONFS <<<"${PROF_CONFS:-|--no-balance}"
for flags in "${CONFS[@]}"; do
  bin=$SCX_SIS
  case "$flags" in /*) bin=${flags%% *}; flags=${flags#"$bin"} ;; esac
  SCX_SIS=$bin start_sched $flags --stats-out "$SCX_SIS_OUT/prof-$$-stats.json" || continue
  sysctl -qw kernel.bpf_stats_enabled=1
  bpftool prog show -j > "$SCX_SIS_OUT/prof-$$-0.json"
  t=$(run_cmd)
  bpftool prog show -j > "$SCX_SIS_OUT/prof-$$-1.json"
  sysctl -qw kernel.bpf_stats_enabled=0
  pass "$bin $flags: $t $(throughput)"
  python3 - "$SCX_SIS_OUT" "$$" <<'PY'
import json, os, sys
a={p['id']:p for p in json.load(open(os.path.join(sys.argv[1], 'prof-%s-0.json' % sys.argv[2])))}
b=json.load(open(os.path.join(sys.argv[1], 'prof-%s-1.json' % sys.argv[2])))
tot=0; rows=[]
for p in b:
    if not p.get('name', '').startswith('sis_'): continue  # every scx_sis program is sis_*
    o=a.get(p['id'],{})
    n=p.get('run_cnt',0)-o.get('run_cnt',0); t=p.get('run_time_ns',0)-o.get('run_time_ns',0)
    if n: rows.append((t,n,p['name'])); tot+=t
for t,n,name in sorted(rows,reverse=True):
    print(f"  {name:28s} cnt {n:9d} total {t/1e9:8.3f} s  avg {t/n:8.0f} ns")
print(f"  TOTAL BPF {tot/1e9:.3f} s")
PY
  stop_sched
  # where the switches come from: scx_sis's own counters over the attach (the command is most of it)
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("  stats: " + " ".join(f"{k}={d.get(k)}" for k in ["enqueue","direct_idle","dispatch_local","keep_prev","kick_idle","preempt_kicks","wake_sync","wake_prev","wake_recent","wake_scan","wake_affine","wake_none","balance_pulls","balance_pulls_xllc","balance_unmovable","steals","steal_attempts","idle_healed"]))' "$SCX_SIS_OUT/prof-$$-stats.json"
done
log "EEVDF: $(run_cmd) $(throughput)"
finish
