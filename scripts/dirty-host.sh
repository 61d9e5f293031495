#!/usr/bin/env bash
# dirty-host.sh: run a command on this machine as if it had a past. In a
# private mount namespace (nothing outside it changes, other processes see the
# real machine) the places nodeprobe reads the live system from show what a
# node that has been in service shows:
#   /var/log (a tmpfs): messages with OOM kills (header, task dump, kill line)
#     and Xid 79 / 48 from two months ago; audit/audit.log with SELinux AVC
#     denials; no journal
#   /dev/kmsg: an OOM kill early in this boot
#   /proc/sys: vm.max_map_count 1024, net.core.somaxconn 128; /proc/loadavg 96
#   the command's own limits: nofile 1024, memlock 64 KiB (soft)
# scripts/test.sh runs the integration tier under it: tests must not depend on
# this machine's history (they read fixture roots, --sysroot, or assert only
# what they control).
#
#   scripts/dirty-host.sh [--check NODEPROBE] -- COMMAND [ARG...]
#
# --check NODEPROBE first runs `NODEPROBE diag` inside and fails (exit 2)
# unless it finds host.oom, gpu.xid and selinux.avc: the dirt must be visible
# to the product, or the guard proves nothing. Needs root and unshare; exits
# 77 when it cannot make the namespace.
set -euo pipefail
check=""
usage() { sed -n '2,21p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --check) check=${2:?--check needs the nodeprobe executable}; shift 2 ;;
    --) shift; break ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "dirty-host.sh: unknown option $1 (see --help)" >&2; exit 64 ;;
    *) break ;;
  esac
done
[[ $# -gt 0 ]] || { usage >&2; exit 64; }

if [[ -z ${NODEPROBE_DIRTY_HOST_INSIDE:-} ]]; then
  if [[ $(id -u) -ne 0 ]]; then echo "dirty-host.sh: needs root (a private mount namespace)" >&2; exit 77; fi
  if ! unshare --mount --propagation private true 2>/dev/null; then
    echo "dirty-host.sh: cannot make a mount namespace here (unshare --mount failed)" >&2; exit 77
  fi
  exec env NODEPROBE_DIRTY_HOST_INSIDE=1 unshare --mount --propagation private \
    "${BASH_SOURCE[0]}" ${check:+--check "$check"} -- "$@"
fi

# ---- inside the namespace -------------------------------------------------------------------
mount -t tmpfs -o mode=0755,size=16m nodeprobe-dirty-host /var/log
stage=/var/log/.nodeprobe-dirty-host
mkdir -p "$stage" /var/log/audit

old=$(( $(date +%s) - 60 * 86400 ))  # two months ago: an earlier boot
stamp() { LC_ALL=C date -d "@$(( old + $1 ))" '+%b %e %H:%M:%S'; }
host=$(hostname)
{
  echo "$(stamp 0) $host systemd[1]: Started Session 4 of user ec2-user."
  echo "$(stamp 10) $host kernel: python3 invoked oom-killer: gfp_mask=0x100cca(GFP_HIGHUSER_MOVABLE), order=0, oom_score_adj=0"
  echo "$(stamp 10) $host kernel: CPU: 12 PID: 31337 Comm: python3 Tainted: P           OE     4.18.0-553.el8_10.x86_64 #1"
  echo "$(stamp 10) $host kernel: [  pid  ]   uid  tgid total_vm      rss pgtables_bytes swapents oom_score_adj name"
  echo "$(stamp 10) $host kernel: [  31337]  1000 31337 24691358 21913580 175411200        0             0 python3"
  echo "$(stamp 10) $host kernel: oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0-1,global_oom,task_memcg=/user.slice/user-1000.slice/session-4.scope,task=python3,pid=31337,uid=1000"
  echo "$(stamp 10) $host kernel: Out of memory: Killed process 31337 (python3) total-vm:98765432kB, anon-rss:87654320kB, file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:171300kB oom_score_adj:0"
  echo "$(stamp 11) $host kernel: oom_reaper: reaped process 31337 (python3), now anon-rss:0kB, file-rss:0kB, shmem-rss:0kB"
  echo "$(stamp 600) $host kernel: NVRM: Xid (PCI:0000:10:1c): 79, pid=4242, GPU has fallen off the bus."
  echo "$(stamp 601) $host kernel: NVRM: GPU 0000:10:1c.0: GPU has fallen off the bus."
  echo "$(stamp 900) $host kernel: NVRM: Xid (PCI:0000:a0:1c): 48, pid=5151, name=python3, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 1, subpartition 0."
} > /var/log/messages
cp /var/log/messages /var/log/kern.log
{
  echo "type=AVC msg=audit($old.120:812): avc:  denied  { read write } for  pid=4321 comm=\"python3\" name=\"nvidia0\" dev=\"devtmpfs\" ino=1313 scontext=system_u:system_r:container_t:s0:c12,c34 tcontext=system_u:object_r:xserver_misc_device_t:s0 tclass=chr_file permissive=0"
  echo "type=SYSCALL msg=audit($old.120:812): arch=c000003e syscall=257 success=no exit=-13 a0=ffffff9c items=0 ppid=4300 pid=4321 auid=1000 uid=1000 comm=\"python3\" exe=\"/usr/bin/python3.9\" subj=system_u:system_r:container_t:s0:c12,c34 key=(null)"
  echo "type=AVC msg=audit($(( old + 5 )).001:813): avc:  denied  { map } for  pid=4321 comm=\"python3\" path=\"/dev/nvidiactl\" dev=\"devtmpfs\" ino=1314 scontext=system_u:system_r:container_t:s0:c12,c34 tcontext=system_u:object_r:xserver_misc_device_t:s0 tclass=chr_file permissive=0"
} > /var/log/audit/audit.log

# /dev/kmsg: one record (a regular file gives it in one read), 5 s after boot.
printf '3,812,5000000,-;Out of memory: Killed process 2718 (pt_main_thread) total-vm:61234567kB, anon-rss:52345678kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:102400kB oom_score_adj:0\n' \
  > "$stage/kmsg"
mount --bind "$stage/kmsg" /dev/kmsg
put() {  # PATH VALUE: PATH reads VALUE in here
  local f; f=$stage/$(echo "$1" | tr / _)
  echo "$2" > "$f"
  [[ -e $1 ]] && mount --bind "$f" "$1"
}
put /proc/sys/vm/max_map_count 1024
put /proc/sys/net/core/somaxconn 128
put /proc/loadavg "96.00 95.50 90.25 97/2048 31338"
ulimit -S -n 1024
ulimit -S -l 64

if [[ -n $check ]]; then
  out=$stage/diag.json
  "$check" diag --json "$out" -q >/dev/null 2>&1 || true  # 1: findings; the report is what counts
  missing=""
  for id in host.oom gpu.xid selinux.avc; do
    grep -q "\"id\": *\"$id\"" "$out" 2>/dev/null || missing+=" $id"
  done
  if [[ -n $missing ]]; then
    echo "dirty-host.sh: nodeprobe diag does not see the dirt (missing:$missing): the guard would prove nothing" >&2
    exit 2
  fi
  echo "dirty-host.sh: this machine now shows old OOM kills, Xid 79/48, AVC denials, low limits (nodeprobe diag agrees)" >&2
fi
exec "$@"
