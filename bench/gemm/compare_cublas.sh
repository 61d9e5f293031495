#!/usr/bin/env bash
# nodeprobe's GEMM figures vs a plain cuBLAS loop timed the same way, side by
# side in one run, with the ratio (target: nodeprobe within 3 % of cuBLAS).
# Needs a GPU. Usage: bench/gemm/compare_cublas.sh [BUILD_DIR] [extra args...]
#   e.g. bench/gemm/compare_cublas.sh build --size 8192 --precisions bf16,fp16
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:-$here/build}
[[ $# -gt 0 ]] && shift
bin=$build/bin/nodeprobe-bench-gemm
[[ -x $bin ]] || { echo "compare_cublas.sh: $bin not built (needs the CUDA toolkit)" >&2; exit 2; }
devices=$(nvidia-smi -L 2>/dev/null | wc -l || true)
[[ ${devices:-0} -gt 0 ]] || { echo "compare_cublas.sh: no GPU (nvidia-smi -L lists none)" >&2; exit 77; }
for ((d = 0; d < devices; d++)); do
  "$bin" --device "$d" "$@"
done
