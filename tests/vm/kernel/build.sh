#!/usr/bin/env bash
# Build a sched_ext test kernel (bzImage) from Debian's linux-source-X.Y package.
#   tests/vm/kernel/build.sh 6.12|7.3 OUT_DIR        (as root: it uses apt)
# Prints OUT_DIR/bzImage-<kernelrelease> (also writes config-<kernelrelease> beside it).
# Takes 20-40 min on 2 cores and ~2 GB in $SCX_SIS_KBUILD (default ~/.cache/scx_sis/kbuild-SERIES).
#
# Where the source comes from (Debian only, never sid):
#   6.12: linux-source-6.12 from bookworm-backports (or the host's own trixie)
#   7.3:  linux-source-7.3 from trixie-backports
# If apt has no candidate for linux-source-SERIES, this `apt-get download`s it (no install) through
# a temporary sources list naming that one suite, with its own lists directory: the machine's apt
# sources, lists and pins stay as they are.
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
# download_from_suite: apt-get download linux-source-SERIES from $suite alone, through a temporary
# sources list and lists directory (setup.sh's apt_tmp does the same for netperf and QEMU).
download_from_suite() {
  local tmp rc=0 opts
  tmp=$(mktemp -d)
  mkdir -p "$tmp/lists/partial"
  # apt downloads as the unprivileged _apt user
  chmod 755 "$tmp"; $SUDO chown _apt "$tmp/lists/partial" 2>/dev/null || true
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $suite main" \
    > "$tmp/sources.list"
  opts=(-o "Dir::Etc::SourceList=$tmp/sources.list" -o Dir::Etc::SourceParts=/dev/null
        -o "Dir::State::Lists=$tmp/lists" -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache=)
  say "downloading linux-source-$series from Debian $suite (temporary sources list)"
  $SUDO apt-get "${opts[@]}" update -qq && $SUDO apt-get "${opts[@]}" download -qq "linux-source-$series" >/dev/null || rc=$?
  $SUDO rm -rf "$tmp"
  return $rc
}

mkdir -p "$work" "$out"
cd "$work"
if [ ! -f src/Makefile ]; then
  rm -rf src pkg ./*.deb
  if has_candidate; then
    say "downloading linux-source-$series ($(apt-cache policy "linux-source-$series" | awk '/Candidate:/ { print $2 }'))"
    apt-get download "linux-source-$series" >/dev/null
  else
    download_from_suite || { say "no linux-source-$series in Debian $suite"; exit 1; }
  fi
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
