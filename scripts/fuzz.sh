#!/usr/bin/env bash
# Fuzz nodeprobe's readers of hostile input with libFuzzer (clang from the OS
# packages, ASan + UBSan) for a bounded time per target:
#
#   analyze     bytes as a log through the whole diagnosis pipeline
#   bundle      bytes as a support bundle (.tar / .tar.gz)
#   report      bytes as a report (or two, NUL-separated): load, render, export, compare
#   bundle_dir  bytes as a directory tree (files, links, FIFOs) read as an extracted bundle
#
#   scripts/fuzz.sh                          60 s per target
#   scripts/fuzz.sh --seconds 600 --target report --target bundle_dir
#   scripts/fuzz.sh --jobs 2                 parallel fuzzing processes per target
#   scripts/fuzz.sh --keep-crashes           also copy new crashes to tests/diag/regressions/
#
# Nothing is written into the source tree unless --keep-crashes is given:
# the instrumented build goes to --build-dir (default ~/.cache/nodeprobe/build-fuzz),
# the working corpus, logs and crash artifacts to --out (default a new
# directory under $TMPDIR, printed at the end and kept for inspection).
# Seeds: tests/diag/corpus (logs), a bundle made from it, fuzz/corpus/<target>/
# (real reports from the probes, bundle trees; fuzz/make_seeds.sh rebuilds
# them) and every input already in tests/diag/regressions/<target>/.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=60
jobs=1
build="${XDG_CACHE_HOME:-$HOME/.cache}/nodeprobe/build-fuzz"
out=""
targets=(analyze bundle report bundle_dir)
chosen=()
keep=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --seconds) seconds=$2; shift ;;
    --jobs) jobs=$2; shift ;;
    --build-dir) build=$2; shift ;;
    --out) out=$2; shift ;;
    --target) chosen+=("$2"); shift ;;
    --keep-crashes) keep=1 ;;
    -h|--help) sed -n '2,23p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "fuzz.sh: unknown option '$1'" >&2; exit 64 ;;
  esac
  shift
done
[[ ${#chosen[@]} -eq 0 ]] || targets=("${chosen[@]}")
for t in "${targets[@]}"; do
  case "$t" in analyze|bundle|report|bundle_dir) ;; *) echo "fuzz.sh: unknown target '$t'" >&2; exit 64 ;; esac
done
case "$build/" in "$here"/*) echo "fuzz.sh: --build-dir must be outside the source tree" >&2; exit 64 ;; esac
cc=$(command -v clang-14 || command -v clang || true)
cxx=$(command -v clang++-14 || command -v clang++ || true)
[[ -n $cc && -n $cxx ]] || { echo "fuzz.sh: clang not found (apt-get install clang / dnf install clang)" >&2; exit 2; }

flags="-fsanitize=address,undefined,fuzzer-no-link -fno-sanitize-recover=undefined -g -O1"
mkdir -p "$build"
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DNODEPROBE_FUZZ=ON -DNODEPROBE_BUILD_TESTS=OFF -DNODEPROBE_BUILD_BENCHMARKS=OFF \
  -DNODEPROBE_WITH_CUDA=OFF -DNODEPROBE_WITH_MPI=OFF >/dev/null
ninja -C "$build" -j "${NINJA_JOBS:-2}" "${targets[@]/#/nodeprobe-fuzz-}"

if [[ -z $out ]]; then out=$(mktemp -d "${TMPDIR:-/tmp}/nodeprobe-fuzz-XXXXXX"); fi
case "$(cd "$out" 2>/dev/null && pwd || echo "$out")/" in
  "$here"/*) echo "fuzz.sh: --out must be outside the source tree" >&2; exit 64 ;;
esac
mkdir -p "$out/artifacts"
regressions="$here/tests/diag/regressions"
for t in "${targets[@]}"; do
  mkdir -p "$out/$t"
  cp "$regressions/$t"/* "$out/$t/" 2>/dev/null || true
  cp "$here/fuzz/corpus/$t"/* "$out/$t/" 2>/dev/null || true
done
if [[ " ${targets[*]} " == *" analyze "* ]]; then
  find "$here/tests/diag/corpus" -type f ! -name manifest.json -exec cp {} "$out/analyze/" \;
fi
if [[ " ${targets[*]} " == *" bundle "* ]]; then
  python3 - "$here/tests/diag/corpus" "$out/bundle/seed.tar" <<'PY' || true
import sys, tarfile, os
with tarfile.open(sys.argv[2], "w") as t:
    for d in ("failures", "healthy"):
        for f in sorted(os.listdir(os.path.join(sys.argv[1], d)))[:10]:
            t.add(os.path.join(sys.argv[1], d, f), arcname="b/logs/" + f)
PY
fi

par=()
if [[ $jobs -gt 1 ]]; then par=(-jobs="$jobs" -workers="$jobs"); fi
cd "$out"  # fuzz-N.log files of -jobs land here
status=0
summary=()
for target in "${targets[@]}"; do
  echo "==> fuzzing $target for ${seconds}s (corpus $out/$target)"
  max_len=262144
  if [[ $target == bundle_dir ]]; then max_len=65536; fi
  set +e
  # -timeout=30: a hang, not a loaded machine's pause (a 10 s stall in rmdir
  # was once reported as a timeout of the bundle_dir target).
  "$build/bin/nodeprobe-fuzz-$target" "$out/$target" -max_total_time="$seconds" -timeout=30 \
    -rss_limit_mb=2048 -max_len="$max_len" "${par[@]}" \
    -artifact_prefix="$out/artifacts/$target-" -print_final_stats=1 >"$out/$target.log" 2>&1
  rc=$?
  set -e
  for f in fuzz-*.log; do if [[ -e $f ]]; then mv "$f" "$target-$f"; fi; done  # the workers' logs (--jobs)
  tail -15 "$out/$target.log"
  # Worker logs exist only with --jobs; a missing one must not end the run (pipefail).
  logs=("$out/$target.log")
  for f in "$out/$target"-fuzz-*.log; do if [[ -e $f ]]; then logs+=("$f"); fi; done
  execs=$(cat "${logs[@]}" | { grep -o 'stat::number_of_executed_units: *[0-9]*' || true; } |
    awk '{s += $2} END {print s + 0}')
  crashes=$(find "$out/artifacts" -name "$target-*" | wc -l)
  summary+=("$target: ${seconds}s, $execs executions, $crashes crash/leak/timeout input(s), exit $rc")
  [[ $rc -eq 0 ]] || status=1
done
kept=0
for f in "$out"/artifacts/*; do
  [[ -e $f ]] || continue
  name=$(basename "$f")
  target=${name%%-*}
  if [[ $keep -eq 1 ]]; then
    mkdir -p "$regressions/$target"
    cp "$f" "$regressions/$target/${name#"$target"-}"
    echo "kept $target/${name#"$target"-} (add it to git; ctest -R Regressions replays it)"
    kept=$((kept + 1))
  else
    echo "crash input: $f (keep it: cp '$f' tests/diag/regressions/$target/)"
  fi
done
echo "==> summary (working files in $out)"
printf '  %s\n' "${summary[@]}"
if [[ $keep -eq 1 ]]; then echo "  $kept input(s) copied to tests/diag/regressions/"; fi
exit $status
