#!/usr/bin/env bash
# The main job: build scx_sis and run it with live stats.
#   scripts/run.sh [SECS] [-- SCX_SIS_OPTIONS...]
# On a kernel with sched_ext it attaches scx_sis here (as root) until Ctrl-C.
# On a kernel without sched_ext (most distro kernels before 6.12, this build host) it says so
# and boots the 7.3 test kernel in a VM (qemu TCG, 2 LLCs x 2 cores x 2 threads), attaches
# scx_sis there under a demo workload (hackbench + stress-ng) for SECS seconds (default 60),
# printing its stats every 2 s, then detaches and shows the kernel's view.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
secs=60
[ $# -gt 0 ] && [ "$1" != "--" ] && { secs=$1; shift; }
[ "${1:-}" = "--" ] && shift
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo

$SUDO "$repo/scripts/setup.sh"
echo "run.sh: building scx_sis (cargo build --release)"
(cd "$repo" && cargo build --release --quiet)
bin="$repo/target/release/scx_sis"

if [ -d /sys/kernel/sched_ext ]; then
  echo "run.sh: this kernel ($(uname -r)) has sched_ext: attaching scx_sis here; Ctrl-C detaches it"
  exec $SUDO "$bin" --stats 2 "$@"
fi

cat <<MSG
run.sh: this kernel ($(uname -r)) has no sched_ext (CONFIG_SCHED_CLASS_EXT), so scx_sis cannot
run on it. Starting it in a VM instead: the 7.3 test kernel under qemu (TCG, 8 vCPUs =
2 LLCs x 2 cores x 2 threads), with a demo workload for ${secs}s and live stats every 2 s.
MSG
kernel=$("$repo/tests/vm/kernels.sh" 7.3)
demo="$repo/target/run-demo.sh"
mkdir -p "$repo/target"
cat >"$demo" <<DEMO
#!/bin/bash
echo "=== guest: \$(uname -r), \$(nproc) CPUs, LLCs: \$(cat /sys/devices/system/cpu/cpu*/cache/index3/shared_cpu_list | sort -u | tr '\n' ' ')"
"$bin" --stats 2 $* &
pid=\$!
for i in \$(seq 600); do [ "\$(cat /sys/kernel/sched_ext/state)" = enabled ] && break; kill -0 \$pid 2>/dev/null || break; sleep 0.2; done
echo "=== /sys/kernel/sched_ext/state: \$(cat /sys/kernel/sched_ext/state), root/ops: \$(cat /sys/kernel/sched_ext/root/ops 2>/dev/null)"
echo "=== demo workload: stress-ng (cpu + fork) and hackbench loops for ${secs}s"
stress-ng -c 4 -f 2 --timeout ${secs}s --temp-path /tmp -q &
end=\$((SECONDS + ${secs}))
while [ \$SECONDS -lt \$end ] && kill -0 \$pid 2>/dev/null; do hackbench -p -g 4 -l 200 | grep Time; done
wait %2 2>/dev/null
kill -INT \$pid; wait \$pid; rc=\$?
echo "=== scx_sis exited \$rc; state: \$(cat /sys/kernel/sched_ext/state)"
dmesg | grep 'sched_ext:' | tail -n 3
exit \$rc
DEMO
chmod +x "$demo"
exec "$repo/tests/vm/vm.sh" --kernel "$kernel" --timeout $((secs + 300)) -- "$demo"
