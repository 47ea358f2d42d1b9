#!/usr/bin/env bash
# Install what building scx_sis and its VM tests need on Debian 12 (bookworm), idempotently:
# only what is missing is installed, quietly. Run as root (or with sudo available).
#   scripts/setup.sh
# - Debian packages: BPF toolchain (clang-19, llvm-19, libbpf-dev, bpftool, libelf-dev, ...),
#   the VM (qemu-system-x86, udev, busybox-static) and test workloads (stress-ng, rt-tests,
#   dbench, sysbench, linux-perf, tmux for the `top` test); netperf from bookworm non-free, through a
#   temporary sources list, lists directory and cache (apt -o options): the machine's apt sources stay as they are.
# - QEMU 10 from bookworm-backports (the same way), unpacked into ~/.cache/scx_sis/qemu10 for the
#   parallel rig (multi-threaded TCG: tests/vm/vm.sh --mttcg).
# - virtme-ng 1.42 from PyPI (Debian's 1.35 cannot boot these VMs): provides `vng`.
# - Rust: cargo must already be there (Rust >= 1.91 via rustup); this script cannot install it.
# Kernels for the VM come from tests/vm/kernels.sh (shared/, cache, or a 20-40 min build).
set -euo pipefail
VIRTME_NG_VERSION=1.42
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
say() { echo "setup.sh: $*"; }

apt_pkgs=(clang-19 llvm-19 libelf-dev zlib1g-dev pkg-config libbpf-dev bpftool
          qemu-system-x86 udev busybox-static
          stress-ng rt-tests dbench sysbench linux-perf fonts-dejavu-core
          gcc make python3 util-linux procps tmux)
command -v pip3 >/dev/null 2>&1 || python3 -m pip --version >/dev/null 2>&1 || apt_pkgs+=(python3-pip)

missing=()
for p in "${apt_pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "installing Debian packages: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  say "Debian packages: all present"
fi

# apt_tmp SUITES COMPONENTS APT-ARGS...: run apt-get against a temporary sources list
# ("deb ... SUITES COMPONENTS"), its own lists directory and no binary caches, so nothing of the
# machine's apt configuration or lists changes: only what the command itself installs or downloads.
apt_tmp() {
  local suite=$1 comps=$2 tmp rc; shift 2
  tmp=$(mktemp -d)
  mkdir -p "$tmp/lists/partial"
  # apt downloads as the unprivileged _apt user
  chmod 755 "$tmp"; chown _apt "$tmp/lists/partial" 2>/dev/null || true
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $suite $comps" \
    > "$tmp/sources.list"
  local opts=(-o "Dir::Etc::SourceList=$tmp/sources.list" -o Dir::Etc::SourceParts=/dev/null
              -o "Dir::State::Lists=$tmp/lists" -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache=)
  $SUDO apt-get "${opts[@]}" update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get "${opts[@]}" "$@"
  rc=$?
  rm -rf "$tmp"
  return $rc
}

# netperf (bench suites netperf-udp/tcp) is only in Debian's non-free component (bookworm main
# for its dependencies).
if ! command -v netperf >/dev/null 2>&1 || ! command -v netserver >/dev/null 2>&1; then
  say "installing netperf from Debian bookworm non-free (temporary sources list)"
  apt_tmp bookworm "main non-free" install -y -qq --no-install-recommends netperf >/dev/null
  # Debian's package starts a netserver daemon: the bench starts its own on another port
  command -v netserver >/dev/null 2>&1 || { echo "setup.sh: error: netperf installed but no netserver on PATH" >&2; exit 1; }
else
  say "netperf: present"
fi

# QEMU 10 for the parallel rig (tests/vm/vm.sh --mttcg): bookworm's qemu 7.2 oopses guests under
# multi-threaded TCG at sched_ext attach/detach (kernel text patching), QEMU 10 from
# bookworm-backports has not in 32 cycles. It is unpacked into a cache directory, not installed:
# the machine's qemu (which the serial rig and everything else use) and its apt sources stay as
# they are, and QEMU 10's libraries are all bookworm's (installed with qemu-system-x86 above).
# Its firmware (seabios 1.16.3, also from backports) is unpacked beside it; vm.sh passes -L.
QEMU10_DIR=${SCX_SIS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/scx_sis}/qemu10
if ! "$QEMU10_DIR/usr/bin/qemu-system-x86_64" --version 2>/dev/null | grep -q 'version 1[0-9]\.'; then
  say "unpacking QEMU 10 from bookworm-backports into $QEMU10_DIR (temporary sources list)"
  dl=$(mktemp -d); chmod 755 "$dl"; chown _apt "$dl" 2>/dev/null || true
  (cd "$dl" && apt_tmp bookworm-backports main download -qq \
     qemu-system-x86 qemu-system-common qemu-system-data seabios >/dev/null) ||
    { rm -rf "$dl"; echo "setup.sh: error: could not download QEMU 10 from bookworm-backports" >&2; exit 1; }
  rm -rf "$QEMU10_DIR.new"; mkdir -p "$QEMU10_DIR.new"
  for deb in "$dl"/*.deb; do dpkg-deb -x "$deb" "$QEMU10_DIR.new"; done
  rm -rf "$dl" "$QEMU10_DIR"; mv "$QEMU10_DIR.new" "$QEMU10_DIR"
  missing_libs=$(ldd "$QEMU10_DIR/usr/bin/qemu-system-x86_64" | grep 'not found' || true)
  [ -z "$missing_libs" ] || { echo "setup.sh: error: QEMU 10 lacks libraries: $missing_libs" >&2; exit 1; }
fi
say "$("$QEMU10_DIR/usr/bin/qemu-system-x86_64" --version | head -n 1) in $QEMU10_DIR"

# virtme-ng from PyPI, pinned (Debian's 1.35 fails to boot these kernels)
have_vng=$(vng --version 2>/dev/null | awk '{ print $2 }' || true)
if [ "$have_vng" != "$VIRTME_NG_VERSION" ]; then
  say "installing virtme-ng==$VIRTME_NG_VERSION from PyPI (found: ${have_vng:-none})"
  pipflags=(-q --disable-pip-version-check)
  # Debian's system python refuses pip installs without this (PEP 668); pyenv/venv pythons accept it too
  python3 -m pip install "${pipflags[@]}" --break-system-packages "virtme-ng==$VIRTME_NG_VERSION" 2>/dev/null ||
    python3 -m pip install "${pipflags[@]}" "virtme-ng==$VIRTME_NG_VERSION"
  command -v pyenv >/dev/null 2>&1 && pyenv rehash 2>/dev/null || true
  hash -r
  if ! vng --version >/dev/null 2>&1; then
    say "warning: vng is not on PATH after installing virtme-ng (add python's bin directory, e.g. ~/.local/bin, to PATH)"
  fi
else
  say "virtme-ng $VIRTME_NG_VERSION: present"
fi

# Rust: cannot be installed from here
if ! command -v cargo >/dev/null 2>&1; then
  echo "setup.sh: error: cargo not found: scx_sis needs Rust >= 1.91 installed with rustup (https://rustup.rs)," >&2
  echo "setup.sh: error: then run this script again (Debian's rustc is too old)." >&2
  exit 1
fi
rv=$(rustc --version 2>/dev/null | awk '{ print $2 }')
if [ -n "$rv" ] && [ "$(printf '%s\n1.91.0\n' "$rv" | sort -V | head -n 1)" != 1.91.0 ]; then
  echo "setup.sh: error: rustc $rv is too old: scx_sis needs Rust >= 1.91 (rustup update)" >&2
  exit 1
fi
say "rust $rv: ok"
# scripts/test.sh checks formatting and lints
if ! cargo fmt --version >/dev/null 2>&1 || ! cargo clippy --version >/dev/null 2>&1; then
  if command -v rustup >/dev/null 2>&1; then
    rustup component add rustfmt clippy || exit 1
  else
    echo "setup.sh: error: cargo fmt / cargo clippy missing: add the rustfmt and clippy components" >&2
    exit 1
  fi
fi
say "done"
