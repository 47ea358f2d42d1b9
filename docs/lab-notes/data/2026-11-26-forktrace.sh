#!/bin/bash
# fair-fork's op traced (2026-11-26): 2026-11-26-forklat-rusage.py under `perf sched record`, then
# the per-task summary of its timehist (2026-11-26-timehist-sum.py). perf's data goes to a tmpfs:
# the guest's 9p mounts refuse its writes. Run in the guest through the bench harness:
#   bench/run-vm.sh --kernel 6.12 -- --cmd "forktrace=$PWD/docs/lab-notes/data/2026-11-26-forktrace.sh" \
#     --metric '^metric: ([0-9.]+)$' --runs 3 --warmup 0
here=$(cd "$(dirname "$0")" && pwd)
d=$(mktemp -d /dev/shm/ft.XXXX 2>/dev/null) || { mkdir -p /run/ft && mount -t tmpfs none /run/ft 2>/dev/null; d=$(mktemp -d /run/ft/ft.XXXX); } || d=$(mktemp -d /tmp/ft.XXXX)
f=$d/p.data
perf sched record -o "$f" -- python3 "$here/2026-11-26-forklat-rusage.py" 6 2>&1 | grep -v "^\[ perf"
perf sched timehist -i "$f" 2>/dev/null > "$f.th"
python3 "$here/2026-11-26-timehist-sum.py" < "$f.th"
rm -rf "$d"
