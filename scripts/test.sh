#!/usr/bin/env bash
# nodeprobe tests: install what is missing, build with warnings as errors, run
# every test tier this machine can run (unit, integration; device when a GPU
# is present), then the integration tier once more on a "dirty host" (old OOM
# kills, Xid lines, AVC denials, low limits: scripts/dirty-host.sh), and end
# with ctest's summary.
#
#   scripts/test.sh                 everything that can run here
#   scripts/test.sh -L unit         only one tier (any ctest arguments pass through; no dirty-host pass)
#   scripts/test.sh --sanitize      the same tests built with ASan + UBSan in their
#                                   own build directory (build-sanitize, or
#                                   $NODEPROBE_SANITIZE_BUILD_DIR); any sanitizer
#                                   report, also from a spawned probe, fails the
#                                   run (no dirty-host pass: it finds history
#                                   dependence, not memory errors)
#
# NODEPROBE_DIRTY_HOST=0 leaves the dirty-host pass out; it is skipped, with
# the reason, where it cannot run (it needs root for a mount namespace).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
sanitize=0
if [[ ${1:-} == --sanitize ]]; then
  sanitize=1
  shift
fi
build_dir=${NODEPROBE_TEST_BUILD_DIR:-$here/build-test}
(( sanitize )) && build_dir=${NODEPROBE_SANITIZE_BUILD_DIR:-$here/build-sanitize}

device=OFF
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then device=ON; fi

# Tests check correctness, never speed: -O1 without debug info builds in about
# half the time of -O2 -g on a 2-core CI machine (benchmarks use setup.sh's build).
opt_flags="-O1 -DNDEBUG"
extra=()
if (( sanitize )); then
  # -g1: line numbers in reports; benchmarks are not tests and are left out.
  san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g1"
  read -ra san_flags <<<"$san"
  if ! echo 'int main(){return 0;}' | ${CXX:-c++} -x c++ "${san_flags[@]}" -o /dev/null - 2>/dev/null; then
    echo "test.sh: ${CXX:-c++} cannot link with $san (Debian: libasan8 libubsan1; RHEL 8:" \
      "gcc-toolset-12-libasan-devel gcc-toolset-12-libubsan-devel)" >&2
    exit 2
  fi
  # GCC's -Wmaybe-uninitialized misfires inside libstdc++ (<regex>) under
  # ASan instrumentation (GCC's manual warns of it); the normal build keeps it.
  opt_flags="$opt_flags $san"
  [[ $(${CXX:-c++} --version | head -1) == *clang* ]] || opt_flags="$opt_flags -Wno-maybe-uninitialized"
  extra=(--cmake-arg "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined"
         --cmake-arg "-DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=address,undefined"
         --cmake-arg "-DCMAKE_C_FLAGS_RELEASE=$opt_flags"
         --cmake-arg "-DNODEPROBE_BUILD_BENCHMARKS=OFF")
fi
# Unity build (cmake/Unity.cmake): each target's sources compiled in batches of
# 8; a clean build on 2 cores took 381 s instead of 551 s (clean-clone CI runs).
"$here/scripts/setup.sh" --no-run --werror --test-deps --build-dir "$build_dir" \
  --cmake-arg "-DNODEPROBE_DEVICE_TESTS=$device" --cmake-arg "-DNODEPROBE_UNITY=ON" \
  --cmake-arg "-DCMAKE_BUILD_TYPE=Release" --cmake-arg "-DCMAKE_CXX_FLAGS_RELEASE=$opt_flags" ${extra[@]+"${extra[@]}"}
# The compiler, CMake (ctest) and MPI launcher the build was configured with.
# shellcheck disable=SC1091
. "$build_dir/nodeprobe-env.sh"

timeout=300
(( sanitize )) && timeout=900  # instrumented code runs 2-5x slower
ctest_args=(--test-dir "$build_dir" --output-on-failure --timeout "$timeout" -j "$(nproc)")
if (( sanitize )); then
  # Reports of every process (a probe spawned by a test included) land in
  # files: a child's report counts even when its test only checks an exit code.
  reports="$build_dir/sanitizer-reports"
  rm -rf "$reports" && mkdir -p "$reports"
  # protect_shadow_gap=0: the CUDA runtime maps memory where ASan keeps its
  # gap; verify_asan_link_order=0: tests put fake libcuda/libnvidia-ml first.
  export ASAN_OPTIONS="log_path=$reports/asan:protect_shadow_gap=0:verify_asan_link_order=0:detect_leaks=1:abort_on_error=0:exitcode=86"
  export UBSAN_OPTIONS="log_path=$reports/ubsan:print_stacktrace=1:halt_on_error=1:exitcode=86"
  export LSAN_OPTIONS="suppressions=$here/scripts/lsan.supp:print_suppressions=0"
  # Open MPI's own allocations held until exit are suppressed by name
  # (lsan.supp); its ranks unwind fully to reach those names
  # (nodeprobe/mpi_sanitizer_options.h says why there and not here).
  # Tests stretch the slack of their wall-clock deadlines by this factor
  # (testing::time_factor(), never what they check): instrumented binaries
  # start and run about 3x slower (measured: the quick accept 10.5 s -> 30.9 s,
  # a stdin read-deadline test 3.2 s -> 9.6 s).
  export NODEPROBE_TEST_TIME_FACTOR=${NODEPROBE_TEST_TIME_FACTOR:-3}
fi

# Any sanitizer report fails the run, even where every test passed.
finish() {
  local rc=$1
  if (( sanitize )); then
    local found ub
    found=$(find "$reports" -type f -size +0 | sort)
    # GCC's combined ASan + UBSan runtime ignores log_path for UBSan (GCC bug
    # 94328): its reports go to stderr, so they are looked for in every
    # test's output too (a child's only there when its test printed it; the
    # child itself exits 86 either way).
    ub=$(grep -a "runtime error:" "$build_dir/Testing/Temporary/LastTest.log" 2>/dev/null | sort -u || true)
    if [[ -n $found || -n $ub ]]; then
      echo "==> sanitizer reports (from tests or the processes they spawned):" >&2
      for f in $found; do echo "--- $f" >&2; head -40 "$f" >&2; done
      [[ -z $ub ]] || { echo "--- UBSan (test output)" >&2; echo "$ub" >&2; }
      rc=1
    else
      echo "==> no sanitizer reports" >&2
    fi
  fi
  exit "$rc"
}

rc=0
if [[ $# -gt 0 ]]; then
  echo "==> ctest ${ctest_args[*]} $*" >&2
  ctest "${ctest_args[@]}" "$@" || rc=$?
  finish "$rc"
fi
tiers=()
[[ $device == OFF ]] && tiers=(-LE device)
echo "==> ctest ${ctest_args[*]} ${tiers[*]-}" >&2
ctest "${ctest_args[@]}" ${tiers[@]+"${tiers[@]}"} || rc=$?

if (( ! sanitize )) && [[ ${NODEPROBE_DIRTY_HOST:-1} != 0 ]]; then
  # Left out: FleetNetns and FleetSlurm (their nodes run under --sysroot
  # fixtures: no host history; the slowest tier) and nodeprobe-allreduce's
  # own tests (tests/allreduce, RealAllreduce: that program reads none of
  # what dirty-host.sh changes, neither logs nor /proc/sys nor loadavg, and
  # the fabric over tcp registers no memory: about half of this pass's time).
  # accept, which runs nodeprobe-allreduce among its probes, stays in.
  echo "==> dirty host: the integration tier again on a machine with a past (scripts/dirty-host.sh)" >&2
  dirty=0
  "$here/scripts/dirty-host.sh" --check "$build_dir/bin/nodeprobe" -- \
    ctest "${ctest_args[@]}" -L integration \
    -E '^(Fleet(Netns|Slurm)[.]|Allreduce[A-Za-z]*[.]|All/EveryCollective[.]|Collectives[.]|RealAllreduce[.])' || dirty=$?
  case $dirty in
    0) ;;
    77) echo "==> dirty host: skipped (see the reason above)" >&2 ;;
    *) echo "==> dirty host: FAILED: a test depends on this machine's history (above)" >&2; rc=1 ;;
  esac
fi
finish "$rc"
