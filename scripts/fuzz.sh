#!/usr/bin/env bash
# Fuzz the diagnosis scanners and the bundle reader with libFuzzer (clang
# from the OS packages) for a bounded time, then keep every input that
# crashed, leaked or timed out under tests/diag/regressions/<target>/, where
# the regression test (ctest -R Regressions) replays it on every build.
#
#   scripts/fuzz.sh                 60 s per target
#   scripts/fuzz.sh --seconds 300   longer
#   scripts/fuzz.sh --jobs 2        parallel fuzzing processes per target
#
# Seeds: the accuracy corpus (logs) and a bundle made from it.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=60
jobs=1
build="$here/build-fuzz"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --seconds) seconds=$2; shift ;;
    --jobs) jobs=$2; shift ;;
    --build-dir) build=$2; shift ;;
    -h|--help) sed -n '2,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "fuzz.sh: unknown option '$1'" >&2; exit 64 ;;
  esac
  shift
done
cc=$(command -v clang-14 || command -v clang || true)
cxx=$(command -v clang++-14 || command -v clang++ || true)
[[ -n $cc && -n $cxx ]] || { echo "fuzz.sh: clang not found (apt-get install clang / dnf install clang)" >&2; exit 2; }

flags="-fsanitize=address,undefined,fuzzer-no-link -fno-sanitize-recover=undefined -g -O1"
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DNODEPROBE_FUZZ=ON -DNODEPROBE_BUILD_TESTS=OFF -DNODEPROBE_BUILD_BENCHMARKS=OFF \
  -DNODEPROBE_WITH_CUDA=OFF -DNODEPROBE_WITH_MPI=OFF >/dev/null
ninja -C "$build" -j "${NINJA_JOBS:-2}" nodeprobe-fuzz-analyze nodeprobe-fuzz-bundle

work=$(mktemp -d "${TMPDIR:-/tmp}/nodeprobe-fuzz-XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/analyze" "$work/bundle" "$work/artifacts"
find "$here/tests/diag/corpus" -type f ! -name manifest.json -exec cp {} "$work/analyze/" \;
cp "$here"/tests/diag/regressions/analyze/* "$work/analyze/" 2>/dev/null || true
cp "$here"/tests/diag/regressions/bundle/* "$work/bundle/" 2>/dev/null || true
python3 - "$here/tests/diag/corpus" "$work/bundle/seed.tar" <<'PY' 2>/dev/null || true
import sys, tarfile, os
with tarfile.open(sys.argv[2], "w") as t:
    for d in ("failures", "healthy"):
        for f in sorted(os.listdir(os.path.join(sys.argv[1], d)))[:10]:
            t.add(os.path.join(sys.argv[1], d, f), arcname="b/logs/" + f)
PY

par=()
if [[ $jobs -gt 1 ]]; then par=(-jobs="$jobs" -workers="$jobs"); fi  # fuzz-N.log files go to $work
cd "$work"
status=0
for target in analyze bundle; do
  echo "==> fuzzing $target for ${seconds}s"
  set +e
  "$build/bin/nodeprobe-fuzz-$target" "$work/$target" -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=2048 -max_len=262144 "${par[@]}" \
    -artifact_prefix="$work/artifacts/$target-" -print_final_stats=1 2>&1 | tail -15
  rc=${PIPESTATUS[0]}
  set -e
  [[ $rc -eq 0 ]] || status=1
done
kept=0
for f in "$work"/artifacts/*; do
  [[ -e $f ]] || continue
  name=$(basename "$f")
  target=${name%%-*}
  mkdir -p "$here/tests/diag/regressions/$target"
  cp "$f" "$here/tests/diag/regressions/$target/${name#*-}"
  echo "kept $target/${name#*-} (add it to git; ctest -R Regressions replays it)"
  kept=$((kept + 1))
done
echo "==> done: $kept new regression input(s)"
exit $status
