#!/usr/bin/env bash
# nodeprobe setup: install dependencies (apt on Debian/Ubuntu, dnf on RHEL 8 /
# Rocky 8 / Alma 8 and newer), configure, build, then run `nodeprobe accept`.
# Idempotent: packages already present are not reinstalled, the build is
# incremental.
#
#   scripts/setup.sh              install, build, run nodeprobe accept
#   scripts/setup.sh --no-run     install and build only
#   scripts/setup.sh --deps-only  install dependencies only
#
# Options: --build-dir DIR (default build), --werror, --no-deps (skip
# installation), --cmake-arg ARG (repeatable), -h/--help.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir="$here/build"
run_accept=1
deps=1
build=1
werror=OFF
cmake_args=()

usage() { sed -n '2,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --no-run) run_accept=0 ;;
    --deps-only) build=0; run_accept=0 ;;
    --no-deps) deps=0 ;;
    --werror) werror=ON ;;
    --build-dir) build_dir=$(realpath -m "$2"); shift ;;
    --cmake-arg) cmake_args+=("$2"); shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "setup.sh: unknown option '$1' (see --help)" >&2; exit 64 ;;
  esac
  shift
done

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'setup.sh: %s\n' "$*" >&2; exit 2; }

SUDO=""
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO="sudo -n"; fi
fi

os_id=""; os_like=""; os_version=""
if [[ -r /etc/os-release ]]; then
  # shellcheck disable=SC1091
  . /etc/os-release
  os_id=${ID:-}; os_like=${ID_LIKE:-}; os_version=${VERSION_ID:-}
fi

# Required to build and test; then optional probes' libraries. An optional
# package that cannot be installed only disables its probe.
# RE2 and zlib are required by nodeprobe diag/collect (multi-pattern log
# scanning, gzip logs and .tar.gz bundles); without them diag degrades.
APT_REQUIRED=(build-essential g++ cmake ninja-build pkg-config git nlohmann-json3-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev iproute2 procps libre2-dev zlib1g-dev)
APT_OPTIONAL=(libopenmpi-dev openmpi-bin libfabric-dev libfabric-bin fio libpcre2-dev
  liburing-dev libvalijson-dev chromium iptables time)

DNF_REQUIRED=(gcc-toolset-12-gcc-c++ cmake pkgconf-pkg-config git iproute procps-ng zlib-devel)
# json/CLI11/gtest/benchmark from EPEL when there; CMake fetches pinned
# releases when they are missing or too old (RHEL 8's EPEL).
DNF_OPTIONAL=(ninja-build json-devel cli11-devel gtest-devel gmock-devel google-benchmark-devel
  re2-devel openmpi-devel libfabric-devel fio pcre2-devel liburing-devel
  chromium-headless iptables iproute-tc time)

install_apt() {
  local missing=() opt_missing=() p
  for p in "${APT_REQUIRED[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  for p in "${APT_OPTIONAL[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || opt_missing+=("$p"); done
  if [[ ${#missing[@]} -eq 0 && ${#opt_missing[@]} -eq 0 ]]; then
    log "all Debian packages present"; return
  fi
  if [[ $(id -u) -ne 0 && -z $SUDO ]]; then
    [[ ${#missing[@]} -eq 0 ]] || die "missing packages (${missing[*]}) and no root/sudo to install them"
    log "optional packages missing and no root: ${opt_missing[*]}"; return
  fi
  log "apt-get install ${missing[*]} ${opt_missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  if [[ ${#missing[@]} -gt 0 ]]; then
    $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
  for p in "${opt_missing[@]}"; do
    $SUDO apt-get install -y -qq --no-install-recommends "$p" >/dev/null 2>&1 \
      || log "optional package $p not available; its probe will be disabled"
  done
}

install_dnf() {
  local major=${os_version%%.*}
  if [[ $(id -u) -ne 0 && -z $SUDO ]]; then
    log "no root/sudo: assuming dependencies are installed"; return
  fi
  # EPEL carries json-devel, cli11-devel, google-benchmark-devel; PowerTools /
  # CRB carries the -devel packages EPEL builds on.
  if ! rpm -q epel-release >/dev/null 2>&1; then
    $SUDO dnf install -y -q epel-release >/dev/null 2>&1 \
      || $SUDO dnf install -y -q "https://dl.fedoraproject.org/pub/epel/epel-release-latest-${major}.noarch.rpm" >/dev/null 2>&1 \
      || log "could not enable EPEL"
  fi
  $SUDO dnf install -y -q dnf-plugins-core >/dev/null 2>&1 || true
  if [[ $major == 8 ]]; then
    $SUDO dnf config-manager --set-enabled powertools >/dev/null 2>&1 \
      || $SUDO subscription-manager repos --enable "codeready-builder-for-rhel-8-$(uname -m)-rpms" >/dev/null 2>&1 \
      || log "could not enable PowerTools/CodeReady Builder"
  else
    $SUDO dnf config-manager --set-enabled crb >/dev/null 2>&1 || true
  fi
  local missing=() p
  for p in "${DNF_REQUIRED[@]}"; do rpm -q "$p" >/dev/null 2>&1 || missing+=("$p"); done
  if [[ ${#missing[@]} -gt 0 ]]; then
    log "dnf install ${missing[*]}"
    $SUDO dnf install -y -q "${missing[@]}" >/dev/null || die "dnf could not install: ${missing[*]}"
  fi
  for p in "${DNF_OPTIONAL[@]}"; do
    rpm -q "$p" >/dev/null 2>&1 || $SUDO dnf install -y -q "$p" >/dev/null 2>&1 \
      || log "optional package $p not available; its probe will be disabled"
  done
}

enable_toolchains() {
  # RHEL 8's system GCC is 8: use gcc-toolset for C++17 with a modern libstdc++.
  for ts in 13 12 11; do
    if [[ -f /opt/rh/gcc-toolset-$ts/enable ]]; then
      set +u; . "/opt/rh/gcc-toolset-$ts/enable"; set -u; break
    fi
  done
  # Open MPI on RHEL lives under /usr/lib64/openmpi; the EFA installer's under /opt/amazon/openmpi.
  for d in /opt/amazon/openmpi/bin /usr/lib64/openmpi/bin; do
    [[ -x $d/mpicc ]] && export PATH="$d:$PATH" && break
  done
  if [[ -d /usr/local/cuda/bin ]]; then export PATH="$PATH:/usr/local/cuda/bin"; fi
}

if [[ $deps == 1 ]]; then
  case " $os_id $os_like " in
    *" debian "*|*" ubuntu "*) install_apt ;;
    *" rhel "*|*" centos "*|*" fedora "*|*" rocky "*|*" almalinux "*) install_dnf ;;
    *) log "unknown OS '$os_id': install the packages listed in scripts/setup.sh by hand" ;;
  esac
fi
enable_toolchains
[[ $build == 1 ]] || exit 0

# CMake >= 3.20 is required; RHEL 8.4 and older ship 3.18: take one from PyPI.
cmake_ok() {
  local v
  v=$(cmake --version 2>/dev/null | awk 'NR==1 {print $3}') || return 1
  [[ -n $v ]] && [[ $(printf '%s\n3.20\n' "$v" | sort -V | head -1) == 3.20 ]]
}
if ! cmake_ok; then
  log "cmake >= 3.20 not found; installing it from PyPI into $build_dir/.cmake-venv"
  python3 -m venv "$build_dir/.cmake-venv" && "$build_dir/.cmake-venv/bin/pip" install -q 'cmake>=3.20' \
    || die "need cmake >= 3.20 (dnf install cmake, or pip install cmake)"
  export PATH="$build_dir/.cmake-venv/bin:$PATH"
fi

generator=()
command -v ninja >/dev/null 2>&1 && [[ ! -f $build_dir/Makefile ]] && generator=(-G Ninja)
log "configure ($build_dir)"
cmake -S "$here" -B "$build_dir" "${generator[@]}" -DNODEPROBE_WERROR="$werror" "${cmake_args[@]}"
log "build"
cmake --build "$build_dir" --parallel "$(nproc)"

if [[ $run_accept == 1 ]]; then
  log "nodeprobe accept"
  set +e
  "$build_dir/bin/nodeprobe" accept --json "$build_dir/accept-report.json"
  rc=$?
  set -e
  log "report: $build_dir/accept-report.json (exit $rc)"
  exit "$rc"
fi
