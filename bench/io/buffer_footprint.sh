#!/usr/bin/env bash
# Does the spread of read buffers slow O_DIRECT reads? A bare 2-thread pread
# loop (bench/io/buffer_footprint.c, no loader) reads random 128 KiB records
# of 8 shards into one fixed buffer per thread (fio's way) or into a ring of
# N slots per thread (a staging pool's way), alternating the variants each
# round; prints MB/s medians and the median per-round ratio to the fixed buffer.
#
#   bench/io/buffer_footprint.sh [--build-dir build] [--dir DIR] [--rounds 10] [--keep]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
rounds=10
opts=(--rounds rounds)
source "$here/bench/io/bench_args.sh"
dir=$dir/footprint-shards
bin="$build/buffer_footprint"
cc -O2 -pthread -o "$bin" "$here/bench/io/buffer_footprint.c"
mkdir -p "$(dirname "$dir")"
"$np" prepare --dir "$dir" --files 4096 --size 131072 --size-spread 0 --shards 8 --align 4096 --overwrite -q >/dev/null
sync
slots=(0 1 2 8 64)
declare -A runs
for ((r = 0; r < rounds; r++)); do
  for ((j = 0; j < ${#slots[@]}; j++)); do
    n=${slots[(r + j) % ${#slots[@]}]}
    runs[$n]+="$("$bin" "$dir" 8 512 3000 "$n") "
  done
done
echo "# 2 threads, O_DIRECT 128 KiB random reads, $rounds rounds; slot stride 132 KiB (a loader slot)"
for n in "${slots[@]}"; do echo "$n:${runs[$n]}"; done | python3 -c '
import statistics, sys
rows = [l.split(":") for l in sys.stdin.read().split("\n") if l]
base = [float(x) for x in rows[0][1].split()]
print("%-22s %10s %8s" % ("buffers per thread", "MB/s", "ratio"))
for n, vals in rows:
    v = [float(x) for x in vals.split()]
    label = "1 fixed (fio)" if n == "0" else "%s slots (%.1f MiB total)" % (n, 2 * int(n) * 135168 / 2**20)
    print("%-22s %10.0f %7.2fx" % (label, statistics.median(v), statistics.median(a / b for a, b in zip(v, base))))
'
[[ $keep == 1 ]] || "$np" clean --dir "$dir" -q >/dev/null
