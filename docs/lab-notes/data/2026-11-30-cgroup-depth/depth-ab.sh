#!/bin/bash
# EEVDF vs scx_sis, the workloads in the root and then 3 cgroup levels deep: one bench session
# per depth in the same boot (each interleaved in blocks within itself).
# guest: depth-ab.sh BIN_DIR OUT_DIR
B=$1 O=$2
for d in 0 3; do
  "$B/scx_sis_bench" --scx-sis-bin "$B/scx_sis" --suite tbench,hackbench --hackbench-loops 300 \
    --runs 8 --warmup 1 --block 4 --cgroup-depth $d --out "$O/depth-$d" > "$O/depth-$d.table" 2> "$O/depth-$d.log"
done
dmesg | grep -iE "oops|bug:|panic" | tail -3
