#!/usr/bin/env bash
# nodeprobe tests: install what is missing, build with warnings as errors, run
# every test tier this machine can run (unit, integration; device when a GPU
# is present), then the integration tier once more on a "dirty host" (old OOM
# kills, Xid lines, AVC denials, low limits: scripts/dirty-host.sh), and end
# with ctest's summary.
#
#   scripts/test.sh                 everything that can run here
#   scripts/test.sh -L unit         only one tier (any ctest arguments pass through; no dirty-host pass)
#
# NODEPROBE_DIRTY_HOST=0 leaves the dirty-host pass out; it is skipped, with
# the reason, where it cannot run (it needs root for a mount namespace).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${NODEPROBE_TEST_BUILD_DIR:-$here/build-test}

device=OFF
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then device=ON; fi

# Tests check correctness, never speed: -O1 without debug info builds in about
# half the time of -O2 -g on a 2-core CI machine (benchmarks use setup.sh's build).
"$here/scripts/setup.sh" --no-run --werror --build-dir "$build_dir" \
  --cmake-arg "-DNODEPROBE_DEVICE_TESTS=$device" \
  --cmake-arg "-DCMAKE_BUILD_TYPE=Release" --cmake-arg "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG"
# The compiler, CMake (ctest) and MPI launcher the build was configured with.
# shellcheck disable=SC1091
. "$build_dir/nodeprobe-env.sh"

ctest_args=(--test-dir "$build_dir" --output-on-failure --timeout 300 -j "$(nproc)")
if [[ $# -gt 0 ]]; then
  echo "==> ctest ${ctest_args[*]} $*" >&2
  exec ctest "${ctest_args[@]}" "$@"
fi
tiers=()
[[ $device == OFF ]] && tiers=(-LE device)
echo "==> ctest ${ctest_args[*]} ${tiers[*]-}" >&2
rc=0
ctest "${ctest_args[@]}" ${tiers[@]+"${tiers[@]}"} || rc=$?

if [[ ${NODEPROBE_DIRTY_HOST:-1} != 0 ]]; then
  echo "==> dirty host: the integration tier again on a machine with a past (scripts/dirty-host.sh)" >&2
  dirty=0
  "$here/scripts/dirty-host.sh" --check "$build_dir/bin/nodeprobe" -- \
    ctest "${ctest_args[@]}" -L integration || dirty=$?
  case $dirty in
    0) ;;
    77) echo "==> dirty host: skipped (see the reason above)" >&2 ;;
    *) echo "==> dirty host: FAILED: a test depends on this machine's history (above)" >&2; rc=1 ;;
  esac
fi
exit "$rc"
