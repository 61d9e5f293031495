# shellcheck shell=bash
# shellcheck disable=SC2034  # build, rate, id, bin, mpirun, hosts, flags are the caller's
# Sourced by the allreduce netns benchmarks (netns_busbw.sh, netns_algos.sh):
# reads their command line, finds the built probe and the build's MPI
# launcher, brings up a 4-host netns cluster with shaped links and removes it
# (and the scratch folder) on exit.

# netns_bench_args NAME [--FLAG VARIABLE]... -- ARGS...: reads the benchmark's
# command line ARGS: BUILD_DIR into build, --rate and --id into rate and id,
# each --FLAG VALUE given before -- into its VARIABLE, -h/--help prints the
# script's header comment; any other flag, or one without its value, is an
# error (exit 64).
netns_bench_args() {
  local name=$1; shift
  local -A var=([--rate]=rate [--id]=id)
  while [[ $1 != -- ]]; do var[$1]=$2; shift 2; done
  shift
  while [[ $# -gt 0 ]]; do
    case "$1" in
      -h|--help) sed -n '2,/^[^#]/{/^#/p}' "${BASH_SOURCE[-1]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
      -*) [[ -n ${var[$1]:-} ]] || { echo "$name: unknown option $1" >&2; exit 64; }
          [[ $# -ge 2 ]] || { echo "$name: $1 needs a value" >&2; exit 64; }
          printf -v "${var[$1]}" '%s' "$2"; shift ;;
      *) build=$1 ;;
    esac
    shift
  done
}

#   netns_bench_up NAME BUILD ID RATE [BURST]
# sets: bin, mpirun, out (scratch folder), hosts (for mpirun -H), flags (mpirun arguments).
netns_bench_up() {
  local name=$1 build=$2 id=$3 rate=$4 burst=${5:-}
  local here
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  bin=$build/bin/nodeprobe-allreduce
  # The toolchain and MPI launcher the build was configured with (setup.sh/CMake
  # write it): RHEL's mpirun is not on PATH.
  # shellcheck disable=SC1091
  [[ -f $build/nodeprobe-env.sh ]] && . "$build/nodeprobe-env.sh"
  mpirun=${NODEPROBE_MPIRUN:-mpirun}
  [[ -x $bin ]] || { echo "$name: $bin not built" >&2; exit 2; }
  command -v python3 >/dev/null || { echo "$name: needs python3 to read the reports" >&2; exit 2; }
  netns_cluster=$here/scripts/netns-cluster.sh
  netns_id=$id
  out=$(mktemp -d "${TMPDIR:-/tmp}/np-bench-XXXXXX")
  trap '"$netns_cluster" down --id "$netns_id" >/dev/null 2>&1 || true; rm -rf "$out"' EXIT
  "$netns_cluster" up 4 --id "$id" --rate "$rate" ${burst:+--burst "$burst"} --owner-pid $$
  hosts=$("$netns_cluster" hosts --id "$id")
  # shellcheck disable=SC2207
  flags=($("$netns_cluster" mpirun-args --id "$id"))
}
