#!/usr/bin/env bash
# Regenerates the golden reports under tests/fixtures/reports/ from the real
# probes on this machine (io read and sweep on a small tmp dataset, allreduce
# over mpi and libfabric shm/tcp with 2 local ranks, limits, accept quick).
# Renderer, chart, compare and browser tests read them (tests/reports), so
# those tests run on what the probes really write.
#
#   scripts/golden-reports.sh [BIN_DIR]     (default: build-test/bin)
#
# tests/fixtures/reports/v1/ holds reports of schema nodeprobe.report/1,
# written by the probes at main 089f09c (before descriptors); they are frozen
# (nothing writes /1 any more) and prove that compare and report still read /1.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${1:-$here/build-test/bin}
out=$here/tests/fixtures/reports
export PATH=$bin:$PATH NODEPROBE_NO_IMDS=1
work=$(mktemp -d "${TMPDIR:-/tmp}/nodeprobe-golden-XXXXXX")
trap 'nodeprobe-io clean --dir "$work/files" -q >/dev/null 2>&1 || true;
      nodeprobe-io clean --dir "$work/shards" -q >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

# Hostnames, argv and paths of this machine stay in the files: they are what a
# user's report holds, and no test depends on them.
nodeprobe-io prepare --dir "$work/files" --files 1000 --size 110kB -q --json /dev/null
nodeprobe-io prepare --dir "$work/shards" --files 1000 --size 110kB --shards 4 -q --json /dev/null
nodeprobe-io read --dir "$work/files" -w 2 -p 2 --step-ms 1 --epochs 2 -q --json "$out/io-read.json" || true
nodeprobe-io sweep --dir "$work/files" --dir "$work/shards" --step-ms 2 --workers-list 1,2 --prefetch-list 1,2 \
  --seconds-per-point 0.5 --exhaustive -q --json "$out/io-sweep.json" || true
nodeprobe-allreduce --np 2 --backend mpi,fabric:shm,fabric:tcp -b 64K -e 4M -f 4 -n 10 -q \
  --json "$out/allreduce.json" || true
nodeprobe-limits -q --json "$out/limits.json" || true
nodeprobe accept --label golden -q --json "$out/accept.json" || true
for f in io-read io-sweep allreduce limits accept; do
  python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$out/$f.json"
  echo "wrote $out/$f.json"
done
