#!/bin/bash
# In the guest: load micro.bpf.o's SEC("syscall") programs and run each (run.py).
# Built on the host with the scheduler's BPF headers (H: the scx_utils-bpf_h dir cargo builds under
# target/release/build/scx_sis-*/out; inc/bpf: libbpf's bpf_helpers.h and friends):
#   clang-19 -g -O2 -target bpf -D__TARGET_ARCH_x86 -Iinc -I$H/arch/x86 -c micro.bpf.c -o micro.bpf.o
# 6.12 has no scx_bpf_now: there a copy without m_now and m_nrq (gen.bpf.o) is loaded.
cd "$(dirname "$0")"
mount | grep -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
bpftool prog loadall micro.bpf.o /sys/fs/bpf/micro 2>&1 | tail -3 || true
[ -d /sys/fs/bpf/micro ] || bpftool prog loadall gen.bpf.o /sys/fs/bpf/micro
cat /sys/devices/system/clocksource/clocksource0/current_clocksource
echo "idle:"; python3 run.py /sys/fs/bpf/micro 9
