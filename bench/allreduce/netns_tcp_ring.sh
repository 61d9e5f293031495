#!/usr/bin/env bash
# Benchmark: the ceiling a TCP stream reaches on the netns cluster's shaped
# links, in the allreduce ring's pattern (host i sends to host i+1 while it
# receives from host i-1, all four at once), to set the fabric ring's
# "busbw / link rate" beside what plain TCP gets on the same wires.
# Prints each host's receive goodput over the last seconds and its ratio to
# the link rate. Needs root (network namespaces) and python3 (the stream's
# two ends; no other peer is needed).
#
#   bench/allreduce/netns_tcp_ring.sh [BUILD_DIR] [--rate 1gbit] [--seconds 12] [--id 43]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$here/build
rate=1gbit
seconds=12
id=43
# shellcheck source=bench/allreduce/netns_lib.sh
. "$here/bench/allreduce/netns_lib.sh"
netns_bench_args netns_tcp_ring.sh --seconds seconds -- "$@"
[[ $seconds =~ ^[0-9]+$ && $seconds -ge 3 ]] || { echo "netns_tcp_ring.sh: --seconds must be >= 3" >&2; exit 64; }
netns_bench_up netns_tcp_ring.sh "$build" "$id" "$rate"
IFS=, read -r -a addrs <<< "$hosts"
n=${#addrs[@]}
cat > "$out/ring.py" <<'PY'
import socket, sys, threading, time
me, nxt, secs = sys.argv[1], sys.argv[2], float(sys.argv[3])
ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); ls.bind((me, 5999)); ls.listen(1)
res = {}
def rx():
    c, _ = ls.accept(); buf = memoryview(bytearray(1 << 20)); t0 = None; total = mark_bytes = 0; mark_t = None
    while True:
        k = c.recv_into(buf)
        if k == 0: break
        now = time.time(); t0 = t0 or now; total += k
        if mark_t is None and now - t0 > 1.0: mark_t, mark_bytes = now, total  # the first second is slow start
    res['Bps'] = (total - mark_bytes) / (time.time() - mark_t)
th = threading.Thread(target=rx); th.start()
time.sleep(1.0)  # every host listening before any connects
s = socket.socket(); s.connect((nxt, 5999)); data = b"x" * (1 << 20); end = time.time() + secs
while time.time() < end: s.sendall(data)
s.close(); th.join()
print(f"{me} {res['Bps'] / 1e6:.1f}")
PY
pids=()
for ((i = 0; i < n; i++)); do
  ip netns exec "np${id}h$((i + 1))" python3 "$out/ring.py" "${addrs[i]}" "${addrs[(i + 1) % n]}" "$seconds" > "$out/h$i.txt" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
python3 - "$rate" "$out" "$n" <<'PY'
import sys
rate, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
units = {"kbit": 1e3, "mbit": 1e6, "gbit": 1e9}
num = rate.rstrip("kmgbit"); bps = float(num) * units[rate[len(num):]] / 8
print(f"link rate {rate} = {bps / 1e6:.1f} MB/s per direction per host; {n} hosts streaming in a ring")
print("host              MB/s   of link")
for i in range(n):
    host, mbs = open(f"{out}/h{i}.txt").read().split()
    print(f"{host:<16} {float(mbs):6.1f}   {float(mbs) * 1e6 / bps:.3f}")
PY
