#!/usr/bin/env bash
# GPU check: on a machine with NVIDIA GPUs, build (scripts/setup.sh) and run
# every GPU check in one call (or, with --prebuilt, run a build made elsewhere
# with -DNODEPROBE_DEVICE_TESTS=ON: a node that cannot install packages):
#   1. the device tests (BUILD/tests/*_device_tests: every verification, the
#      training loop, the nccl backend over the local GPUs);
#   2. nodeprobe-gemm --profile full on every GPU;
#   3. the nccl backend with 1 GPU and with all GPUs (and, with 2 GPUs or
#      more, one GPU per rank through CUDA_VISIBLE_DEVICES), data checked at
#      every size up to 1 GiB;
#   4. nodeprobe-io's pinned staging (--pin cuda: cudaHostAlloc and real
#      host-to-device copies);
#   5. nodeprobe's GEMM timing vs a plain cuBLAS loop;
#   6. nodeprobe accept (quick profile), nodeprobe diag on the live node, and
#      diag of a bundle that nodeprobe collect wrote on the same node: the
#      bundle must name the same findings as the live run.
# Writes, where <gpu> is the first GPU's name ("nvidia-h200"):
#   reports/examples/<gpu>.json               nodeprobe-gemm (full profile)
#   reports/examples/<gpu>-nccl-1gpu.json     nccl backend, one rank
#   reports/examples/<gpu>-nccl-<N>gpu.json   nccl backend, every GPU (N > 1)
#   reports/examples/<gpu>-nccl-<N>gpu-cvd.json  the same, one GPU visible per rank
#   reports/examples/<gpu>-io-pinned.json     nodeprobe-io read --pin cuda
#   reports/examples/<gpu>-vs-cublas.txt      nodeprobe vs cuBLAS, with ratios
#   reports/examples/<gpu>-accept.json        nodeprobe accept --profile quick
#   reports/examples/<gpu>-diag-live.json     nodeprobe diag (live)
#   reports/examples/<gpu>-diag-bundle.json   nodeprobe diag --bundle (collected here)
#
#   scripts/gpu-check.sh [--build-dir DIR] [--profile quick|full] [--no-deps] [--prebuilt]
# --prebuilt: DIR already holds bin/ and tests/ (no build; setup.sh not run).
# Exit: 0 all passed, 1 a check or test failed, 77 no GPU here, 2 build error.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir="$here/build-gpu"
profile=full
deps=1
prebuilt=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build-dir) build_dir=$(realpath -m "$2"); shift ;;
    --profile) profile="$2"; shift ;;
    --no-deps) deps=0 ;;
    --prebuilt) prebuilt=1 ;;
    -h|--help) sed -n '2,/^set -euo/{/^#/p}' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu-check.sh: unknown option '$1' (see --help)" >&2; exit 64 ;;
  esac
  shift
done

log() { printf '==> [%s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "gpu-check.sh: no GPU here (nvidia-smi -L failed); nothing to check" >&2
  exit 77
fi
nvidia-smi -L >&2
ngpus=$(nvidia-smi -L | grep -c '^GPU ')

if [[ $prebuilt -eq 0 ]]; then
  log "build with device tests ($build_dir)"
  setup_args=(--no-run --werror --build-dir "$build_dir" --cmake-arg -DNODEPROBE_DEVICE_TESTS=ON)
  [[ $deps -eq 1 ]] || setup_args+=(--no-deps)
  "$here/scripts/setup.sh" "${setup_args[@]}" || exit 2
  # The build's compiler, CMake and MPI launcher (RHEL: not on PATH).
  # shellcheck disable=SC1091
  . "$build_dir/nodeprobe-env.sh"
else
  [[ -x $build_dir/bin/nodeprobe ]] || { echo "gpu-check.sh: --prebuilt: no $build_dir/bin/nodeprobe" >&2; exit 2; }
  log "prebuilt: $build_dir"
fi

gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1 | tr '[:upper:]' '[:lower:]' |
  sed -e 's/[^a-z0-9.]\{1,\}/-/g' -e 's/^-//' -e 's/-$//')
out="$here/reports/examples"
mkdir -p "$out"
label="scripts/gpu-check.sh $(date -u +%Y-%m-%d)"
bin="$build_dir/bin"
rc=0
# Runs a check; a non-zero exit (other than 77, "not applicable") marks the run failed.
check() {
  local name=$1
  shift
  log "$name"
  set +e
  "$@"
  local r=$?
  set -e
  if [[ $r -ne 0 && $r -ne 77 ]]; then
    log "$name: exit $r"
    rc=1
  fi
}

# The device test executables are run directly (a --prebuilt tree has no CTest files).
device_tests=("$build_dir"/tests/*_device_tests)
[[ -x ${device_tests[0]} ]] || { log "no device tests in $build_dir/tests (configure with -DNODEPROBE_DEVICE_TESTS=ON)"; rc=1; }
for t in "${device_tests[@]}"; do
  [[ -x $t ]] && check "device tests: ${t##*/}" "$t" --gtest_brief=0
done

check "nodeprobe-gemm --profile $profile -> $out/$gpu.json" \
  "$bin/nodeprobe-gemm" --profile "$profile" --json "$out/$gpu.json" --label "$label"

if [[ -x $bin/nodeprobe-allreduce ]]; then
  # nccl-tests' sweep shape; -c 1 checks the data at every size, 1 GiB included.
  sweep=(--backend nccl -b 8 -e 1G -f 4 -n 20 -w 5 -c 1 --timeout 300)
  check "nccl backend, 1 GPU -> $out/$gpu-nccl-1gpu.json" \
    "$bin/nodeprobe-allreduce" --np 1 "${sweep[@]}" --json "$out/$gpu-nccl-1gpu.json" --label "$label"
  # nccl-tests' other collectives (ncclAllGather ... grouped ncclSend/ncclRecv), every size data-checked.
  for coll in allgather reducescatter broadcast reduce alltoall sendrecv; do
    check "nccl $coll, $(( ngpus > 1 ? ngpus : 1 )) GPU(s) -> $out/$gpu-nccl-$coll.json" \
      "$bin/nodeprobe-allreduce" --np "$(( ngpus > 1 ? ngpus : 1 ))" --collective "$coll" --backend nccl \
      -b 8 -e 256M -f 8 -n 10 -w 2 -c 1 --timeout 300 --json "$out/$gpu-nccl-$coll.json" --label "$label"
  done
  if [[ $ngpus -gt 1 ]]; then
    check "nccl backend, $ngpus GPUs -> $out/$gpu-nccl-${ngpus}gpu.json" \
      "$bin/nodeprobe-allreduce" --np "$ngpus" "${sweep[@]}" --json "$out/$gpu-nccl-${ngpus}gpu.json" \
      --label "$label"
    # What Slurm --gpus-per-task=1 does: each rank sees only its own GPU.
    mpirun_args=(-np "$ngpus" --bind-to none)
    [[ $(id -u) -eq 0 ]] && mpirun_args+=(--allow-run-as-root)
    mpirun=${NODEPROBE_MPIRUN:-mpirun}
    # shellcheck disable=SC2016  # expanded by each rank's shell, not here
    own_gpu='CUDA_VISIBLE_DEVICES=$OMPI_COMM_WORLD_LOCAL_RANK exec "$0" "$@"'
    check "nccl backend, one GPU visible per rank -> $out/$gpu-nccl-${ngpus}gpu-cvd.json" \
      "$mpirun" "${mpirun_args[@]}" bash -c "$own_gpu" "$bin/nodeprobe-allreduce" "${sweep[@]}" --json "$out/$gpu-nccl-${ngpus}gpu-cvd.json" --label "$label"
  else
    log "one GPU: the all-GPU and one-GPU-per-rank nccl runs need two or more"
  fi
else
  log "nodeprobe-allreduce not built (no NCCL or MPI): nccl backend not checked"
  rc=1
fi

data=$(mktemp -d "${TMPDIR:-/tmp}/nodeprobe-gpu-check.XXXXXX")
trap 'rm -rf "$data"' EXIT
check "nodeprobe-io prepare (256 x 1 MiB)" "$bin/nodeprobe-io" prepare --dir "$data/ds" --files 256 --size 1M -q
check "nodeprobe-io read --pin cuda -> $out/$gpu-io-pinned.json" \
  "$bin/nodeprobe-io" read --dir "$data/ds" --pin cuda -w 4 --json "$out/$gpu-io-pinned.json" --label "$label"

log "nodeprobe vs plain cuBLAS -> $out/$gpu-vs-cublas.txt"
"$here/bench/gemm/compare_cublas.sh" "$build_dir" --size 8192 | tee "$out/$gpu-vs-cublas.txt" || rc=1

check "nodeprobe accept --profile quick -> $out/$gpu-accept.json" \
  "$bin/nodeprobe" accept --profile quick --no-imds --json "$out/$gpu-accept.json" --label "$label"
check "nodeprobe diag (live) -> $out/$gpu-diag-live.json" \
  "$bin/nodeprobe" diag --json "$out/$gpu-diag-live.json" --label "$label"
# A bundle collected here must tell what the live run told (same finding ids).
check "nodeprobe collect" "$bin/nodeprobe" collect --out "$data/bundle.tar.gz" -q
check "nodeprobe diag --bundle -> $out/$gpu-diag-bundle.json" \
  "$bin/nodeprobe" diag --bundle "$data/bundle.tar.gz" --json "$out/$gpu-diag-bundle.json" --label "$label"
ids() { grep -o '"id": *"[a-z0-9_.]*"' "$1" 2>/dev/null | sed 's/.*"\([^"]*\)"$/\1/' | sort -u; }
if [[ -f $out/$gpu-diag-live.json && -f $out/$gpu-diag-bundle.json ]]; then
  if diff <(ids "$out/$gpu-diag-live.json") <(ids "$out/$gpu-diag-bundle.json") >&2; then
    log "live and bundle name the same findings: $(ids "$out/$gpu-diag-live.json" | tr '\n' ' ')"
  else
    log "live and bundle disagree (diff above: < live, > bundle)"
    rc=1
  fi
fi

log "done (exit $rc); commit reports/examples/$gpu*"
exit "$rc"
