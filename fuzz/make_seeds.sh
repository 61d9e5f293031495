#!/usr/bin/env bash
# Rebuilds the committed fuzz seeds (fuzz/corpus/<target>/) from real runs of
# this build's probes, so the fuzzers start from reports as the probes write
# them today (scripts/fuzz.sh adds them to its working corpus).
#
#   fuzz/make_seeds.sh [BUILD_DIR]     default: $NODEPROBE_TEST_BUILD_DIR or build-test
#
# report/      limits, io read, allreduce (mpi, 2 ranks), gemm (skips without
#              a GPU), a diag report of corpus logs, and a before/after pair
#              (two reports joined by a NUL byte, as fuzz_report reads them)
# bundle_dir/  directory trees in fuzz_bundle_dir's record format: a bundle
#              with a manifest and corpus logs, one with a link out of it, one
#              with a link loop, a FIFO and a hard link
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-${NODEPROBE_TEST_BUILD_DIR:-$here/build-test}}
bin="$build/bin"
[[ -x $bin/nodeprobe ]] || { echo "make_seeds.sh: no build in $build (scripts/test.sh -R '^$' makes one)" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/nodeprobe-seeds-XXXXXX")
trap 'rm -rf "$work"' EXIT
rep="$here/fuzz/corpus/report"
dir="$here/fuzz/corpus/bundle_dir"
rm -rf "$rep" "$dir"
mkdir -p "$rep" "$dir"

"$bin/nodeprobe-limits" --json "$rep/limits.json" -q || true
"$bin/nodeprobe-io" prepare --dir "$work/ds" --files 64 --size 16k -q >/dev/null
"$bin/nodeprobe-io" read --dir "$work/ds" --epochs 1 --json "$rep/io-read.json" -q || true
for n in 1 2; do
  "$bin/nodeprobe-allreduce" --backend mpi --np 2 -b 8 -e 64K -f 8 -n 3 -w 1 --json "$work/ar$n.json" -q || true
done
cp "$work/ar1.json" "$rep/allreduce-mpi.json"
[[ -x $bin/nodeprobe-gemm ]] && { "$bin/nodeprobe-gemm" --json "$rep/gemm.json" -q || true; }
logs=()
for f in $(ls "$here/tests/diag/corpus/failures" | head -6); do logs+=(--log "$here/tests/diag/corpus/failures/$f"); done
"$bin/nodeprobe" diag "${logs[@]}" --json "$rep/diag.json" -q || true
{ cat "$work/ar1.json"; printf '\0'; cat "$work/ar2.json"; } >"$rep/pair-allreduce"

python3 - "$here/tests/diag/corpus" "$dir" <<'PY'
import json, os, struct, sys
corpus, out = sys.argv[1], sys.argv[2]
KIND = {"file": 0, "dir": 1, "link": 2, "fifo": 3, "hard": 4}
def rec(kind, name, content=b""):
    name = name.encode()
    content = content if isinstance(content, bytes) else content.encode()
    content = content[:60000]
    return bytes([KIND[kind], len(name)]) + name + struct.pack("<H", len(content)) + content
logs = sorted(os.listdir(os.path.join(corpus, "failures")))[:3]
def bundle(extra=(), listed=()):
    files = [{"path": "logs/" + f, "origin": "corpus", "status": "ok"} for f in logs] + list(listed)
    manifest = {"schema": "nodeprobe.bundle/1", "created": "2025-11-29T16:00:00Z", "created_epoch": 1764432000,
                "utc_offset_s": 0, "host": {"hostname": "seed", "instance_type": "p4d.24xlarge"}, "files": files}
    b = rec("dir", "logs")
    for f in logs:
        with open(os.path.join(corpus, "failures", f), "rb") as fh:
            b += rec("file", "logs/" + f, fh.read(8000))
    for e in extra:
        b += rec(*e)
    return b + rec("file", "manifest.json", json.dumps(manifest))
with open(os.path.join(out, "manifest-logs"), "wb") as f:
    f.write(bundle())
with open(os.path.join(out, "link-out"), "wb") as f:
    f.write(bundle([("link", "logs/messages", "@"), ("link", "cmd", "@dir")],
                   [{"path": "logs/messages", "status": "ok"}, {"path": "cmd/canary.log", "status": "ok"}]))
with open(os.path.join(out, "no-manifest"), "wb") as f:
    f.write(rec("file", "a.log", "Nov 29 16:39:36 h kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1\n")
            + rec("link", "loop", "loop") + rec("link", "up", "../../etc") + rec("fifo", "pipe")
            + rec("hard", "b.log", "a.log") + rec("link", "out.log", "@"))
PY
ls -l "$rep" "$dir"
