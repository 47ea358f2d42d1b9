#!/usr/bin/env bash
# Build a sched_ext test kernel (bzImage) from Debian's linux-source-X.Y package.
#   tests/vm/kernel/build.sh 6.12|7.3 OUT_DIR        (as root: it uses apt)
# Prints OUT_DIR/bzImage-<kernelrelease> (also writes config-<kernelrelease> beside it).
# Takes 20-40 min on 2 cores and ~2 GB in $SCX_SIS_KBUILD (default ~/.cache/scx_sis/kbuild-SERIES).
#
# Where the source comes from (Debian only, never sid):
#   6.12: linux-source-6.12 from bookworm-backports (or the host's own trixie)
#   7.3:  linux-source-7.3 from trixie-backports
# If apt has no candidate for linux-source-SERIES, this adds that one suite to
# /etc/apt/sources.list.d/scx-sis-kernel-src.sources, pinned to -1 for every package but
# linux-source-* (priority 1), so nothing else on the host is ever installed or upgraded from it,
# and only `apt-get download`s the package (no install).
# SCX_SIS_KBUILD_FETCH_ONLY=1 stops after fetching and unpacking the source.
# Config: make defconfig + make kvm_guest.config + sched_ext-vm.config (beside this script)
# + make olddefconfig: everything the virtme-ng VM needs is built in, no modules.
set -euo pipefail
series=${1:-}; outarg=${2:-}
case "$series" in
  6.12) suite=bookworm-backports ;;
  7.3) suite=trixie-backports ;;
  *) echo "usage: tests/vm/kernel/build.sh 6.12|7.3 OUT_DIR" >&2; exit 2 ;;
esac
[ -n "$outarg" ] || { echo "usage: tests/vm/kernel/build.sh 6.12|7.3 OUT_DIR" >&2; exit 2; }
out=$(realpath -m "$outarg")
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
fragment="$here/sched_ext-vm.config"
work=${SCX_SIS_KBUILD:-${XDG_CACHE_HOME:-$HOME/.cache}/scx_sis/kbuild-$series}
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
say() { echo "kernel/build.sh: $*" >&2; }

# ---- build tools -----------------------------------------------------------------------------
need=()
for p in bc bison flex libelf-dev libssl-dev dwarves gcc make xz-utils cpio python3 perl; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  say "installing build tools: ${need[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# ---- linux-source-SERIES -----------------------------------------------------------------------
has_candidate() {
  local c
  c=$(apt-cache policy "linux-source-$series" 2>/dev/null | awk '/Candidate:/ { print $2 }')
  [ -n "$c" ] && [ "$c" != "(none)" ]
}
add_suite() {
  local list=/etc/apt/sources.list.d/scx-sis-kernel-src.sources
  local pref=/etc/apt/preferences.d/scx-sis-kernel-src
  local keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  if ! grep -qs "Suites: $suite\$" "$list"; then
    say "adding Debian $suite to $list (only linux-source-* may come from it)"
    printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: %s\nComponents: main\nSigned-By: %s\n\n' \
      "$suite" "$keyring" | $SUDO tee -a "$list" >/dev/null
  fi
  if ! grep -qs "release n=$suite\$" "$pref"; then
    printf 'Package: linux-source-*\nPin: release n=%s\nPin-Priority: 1\n\nPackage: *\nPin: release n=%s\nPin-Priority: -1\n\n' \
      "$suite" "$suite" | $SUDO tee -a "$pref" >/dev/null
  fi
  $SUDO apt-get update -qq
}

mkdir -p "$work" "$out"
cd "$work"
if [ ! -f src/Makefile ]; then
  rm -rf src pkg ./*.deb
  if ! has_candidate; then
    $SUDO apt-get update -qq || true
    has_candidate || add_suite
    has_candidate || { say "no linux-source-$series in Debian $suite"; exit 1; }
  fi
  say "downloading linux-source-$series ($(apt-cache policy "linux-source-$series" | awk '/Candidate:/ { print $2 }'))"
  apt-get download "linux-source-$series" >/dev/null
  dpkg-deb -x linux-source-"$series"_*.deb pkg
  mkdir src
  tar -xf pkg/usr/src/linux-source-"$series".tar.xz -C src --strip-components=1
  rm -rf pkg ./*.deb
fi

if [ "${SCX_SIS_KBUILD_FETCH_ONLY:-0}" = 1 ]; then say "source ready in $work/src (SCX_SIS_KBUILD_FETCH_ONLY=1: not building)"; exit 0; fi

# ---- configure and build -----------------------------------------------------------------------
cd src
say "configuring in $work/src"
make defconfig >/dev/null
make kvm_guest.config >/dev/null
./scripts/kconfig/merge_config.sh -m .config "$fragment" >/dev/null
make olddefconfig >/dev/null
for opt in CONFIG_SCHED_CLASS_EXT CONFIG_DEBUG_INFO_BTF CONFIG_9P_FS CONFIG_NET_9P_VIRTIO CONFIG_OVERLAY_FS; do
  grep -q "^$opt=y" .config || { say "$opt is not =y after olddefconfig (pahole/dwarves too old?)"; exit 1; }
done
say "building bzImage with $(nproc) jobs (20-40 min on 2 cores)"
make -j"$(nproc)" bzImage >build.log 2>&1 || { tail -n 40 build.log >&2; say "build failed: $work/src/build.log"; exit 1; }
rel=$(make -s kernelrelease)
cp arch/x86/boot/bzImage "$out/bzImage-$rel.tmp" && mv "$out/bzImage-$rel.tmp" "$out/bzImage-$rel"
cp .config "$out/config-$rel"
echo "$out/bzImage-$rel"
