#!/usr/bin/env bash
# How far two runs of an unchanged node differ, per metric, against how wide
# one run's own interval is: the measurement behind a descriptor's
# run_to_run factor (reports/include/nodeprobe/report.h).
#
# Runs COMMAND (a nodeprobe executable and its flags, without --json) RUNS
# times, pausing PAUSE seconds between runs (the state a run leaves, such as
# freed pages or a warm cache, settles in between), and prints per measured
# metric: the median of every run, the largest ratio between two runs'
# medians ("run-to-run"), the median width of one run's interval
# (max/min of its samples, "within"), and how many of the RUNS x (RUNS-1)/2
# pairs of runs have separating intervals (a pair compare would call a change
# if the threshold let it). A metric whose run-to-run ratio is far beyond its
# within-run width needs a run_to_run factor at least that large.
# Peer: the within-run interval itself; the ratio printed is run-to-run / within.
#
#   bench/compare/run_to_run.sh [--runs N] [--pause S] [--keep DIR] -- COMMAND...
#   e.g. bench/compare/run_to_run.sh --runs 8 -- build/bin/nodeprobe-limits -q
set -uo pipefail
runs=6; pause=5; keep=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) runs=$2; shift ;;
    --pause) pause=$2; shift ;;
    --keep) keep=$2; shift ;;
    --) shift; break ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "run_to_run.sh: unknown option $1 (the command goes after --)" >&2; exit 64 ;;
  esac
  shift
done
[[ $runs =~ ^[0-9]+$ && $runs -ge 2 ]] || { echo "run_to_run.sh: --runs wants 2 or more" >&2; exit 64; }
[[ $pause =~ ^[0-9]+([.][0-9]+)?$ ]] || { echo "run_to_run.sh: --pause wants seconds" >&2; exit 64; }
[[ $# -gt 0 ]] || { echo "run_to_run.sh: no command (give it after --)" >&2; exit 64; }
if [[ -n $keep ]]; then work=$keep; mkdir -p "$work" || exit 2; else work=$(mktemp -d); trap 'rm -rf "$work"' EXIT; fi

for ((i = 1; i <= runs; i++)); do
  "$@" --json "$work/run$i.json" >/dev/null 2>"$work/run$i.err"
  rc=$?
  [[ -s $work/run$i.json ]] || { echo "run_to_run.sh: run $i wrote no report (exit $rc): $(tail -1 "$work/run$i.err")" >&2; exit 1; }
  echo "run $i: exit $rc, load $(cut -d' ' -f1 /proc/loadavg)"
  ((i < runs)) && sleep "$pause"
done

python3 - "$work" "$runs" <<'PY'
import json, sys, statistics
work, runs = sys.argv[1], int(sys.argv[2])
series = {}
for i in range(1, runs + 1):
    rep = json.load(open(f"{work}/run{i}.json"))
    for p in rep.get("probes", []):
        for m in p.get("metrics", []):
            st = m.get("stats")
            if not st or st.get("n", 0) < 2 or not (m.get("value") or 0) > 0:
                continue
            labels = ",".join(f"{k}={v}" for k, v in sorted(m.get("labels", {}).items()))
            key = f"{p['name']}/{m['name']}" + (f"{{{labels}}}" if labels else "")
            series.setdefault(key, []).append((st.get("median", m["value"]), st["min"], st["max"]))
rows = []
for key, v in series.items():
    if len(v) < 2:
        continue
    meds = [x[0] for x in v]
    r2r = max(meds) / min(meds) if min(meds) > 0 else float("inf")
    within = statistics.median([x[2] / x[1] for x in v if x[1] > 0] or [1])
    sep = sum(1 for a in range(len(v)) for b in range(a + 1, len(v)) if v[a][2] < v[b][1] or v[b][2] < v[a][1])
    pairs = len(v) * (len(v) - 1) // 2
    rows.append((r2r / within, key, meds, r2r, within, sep, pairs))
rows.sort(reverse=True)
print(f"{'metric':60} {'run-to-run':>10} {'within':>7} {'ratio':>6} {'separate':>9}  medians")
for ratio, key, meds, r2r, within, sep, pairs in rows:
    print(f"{key[:60]:60} {r2r:9.2f}x {within:6.2f}x {ratio:6.2f} {sep:4d}/{pairs:<4d}  " + " ".join(f"{m:.3g}" for m in meds))
PY
