#!/usr/bin/env bash
# veristat: not in the suite; run by scripts/veristat.sh. Loads scx_sis with the verifier's
# statistics on (SCX_SIS_VERIFIER_STATS=1 -v), waits for it to attach, detaches it, and leaves
# its output in $SCX_SIS_OUT/veristat.out for the host to turn into docs/veristat/<kernel>.json.
# Asserted: it attaches, it detaches with exit 0, and every loaded program printed its counts.
# env: SCX_SIS (required), SCX_SIS_OUT
source "$(dirname "$0")/lib.sh"
require_scx_sis
trap cleanup_sched EXIT

export SCX_SIS_VERIFIER_STATS=1
SCHED_OUT_DIR=$(mktemp -d)   # libbpf's lines go to tmpfs, not one 9p write each
check "attached with verifier statistics on" start_sched -v
stop_sched
check_eq "detached, exit code" "${SCHED_RC:-?}" 0
uname -r > "$SCX_SIS_OUT/veristat.kernel"
"$SCX_SIS" -V > "$SCX_SIS_OUT/veristat.version" 2>&1
cp "$SCHED_OUT" "$SCX_SIS_OUT/veristat.out"
loads=$(grep -c 'BEGIN PROG LOAD LOG' "$SCHED_OUT")
counts=$(grep -c '^processed [0-9]* insns' "$SCHED_OUT")
check_gt "programs with a load log" "$loads" 0
check_eq "programs with verifier counts" "$counts" "$loads"
finish
