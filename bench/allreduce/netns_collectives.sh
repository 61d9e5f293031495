#!/usr/bin/env bash
# Benchmark: nccl-tests' other collectives (--collective) on a 4-host netns
# cluster whose links are shaped to 1 Gbit/s (tbf, both directions): the
# fabric backend over the libfabric tcp provider vs Open MPI over its TCP BTL
# (MPI_Allgather, MPI_Reduce_scatter_block, MPI_Bcast, MPI_Reduce,
# MPI_Alltoall, MPI_Sendrecv with Open MPI's default algorithms), side by side
# in one invocation per collective (--compare fabric:tcp,mpi), out of place.
# Prints, per collective and size: both busbw values, fabric / MPI, and busbw
# over the link rate (nccl-tests' busbw factors: a collective at the link's
# speed reads 1.0). Needs root (network namespaces). Numbers depend on the
# machine's load: the cluster runs 4 ranks on whatever cores are free.
#
#   bench/allreduce/netns_collectives.sh [BUILD_DIR] [--rate 1gbit] [--sizes 1K:16M] [--factor 16]
#                                        [--iters 10] [--id 43] [--collectives allgather,reducescatter,...]
#                                        [--algo auto|ring|log]
# --algo forces the fabric's allgather and reducescatter schedule: ring, or
# log (recursive doubling / halving); auto (default) picks by size
# (--ring-min, docs/allreduce.md). The other collectives have one schedule each.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$here/build
rate=1gbit
sizes=1K:16M
factor=16
iters=10
id=43
collectives=allgather,reducescatter,broadcast,reduce,alltoall,sendrecv
algo=auto
# shellcheck source=bench/allreduce/netns_lib.sh
. "$here/bench/allreduce/netns_lib.sh"
netns_bench_args netns_collectives.sh --sizes sizes --factor factor --iters iters --collectives collectives --algo algo -- "$@"
netns_bench_up netns_collectives.sh "$build" "$id" "$rate"
IFS=, read -r -a list <<<"$collectives"
for c in "${list[@]}"; do
  a=auto
  if [[ $c == allgather || $c == reducescatter ]]; then
    case $algo in
      ring) a=ring ;;
      log) a=rd; [[ $c == reducescatter ]] && a=rh ;;
    esac
  fi
  cmd=("$mpirun" -np 4 -H "$hosts" --allow-run-as-root "${flags[@]}" --mca mpi_yield_when_idle 1
       "$bin" --collective "$c" --algo "$a" --compare fabric:tcp,mpi -b "${sizes%%:*}" -e "${sizes##*:}" -f "$factor"
       -n "$iters" -w 2 --inplace 0 --timeout 1200 -q --json "$out/$c.json")
  echo "==> [$c] load before: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores" >&2
  echo "==> [$c] ${cmd[*]}" >&2
  "${cmd[@]}" >/dev/null
done

python3 - "$rate" "${list[@]/#/$out/}" <<'PY'
import json, re, sys
rate, names = sys.argv[1], sys.argv[2:]
m = re.fullmatch(r"([0-9.]+)([kmgt]?)(bit|bps)", rate)
scale = {"": 1, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}[m.group(2)]
link = float(m.group(1)) * scale / (8 if m.group(3) == "bit" else 1) / 1e9   # GB/s
print(f"\nlink rate {rate} = {link:.4f} GB/s per direction per host")
print(f"{'collective':>14} {'size':>10} {'algo':>9} {'fabric':>9} {'mpi':>9} {'fab/link':>9} {'mpi/link':>9} {'fab/mpi':>8}")
for path in names:
    p = json.load(open(path + ".json"))["probes"][0]
    coll = p["config"]["collective"]
    rows = {t["target"]: {r["size"]: r for r in t["table"]} for t in p["data"]["targets"]}
    fab, mpi = rows.get("fabric:tcp", {}), rows.get("mpi", {})
    for size in sorted(fab):
        f = fab[size]["out_of_place"]["busbw_GBps"] if fab[size]["out_of_place"] else 0
        x = mpi.get(size, {}).get("out_of_place") or {}
        mp = x.get("busbw_GBps", 0)
        ratio = f"{f / mp:8.3f}" if mp else "     n/a"
        print(f"{coll:>14} {size:>10} {fab[size].get('algorithm', ''):>9} {f:>9.4f} {mp:>9.4f} "
              f"{f / link:>9.3f} {mp / link:>9.3f} {ratio}")
    print(f"{coll:>14} status {p['status']}")
PY
