#!/usr/bin/env bash
# nodeprobe-io vs a PyTorch DataLoader, side by side on the same small files
# (files layout, ~110 kB samples), warm page cache, no consumer delay, the
# same worker count, batch size and prefetch depth. Prints samples/s of each
# (median of the repeats) and the ratio.
#
#   bench/io/compare_torch.sh [--build-dir build] [--dir DIR] [--samples 8192]
#                             [--workers 2] [--batch 32] [--prefetch 2]
#                             [--epochs 3] [--repeats 3] [--keep]
#
# torch comes from a virtual environment: $NODEPROBE_BENCH_VENV, else
# .venv-bench in the repository (created with `pip install torch` when
# missing). It is a benchmark peer only, never a nodeprobe dependency.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
samples=8192
workers=2
batch=32
prefetch=2
epochs=3
repeats=3
opts=(--samples samples --workers workers --batch batch --prefetch prefetch --epochs epochs --repeats repeats)
source "$here/bench/io/bench_args.sh"
source "$here/bench/io/torch_venv.sh"
mkdir -p "$dir"
ds="$dir/torch-files"
echo "# preparing $samples samples of 110 kB in $ds" >&2
# Equal sizes, so PyTorch's default collate can stack a batch like our staging slot holds one.
"$np" prepare --dir "$ds" --files "$samples" --size 110kB --size-spread 0 --overwrite -q >/dev/null

common=(-w "$workers" -b "$batch" -p "$prefetch" -e "$epochs")
np_sps() {
  "$np" read --dir "$ds" --warm "${common[@]}" --json - -q |
    python3 -c "import json,sys; d=json.load(sys.stdin)['probes'][0]; assert d['status'] in ('pass','warn'), d['reason']; print('%.0f' % (d['data']['samples']/d['data']['elapsed_s']))"
}
torch_sps() {
  "$venv/bin/python" "$here/bench/io/torch_loader.py" --dir "$ds" --workers "$workers" --batch "$batch" \
    --prefetch "$prefetch" --epochs "$epochs" | python3 -c "import json,sys; print('%.0f' % json.load(sys.stdin)['samples_per_s'])"
}
median() { python3 -c "import statistics,sys; print('%.0f' % statistics.median(float(x) for x in sys.argv[1:]))" "$@"; }

ours=(); theirs=()
for ((i = 0; i < repeats; i++)); do
  ours+=("$(np_sps)")      # --warm reads the files once first, so both find them cached
  theirs+=("$(torch_sps)")
done
o=$(median "${ours[@]}"); t=$(median "${theirs[@]}")
printf '# %s, torch %s, host %s, %s cores; %s samples x 110 kB, warm cache, no step time\n' \
  "$("$np" --version)" "$("$venv/bin/python" -c 'import torch; print(torch.__version__)')" "$(hostname)" "$(nproc)" "$samples"
printf '%-28s %14s %14s %8s\n' "workers/batch/prefetch" nodeprobe-io "torch DataLoader" ratio
printf '%-28s %14s %14s %8s\n' "$workers/$batch/$prefetch" "$o/s" "$t/s" "$(python3 -c "print('%.2fx' % ($o/$t))")"
echo "#   runs (samples/s): nodeprobe-io ${ours[*]} | torch ${theirs[*]}" >&2
[[ $keep == 1 ]] || "$np" clean --dir "$ds" -q >/dev/null
