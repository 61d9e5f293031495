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
for b in heldout-A heldout-B heldout-C heldout-D heldout-E heldout-F heldout-G heldout-H heldout-I heldout-J heldout-K heldout-L heldout-M heldout-N heldout-O heldout-P heldout-Q heldout-R heldout-S heldout-T heldout-U heldout-V heldout-W heldout-X heldout-Y heldout-Z heldout-AA heldout-AB heldout-AC heldout-AD heldout-AE; do
  # shellcheck disable=SC2046
  "$tool" --corpus "$corpus" --batch "$b" $(json "$b")
  echo
done
# shellcheck disable=SC2046
"$tool" --corpus "$corpus" $(json all)
