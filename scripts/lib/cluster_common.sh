# shellcheck shell=bash
# shellcheck disable=SC2034,SC2154  # cmd, count, owner_pid, args are the caller's; it sets dir
# Sourced by scripts/netns-cluster.sh and scripts/slurm-cluster.sh: their
# messages, usage, command line head and common flags, and the handling of a
# cluster left by a test that was killed. The caller sets dir (its state
# folder for the id) and defines `down` before it calls cluster_clear_stale.

cluster_script=${BASH_SOURCE[1]}
cluster_prog=${cluster_script##*/}

die() { printf '%s: %s\n' "$cluster_prog" "$*" >&2; exit 2; }
# The script's header comment: from line 2 to the first line that is not one.
usage() { sed -n '2,/^[^#]/{/^#/p}' "$cluster_script" | sed 's/^# \{0,1\}//'; }

# cluster_command ARGS...: sets cmd (the first word), count (the N of `up N`),
# the flags both scripts take, id (--id K, 0..255, default 1) and owner_pid
# (--owner-pid PID), prints usage for -h/--help, and leaves the other words,
# in order, in args. For `exec`, the words from HOST on are the command's own.
cluster_command() {
  [[ $# -ge 1 ]] || { usage >&2; exit 64; }
  cmd=$1; shift
  count=""
  if [[ $cmd == up ]]; then
    [[ $# -ge 1 && $1 =~ ^[0-9]+$ ]] || die "up needs the number of hosts (up N)"
    count=$1; shift
  fi
  id=1
  owner_pid=""
  args=()
  while [[ $# -gt 0 ]]; do
    if [[ $cmd == exec && $1 != -* ]]; then args+=("$@"); break; fi
    case "$1" in
      --id) [[ $# -ge 2 ]] || die "--id needs a value"; id=$2; shift ;;
      --owner-pid) [[ ${2:-} =~ ^[0-9]+$ ]] || die "--owner-pid needs a pid"; owner_pid=$2; shift ;;
      -h|--help) usage; exit 0 ;;
      *) args+=("$1") ;;
    esac
    shift
  done
  [[ $id =~ ^[0-9]+$ && $id -le 255 ]] || die "--id must be 0..255"
}

# Before `up`: a cluster of this id whose --owner-pid is gone (tests killed
# mid-run) is torn down; one that is still owned, or has no owner, is an error.
cluster_clear_stale() {
  [[ -d $dir ]] || return 0
  local owner=""
  [[ -f $dir/owner ]] && owner=$(cat "$dir/owner")
  if [[ -n $owner ]] && ! kill -0 "$owner" 2>/dev/null; then
    echo "$cluster_prog: removing stale cluster $id (owner $owner is gone)" >&2
    down
  else
    die "cluster $id is already up ($cluster_prog down --id $id, or pick another --id)"
  fi
}
