#!/usr/bin/env bash
# netns-cluster.sh: N test hosts on one machine for multi-node runs without
# ssh or real nodes. Each host is a network namespace with eth0 on a shared
# bridge (198.18.<id>.<i>/24, bridge .254), optionally a second "data"
# network eth1 (198.19.<id>.<i>/24) and tbf shaping of every link in both
# directions. mpirun starts ranks inside the hosts through the launcher agent
# (scripts/netns-agent) instead of ssh.
#
#   netns-cluster.sh up N [--rate 1gbit] [--burst 1mbit] [--mtu 9001] [--id K] [--data-net] [--owner-pid PID]
#                         [--host-rate I:RATE]... [--pair-rate I-J:RATE]... [--host-ulimit I:nofile=N]...
#   netns-cluster.sh shape [--id K] [--rate R] [--burst B] [--host-rate I:RATE]... [--pair-rate I-J:RATE]...
#   netns-cluster.sh down [--id K]
#   netns-cluster.sh hosts [--id K]          comma-separated host IPs for mpirun -H
#   netns-cluster.sh mpirun-args [--id K]    the mpirun flags that route through the cluster
#   netns-cluster.sh exec [--id K] HOST CMD...  run CMD inside HOST (name, index or IP)
#   netns-cluster.sh status [--id K]
#
# Host i (1-based) is namespace np<K>h<i>, hostname np<K>-h<i>. --rate shapes
# each host's link in both directions with tbf; --mtu defaults to 9001 as
# within an AWS VPC. --burst is tbf's bucket (default 1mbit, 125 KB: 1 ms
# at 1 Gbit/s): a link idle for that long passes that much at the veth's
# speed, so back-to-back small messages are measured partly above the rate,
# by how much the sizes before them left in the bucket. A burst of a few
# MTUs (20k at --mtu 9001; tbf splits larger GSO packets itself) takes that
# credit away, but TCP's bulk transfers then queue at the shaper and reach
# about 0.7-0.8 of the rate (docs/allreduce.md). --host-rate and
# --pair-rate shape with htb, whose classes keep a 128k burst.
# --host-rate gives host I its own rate (one slow NIC); --pair-rate slows
# only the traffic between hosts I and J (one bad link): both make every
# eth0 an htb with a class per destination (egress, in the host) and per
# source (ingress, the bridge side). `shape` replaces the shaping of a
# running cluster. --host-ulimit sets a soft limit (nofile,
# memlock, nproc) for everything started in host I (one node whose limits
# differ); the agent applies it. --owner-pid: a later `up` with the same id tears a
# cluster down first when its owner is gone (tests killed mid-run). Needs root
# (CAP_NET_ADMIN, CAP_SYS_ADMIN); says so and exits 77 otherwise.
#
# Example:
#   scripts/netns-cluster.sh up 4 --rate 1gbit
#   mpirun -np 4 -H "$(scripts/netns-cluster.sh hosts)" $(scripts/netns-cluster.sh mpirun-args) \
#          build/bin/nodeprobe-allreduce --backend fabric --provider tcp
#   scripts/netns-cluster.sh down
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
state_root=${NODEPROBE_NETNS_STATE:-/run/nodeprobe-netns}
rate=""
burst=""
mtu=9001
data_net=0
host_rates=()
pair_rates=()
host_ulimits=()

# shellcheck source=scripts/lib/cluster_common.sh
. "$here/lib/cluster_common.sh"

cluster_command "$@"
set -- "${args[@]}"
exec_args=()
while [[ $# -gt 0 ]]; do
  if [[ $cmd == exec && $1 != -* ]]; then
    [[ $# -ge 2 ]] || die "exec needs HOST and a command"
    exec_args=("$@"); break
  fi
  case "$1" in
    --rate) rate=${2:?--rate needs a value}; shift ;;
    --burst) burst=${2:?--burst needs a value}; shift ;;
    --mtu) mtu=${2:?--mtu needs a value}; shift ;;
    --data-net) data_net=1 ;;
    --host-rate) host_rates+=("${2:?--host-rate needs I:RATE}"); shift ;;
    --pair-rate) pair_rates+=("${2:?--pair-rate needs I-J:RATE}"); shift ;;
    --host-ulimit) host_ulimits+=("${2:?--host-ulimit needs I:nofile=N}"); shift ;;
    *) printf 'netns-cluster.sh: unknown option %s (see --help)\n' "$1" >&2; exit 64 ;;
  esac
  shift
done
[[ $mtu =~ ^[0-9]+$ && $mtu -ge 576 && $mtu -le 65535 ]] || die "--mtu must be 576..65535"
rate_re='^[0-9]+(\.[0-9]+)?([kmgt]?bit|[kmgt]?bps)$'
[[ -z $rate || $rate =~ $rate_re ]] || die "--rate must look like 1gbit, 500mbit (tc units)"
if [[ -n $burst ]]; then
  [[ $burst =~ ^([0-9]+)(b|k|kb|m|mb|kbit|mbit)?$ ]] || die "--burst must look like 20k, 1mbit (tc units)"
  burst_bytes=${BASH_REMATCH[1]}
  case ${BASH_REMATCH[2]} in
    k|kb) burst_bytes=$((burst_bytes * 1024)) ;; m|mb) burst_bytes=$((burst_bytes * 1048576)) ;;
    kbit) burst_bytes=$((burst_bytes * 125)) ;; mbit) burst_bytes=$((burst_bytes * 125000)) ;;
  esac
  [[ $burst_bytes -ge $((mtu + 64)) ]] || die "--burst $burst is smaller than a packet (--mtu $mtu): nothing would pass"
fi
for hr in "${host_rates[@]}"; do
  [[ $hr =~ ^([0-9]+):(.+)$ && ${BASH_REMATCH[2]} =~ $rate_re ]] || die "--host-rate must look like 3:50mbit"
done
for pr in "${pair_rates[@]}"; do
  [[ $pr =~ ^([0-9]+)-([0-9]+):(.+)$ && ${BASH_REMATCH[3]} =~ $rate_re && ${BASH_REMATCH[1]} != "${BASH_REMATCH[2]}" ]] \
    || die "--pair-rate must look like 1-2:50mbit (two different hosts)"
done
for hu in "${host_ulimits[@]}"; do
  [[ $hu =~ ^([0-9]+):(nofile|memlock|nproc)=([0-9]+|unlimited)$ ]] || die "--host-ulimit must look like 2:nofile=1024"
done

dir=$state_root/$id
br=np${id}br0
br1=np${id}br1
ns_name() { echo "np${id}h$1"; }

need_root() {
  if [[ $(id -u) -ne 0 ]]; then
    echo "netns-cluster.sh: needs root (network namespaces, bridges)" >&2; exit 77
  fi
  local probe="np${id}probe$$"
  if ! ip netns add "$probe" 2>/dev/null; then
    echo "netns-cluster.sh: cannot create network namespaces here (ip netns add failed)" >&2; exit 77
  fi
  ip netns del "$probe"
}

# Shapes egress of DEV (in namespace NS, "" = root) to the rate.
shape() {
  local ns=$1 dev=$2 run=()
  [[ -n $ns ]] && run=(ip netns exec "$ns")
  # burst: --burst, else 1 ms at 1 Gbit/s (the header says what it changes).
  "${run[@]}" tc qdisc replace dev "$dev" root tbf rate "$rate" burst "${burst:-1mbit}" latency 20ms
}

# The rate of host I: its --host-rate, else --rate, else unshaped (10gbit).
host_rate() {
  local i=$1 hr r=${rate:-10gbit}
  for hr in "${host_rates[@]}"; do [[ ${hr%%:*} == "$i" ]] && r=${hr#*:}; done
  echo "$r"
}

# htb on DEV (namespace NS, "" = root): the default class at RATE, and one
# class per peer of a --pair-rate that involves host I, matched on the peer's
# address as MATCH (dst for egress in the host, src for the bridge side).
shape_htb() {
  local ns=$1 dev=$2 i=$3 match=$4 run=() pr a b peer prate n=10
  [[ -n $ns ]] && run=(ip netns exec "$ns")
  "${run[@]}" tc qdisc del dev "$dev" root 2>/dev/null || true
  "${run[@]}" tc qdisc add dev "$dev" root handle 1: htb default 10 r2q 1000
  "${run[@]}" tc class add dev "$dev" parent 1: classid 1:10 htb rate "$(host_rate "$i")" burst 128k cburst 128k
  for pr in "${pair_rates[@]}"; do
    a=${pr%%-*}; b=${pr#*-}; b=${b%%:*}; prate=${pr#*:}
    if [[ $a == "$i" ]]; then peer=$b; elif [[ $b == "$i" ]]; then peer=$a; else continue; fi
    n=$((n + 1))
    "${run[@]}" tc class add dev "$dev" parent 1: classid "1:$n" htb rate "$prate" burst 128k cburst 128k
    "${run[@]}" tc filter add dev "$dev" parent 1: protocol ip prio 1 u32 match ip "$match" "198.18.$id.$peer/32" \
      flowid "1:$n"
  done
}

# Shapes every host of the cluster: tbf at --rate when that is all, else htb.
apply_shaping() {
  local i
  for ((i = 1; i <= count; i++)); do
    if [[ ${#host_rates[@]} -eq 0 && ${#pair_rates[@]} -eq 0 ]]; then
      if [[ -n $rate ]]; then
        shape "$(ns_name "$i")" eth0; shape "" "np${id}h${i}v0"
      else
        ip netns exec "$(ns_name "$i")" tc qdisc del dev eth0 root 2>/dev/null || true
        tc qdisc del dev "np${id}h${i}v0" root 2>/dev/null || true
      fi
    else
      shape_htb "$(ns_name "$i")" eth0 "$i" dst
      shape_htb "" "np${id}h${i}v0" "$i" src
    fi
  done
  { echo "rate ${rate:-unshaped}"
    [[ -n $burst ]] && echo "burst $burst"
    for i in "${host_rates[@]}"; do echo "host-rate $i"; done
    for i in "${pair_rates[@]}"; do echo "pair-rate $i"; done
  } > "$dir/shaping"
}

# firewalld (RHEL's default firewall) rejects what the test hosts send to this
# machine over the bridges (Open MPI's daemons call back to mpirun here):
# the bridges join the trusted zone while the cluster is up (runtime only).
firewalld_trust() {  # add|remove BRIDGE...
  local op=$1 b; shift
  command -v firewall-cmd >/dev/null 2>&1 && firewall-cmd --state >/dev/null 2>&1 || return 0
  for b in "$@"; do
    firewall-cmd --zone=trusted "--$op-interface=$b" >/dev/null 2>&1 || true
  done
  [[ $op == add ]] && echo "$*" > "$dir/firewalld"
  return 0
}

down() {
  local i ns
  # shellcheck disable=SC2046
  [[ -f $dir/firewalld ]] && firewalld_trust remove $(cat "$dir/firewalld")
  if [[ -f $dir/count ]]; then
    local n; n=$(cat "$dir/count")
    for ((i = 1; i <= n; i++)); do
      ns=$(ns_name "$i")
      ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
      ip netns del "$ns" 2>/dev/null || true
      ip link del "np${id}h${i}v0" 2>/dev/null || true
      ip link del "np${id}h${i}v1" 2>/dev/null || true
    done
  fi
  # Namespaces left by an interrupted `up` (count not yet written).
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^np${id}h[0-9]+$" || true); do
    ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
    ip netns del "$ns" 2>/dev/null || true
  done
  ip link del "$br" 2>/dev/null || true
  ip link del "$br1" 2>/dev/null || true
  rm -rf "$dir"
}

up() {
  need_root
  [[ $count -ge 1 && $count -le 200 ]] || die "N must be 1..200"
  check_hosts_named
  cluster_clear_stale
  mkdir -p "$dir"
  trap 'down; exit 2' ERR INT TERM
  [[ -n $owner_pid ]] && echo "$owner_pid" > "$dir/owner"
  ip link add "$br" type bridge
  ip addr add "198.18.$id.254/24" dev "$br"
  ip link set "$br" mtu "$mtu" up
  if [[ $data_net == 1 ]]; then
    ip link add "$br1" type bridge
    ip addr add "198.19.$id.254/24" dev "$br1"
    ip link set "$br1" mtu "$mtu" up
  fi
  if [[ $data_net == 1 ]]; then firewalld_trust add "$br" "$br1"; else firewalld_trust add "$br"; fi
  : > "$dir/hosts"
  local i ns
  for ((i = 1; i <= count; i++)); do
    ns=$(ns_name "$i")
    ip netns add "$ns"
    ip netns exec "$ns" ip link set lo up
    ip link add "np${id}h${i}v0" mtu "$mtu" type veth peer name eth0 mtu "$mtu" netns "$ns"
    ip link set "np${id}h${i}v0" master "$br" up
    ip netns exec "$ns" ip addr add "198.18.$id.$i/24" dev eth0
    ip netns exec "$ns" ip link set eth0 up
    ip netns exec "$ns" ip route add default via "198.18.$id.254"
    if [[ $data_net == 1 ]]; then
      ip link add "np${id}h${i}v1" mtu "$mtu" type veth peer name eth1 mtu "$mtu" netns "$ns"
      ip link set "np${id}h${i}v1" master "$br1" up
      ip netns exec "$ns" ip addr add "198.19.$id.$i/24" dev eth1
      ip netns exec "$ns" ip link set eth1 up
    fi
    if [[ -n $rate && $data_net == 1 ]]; then shape "$ns" eth1; shape "" "np${id}h${i}v1"; fi
    echo "198.18.$id.$i np${id}-h$i $ns" >> "$dir/hosts"
  done
  apply_shaping
  local hu
  for hu in "${host_ulimits[@]}"; do
    [[ ${hu%%:*} -ge 1 && ${hu%%:*} -le $count ]] || die "--host-ulimit names host ${hu%%:*} of $count"
    echo "${hu#*:}" | tr '=' ' ' >> "$dir/ulimit.${hu%%:*}"
  done
  echo "$count" > "$dir/count"
  echo "${rate:-unshaped}" > "$dir/rate"
  trap - ERR INT TERM
  echo "netns cluster $id: $count hosts 198.18.$id.1-$count${data_net:+ }$([[ $data_net == 1 ]] && echo "(data 198.19.$id.x)"), mtu $mtu, rate ${rate:-unshaped}" >&2
}

# Every host a --host-rate/--pair-rate names exists.
check_hosts_named() {
  local x h
  for x in "${host_rates[@]}"; do h=${x%%:*}; [[ $h -ge 1 && $h -le $count ]] || die "--host-rate names host $h of $count"; done
  for x in "${pair_rates[@]}"; do
    h=${x%%-*}; [[ $h -ge 1 && $h -le $count ]] || die "--pair-rate names host $h of $count"
    h=${x#*-}; h=${h%%:*}; [[ $h -ge 1 && $h -le $count ]] || die "--pair-rate names host $h of $count"
  done
}

hosts() {
  [[ -f $dir/hosts ]] || die "cluster $id is not up"
  awk '{print $1}' "$dir/hosts" | paste -sd, -
}

# Finds the namespace and hostname of HOST (IP, name or index) in any cluster.
lookup() {
  local h=$1 f
  if [[ $h =~ ^[0-9]+$ && -f $dir/hosts ]]; then
    sed -n "${h}p" "$dir/hosts"; return
  fi
  for f in "$state_root"/*/hosts; do
    [[ -f $f ]] || continue
    awk -v h="$h" '$1 == h || $2 == h || $3 == h {print; exit}' "$f"
  done | head -1
}

case "$cmd" in
  up) up ;;
  shape)
    [[ -f $dir/count ]] || die "cluster $id is not up"
    need_root
    count=$(cat "$dir/count")
    check_hosts_named
    apply_shaping
    echo "${rate:-unshaped}" > "$dir/rate" ;;
  down) down ;;
  hosts) hosts ;;
  mpirun-args)
    [[ -f $dir/hosts ]] || die "cluster $id is not up"
    # TCP only, on the cluster subnet; the agent instead of ssh.
    echo "--mca plm_rsh_agent $here/netns-agent --mca btl self,tcp" \
         "--mca btl_tcp_if_include 198.18.$id.0/24 --mca oob_tcp_if_include 198.18.$id.0/24" ;;
  exec)
    [[ ${#exec_args[@]} -ge 2 ]] || die "exec needs HOST and a command"
    entry=$(lookup "${exec_args[0]}")
    [[ -n $entry ]] || die "unknown host ${exec_args[0]}"
    read -r ip hn ns <<< "$entry"
    # The host's own soft limits (--host-ulimit), as the agent applies them.
    exec ip netns exec "$ns" unshare --uts /bin/sh -c 'hostname "$0" && eval "$1" && shift && exec "$@"' \
      "$hn" "$("$here/netns-agent" --ulimit-prefix "$ip")" "${exec_args[@]:1}" ;;
  status)
    if [[ -f $dir/hosts ]]; then
      cat "$dir/hosts"; cat "$dir/shaping" 2>/dev/null || echo "rate $(cat "$dir/rate")"
      for f in "$dir"/ulimit.*; do [[ -f $f ]] && echo "host ${f##*.} ulimit: $(tr '\n' ' ' < "$f")"; done
    else echo "cluster $id is down"; fi ;;
  *) usage >&2; exit 64 ;;
esac
