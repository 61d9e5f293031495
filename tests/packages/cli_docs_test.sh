#!/usr/bin/env bash
# cli_docs_test.sh BUILD: every flag and subcommand each program lists in its
# --help (CLI11's own formatter) appears in the man page and the bash
# completion the build generated (cli_docs.cpp, another code path), and the
# completion offers them where a user types them.
set -euo pipefail
build=$(realpath "$1")
man=$build/share/man/man1 comp=$build/share/bash-completion/completions
bad=0
flags_of() { sed -n 's/^ \{1,\}\(-[^ ]*\).*/\1/p' | tr ',' '\n' | sed -n 's/^\(--\{0,1\}[A-Za-z0-9][A-Za-z0-9_-]*\).*/\1/p'; }
subs_of() { sed -n '/^Subcommands:/,/^$/p' | sed -n 's/^  \([a-z][a-z0-9-]*\) .*/\1/p'; }
# complete WORDS...: what the completion offers after WORDS and an empty word.
complete_after() {
  local prog=$1; shift
  bash -c 'source "$1"; shift; COMP_WORDS=("$@" ""); COMP_CWORD=$(($# )); fn=$(complete -p "$1" | sed "s/.*-F \([^ ]*\).*/\1/"); $fn; printf "%s\n" "${COMPREPLY[@]}"' \
    _ "$comp/$prog" "$prog" "$@"
}
programs=0
for prog in nodeprobe nodeprobe-limits nodeprobe-io nodeprobe-allreduce nodeprobe-gemm; do
  [[ -x $build/bin/$prog ]] || continue
  programs=$((programs + 1))
  [[ -s $man/$prog.1 ]] || { echo "FAIL: no man page $man/$prog.1"; bad=1; continue; }
  [[ -s $comp/$prog ]] || { echo "FAIL: no completion $comp/$prog"; bad=1; continue; }
  page=$(sed 's/\\-/-/g' "$man/$prog.1")
  for cmd in "" $("$build/bin/$prog" --help | subs_of); do
    offered=$(complete_after "$prog" $cmd)
    for w in $("$build/bin/$prog" $cmd --help | flags_of) $([[ -z $cmd ]] || "$build/bin/$prog" $cmd --help | subs_of); do
      grep -qF -- "$w" <<<"$page" || { echo "FAIL: $prog ${cmd:+$cmd }$w: not in $prog.1"; bad=1; }
      grep -qxF -- "$w" <<<"$offered" || { echo "FAIL: $prog ${cmd:+$cmd }$w: not completed"; bad=1; }
    done
    [[ -z $cmd ]] || grep -qxF -- "$cmd" <<<"$(complete_after "$prog")" || { echo "FAIL: $prog: command $cmd not completed"; bad=1; }
  done
done
# Values: choices and the plan's probe names.
grep -qx quick <<<"$(complete_after nodeprobe accept --profile)" || { echo "FAIL: accept --profile choices"; bad=1; }
grep -qx limits <<<"$(complete_after nodeprobe accept --only)" || { echo "FAIL: accept --only probe names"; bad=1; }
(( programs >= 4 )) || { echo "FAIL: only $programs programs built"; bad=1; }
[[ $bad == 0 ]] && echo "PASS: $programs programs, every --help flag in man page and completion"
exit $bad
