#!/usr/bin/env bash
# Benchmark (not a test) of nodeprobe diag's log scanning, run in ONE go
# beside `grep -E -c` with the same patterns, on one core:
#   1. generates a mixed training-node log on the fly (default 1 GiB) and a
#      quarter-size one in a temporary directory (deleted at the end);
#   2. the scanner alone (RE2 prefilter + RE2::Set), wall and CPU MB/s;
#   3. grep -E -c -f <the same rule patterns as POSIX ERE>, same file, same core;
#   4. the whole `nodeprobe diag --log` pipeline on both sizes with peak RSS,
#      to show memory stays flat as the input grows;
#   5. start-up: both tools on a one-line log (rule loading and compiling).
# Target: >= 300 MB/s on one core over the 1 GiB log (the scanner's CPU rate;
# wall-clock rates on a shared machine also include waiting for the CPU).
#
#   diag/bench/bench_scan.sh [BUILD_DIR]      (default: build)
#   SIZE_MB=2048 diag/bench/bench_scan.sh     (bigger log)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:-$here/build}
size_mb=${SIZE_MB:-1024}
bin="$build/bin"
for b in nodeprobe nodeprobe-bench-diag; do
  [[ -x $bin/$b ]] || { echo "bench_scan.sh: $bin/$b missing: build first (ninja -C $build)" >&2; exit 2; }
done
[[ -x /usr/bin/time ]] || { echo "bench_scan.sh: /usr/bin/time is needed (package time)" >&2; exit 2; }
pin=()
if command -v taskset >/dev/null 2>&1; then pin=(taskset -c 0); fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/nodeprobe-bench-diag-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "== generating ${size_mb} MiB and $((size_mb / 4)) MiB mixed logs in $tmp"
"$bin/nodeprobe-bench-diag" gen --bytes $((size_mb << 20)) --out "$tmp/big.log"
"$bin/nodeprobe-bench-diag" gen --bytes $((size_mb << 18)) --out "$tmp/quarter.log" --seed 7
"$bin/nodeprobe-bench-diag" patterns > "$tmp/patterns.ere"
bytes=$(stat -c %s "$tmp/big.log")
cat "$tmp/big.log" > /dev/null  # page cache warm for every contender

echo "== scanner alone (${pin[*]:-no pinning})"
scan=$("${pin[@]}" "$bin/nodeprobe-bench-diag" scan "$tmp/big.log")
echo "$scan"
ours_lines=$(sed -n 's/.*matched_lines=\([0-9]*\).*/\1/p' <<<"$scan")
ours_cpu=$(sed -n 's/.*cpu_s=\([0-9.]*\).*/\1/p' <<<"$scan")
ours_wall=$(sed -n 's/.*wall_s=\([0-9.]*\).*/\1/p' <<<"$scan")

echo "== grep -E -c with the same $(wc -l < "$tmp/patterns.ere") patterns"
grep_rc=0
grep_out=$( { /usr/bin/time -f "time %e %U %M" "${pin[@]}" grep -E -c -f "$tmp/patterns.ere" "$tmp/big.log"; } 2>&1 ) || grep_rc=$?
if [[ $grep_rc -gt 1 ]]; then echo "bench_scan.sh: grep failed (rc $grep_rc): $grep_out" >&2; exit 2; fi
echo "$grep_out"
grep_lines=$(head -1 <<<"$grep_out")
read -r _ grep_wall grep_cpu _ < <(grep '^time' <<<"$grep_out")

echo "== nodeprobe diag --log (whole pipeline) on both sizes"
run_diag() {
  { /usr/bin/time -f "time %e %U %M" "${pin[@]}" "$bin/nodeprobe" diag --log "$1" --json "$tmp/out.json" -q; } 2>&1 | grep '^time' || true
}
read -r _ q_wall q_cpu q_rss < <(run_diag "$tmp/quarter.log")
read -r _ b_wall b_cpu b_rss < <(run_diag "$tmp/big.log")

# Start-up: every run loads, checks and compiles all the rules before it reads
# a byte, and that cost grows with the patterns. A one-line log, five runs of
# each tool, median wall; grep compiles the same patterns.
echo "== start-up on a one-line log (median of 5)"
head -1 "$tmp/big.log" > "$tmp/one.log"
median5() {
  local t=() i
  for i in 1 2 3 4 5; do
    /usr/bin/time -o "$tmp/t" -f "%e" "${pin[@]}" "$@" > /dev/null 2>&1 || true
    t+=("$(tail -1 "$tmp/t")")
  done
  printf '%s\n' "${t[@]}" | sort -n | sed -n 3p
}
start_ours=$(median5 "$bin/nodeprobe" diag --log "$tmp/one.log" --json "$tmp/out.json" -q)
start_grep=$(median5 grep -E -c -f "$tmp/patterns.ere" "$tmp/one.log")

mbps() { awk -v b="$bytes" -v s="$1" 'BEGIN { if (s > 0) printf "%.0f", b / 1e6 / s; else print "inf" }'; }
qbytes=$(stat -c %s "$tmp/quarter.log")
echo
echo "== results (${size_mb} MiB mixed log; machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg))"
printf "%-34s %10s %10s %12s %12s\n" "" "wall s" "cpu s" "MB/s (cpu)" "MB/s (wall)"
printf "%-34s %10s %10s %12s %12s\n" "nodeprobe scanner" "$ours_wall" "$ours_cpu" "$(mbps "$ours_cpu")" "$(mbps "$ours_wall")"
printf "%-34s %10s %10s %12s %12s\n" "grep -E -c (same patterns)" "$grep_wall" "$grep_cpu" "$(mbps "$grep_cpu")" "$(mbps "$grep_wall")"
printf "%-34s %10s %10s %12s %12s\n" "nodeprobe diag --log (pipeline)" "$b_wall" "$b_cpu" "$(mbps "$b_cpu")" "$(mbps "$b_wall")"
echo "matched lines: nodeprobe $ours_lines, grep $grep_lines $([[ $ours_lines == "$grep_lines" ]] && echo '(same)' || echo '(DIFFERENT)')"
awk -v g="$grep_cpu" -v o="$ours_cpu" 'BEGIN { printf "ratio scanner/grep (CPU throughput): %.2fx\n", (o > 0 ? g / o : 0) }'
echo "start-up (one-line log, median of 5, wall s): nodeprobe diag $start_ours, grep -E -c $start_grep"
echo "peak RSS of nodeprobe diag: $((q_rss / 1024)) MiB on $((qbytes >> 20)) MiB, $((b_rss / 1024)) MiB on $((bytes >> 20)) MiB"
awk -v c="$ours_cpu" -v b="$bytes" 'BEGIN { r = b / 1e6 / c; printf "target >= 300 MB/s on one core: %s (%.0f MB/s)\n", (r >= 300 ? "met" : "NOT met"), r }'
echo "note: a shared, noisy machine; wall-clock figures include time spent waiting for the CPU."
