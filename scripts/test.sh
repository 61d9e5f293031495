#!/usr/bin/env bash
# nodeprobe tests: install what is missing, build with warnings as errors, run
# every test tier this machine can run (unit, integration; device when a GPU
# is present), and end with ctest's summary.
#
#   scripts/test.sh                 everything that can run here
#   scripts/test.sh -L unit         only one tier (any ctest arguments pass through)
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

ctest_args=(--test-dir "$build_dir" --output-on-failure --timeout 300 -j "$(nproc)")
if [[ $# -gt 0 ]]; then
  ctest_args+=("$@")
elif [[ $device == OFF ]]; then
  ctest_args+=(-LE device)
fi
echo "==> ctest ${ctest_args[*]}" >&2
ctest "${ctest_args[@]}"
