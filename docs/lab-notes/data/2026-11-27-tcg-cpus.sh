#!/bin/bash
# single-threaded TCG: does hackbench get faster with more vCPUs? EEVDF, taskset to 8/4/2/1 CPUs, interleaved
# Lab notes 2026-11-27. One boot per kernel, side by side:
#   d=target/s33/cpus-6.12; mkdir -p $d
#   tests/vm/vm.sh --kernel $(tests/vm/kernels.sh 6.12) -- env SCX_SIS_OUT=$PWD/$d bash $PWD/docs/lab-notes/data/2026-11-27-tcg-cpus.sh   # and 7.3
O=$SCX_SIS_OUT
for r in 1 2 3 4 5; do
  for c in 0-7 0-3 0,2,4,6 0-1 0; do
    t=$(taskset -c $c hackbench -p -g 8 -l 100 | awk '/^Time/{print $2}')
    echo "round $r cpus $c time $t" | tee -a $O/cpus.txt
  done
done
