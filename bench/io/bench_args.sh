# Sourced by the bench/io scripts, after their defaults, to read their
# command line ("$@") the one way they all share:
#   --build-dir DIR   the build (sets build; default REPO/build)
#   --dir DIR         where datasets go (sets dir; default BUILD/io-bench)
#   --keep            leave the datasets (sets keep=1)
#   -h, --help        the script's header comment, exit 0
#   --                the rest of the line into the array named by $rest_to
#                     (only where the script sets rest_to)
# plus the script's own flags, each with a value: opts=(--flag variable ...).
# An unknown flag: one line and exit 64. Then sets np (the build's
# nodeprobe-io) and exits 2 when it is not built. Needs $here (the repository root).
build="$here/build"
dir=""
keep=0
bench_me=$(basename "${BASH_SOURCE[1]}")
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build-dir) build=$(realpath -m "$2"); shift ;;
    --dir) dir=$(realpath -m "$2"); shift ;;
    --keep) keep=1 ;;
    -h|--help)
      awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "${BASH_SOURCE[1]}"
      exit 0 ;;
    --)
      [[ -n ${rest_to:-} ]] || { echo "$bench_me: unknown option '--'" >&2; exit 64; }
      shift
      eval "$rest_to=(\"\$@\")"
      break ;;
    *)
      bench_var=""
      for ((bench_i = 0; bench_i + 1 < ${#opts[@]}; bench_i += 2)); do
        [[ ${opts[bench_i]} == "$1" ]] && bench_var=${opts[bench_i + 1]}
      done
      [[ -n $bench_var ]] || { echo "$bench_me: unknown option '$1'" >&2; exit 64; }
      [[ $# -ge 2 ]] || { echo "$bench_me: $1 wants a value" >&2; exit 64; }
      printf -v "$bench_var" '%s' "$2"
      shift ;;
  esac
  shift
done
dir=${dir:-$build/io-bench}
np="$build/bin/nodeprobe-io"
[[ -x $np ]] || { echo "$bench_me: $np not built" >&2; exit 2; }
