#!/usr/bin/env bash
# Count, in one boot of the parallel rig, what EEVDF and each build make the guest execute and
# touch per unit of work (insncount.c; README.md here). Builds the plugin and the marker first.
#   run.sh [--kernel 7.3|6.12] [--rounds N] [--pages] [--prof] [--hackbench "G L [socket]"] [--out DIR]
#          NAME=BINARY[,OPTIONS]...   (e.g. nopreempt=target/release/scx_sis,--no-preempt)
# --prof: instructions by kernel function and BPF program too (profile.py; prof.txt in DIR).
# Needs QEMU 10 from scripts/setup.sh, a C compiler and libglib2.0-dev; fetches QEMU 10.0.2's
# source tarball once (for the plugin header) into the scx_sis cache.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../../.." && pwd)
die() { echo "run.sh: error: $*" >&2; exit 2; }
kernel=7.3 rounds=3 pages="" prof="" hb="" out=""
builds=()
while [ $# -gt 0 ]; do
  case "$1" in
    --kernel) kernel=${2:?}; shift 2 ;;
    --rounds) rounds=${2:?}; shift 2 ;;
    --pages) pages=1; shift ;;
    --prof) prof=1; shift ;;
    --hackbench) hb=${2:?}; shift 2 ;;
    --out) out=${2:?}; shift 2 ;;
    *=*) builds+=("$1"); shift ;;
    *) die "unknown argument '$1' (see the header of this script)" ;;
  esac
done
[ ${#builds[@]} -gt 0 ] || die "name at least one build, as NAME=PATH-TO-scx_sis"
case "$kernel" in 7.3|6.12) ;; *) die "--kernel must be 7.3 or 6.12" ;; esac
kimg=$("$repo/tests/vm/kernels.sh" "$kernel") || die "no $kernel kernel (tests/vm/kernels.sh)"
cache=${SCX_SIS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/scx_sis}
q=$cache/qemu10
[ -x "$q/usr/bin/qemu-system-x86_64" ] || die "no QEMU 10 in $q: run scripts/setup.sh"
pkg-config --exists glib-2.0 || die "glib's headers are missing: apt-get install libglib2.0-dev"
out=${out:-$repo/target/insncount-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out" "$cache/qemu10-src"
out=$(cd "$out" && pwd)
# the guest writes the symbols there, and only the repository's target/ is writable to it
case "$out/" in "$repo/target/"*) ;; *) [ -z "$pages$prof" ] ||
  die "--out must lie under $repo/target with --pages or --prof (the guest writes its symbols there)" ;; esac
hdr=$cache/qemu10-src/qemu-10.0.2/include/qemu/qemu-plugin.h
if [ ! -f "$hdr" ]; then
  curl -fsSL http://deb.debian.org/debian/pool/main/q/qemu/qemu_10.0.2+ds.orig.tar.xz |
    tar -xJ -C "$cache/qemu10-src" qemu-10.0.2/include/qemu/qemu-plugin.h
fi
cc -O2 -Wall -shared -fPIC $(pkg-config --cflags glib-2.0) -I"$(dirname "$hdr")" \
  "$here/insncount.c" -o "$out/insncount.so"
cc -O2 -static "$here/mark.c" -o "$out/mark"
guestb=()
for b in "${builds[@]}"; do
  n=${b%%=*} bin=${b#*=} args=
  case "$bin" in *,*) args=${bin#*,}; bin=${bin%%,*} ;; esac
  [ -x "$bin" ] || die "$bin is not an executable"
  if [ -n "$args" ]; then
    # the guest attaches what it is given: a script that runs the binary with the options
    cp "$bin" "$out/$n.bin"
    printf '#!/bin/sh\nexec %s %s "$@"\n' "$out/$n.bin" "${args//,/ }" > "$out/$n"
    chmod +x "$out/$n"
  else
    cp "$bin" "$out/$n"
  fi
  guestb+=("$n=$out/$n")
done
cat > "$out/qemu.sh" <<W
#!/bin/bash
export QEMU_MODULE_DIR=$q/usr/lib/x86_64-linux-gnu/qemu
exec $q/usr/bin/qemu-system-x86_64 -L $q/usr/share/qemu -L $q/usr/share/seabios \\
  -plugin $out/insncount.so,out=$out/plugin.txt${pages:+,pages=1}${prof:+,prof=1} "\$@"
W
chmod +x "$out/qemu.sh"
genv=(BUILDS="${guestb[*]}" ROUNDS="$rounds" MARK="$out/mark")
[ -n "$hb" ] && genv+=(HB="$hb")
[ -n "$pages$prof" ] && genv+=(KSYMS="$out/ksyms")
SCX_SIS_QEMU=$out/qemu.sh "$repo/tests/vm/vm.sh" --kernel "$kimg" --mttcg --sockets 1 --cores 1 \
  --threads 2 --timeout 3000 --boot-timeout 600 --log "$out/console.log" -- \
  env "${genv[@]}" "$here/insnab.sh" > "$out/guest.txt"
python3 "$here/insntable.py" "$out/plugin.txt" "$out/guest.txt" | tee "$out/table.txt"
if [ -n "$prof" ]; then
  python3 "$here/profile.py" "$out/plugin.txt" "$out/guest.txt" "$out/ksyms" > "$out/prof.txt"
  head -40 "$out/prof.txt"
fi
echo "run.sh: results in $out"
