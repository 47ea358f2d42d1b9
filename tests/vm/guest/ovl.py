#!/usr/bin/env python3
"""CPUs marked in scx_sis's overloaded map (bpf/overload.bpf.h: ovl_map), read with bpftool.
Prints them space-separated on one line (empty line: none), or 'error: ...' and exit 1.
The map holds, per LLC, ovl_lines words of OVL_BITS_PER_LINE bits, one bit per online CPU of
the LLC in ascending order (llc_pos); LLC ids follow their first online CPU (src/topology.rs)."""
import json, subprocess, sys

BITS_PER_LINE = 8  # bpf/intf.h OVL_BITS_PER_LINE


def cpulist(s):
    out = []
    for part in s.strip().split(","):
        if part:
            a, _, b = part.partition("-")
            out += range(int(a), int(b or a) + 1)
    return out


def main():
    maps = [m for m in json.loads(subprocess.check_output(["bpftool", "-j", "map", "show"]))
            if m.get("name") == "ovl_map"]
    if not maps:
        print("error: no ovl_map (scx_sis not loaded?)")
        return 1
    mid = max(m["id"] for m in maps)
    words = {}
    for e in json.loads(subprocess.check_output(["bpftool", "-j", "map", "dump", "id", str(mid)])):
        e = e.get("formatted", e)
        k, v = e["key"], e["value"]
        if isinstance(k, list):
            k = int.from_bytes(bytes(int(x, 16) for x in k[:4]), "little")
        if isinstance(v, dict):
            v = v["bits"]
        else:
            v = int.from_bytes(bytes(int(x, 16) for x in v[:8]), "little")
        words[k] = v
    online = cpulist(open("/sys/devices/system/cpu/online").read())
    llcs = {}
    for c in online:
        try:
            span = cpulist(open(f"/sys/devices/system/cpu/cpu{c}/cache/index3/shared_cpu_list").read())
        except OSError:
            span = online
        span = [x for x in span if x in online]
        llcs[span[0]] = span
    order = [llcs[f] for f in sorted(llcs)]
    lines = len(words) // len(order) if order else 1
    marked = []
    for llc, cpus in enumerate(order):
        for pos, c in enumerate(cpus):
            if words.get(llc * lines + pos // BITS_PER_LINE, 0) >> (pos % BITS_PER_LINE) & 1:
                marked.append(c)
    print(" ".join(map(str, marked)))
    return 0


sys.exit(main())
