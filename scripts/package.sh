#!/usr/bin/env bash
# nodeprobe packages: a release build, then the DEB and the RPM with CPack.
#
#   scripts/package.sh                     build in build-package/, write packages to dist/
#   scripts/package.sh --from BUILD        pack an existing build as it is (no rebuild)
#   scripts/package.sh --out DIR           where the packages go (default dist/)
#   scripts/package.sh --deb | --rpm       only one kind
#
# Packages are for the system and machine they are built on: build the RHEL 8
# RPM on RHEL/Rocky 8 (x86_64, or aarch64 on a Graviton node for g5g), the
# DEB on Debian 12 or Ubuntu 22.04 (the build goes through scripts/setup.sh,
# which installs the compiler, libraries and rpmbuild). An RPM built on Debian (with
# Debian's rpm package) checks the packaging, but its library requirements are
# Debian's sonames.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=""
out="$here/dist"
gens=()
usage() { sed -n '2,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
die() { echo "package.sh: $*" >&2; exit "${2:-2}"; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --from) [[ $# -ge 2 ]] || die "--from needs a build directory" 64; build=$(realpath "$2"); shift ;;
    --out) [[ $# -ge 2 ]] || die "--out needs a directory" 64; out=$(realpath -m "$2"); shift ;;
    --deb) gens+=(DEB) ;;
    --rpm) gens+=(RPM) ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option $1 (see --help)" 64 ;;
  esac
  shift
done
[[ ${#gens[@]} -gt 0 ]] || gens=(DEB RPM)

if [[ -z $build ]]; then
  build="$here/build-package"
  # setup.sh installs what is missing (rpmbuild included) and picks the
  # compiler and MPI for this system; the build leaves tests out.
  # A package must not depend on the EFA installer's /opt/amazon/openmpi
  # (setup.sh's first choice on a DLAMI): the distribution's Open MPI when
  # there is one; the EFA stack is still used at run time when present.
  mpi=()
  [[ -x /usr/lib64/openmpi/bin/mpicc ]] && mpi=(--cmake-arg -DMPI_HOME=/usr/lib64/openmpi)
  "$here/scripts/setup.sh" --no-run --build-dir "$build" --cmake-arg -DCMAKE_BUILD_TYPE=Release \
    --cmake-arg -DNODEPROBE_BUILD_TESTS=OFF --cmake-arg -DNODEPROBE_BUILD_BENCHMARKS=OFF ${mpi[@]+"${mpi[@]}"}
fi
[[ -f $build/CPackConfig.cmake ]] || die "$build is not a configured nodeprobe build (no CPackConfig.cmake)"
cpack_exe=$(dirname "$(command -v cmake)")/cpack
mkdir -p "$out"
status=0
for g in "${gens[@]}"; do
  case "$g" in
    DEB) command -v dpkg-deb >/dev/null || { echo "package.sh: no dpkg-deb: DEB left out" >&2; status=2; continue; } ;;
    RPM) command -v rpmbuild >/dev/null || { echo "package.sh: no rpmbuild (apt-get install rpm / dnf install rpm-build; scripts/setup.sh installs it): RPM left out" >&2; status=2; continue; } ;;
  esac
  "$cpack_exe" -G "$g" --config "$build/CPackConfig.cmake" -B "$out/_cpack" || die "cpack -G $g failed"
  mv "$out"/_cpack/*."${g,,}" "$out/"
done
rm -rf "$out/_cpack"
ls -l "$out"/nodeprobe*
exit $status
