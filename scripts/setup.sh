#!/usr/bin/env bash
# Install what building scx_sis and its VM tests need on Debian 12 (bookworm), idempotently:
# only what is missing is installed, quietly. Run as root (or with sudo available).
#   scripts/setup.sh
# - Debian packages: BPF toolchain (clang-19, llvm-19, libbpf-dev, bpftool, libelf-dev, ...),
#   the VM (qemu-system-x86, udev, busybox-static) and test workloads (stress-ng, rt-tests,
#   dbench, sysbench, linux-perf, tmux for the `top` test); netperf from bookworm non-free, through a
#   temporary sources list, lists directory and cache (apt -o options): the machine's apt sources stay as they are.
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

# netperf (bench suites netperf-udp/tcp) is only in Debian's non-free component. apt reads a
# temporary sources list (bookworm main for its dependencies + non-free) into its own lists
# directory, without the binary caches, so nothing of the machine's apt configuration or lists
# changes; only netperf itself is installed.
if ! command -v netperf >/dev/null 2>&1 || ! command -v netserver >/dev/null 2>&1; then
  say "installing netperf from Debian bookworm non-free (temporary sources list)"
  apt_tmp=$(mktemp -d)
  trap 'rm -rf "$apt_tmp"' EXIT
  mkdir -p "$apt_tmp/lists/partial"
  # apt downloads as the unprivileged _apt user
  chmod 755 "$apt_tmp"; chown _apt "$apt_tmp/lists/partial" 2>/dev/null || true
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main non-free" \
    > "$apt_tmp/sources.list"
  apt_opts=(-o "Dir::Etc::SourceList=$apt_tmp/sources.list" -o Dir::Etc::SourceParts=/dev/null
            -o "Dir::State::Lists=$apt_tmp/lists" -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache=)
  $SUDO apt-get "${apt_opts[@]}" update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get "${apt_opts[@]}" install -y -qq --no-install-recommends netperf >/dev/null
  rm -rf "$apt_tmp"; trap - EXIT
  # Debian's package starts a netserver daemon: the bench starts its own on another port
  command -v netserver >/dev/null 2>&1 || { echo "setup.sh: error: netperf installed but no netserver on PATH" >&2; exit 1; }
else
  say "netperf: present"
fi

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
