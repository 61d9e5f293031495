#!/usr/bin/env bash
# fresh-root-check.sh: scripts/setup.sh on a freshly installed system. It
# debootstraps a minimal Debian or Ubuntu root into a directory, copies this
# checkout (working tree) into it and runs setup.sh there in a chroot (in a
# private mount namespace: nothing stays mounted). It checks what the plan
# tests cannot: that every package name exists in that release's archive,
# that the libraries it ships pass CMake's version checks, and that the
# project configures (with --build: builds and passes the unit tier).
#
#   scripts/fresh-root-check.sh ubuntu-22.04|ubuntu-24.04|debian-12 [--dir DIR] [--build] [--keep]
#
# Needs root and the distribution's archive (deb.debian.org,
# archive.ubuntu.com); installs debootstrap (and ubuntu-keyring) on this
# machine when missing. About 5 minutes per system for the configure check on
# 2 cores, much longer with --build: run by hand, not in CI. Exit 0 when
# setup.sh and the check succeeded inside the root. --keep leaves DIR (default:
# a fresh directory under /var/tmp) for inspection.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
usage() { sed -n '2,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
system=""; dir=""; build=0; keep=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --dir) dir=${2:?--dir needs a directory}; shift ;;
    --build) build=1 ;;
    --keep) keep=1 ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "fresh-root-check.sh: unknown option $1" >&2; exit 64 ;;
    *) system=$1 ;;
  esac
  shift
done
case "$system" in
  ubuntu-22.04) suite=jammy; mirror=http://archive.ubuntu.com/ubuntu; components=main,universe ;;
  ubuntu-24.04) suite=noble; mirror=http://archive.ubuntu.com/ubuntu; components=main,universe ;;
  debian-12) suite=bookworm; mirror=http://deb.debian.org/debian; components=main ;;
  *) usage >&2; exit 64 ;;
esac
[[ $(id -u) -eq 0 ]] || { echo "fresh-root-check.sh: needs root (debootstrap, chroot)" >&2; exit 77; }

if [[ -z ${NODEPROBE_FRESH_ROOT_INSIDE:-} ]]; then
  if ! command -v debootstrap >/dev/null 2>&1; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap >/dev/null
  fi
  if [[ $system == ubuntu-* && ! -f /usr/share/keyrings/ubuntu-archive-keyring.gpg ]]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends ubuntu-keyring >/dev/null || true
  fi
  [[ -n $dir ]] || dir=$(mktemp -d /var/tmp/nodeprobe-fresh-XXXXXX)
  export NODEPROBE_FRESH_ROOT_INSIDE=1
  rc=0
  inner=("$system" --dir "$dir")
  [[ $build == 1 ]] && inner+=(--build)
  unshare --mount --propagation private "${BASH_SOURCE[0]}" "${inner[@]}" || rc=$?
  if [[ $keep == 0 ]]; then rm -rf --one-file-system "$dir"; else echo "fresh-root-check.sh: root kept in $dir" >&2; fi
  exit "$rc"
fi

# ---- inside a private mount namespace ----------------------------------------------------------
log() { printf '==> [%s] %s\n' "$system" "$*" >&2; }
script=/usr/share/debootstrap/scripts/$suite
if [[ ! -e $script && $system == ubuntu-* ]]; then
  # An older debootstrap lacks the newest Ubuntu: every Ubuntu script is gutsy's.
  ln -s gutsy "$script"
fi
keyring=()
[[ $system == ubuntu-* && -f /usr/share/keyrings/ubuntu-archive-keyring.gpg ]] \
  && keyring=(--keyring=/usr/share/keyrings/ubuntu-archive-keyring.gpg)
[[ $system == ubuntu-* && ${#keyring[@]} -eq 0 ]] && keyring=(--no-check-gpg)
if [[ ! -x $dir/usr/bin/apt-get ]]; then
  log "debootstrap $suite from $mirror into $dir"
  t0=$(date +%s)
  debootstrap --variant=minbase --components="$components" "${keyring[@]}" "$suite" "$dir" "$mirror" >/dev/null
  log "debootstrap took $(( $(date +%s) - t0 )) s"
fi
echo "deb $mirror $suite ${components//,/ }" > "$dir/etc/apt/sources.list"
cp /etc/resolv.conf "$dir/etc/resolv.conf"
for m in proc sys dev dev/pts; do mkdir -p "$dir/$m"; done
mount -t proc proc "$dir/proc"
mount --rbind /sys "$dir/sys"
mount --rbind /dev "$dir/dev"
# This checkout's working tree, without build directories.
rm -rf "$dir/src/nodeprobe"; mkdir -p "$dir/src/nodeprobe"
git -C "$here" ls-files -co --exclude-standard -z | tar -C "$here" --null -T - -cf - | tar -C "$dir/src/nodeprobe" -xf -
log "os-release: $(. "$dir/etc/os-release" && echo "$PRETTY_NAME")"

t0=$(date +%s)
if [[ $build == 1 ]]; then
  chroot "$dir" /bin/bash -c 'cd /src/nodeprobe && scripts/setup.sh --no-run --build-dir /src/build \
    && . /src/build/nodeprobe-env.sh && ctest --test-dir /src/build -L unit -j "$(nproc)" --output-on-failure'
else
  # Packages from the plan, then configure: every library found and version-checked.
  chroot "$dir" /bin/bash -c 'cd /src/nodeprobe && scripts/setup.sh --deps-only \
    && cmake -S . -B /src/build -G Ninja -DNODEPROBE_FETCH_MISSING=OFF'
fi
log "setup.sh in the fresh root succeeded in $(( $(date +%s) - t0 )) s"
