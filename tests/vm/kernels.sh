#!/usr/bin/env bash
# Print the path of a sched_ext test kernel (bzImage) for a series.
#   tests/vm/kernels.sh 6.12|7.3
# Looks in order at: $SCX_SIS_KERNEL_DIR/bzImage-SERIES.*, <repo>/../shared/kernels/bzImage-SERIES.*,
# the cache ${SCX_SIS_CACHE:-~/.cache/scx_sis}/kernels/bzImage-SERIES.*; else builds one into the
# cache with tests/vm/kernel/build.sh (20-40 min on 2 cores; needs root for apt).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
series=${1:-}
case "$series" in
  6.12|7.3) ;;
  *) echo "usage: tests/vm/kernels.sh 6.12|7.3" >&2; exit 2 ;;
esac
cache=${SCX_SIS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/scx_sis}/kernels

pick() { # newest bzImage-SERIES.* in a dir
  local d=$1 f
  [ -d "$d" ] || return 1
  f=$(ls -1 "$d"/bzImage-"$series".* 2>/dev/null | sort -V | tail -n 1)
  [ -n "$f" ] && [ -f "$f" ] && { realpath "$f"; return 0; }
  return 1
}

for d in ${SCX_SIS_KERNEL_DIR:+"$SCX_SIS_KERNEL_DIR"} "$repo/../shared/kernels" "$cache"; do
  pick "$d" && exit 0
done
echo "kernels.sh: no $series kernel in ${SCX_SIS_KERNEL_DIR:+\$SCX_SIS_KERNEL_DIR, }$repo/../shared/kernels or $cache;" >&2
echo "kernels.sh: building one from Debian's linux-source-$series into $cache (takes 20-40 min)..." >&2
"$here/kernel/build.sh" "$series" "$cache" >&2
pick "$cache" || { echo "kernels.sh: the build left no bzImage-$series.* in $cache" >&2; exit 1; }
