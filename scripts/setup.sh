#!/usr/bin/env bash
# nodeprobe setup: install the dependencies, configure, build, then run
# `nodeprobe accept` and say what it found. Idempotent: packages already there
# are not reinstalled, the build is incremental.
#
#   scripts/setup.sh              install, build, run nodeprobe accept (exit 0 when install and build succeed)
#   scripts/setup.sh --strict     the same, but exit with accept's code (1 fail, 2 error, 124 timeout)
#   scripts/setup.sh --no-run     install and build only
#   scripts/setup.sh --deps-only  install the dependencies only
#   scripts/setup.sh --dry-run    print every command it would run (repositories, packages, compiler,
#                                 cmake) and change nothing
#
# Options: --build-dir DIR (default build), --werror, --no-deps (install
# nothing), --no-build (use the build in --build-dir as it is), --cmake-arg ARG
# and --accept-arg ARG (repeatable: passed to cmake / nodeprobe accept),
# --report FILE (accept's report; default BUILD/accept-report.json), --deps DIR (offline: the pinned
# library sources and the cmake wheel from `scripts/fetch-deps.sh DIR`; setup
# downloads nothing itself, packages come from the repositories the node has),
# --test-deps (also what only the tests use: Slurm and MUNGE for the
# srun/HealthCheckProgram tests; scripts/test.sh passes it, a node being
# accepted never gets Slurm daemons from setup.sh),
# --os-release FILE (describe the system with FILE instead of /etc/os-release;
# also $NODEPROBE_OS_RELEASE), --repolist FILE (the repositories the node
# offers, as `dnf repolist --all` prints them), --cuda VERSION|none (the CUDA
# release the host compiler must suit; default: what nvcc says), -h/--help.
# Systems: RHEL 8/9 (AWS RHUI or subscription), Rocky/Alma 8/9, Amazon Linux
# 2023 and 2, Ubuntu 22.04/24.04, Debian 12 (README: "Supported systems").
set -euo pipefail
# Bash 4.2 (Amazon Linux 2) calls an empty "${a[@]}" unbound under set -u:
# arrays that may be empty are written ${a[@]+"${a[@]}"}.

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir="$here/build"
run_accept=1
install_deps=1
build=1
strict=0
dry_run=0
werror=OFF
test_deps=0
deps_dir=""
cmake_args=()
accept_args=()
report=""
os_release=${NODEPROBE_OS_RELEASE:-/etc/os-release}
repolist_file=""
cuda_version=""

usage() { sed -n '2,27p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
need_value() { [[ $# -ge 2 && -n $2 ]] || { echo "setup.sh: $1 needs a value (see --help)" >&2; exit 64; }; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --no-run) run_accept=0 ;;
    --deps-only) build=0; run_accept=0 ;;
    --no-deps) install_deps=0 ;;
    --strict) strict=1 ;;
    --dry-run) dry_run=1 ;;
    --werror) werror=ON ;;
    --test-deps) test_deps=1 ;;
    --build-dir) need_value "$@"; build_dir=$(realpath -m "$2"); shift ;;
    --no-build) build=0 ;;
    --cmake-arg) need_value "$@"; cmake_args+=("$2"); shift ;;
    --accept-arg) need_value "$@"; accept_args+=("$2"); shift ;;
    --report) need_value "$@"; report=$(realpath -m "$2"); shift ;;
    --deps) need_value "$@"; deps_dir=$(realpath -m "$2"); shift ;;
    --os-release) need_value "$@"; os_release=$2; shift ;;
    --repolist) need_value "$@"; repolist_file=$2; shift ;;
    --cuda) need_value "$@"; cuda_version=$2; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "setup.sh: unknown option '$1' (see --help)" >&2; exit 64 ;;
  esac
  shift
done

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'setup.sh: %s\n' "$*" >&2; exit 2; }
[[ -z $deps_dir || -d $deps_dir || $dry_run == 1 ]] \
  || die "--deps $deps_dir is not a directory (scripts/fetch-deps.sh DIR fills one)"
[[ -r $os_release ]] || [[ $os_release == /etc/os-release ]] \
  || die "--os-release $os_release cannot be read"
[[ -z $repolist_file || -r $repolist_file ]] || die "--repolist $repolist_file cannot be read"
[[ -z $cuda_version || $cuda_version == none || $cuda_version =~ ^[0-9]+\.[0-9]+ ]] \
  || { echo "setup.sh: --cuda takes a version like 12.4, or none" >&2; exit 64; }

# ---- the system ---------------------------------------------------------------------------
# /etc/os-release is read, never sourced: the file may come from elsewhere.
os_id=""; os_like=""; os_version=""; os_pretty=""
if [[ -r $os_release ]]; then
  while IFS='=' read -r key value; do
    value=${value%\"}; value=${value#\"}; value=${value%\'}; value=${value#\'}
    case "$key" in
      ID) os_id=$value ;;
      ID_LIKE) os_like=$value ;;
      VERSION_ID) os_version=$value ;;
      PRETTY_NAME) os_pretty=$value ;;
    esac
  done < "$os_release"
fi
major=${os_version%%.*}
arch=$(uname -m)

# family: el (RHEL and its rebuilds), al2023, al2, deb, unknown
family=unknown
case "$os_id" in
  rhel|rocky|almalinux|centos|ol) family=el ;;
  amzn) case "$os_version" in 2023*) family=al2023 ;; 2) family=al2 ;; esac ;;
  debian|ubuntu) family=deb ;;
  *)
    case " $os_like " in
      *" debian "*|*" ubuntu "*) family=deb ;;
      *" rhel "*|*" centos "*) family=el ;;
      *" fedora "*) family=al2023 ;;  # dnf, system GCC, no EPEL
    esac ;;
esac
supported=no
case "$family:$os_id:$major" in
  el:rhel:8|el:rhel:9|el:rocky:8|el:rocky:9|el:almalinux:8|el:almalinux:9|al2023:amzn:*|al2:amzn:*) supported=yes ;;
  deb:ubuntu:*) [[ $os_version == 22.04 || $os_version == 24.04 ]] && supported=yes ;;
  deb:debian:12) supported=yes ;;
esac

# ---- CUDA and the host compiler it accepts ------------------------------------------------
detect_cuda() {
  local nvcc v
  for nvcc in "$(command -v nvcc 2>/dev/null || true)" /usr/local/cuda/bin/nvcc; do
    [[ -n $nvcc && -x $nvcc ]] || continue
    v=$("$nvcc" --version 2>/dev/null | sed -n 's/.*release \([0-9][0-9]*\.[0-9][0-9]*\).*/\1/p' | head -1)
    [[ -n $v ]] && { echo "$v"; return; }
  done
  if [[ -r /usr/local/cuda/version.json ]]; then
    v=$(sed -n 's/.*"cuda".*"version" *: *"\([0-9][0-9]*\.[0-9][0-9]*\).*/\1/p' /usr/local/cuda/version.json | head -1)
    [[ -z $v ]] && v=$(tr -d '\n' < /usr/local/cuda/version.json \
      | sed -n 's/.*"cuda" *: *{[^}]*"version" *: *"\([0-9][0-9]*\.[0-9][0-9]*\).*/\1/p')
    [[ -n $v ]] && { echo "$v"; return; }
  fi
  echo none
}
[[ -n $cuda_version ]] || cuda_version=$(detect_cuda)

# The newest GCC major that nvcc of CUDA X.Y accepts as host compiler
# (crt/host_config.h of each release): older CUDA rejects newer GCC.
cuda_max_gcc() {
  local v=$1 maj min
  maj=${v%%.*}; min=${v#*.}; min=${min%%.*}
  if (( maj < 11 )); then echo 8
  elif (( maj == 11 )); then
    if (( min == 0 )); then echo 9; elif (( min <= 3 )); then echo 10; else echo 11; fi
  elif (( maj == 12 )); then
    if (( min <= 3 )); then echo 12; elif (( min <= 7 )); then echo 13; else echo 14; fi
  else echo 15
  fi
}
max_gcc=99
[[ $cuda_version != none ]] && max_gcc=$(cuda_max_gcc "$cuda_version")

# ---- the plan -------------------------------------------------------------------------------
# Every command below goes through step(): printed by --dry-run, else run.
pm=""                 # apt | dnf | yum
crb_cmd=()            # command that enables the developer repository
crb_note=""
epel_cmd=()
toolsets=()           # gcc-toolset majors to try, best first (EL)
required=()           # setup fails without these
optional=()           # a missing one only disables what needs it
cc=""; cxx=""         # chosen compiler ("" = the system's default)
compiler_note=""
mpi_homes=()          # where the OS's MPI lives when it is not on PATH
cmake_from_pypi=0     # the OS has no CMake >= 3.20 at all

# Repositories the node offers: `dnf repolist --all` output (first column).
repo_ids() {
  if [[ -n $repolist_file ]]; then
    awk 'NR > 0 && $1 != "repo" {print $1}' "$repolist_file"
  elif [[ $dry_run == 0 ]] && command -v dnf >/dev/null 2>&1; then
    dnf -q repolist --all 2>/dev/null | awk '$1 != "repo" {print $1}' || true
  elif [[ -n $(compgen -G '/etc/yum.repos.d/*.repo' || true) ]]; then
    sed -n 's/^\[\(.*\)\]$/\1/p' /etc/yum.repos.d/*.repo 2>/dev/null || true
  fi
}

plan_el() {
  pm=dnf
  local ids repo=""
  ids=$(repo_ids)
  has_repo() { grep -qx -- "$1" <<< "$ids"; }
  if [[ $os_id == rhel ]]; then
    # AWS RHEL: RHUI (subscription-manager does not work there), repo id
    # codeready-builder-for-rhel-N-rhui-rpms; Azure: ...-N-ARCH-rhui-rpms.
    local id
    for id in "codeready-builder-for-rhel-$major-rhui-rpms" "codeready-builder-for-rhel-$major-$arch-rhui-rpms"; do
      has_repo "$id" && { repo=$id; break; }
    done
    if [[ -z $repo ]]; then
      repo=$(grep -E "^codeready-builder-for-rhel-$major-.*rhui-rpms$" <<< "$ids" | grep -Ev 'debug|source' | head -1 || true)
    fi
    if [[ -n $repo ]]; then
      crb_cmd=(dnf config-manager --set-enabled "$repo"); crb_note="CodeReady Builder via RHUI ($repo)"
    else
      repo="codeready-builder-for-rhel-$major-$arch-rpms"
      crb_cmd=(subscription-manager repos --enable "$repo"); crb_note="CodeReady Builder via subscription-manager ($repo)"
    fi
    epel_cmd=(dnf install -y "https://dl.fedoraproject.org/pub/epel/epel-release-latest-$major.noarch.rpm")
  else
    case "$os_id:$major" in
      ol:*) repo="ol${major}_codeready_builder" ;;
      *:8) repo=powertools; has_repo PowerTools && repo=PowerTools ;;  # Rocky/Alma 8.0-8.2 spelled it PowerTools
      *) repo=crb ;;
    esac
    crb_cmd=(dnf config-manager --set-enabled "$repo"); crb_note="developer repository $repo"
    epel_cmd=(dnf install -y epel-release)
  fi
  # RHEL 8's GCC is 8.5: a gcc-toolset, the newest the CUDA found accepts
  # (without CUDA: 13, which CUDA >= 12.4 accepts).
  local n cap=$max_gcc
  [[ $cuda_version == none ]] && cap=13
  for n in 14 13 12 11; do (( n <= cap )) && toolsets+=("$n"); done
  [[ ${#toolsets[@]} -gt 0 ]] || die "CUDA $cuda_version needs GCC <= $max_gcc; no gcc-toolset is that old (use CUDA >= 11.4)"
  cc=/opt/rh/gcc-toolset-${toolsets[0]}/root/usr/bin/gcc
  cxx=/opt/rh/gcc-toolset-${toolsets[0]}/root/usr/bin/g++
  compiler_note="gcc-toolset-${toolsets[0]}"
  [[ $cuda_version != none ]] && compiler_note+=" (CUDA $cuda_version accepts GCC <= $max_gcc)"
  required=(make cmake git pkgconf-pkg-config zlib-devel iproute procps-ng python3 tar gzip)
  # RHEL 8's CRB/EPEL GoogleTest (1.8), nlohmann-json (3.6) and CLI11 are too
  # old: the pinned releases are built instead, so they are not installed.
  optional=(ninja-build google-benchmark-devel re2-devel openmpi-devel libfabric-devel fio pcre2-devel
    liburing-devel chromium-headless iptables iproute-tc time rpm-build)
  [[ $major != 8 ]] && optional+=(json-devel cli11-devel gtest-devel gmock-devel)
  mpi_homes=(/opt/amazon/openmpi /usr/lib64/openmpi)
}

plan_al2023() {
  # Amazon Linux 2023 (Fedora-based; the OS of current AWS Deep Learning AMIs):
  # no EPEL, no gcc-toolset; its GCC 11 suits every CUDA >= 11.4.
  pm=dnf
  required=(gcc-c++ make cmake git pkgconf-pkg-config zlib-devel iproute procps-ng python3 tar gzip)
  optional=(ninja-build json-devel gtest-devel gmock-devel google-benchmark-devel cli11-devel re2-devel
    openmpi-devel libfabric-devel fio pcre2-devel liburing-devel iptables-nft iproute-tc time rpm-build)
  compiler_note="the system GCC 11"
  (( max_gcc < 11 )) && compiler_note+=" (CUDA $cuda_version accepts GCC <= $max_gcc: nodeprobe's own kernels are left out)"
  mpi_homes=(/opt/amazon/openmpi /usr/lib64/openmpi)
}

plan_al2() {
  # Amazon Linux 2: yum, GCC 7 by default (too old for C++17's
  # <filesystem>): its gcc10 packages; CMake 3.13 (cmake3): CMake from PyPI.
  pm=yum
  required=(gcc10-c++ make git pkgconfig zlib-devel iproute procps-ng python3 tar gzip)
  optional=(ninja-build re2-devel openmpi-devel libfabric-devel fio pcre2-devel iptables time)
  cc=/usr/bin/gcc10-gcc; cxx=/usr/bin/gcc10-g++
  cmake_from_pypi=1
  compiler_note="gcc10 (Amazon Linux 2's gcc10 packages)"
  (( max_gcc < 10 )) && die "CUDA $cuda_version needs GCC <= $max_gcc; Amazon Linux 2 has GCC 7 (too old) and 10 (use CUDA >= 11.1)"
  mpi_homes=(/opt/amazon/openmpi /usr/lib64/openmpi)
}

plan_deb() {
  pm=apt
  required=(build-essential g++ make cmake ninja-build pkg-config git nlohmann-json3-dev libcli11-dev
    libgtest-dev libgmock-dev libbenchmark-dev iproute2 procps libre2-dev zlib1g-dev)
  # rpm: rpmbuild, for scripts/package.sh's RPM next to the DEB.
  optional=(libopenmpi-dev openmpi-bin libfabric-dev libfabric-bin fio libpcre2-dev liburing-dev iptables time rpm)
  # Ubuntu 22.04 has no valijson (the schema tests skip); Ubuntu's chromium is
  # a snap wrapper that does not run in containers.
  [[ $os_id:$os_version == ubuntu:22.04 ]] || optional+=(libvalijson-dev)
  [[ $os_id == ubuntu ]] || optional+=(chromium)
  local system_gcc=""
  case "$os_id:$os_version" in
    ubuntu:22.04) system_gcc=11 ;;
    ubuntu:24.04) system_gcc=13 ;;
    debian:12) system_gcc=12 ;;
    debian:13) system_gcc=14 ;;
  esac
  compiler_note="the system GCC${system_gcc:+ $system_gcc}"
  if [[ -n $system_gcc ]] && (( system_gcc > max_gcc )); then
    required+=("g++-$max_gcc")
    cc=/usr/bin/gcc-$max_gcc; cxx=/usr/bin/g++-$max_gcc
    compiler_note="GCC $max_gcc (CUDA $cuda_version accepts GCC <= $max_gcc; the system's is $system_gcc)"
  fi
}

case "$family" in
  el) plan_el ;;
  al2023) plan_al2023 ;;
  al2) plan_al2 ;;
  deb) plan_deb ;;
esac
# Test-only packages: a real Slurm for tests/fleet's srun and HealthCheckProgram
# tests (EPEL has slurm on EL; Amazon Linux has none: those tests skip there).
if [[ $test_deps == 1 ]]; then
  case "$family" in
    deb) optional+=(slurmctld slurmd slurm-client munge) ;;
    el) optional+=(slurm slurm-slurmctld slurm-slurmd munge) ;;
  esac
fi

# ---- running the plan ------------------------------------------------------------------------
SUDO=()
if [[ $(id -u) -ne 0 ]] && command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO=(sudo -n); fi
can_install() { [[ $dry_run == 1 || $(id -u) -eq 0 || ${#SUDO[@]} -gt 0 ]]; }

# step must|try CMD...: --dry-run prints "must: CMD" / "try: CMD"; else runs
# CMD as root. A failed `must` stops setup, a failed `try` is reported.
step() {
  local kind=$1; shift
  if [[ $dry_run == 1 ]]; then printf '%s: %s\n' "$kind" "$*"; return 0; fi
  log "$*"
  if ${SUDO[@]+"${SUDO[@]}"} "$@"; then return 0; fi
  [[ $kind == must ]] && die "failed: $*"
  log "could not: $* (continuing)"
  return 1
}

installed() {  # PACKAGE: already installed?
  case "$pm" in
    apt) [[ $(dpkg-query -W -f='${Status}' "$1" 2>/dev/null) == "install ok installed" ]] ;;
    *) rpm -q "$1" >/dev/null 2>&1 ;;
  esac
}
is_missing() { [[ $dry_run == 1 ]] || ! installed "$1"; }  # a dry run assumes nothing is installed
missing_of() {  # PACKAGE...: those not installed
  local p
  for p in "$@"; do
    if is_missing "$p"; then echo "$p"; fi
  done
}

install_apt() {
  local req opt p
  mapfile -t req < <(missing_of "${required[@]}")
  mapfile -t opt < <(missing_of "${optional[@]}")
  if [[ ${#req[@]} -eq 0 && ${#opt[@]} -eq 0 ]]; then log "all packages present"; return; fi
  if ! can_install; then
    [[ ${#req[@]} -eq 0 ]] || die "missing packages (${req[*]}) and no root or sudo to install them"
    log "optional packages missing and no root or sudo: ${opt[*]}"; return
  fi
  export DEBIAN_FRONTEND=noninteractive
  step must apt-get update -q
  [[ ${#req[@]} -eq 0 ]] || step must apt-get install -y -q --no-install-recommends "${req[@]}"
  if [[ ${#opt[@]} -gt 0 ]] && ! step try apt-get install -y -q --no-install-recommends "${opt[@]}"; then
    # One missing name fails apt-get as a whole: then one by one.
    for p in "${opt[@]}"; do
      step try apt-get install -y -q --no-install-recommends "$p" \
        || log "optional package $p is not available: what needs it is disabled"
    done
  fi
}

install_rpm() {
  local req opt ts
  if ! can_install; then
    mapfile -t req < <(missing_of "${required[@]}")
    [[ ${#req[@]} -eq 0 ]] || die "missing packages (${req[*]}) and no root or sudo to install them"
    log "no root or sudo: optional packages are not installed"; return
  fi
  if [[ $family == el ]]; then
    if is_missing dnf-plugins-core; then step must dnf install -y dnf-plugins-core; fi
    if [[ $dry_run == 1 ]]; then echo "note: $crb_note"; fi
    local crb_ok=1
    step try "${crb_cmd[@]}" || crb_ok=0
    if [[ -n $deps_dir ]]; then
      log "offline (--deps): EPEL is not added; the pinned libraries come from $deps_dir"
      [[ $dry_run == 1 ]] && echo "note: offline: EPEL not added"
    elif is_missing epel-release; then
      step try "${epel_cmd[@]}" || log "could not add EPEL: Google Benchmark and RE2 come from their pinned sources or stay missing"
    fi
    # epel-release's own helper knows the developer repository of more
    # rebuilds and cloud images: the second try.
    [[ $dry_run == 1 ]] && echo "note: when enabling ${crb_cmd[${#crb_cmd[@]}-1]} fails: crb enable (epel-release's helper)"
    if [[ $crb_ok == 0 && $dry_run == 0 ]] && ! { command -v crb >/dev/null 2>&1 && step try crb enable; }; then
      log "could not enable $crb_note: ninja-build, libfabric-devel and others stay missing"
    fi
    # The toolset: the best one the repositories have.
    local done_ts=""
    for ts in "${toolsets[@]}"; do
      if [[ $dry_run == 0 ]] && installed "gcc-toolset-$ts-gcc-c++"; then done_ts=$ts; break; fi
      if [[ $dry_run == 1 ]]; then
        step must dnf install -y "gcc-toolset-$ts-gcc-c++"
        [[ ${#toolsets[@]} -gt 1 ]] && echo "note: else gcc-toolset-${toolsets[*]:1} (the first the repositories have)"
        done_ts=$ts; break
      fi
      if step try dnf install -y "gcc-toolset-$ts-gcc-c++"; then done_ts=$ts; break; fi
    done
    [[ -n $done_ts ]] || die "none of gcc-toolset-${toolsets[*]} could be installed (RHEL 8.5 or newer has gcc-toolset-11)"
    cc=/opt/rh/gcc-toolset-$done_ts/root/usr/bin/gcc; cxx=/opt/rh/gcc-toolset-$done_ts/root/usr/bin/g++
    compiler_note=${compiler_note/gcc-toolset-${toolsets[0]}/gcc-toolset-$done_ts}
  fi
  mapfile -t req < <(missing_of "${required[@]}")
  mapfile -t opt < <(missing_of "${optional[@]}")
  [[ ${#req[@]} -eq 0 ]] || step must "$pm" install -y "${req[@]}"
  # --skip-broken: names a repository lacks are skipped, the rest installed.
  [[ ${#opt[@]} -eq 0 ]] || step try "$pm" install -y --skip-broken "${opt[@]}" \
    || log "some optional packages could not be installed: what needs them is disabled"
}

firewalld_note() {
  if [[ $dry_run == 1 ]]; then
    [[ $family == el || $family == al2023 || $family == al2 ]] \
      && echo "note: when firewalld runs, multi-node mpirun needs its ports open (README); scripts/netns-cluster.sh trusts its own bridges"
    return 0
  fi
  if command -v firewall-cmd >/dev/null 2>&1 && firewall-cmd --state >/dev/null 2>&1; then
    log "firewalld is running: Open MPI across nodes needs its TCP ports open between them" \
        "(e.g. firewall-cmd --zone=trusted --add-source=<cluster subnet>); the local tests are not affected"
  fi
}

# ---- 1. dependencies -------------------------------------------------------------------------
if [[ $dry_run == 1 ]]; then
  echo "system: ${os_pretty:-unknown} (id ${os_id:-?}, version ${os_version:-?}, family $family, supported: $supported)"
  echo "cuda: $cuda_version"
  [[ -n $compiler_note ]] && echo "compiler: $compiler_note"
fi
if [[ $install_deps == 1 ]]; then
  if [[ $supported != yes && $family != unknown ]]; then
    log "${os_pretty:-this system} is not a supported system (README); trying what fits its family ($family)"
  fi
  case "$pm" in
    apt) install_apt ;;
    dnf|yum) install_rpm ;;
    *) log "unknown system '${os_id:-?}': install the packages named in scripts/setup.sh by hand" ;;
  esac
  firewalld_note
fi
[[ $dry_run == 1 || -z $compiler_note ]] || log "compiler: $compiler_note"

# ---- 2. toolchain ----------------------------------------------------------------------------
# The compiler: the one the plan chose (a toolset, gcc10, an older g++ for CUDA).
if [[ -n $cxx ]]; then
  [[ $dry_run == 1 || $build == 0 || -x $cxx ]] || die "the chosen compiler $cxx is not installed (run without --no-deps)"
  cmake_args=("-DCMAKE_C_COMPILER=$cc" "-DCMAKE_CXX_COMPILER=$cxx" ${cmake_args[@]+"${cmake_args[@]}"})
  [[ $cuda_version != none ]] && cmake_args=("-DCMAKE_CUDA_HOST_COMPILER=$cxx" ${cmake_args[@]+"${cmake_args[@]}"})
fi
# MPI: RHEL's Open MPI lives under /usr/lib64/openmpi, the EFA installer's under
# /opt/amazon/openmpi; neither is on PATH. CMake is told where, and every later
# user (tests, benchmarks) takes the launcher CMake found (nodeprobe-env.sh).
mpi_home=""
for d in ${mpi_homes[@]+"${mpi_homes[@]}"}; do
  if [[ -x $d/bin/mpicc ]]; then mpi_home=$d; break; fi
done
if [[ $dry_run == 1 && ${#mpi_homes[@]} -gt 0 ]]; then
  echo "mpi: the first of ${mpi_homes[*]} that has bin/mpicc (-DMPI_HOME=...)"
fi
[[ -n $mpi_home ]] && cmake_args=("-DMPI_HOME=$mpi_home" ${cmake_args[@]+"${cmake_args[@]}"})
[[ -n $deps_dir ]] && cmake_args=("-DNODEPROBE_DEPS_DIR=$deps_dir" ${cmake_args[@]+"${cmake_args[@]}"})

# CMake >= 3.20 (RHEL 8.4 and Amazon Linux 2 have older ones): else from PyPI
# into BUILD/.cmake-venv (offline: the wheel in DIR/wheels). ctest comes with it.
cmake_pin=$(awk '$1 == "cmake" {print $2}' "$here/cmake/pinned-deps.txt")
cmake_ok() {
  local v
  v=$(cmake --version 2>/dev/null | awk 'NR==1 {print $3}') || return 1
  [[ -n $v ]] && [[ $(printf '%s\n3.20\n' "$v" | sort -V | head -1) == 3.20 ]]
}
venv=$build_dir/.cmake-venv
[[ -x $venv/bin/cmake ]] && export PATH="$venv/bin:$PATH"
if [[ $build == 1 ]] && { [[ $cmake_from_pypi == 1 && ! -x $venv/bin/cmake ]] || ! cmake_ok; }; then
  pip_args=(install -q "cmake$cmake_pin")
  [[ -n $deps_dir ]] && pip_args=(install -q --no-index --find-links "$deps_dir/wheels" "cmake$cmake_pin")
  if [[ $dry_run == 1 ]]; then
    echo "run: python3 -m venv $venv && $venv/bin/pip ${pip_args[*]/#cmake/\'cmake}'"
  else
    log "cmake >= 3.20 not found; installing it from ${deps_dir:+$deps_dir/wheels, }PyPI into $venv"
    python3 -m venv "$venv" && "$venv/bin/pip" "${pip_args[@]}" \
      || die "need cmake >= 3.20 (dnf/apt install cmake, or pip install 'cmake$cmake_pin')"
    export PATH="$venv/bin:$PATH"
  fi
fi

generator=()
if command -v ninja >/dev/null 2>&1 || command -v ninja-build >/dev/null 2>&1 || [[ $dry_run == 1 ]]; then
  [[ -f $build_dir/Makefile ]] || generator=(-G Ninja)
fi
configure=(cmake -S "$here" -B "$build_dir" ${generator[@]+"${generator[@]}"} "-DNODEPROBE_WERROR=$werror" ${cmake_args[@]+"${cmake_args[@]}"})
[[ -n $report ]] || report=$build_dir/accept-report.json
accept=("$build_dir/bin/nodeprobe" accept --json "$report" ${accept_args[@]+"${accept_args[@]}"})
if [[ $dry_run == 1 ]]; then
  [[ $build == 1 ]] && echo "run: ${configure[*]}" && echo "run: cmake --build $build_dir --parallel"
  [[ $run_accept == 1 ]] && echo "run: ${accept[*]}"
  exit 0
fi

# ---- 3. build --------------------------------------------------------------------------------
if [[ $build == 1 ]]; then
  log "configure ($build_dir)"
  "${configure[@]}" || die "configure failed (see above)"
  log "build"
  cmake --build "$build_dir" --parallel "$(nproc)" || die "build failed (see above)"
  log "build environment: $build_dir/nodeprobe-env.sh (source it before building or testing by hand)"
fi

# ---- 4. accept: the node's verdict, apart from setup's own result ----------------------------
[[ $run_accept == 1 ]] || exit 0
[[ -x $build_dir/bin/nodeprobe ]] || die "$build_dir/bin/nodeprobe is not built (run without --no-build)"
log "${accept[*]}"
set +e
"${accept[@]}"
rc=$?
set -e
case $rc in
  0) verdict="pass or warn: the node is fit to train" ;;
  1) verdict="fail: the node is not fit to train (see the findings above)" ;;
  2) verdict="error: something could not be measured (see above)" ;;
  124) verdict="timeout: a probe ran out of time" ;;
  130) verdict="interrupted" ;;
  *) verdict="exit $rc" ;;
esac
log "setup: done; the build is in $build_dir"
log "accept: $verdict (exit $rc); report: $report"
if [[ $strict == 1 || $rc == 130 ]]; then exit "$rc"; fi
[[ $rc -eq 0 ]] || log "setup itself succeeded (exit 0); --strict passes accept's exit code through"
exit 0
