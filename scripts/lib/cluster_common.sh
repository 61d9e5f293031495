# shellcheck shell=bash
# shellcheck disable=SC2034,SC2154  # cmd, count, args are the caller's; it sets id and dir
# Sourced by scripts/netns-cluster.sh and scripts/slurm-cluster.sh: their
# messages, usage, command line head and the handling of a cluster left by a
# test that was killed. The caller sets id and dir (its state folder for the
# id) and defines `down` before it calls cluster_clear_stale.

cluster_script=${BASH_SOURCE[1]}
cluster_prog=${cluster_script##*/}

die() { printf '%s: %s\n' "$cluster_prog" "$*" >&2; exit 2; }
# The script's header comment: from line 2 to the first line that is not one.
usage() { sed -n '2,/^[^#]/{/^#/p}' "$cluster_script" | sed 's/^# \{0,1\}//'; }

# cluster_command ARGS...: sets cmd (the first word), count (the N of `up N`)
# and args (the words after them: the flags).
cluster_command() {
  [[ $# -ge 1 ]] || { usage >&2; exit 64; }
  cmd=$1; shift
  count=""
  if [[ $cmd == up ]]; then
    [[ $# -ge 1 && $1 =~ ^[0-9]+$ ]] || die "up needs the number of hosts (up N)"
    count=$1; shift
  fi
  args=("$@")
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
