#!/usr/bin/env bash
# slurm-cluster.sh: a real Slurm cluster on the netns test hosts of
# scripts/netns-cluster.sh, so `srun`, `sbatch` and HealthCheckProgram can be
# tested on one machine: munged and slurmctld in the root namespace (on the
# cluster bridge, 198.18.<id>.254), one slurmd per test host inside its
# network namespace and its own UTS namespace (hostname np<id>-h<i>, as the
# Slurm node name) and PMIx directory. Everything lives under the state dir;
# nothing in /etc.
#
#   slurm-cluster.sh up N [--id K] [--health PROGRAM] [--health-interval S] [--prolog PROGRAM]
#                         [--owner-pid PID] [netns-cluster.sh up flags]
#   slurm-cluster.sh env [--id K]     prints `export SLURM_CONF=...` for srun/sbatch/sinfo/scontrol
#   slurm-cluster.sh down [--id K]
#
# Needs root, the netns cluster's needs, and Slurm + MUNGE (Debian: slurmctld
# slurmd slurm-client munge; RHEL 8: slurm slurm-slurmctld slurm-slurmd munge
# from EPEL). Says what is missing and exits 77 without them.
#
# Example:
#   scripts/slurm-cluster.sh up 4 --id 9
#   eval "$(scripts/slurm-cluster.sh env --id 9)"
#   srun -N 4 --ntasks-per-node=1 --mpi=pmix build/bin/nodeprobe fleet --json fleet.json
#   scripts/slurm-cluster.sh down --id 9
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
state_root=${NODEPROBE_SLURM_STATE:-/run/nodeprobe-slurm}
health=""
health_interval=5
prolog=""

# shellcheck source=scripts/lib/cluster_common.sh
. "$here/lib/cluster_common.sh"

cluster_command "$@"
set -- "${args[@]}"
# The netns cluster's flags and owner.
passthrough=()
[[ -z $owner_pid ]] || passthrough+=(--owner-pid "$owner_pid")
while [[ $# -gt 0 ]]; do
  case "$1" in
    --health) health=${2:?--health needs a program}; shift ;;
    --prolog) prolog=${2:?--prolog needs a program}; shift ;;
    --health-interval) [[ ${2:-} =~ ^[0-9]+$ ]] || die "--health-interval needs seconds"; health_interval=$2; shift ;;
    *) [[ $cmd == up ]] || die "unknown option '$1'"; passthrough+=("$1") ;;
  esac
  shift
done

dir=$state_root/$id
conf=$dir/slurm.conf
ns_name() { echo "np${id}h$1"; }

need_tools() {
  [[ $(id -u) -eq 0 ]] || { echo "slurm-cluster.sh: needs root" >&2; exit 77; }
  local t missing=()
  for t in slurmctld slurmd srun sinfo scontrol munged; do
    command -v "$t" >/dev/null 2>&1 || [[ -x /usr/sbin/$t ]] || missing+=("$t")
  done
  if [[ ${#missing[@]} -gt 0 ]]; then
    echo "slurm-cluster.sh: missing ${missing[*]} (Debian: apt-get install slurmctld slurmd slurm-client munge)" >&2
    exit 77
  fi
}

write_conf() {
  local i ctl
  ctl=$(hostname -s)
  {
    echo "ClusterName=np$id"
    echo "SlurmctldHost=$ctl(198.18.$id.254)"
    echo "SlurmctldPort=$((6900 + id * 2))"
    echo "SlurmdPort=6818"
    echo "AuthType=auth/munge"
    echo "CryptoType=crypto/munge"
    echo "AuthInfo=socket=$dir/munge/munge.socket"
    echo "SlurmUser=root"
    echo "SlurmdUser=root"
    echo "StateSaveLocation=$dir/ctld"
    echo "SlurmdSpoolDir=$dir/spool/%n"
    echo "SlurmctldPidFile=$dir/slurmctld.pid"
    echo "SlurmdPidFile=$dir/slurmd-%n.pid"
    echo "SlurmctldLogFile=$dir/slurmctld.log"
    echo "SlurmdLogFile=$dir/slurmd-%n.log"
    echo "ProctrackType=proctrack/linuxproc"
    echo "TaskPlugin=task/none"
    echo "JobAcctGatherType=jobacct_gather/none"
    echo "SwitchType=switch/none"
    echo "MpiDefault=pmix"
    echo "SelectType=select/linear"
    echo "SchedulerType=sched/builtin"
    echo "ReturnToService=2"
    echo "SlurmdTimeout=300"  # a loaded test machine must not mark its nodes down
    echo "InactiveLimit=0"
    echo "KillWait=5"
    echo "MinJobAge=30"
    if [[ -n $health ]]; then
      echo "HealthCheckProgram=$health"
      echo "HealthCheckInterval=$health_interval"
      echo "HealthCheckNodeState=ANY"
    fi
    if [[ -n $prolog ]]; then
      echo "Prolog=$prolog"
      echo "PrologFlags=Alloc"
    fi
    for ((i = 1; i <= count; i++)); do
      echo "NodeName=np${id}-h$i NodeAddr=198.18.$id.$i NodeHostname=np${id}-h$i CPUs=$(nproc) State=UNKNOWN"
    done
    echo "PartitionName=all Nodes=ALL Default=YES MaxTime=INFINITE State=UP"
  } > "$conf"
  # An empty cgroup.conf keeps slurmd from probing cgroup plugins it is not told to use.
  echo "CgroupPlugin=autodetect" > "$dir/cgroup.conf"
}

wait_nodes_idle() {
  local t
  for ((t = 0; t < 60; t++)); do
    local up
    up=$(SLURM_CONF=$conf sinfo -h -N -o '%T' 2>/dev/null | grep -c -E '^(idle|mixed|allocated)' || true)
    [[ $up -eq $count ]] && return 0
    sleep 0.5
  done
  SLURM_CONF=$conf sinfo -N >&2 || true
  return 1
}

up() {
  need_tools
  [[ $count -ge 1 && $count -le 64 ]] || die "N must be 1..64"
  cluster_clear_stale
  "$here/netns-cluster.sh" up "$count" --id "$id" "${passthrough[@]}"
  mkdir -p "$dir/munge" "$dir/ctld" "$dir/spool"
  [[ -n $owner_pid ]] && echo "$owner_pid" > "$dir/owner"
  trap 'down; exit 2' ERR INT TERM
  write_conf
  # A key of this cluster's own: never /etc/munge's.
  head -c 1024 /dev/urandom > "$dir/munge/munge.key"
  chmod 700 "$dir/munge"; chmod 400 "$dir/munge/munge.key"
  munged --force --key-file "$dir/munge/munge.key" --socket "$dir/munge/munge.socket" \
    --pid-file "$dir/munge/munged.pid" --log-file "$dir/munge/munged.log" --seed-file "$dir/munge/seed"
  SLURM_CONF=$conf slurmctld -i
  local i ns
  for ((i = 1; i <= count; i++)); do
    ns=$(ns_name "$i")
    mkdir -p "$dir/spool/np${id}-h$i"
    # Each node reads its own copy of the configuration, whose mpi.conf gives
    # PMIx a directory of the node's own: PMIx names its per-step directory
    # by job and step only, so nodes sharing one /tmp would collide (the
    # filesystem, /tmp included, stays shared so the build tree is seen).
    local node=np${id}-h$i nconf=$dir/conf/np${id}-h$i
    mkdir -p "$nconf" "$dir/pmix/$node"
    cp "$conf" "$dir/cgroup.conf" "$nconf/"
    echo "PMIxCliTmpDirBase=$dir/pmix/$node" > "$nconf/mpi.conf"
    # nsenter, not ip netns exec: slurmd needs the host's /sys (cgroups).
    nsenter --net="/run/netns/$ns" unshare --uts sh -c \
      "hostname $node && SLURM_CONF=$nconf/slurm.conf exec slurmd -N $node"
  done
  wait_nodes_idle || die "the slurmd of every host did not register within 30 s (logs: $dir/*.log)"
  trap - ERR INT TERM
  echo "slurm cluster $id: $count nodes np${id}-h[1-$count] (SLURM_CONF=$conf)" >&2
}

kill_pidfile() {
  local f=$1 pid
  [[ -f $f ]] || return 0
  pid=$(cat "$f" 2>/dev/null || true)
  [[ $pid =~ ^[0-9]+$ ]] && kill "$pid" 2>/dev/null || true
}

down() {
  local f
  if [[ -d $dir ]]; then
    for f in "$dir"/slurmd-*.pid "$dir/slurmctld.pid" "$dir/munge/munged.pid"; do kill_pidfile "$f"; done
    sleep 0.5
    # Job steps the daemons started (slurmstepd) end with their daemons' namespaces.
    pkill -f "slurmstepd.*$dir" 2>/dev/null || true
    [[ -n ${NODEPROBE_SLURM_KEEP:-} ]] || rm -rf "$dir"
  fi
  "$here/netns-cluster.sh" down --id "$id" || true
}

case "$cmd" in
  up) up ;;
  env) [[ -f $conf ]] || die "cluster $id is not up"; echo "export SLURM_CONF=$conf" ;;
  down) down ;;
  *) usage >&2; exit 64 ;;
esac
