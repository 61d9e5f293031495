#!/usr/bin/env bash
# Peak RSS of nodeprobe-io read stays bounded by its staging pool (workers x
# prefetch x batch sample slots), whatever the dataset size: two datasets,
# one N samples and one 4 x N, both several times larger than the bound, read
# cold and warm with pread and mmap. Prints dataset size, staging bound, and
# the peak RSS the probe reports (getrusage) next to /usr/bin/time's.
#
#   bench/io/rss_bound.sh [--build-dir build] [--dir DIR] [--samples 2000]
#                         [--workers 2] [--batch 32] [--prefetch 2] [--keep]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
samples=2000
workers=2
batch=32
prefetch=2
opts=(--samples samples --workers workers --batch batch --prefetch prefetch)
source "$here/bench/io/bench_args.sh"
mkdir -p "$dir"
have_time=0; [[ -x /usr/bin/time ]] && have_time=1

printf '# %s, host %s, %s cores; workers %s, batch %s, prefetch %s; ~110 kB samples (+-50 %%)\n' \
  "$("$np" --version)" "$(hostname)" "$(nproc)" "$workers" "$batch" "$prefetch"
printf '%-7s %8s %10s %12s %10s %7s %-6s %-6s %12s %12s\n' layout samples dataset "staging" "ds/bound" "" method cache "peak RSS" "time(1) RSS"
for n in "$samples" $((samples * 4)); do
  for layout in files shards; do
    d="$dir/rss-$layout-$n"
    extra=(); [[ $layout == shards ]] && extra=(--shards 8)
    "$np" prepare --dir "$d" --files "$n" --overwrite -q "${extra[@]}" >/dev/null
    for method in pread mmap; do
      for cache in cold warm; do
        tfile=$(mktemp)
        runner=(); [[ $have_time == 1 ]] && runner=(/usr/bin/time -f %M -o "$tfile")
        "${runner[@]}" "$np" read --dir "$d" --method "$method" "--$cache" -w "$workers" -b "$batch" \
          -p "$prefetch" --json - -q > "$tfile.json"
        ext=$([[ $have_time == 1 ]] && echo "$(( $(tail -1 "$tfile") * 1024 ))" || echo 0)
        python3 - "$tfile.json" "$layout" "$n" "$method" "$cache" "$ext" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["probes"][0]["data"]
layout, n, method, cache, ext = sys.argv[2:7]
mb = lambda b: "%.1f MB" % (b / 1e6)
print("%-7s %8s %10s %12s %9.1fx %7s %-6s %-6s %12s %12s" % (
    layout, n, mb(d["dataset"]["bytes"]), mb(d["staging_bytes"]), d["dataset"]["bytes"] / d["staging_bytes"], "",
    method, cache, mb(d["peak_rss_bytes"]), mb(int(ext)) if int(ext) else "n/a"))
PY
        rm -f "$tfile" "$tfile.json"
      done
    done
    [[ $keep == 1 ]] || "$np" clean --dir "$d" -q >/dev/null
  done
done
