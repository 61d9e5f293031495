#!/usr/bin/env bash
# GPU check: on a machine with NVIDIA GPUs, build with the device tests, run
# them, run nodeprobe-gemm (full profile) on every GPU, and compare its GEMM
# timing with a plain cuBLAS loop -- all in one call. Writes
#   reports/examples/<gpu>.json             the nodeprobe-gemm report
#   reports/examples/<gpu>-vs-cublas.txt    nodeprobe vs cuBLAS, with ratios
# where <gpu> is the first GPU's name ("nvidia-h100-80gb-hbm3").
#
#   scripts/gpu-check.sh [--build-dir DIR] [--profile quick|full]
# Exit: 0 all passed, 1 a check or test failed, 77 no GPU here, 2 build error.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir="$here/build-gpu"
profile=full
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build-dir) build_dir=$(realpath -m "$2"); shift ;;
    --profile) profile="$2"; shift ;;
    -h|--help) sed -n '2,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu-check.sh: unknown option '$1' (see --help)" >&2; exit 64 ;;
  esac
  shift
done

log() { printf '==> %s\n' "$*" >&2; }
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "gpu-check.sh: no GPU here (nvidia-smi -L failed); nothing to check" >&2
  exit 77
fi
nvidia-smi -L >&2

log "build with device tests ($build_dir)"
"$here/scripts/setup.sh" --no-run --werror --build-dir "$build_dir" \
  --cmake-arg -DNODEPROBE_DEVICE_TESTS=ON || exit 2
# The build's compiler, CMake (ctest) and MPI launcher (RHEL: not on PATH).
# shellcheck disable=SC1091
. "$build_dir/nodeprobe-env.sh"

gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1 | tr '[:upper:]' '[:lower:]' |
  sed -e 's/[^a-z0-9.]\{1,\}/-/g' -e 's/^-//' -e 's/-$//')
out_dir="$here/reports/examples"
mkdir -p "$out_dir"
rc=0

log "device tests"
ctest --test-dir "$build_dir" -L device --output-on-failure --timeout 1200 || rc=1

log "nodeprobe-gemm --profile $profile -> $out_dir/$gpu.json"
set +e
"$build_dir/bin/nodeprobe-gemm" --profile "$profile" --json "$out_dir/$gpu.json" \
  --label "scripts/gpu-check.sh $(date -u +%Y-%m-%d)" --verbose
gemm_rc=$?
set -e
[[ $gemm_rc -eq 0 ]] || { log "nodeprobe-gemm exited $gemm_rc"; rc=1; }

log "nodeprobe vs plain cuBLAS -> $out_dir/$gpu-vs-cublas.txt"
"$here/bench/gemm/compare_cublas.sh" "$build_dir" --size 8192 | tee "$out_dir/$gpu-vs-cublas.txt" || rc=1

log "done (exit $rc); commit $out_dir/$gpu.json and $out_dir/$gpu-vs-cublas.txt"
exit "$rc"
