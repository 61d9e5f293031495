#!/usr/bin/env bash
# How true is `nodeprobe-io sweep`'s DataLoader recommendation? For each step
# time and cache state, runs the sweep with --peer torch on the same files and
# prints the AU it predicts at the setting it recommends next to the AU a real
# torch.utils.data.DataLoader reaches there (same files, step, cache state),
# and the neighbours' largest miss. Goal: |predicted - real| <= 0.10.
# With --workers W1,W2,..., one sweep per worker count instead (its grid is
# that count at --prefetch P, default 2): predicted vs real AU in every cell.
#
#   bench/io/loader_accuracy.sh [--build-dir build] [--dir DIR] [--files 4000] [--size 110kB]
#                               [--steps 6,12,24] [--caches cold,warm] [--seconds-per-point 3]
#                               [--workers 1,2,4 [--prefetch 2]]
#                               [--pipeline raw] [--keep] [-- extra sweep flags]
#
# torch comes from bench/io/torch_venv.sh ($NODEPROBE_BENCH_VENV or .venv-bench).
# The load average is printed before and after every sweep: on a shared host
# both loaders compete with the other tenants, so run it on a quiet node.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
files=4000
size=110kB
steps=6,12,24
caches=cold,warm
spp=3
pipeline=raw
workers=""
prefetch=2
extra=()
opts=(--files files --size size --steps steps --caches caches --seconds-per-point spp --pipeline pipeline
      --workers workers --prefetch prefetch)
rest_to=extra
source "$here/bench/io/bench_args.sh"
source "$here/bench/io/torch_venv.sh"
mkdir -p "$dir"
ds="$dir/accuracy-files"
out=$(mktemp -d "$dir/accuracy-XXXXXX")
echo "# preparing $files samples of ~$size (+-50 %) in $ds; reports in $out" >&2
"$np" prepare --dir "$ds" --files "$files" --size "$size" --overwrite -q >/dev/null

load() { cut -d' ' -f1 /proc/loadavg; }
printf '# %s, torch %s, host %s, %s cores; %s files of ~%s, batch 32, pipeline %s, %s s per point\n' \
  "$("$np" --version)" "$("$venv/bin/python" -c 'import torch; print(torch.__version__)' 2>/dev/null)" \
  "$(hostname)" "$(nproc)" "$files" "$size" "$pipeline" "$spp"
printf '%-5s %-5s %-8s %-8s %12s %12s %7s %16s %10s\n' step cache setting bound "predicted AU" "DataLoader AU" diff \
  "neighbours |max|" load
IFS=, read -ra step_list <<<"$steps"
IFS=, read -ra cache_list <<<"$caches"
cells=("")
[[ -n $workers ]] && IFS=, read -ra cells <<<"$workers"
worst=0
for step in "${step_list[@]}"; do
  for cache in "${cache_list[@]}"; do
   for w in "${cells[@]}"; do
    grid=()
    [[ -n $w ]] && grid=(--workers-list "$w" --prefetch-list "$prefetch")
    l0=$(load)
    json="$out/sweep-$step-$cache${w:+-w$w}.json"
    "$np" sweep --dir "$ds" --step-ms "$step" "--$cache" --seconds-per-point "$spp" --pipeline "$pipeline" \
      "${grid[@]}" --peer torch --python "$venv/bin/python" "${extra[@]}" --json "$json" -q \
      2>"${json%.json}.txt" || true
    l1=$(load)
    row=$(python3 - "$json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))["probes"][0]["data"]
rec = d["recommendation"]
runs = d.get("peer", {}).get("runs", [])
setting = "%s/%s" % (rec["num_workers"], rec["prefetch_factor"])
main = runs[0] if runs else None
def diff(r):
    return None if r["au"] is None or r["predicted_au"] is None else r["predicted_au"] - r["au"]
d0 = diff(main) if main else None
nd = [abs(diff(r)) for r in runs[1:] if diff(r) is not None]
print("%s %s %s %s %s %s" % (setting, rec["bound"], "%.3f" % rec["au"],
                             "-" if not main or main["au"] is None else "%.3f" % main["au"],
                             "-" if d0 is None else "%+.3f" % d0, "-" if not nd else "%.3f" % max(nd)))
EOF
)
    read -r setting bound pred real d0 nmax <<<"$row"
    printf '%-5s %-5s %-8s %-8s %12s %12s %7s %16s %10s\n' "${step}ms" "$cache" "$setting" "$bound" "$pred" "$real" \
      "$d0" "$nmax" "$l0->$l1"
    if [[ $d0 != - ]]; then
      worst=$(python3 -c "print(max($worst, abs($d0)))")
    fi
   done
  done
done
where="the recommended setting"
[[ -n $workers ]] && where="every cell"
echo "# worst |predicted - real| at $where: $worst (goal <= 0.10)"
[[ $keep == 1 ]] || { "$np" clean --dir "$ds" -q >/dev/null; }
echo "# sweep reports and their text: $out" >&2
