#!/usr/bin/env bash
# The before/after walk-through of docs/compare.md, exactly as run to produce
# its sample output: one dataset, the same read twice (A/A), then the same read
# with fewer workers. tests/reports/compare_real_test.cpp runs this script and
# checks that docs/compare.md still shows what it prints.
#
#   docs/examples/tuning.sh [WORKDIR]      (nodeprobe and nodeprobe-io on PATH)
set -u
dir=${1:-$(mktemp -d "${TMPDIR:-/tmp}/nodeprobe-tuning-XXXXXX")}
cd "$dir" || exit 2
nodeprobe-io prepare --dir ds --files 1500 --size 110kB --quiet --json prepare.json || exit 2
read_with() {  # workers prefetch output
  nodeprobe-io read --dir ds -w "$1" -p "$2" --step-ms 1 --epochs 3 --quiet --json "$3"
}
read_with 2 2 before.json
read_with 2 2 again.json
read_with 1 1 after.json
for pair in "before.json again.json" "before.json after.json"; do
  echo "\$ nodeprobe compare $pair"
  nodeprobe compare $pair
  rc=$?
  echo "\$ echo \$?"
  echo $rc
done
nodeprobe-io clean --dir ds --quiet >/dev/null
