#!/usr/bin/env python3
# run each pinned SEC("syscall") program under a dir with BPF_PROG_TEST_RUN; it returns ns per op
import ctypes, os, sys, struct
libc = ctypes.CDLL(None, use_errno=True)
NR_BPF = 321
def bpf(cmd, attr):
    buf = ctypes.create_string_buffer(attr, 128)
    r = libc.syscall(NR_BPF, cmd, buf, 128)
    if r < 0: raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    return r, buf.raw
d = sys.argv[1]; reps = int(sys.argv[2]) if len(sys.argv) > 2 else 5
for name in sorted(os.listdir(d)):
    path = ctypes.create_string_buffer(os.path.join(d, name).encode())
    fd, _ = bpf(7, struct.pack("QII", ctypes.addressof(path), 0, 0))   # BPF_OBJ_GET
    vals = []
    for _ in range(reps):
        attr = struct.pack("IIIIQQIIIIQQIIII", fd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        _, out = bpf(10, attr)   # BPF_PROG_TEST_RUN: retval at offset 4
        vals.append(struct.unpack_from("I", out, 4)[0])
    vals.sort()
    print(f"{name:10s} ns/op median {vals[len(vals)//2]/10:8.1f}  min {vals[0]/10:8.1f}")
