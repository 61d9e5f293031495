#!/usr/bin/env bash
# Recall of nodeprobe diag on its accuracy corpus (tests/diag/corpus), per
# finding class, in four scopes: the unseen-log batch added for issue 13 alone
# (samples the rules were not written from), the two held-out sets, and the
# whole corpus. Also counts
# false alarms (warn/error) on healthy look-alikes and lists every sample the
# rules get wrong with what they said instead. A measurement, not a test: the
# ctest cases Samples/Corpus.Sample/* judge each sample.
#
#   diag/bench/corpus_recall.sh [BUILD_DIR]            (default: build-test, then build)
#   JSON_DIR=/tmp/recall diag/bench/corpus_recall.sh    (also write the JSON reports)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:-}
if [[ -z $build ]]; then
  for b in "$here/build-test" "$here/build"; do
    if [[ -x $b/bin/nodeprobe-corpus-recall ]]; then build=$b; break; fi
  done
fi
tool="${build:-$here/build-test}/bin/nodeprobe-corpus-recall"
[[ -x $tool ]] || { echo "corpus_recall.sh: $tool missing: build it first (ninja -C BUILD_DIR nodeprobe-corpus-recall)" >&2; exit 2; }
corpus="$here/tests/diag/corpus"

json() { if [[ -n ${JSON_DIR:-} ]]; then mkdir -p "$JSON_DIR"; echo --json "$JSON_DIR/$1.json"; fi; }
# shellcheck disable=SC2046  # json prints nothing or two words
"$tool" --corpus "$corpus" --batch issue13 $(json issue13)
echo
# The held-out sets (diag/bench/heldout_results.md): A collected before the
# rules of that round were changed, B to H each after the previous round and
# measured once before tuning.
# The list is read from the manifest's "batch" fields, in the order the sets
# were collected (A to Z, then AA, AB, ...), so a new set needs no edit here.
batches=$(grep -o '"batch": *"heldout-[A-Z]*"' "$corpus/manifest.json" | sed 's/.*"\(heldout-[A-Z]*\)"/\1/' |
  awk '{ print length($0), $0 }' | sort -u -k1,1n -k2,2 | cut -d' ' -f2)
for b in $batches; do
  # shellcheck disable=SC2046
  "$tool" --corpus "$corpus" --batch "$b" $(json "$b")
  echo
done
# shellcheck disable=SC2046
"$tool" --corpus "$corpus" $(json all)
