#!/usr/bin/env bash
# accept's time budget, measured: runs `nodeprobe accept` RUNS times (default
# 3) with the given profile and prints each wall time, the median, and the
# ratio to the profile's budget (quick: 20 s without a GPU, 60 s with one;
# full: 600 s). Peer: the budget itself (there is no other tool to run).
#
#   bench/accept/accept_budget.sh [--build-dir DIR] [--profile quick|full] [--runs N] [-- accept args...]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build="$here/build"; profile=quick; runs=3; extra=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build-dir) build=$2; shift ;;
    --profile) profile=$2; shift ;;
    --runs) runs=$2; shift ;;
    --) shift; extra=("$@"); break ;;
    *) echo "accept_budget.sh: unknown option $1" >&2; exit 64 ;;
  esac
  shift
done
np="$build/bin/nodeprobe"
[[ -x $np ]] || { echo "accept_budget.sh: $np not built" >&2; exit 2; }
# The budget as accept itself states it for this node (its plan, --list).
budget=$("$np" accept --list --no-imds --profile "$profile" 2>/dev/null | sed -n 's/.*(budget \([0-9.]*\) s).*/\1/p' | head -1)
[[ -n $budget ]] || { echo "accept_budget.sh: $np accept --list states no budget" >&2; exit 2; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
times=()
for ((i = 1; i <= runs; i++)); do
  t0=$(date +%s.%N)
  set +e
  NODEPROBE_NO_IMDS=${NODEPROBE_NO_IMDS:-} "$np" accept --profile "$profile" -q --json "$work/r$i.json" --data-dir "$work" "${extra[@]}"
  rc=$?
  set -e
  t1=$(date +%s.%N)
  t=$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')
  times+=("$t")
  printf 'run %d: %.2f s (exit %d)\n' "$i" "$t" "$rc"
done
median=$(printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}')
printf 'profile %s: median %.2f s of a %d s budget, ratio %.3f\n' "$profile" "$median" "$budget" "$(awk -v m="$median" -v b="$budget" 'BEGIN {print m / b}')"
