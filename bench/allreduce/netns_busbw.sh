#!/usr/bin/env bash
# Benchmark: allreduce bus bandwidth on a 4-host netns cluster whose links
# are shaped to 1 Gbit/s (tbf, both directions), fabric over the libfabric tcp
# provider vs MPI_Allreduce over Open MPI's TCP BTL, side by side in one
# invocation (--compare fabric:tcp,mpi). Runs it twice: with Open MPI's
# default allreduce algorithm (what users get) and with its ring algorithm
# forced (coll_tuned_allreduce_algorithm 4, the strongest MPI peer here).
# Prints, per size >= 64 MB:
#   busbw / link rate for each (a ring's optimum is the link rate; goal >= 0.90)
#   fabric busbw / MPI busbw                                      (goal >= 1.0)
# Needs root (network namespaces). Numbers depend on the machine's load: the
# cluster runs 4 ranks and the kernel's TCP on whatever cores are free.
#
#   bench/allreduce/netns_busbw.sh [BUILD_DIR] [--rate 1gbit] [--sizes 64M:256M] [--iters 5] [--id 42]
#                                  [--mpi default|ring|both]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$here/build
rate=1gbit
sizes=64M:256M
iters=5
id=42
mpi_algos=both
segsize=1048576
# shellcheck source=bench/allreduce/netns_lib.sh
. "$here/bench/allreduce/netns_lib.sh"
netns_bench_args netns_busbw.sh --sizes sizes --iters iters --mpi mpi_algos --segsize segsize -- "$@"
netns_bench_up netns_busbw.sh "$build" "$id" "$rate"
# Four "hosts" share this machine's cores: every rank yields when idle (MPI
# too), so neither side wins by spinning.
run_one() {  # NAME [mpirun MCA flags...]
  local name=$1; shift
  local cmd=("$mpirun" -np 4 -H "$hosts" --allow-run-as-root "${flags[@]}" --mca mpi_yield_when_idle 1 "$@"
       "$bin" --compare fabric:tcp,mpi -b "${sizes%%:*}" -e "${sizes##*:}" -f 2 -n "$iters" -w 1 --inplace 0
       --timeout 1200 --json "$out/$name.json")
  echo "==> [$name] load before: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores" >&2
  echo "==> [$name] ${cmd[*]}" >&2
  "${cmd[@]}"
  echo "==> [$name] load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
}
case "$mpi_algos" in
  default) run_one mpi-default ;;
  ring) run_one mpi-ring --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_allreduce_algorithm 4 ;;
  seg) run_one mpi-segring --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_allreduce_algorithm 5 \
         --mca coll_tuned_allreduce_algorithm_segmentsize "$segsize" ;;
  both) run_one mpi-default
        run_one mpi-ring --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_allreduce_algorithm 4 ;;
  *) echo "netns_busbw.sh: --mpi default|ring|both" >&2; exit 64 ;;
esac

python3 - "$rate" "$out"/*.json <<'PY'
import json, os, re, sys
rate, reports = sys.argv[1], sys.argv[2:]
m = re.fullmatch(r"([0-9.]+)([kmgt]?)(bit|bps)", rate)
scale = {"": 1, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}[m.group(2)]
link = float(m.group(1)) * scale / (8 if m.group(3) == "bit" else 1) / 1e9   # GB/s
print(f"\nlink rate {rate} = {link:.4f} GB/s per direction per host; 4 ranks: ring busbw optimum = link rate")
for report in reports:
    p = json.load(open(report))["probes"][0]
    bw = {}
    for x in p["metrics"]:
        l = x["labels"]
        if x["name"] == "busbw" and l["placement"] == "out-of-place":
            target = l["backend"] if l["backend"] == "mpi" else f"{l['backend']}:{l['provider']}"
            bw.setdefault(int(l["size"]), {})[target] = x["value"]
    print(f"\n[{os.path.basename(report)[:-5]}] status {p['status']}")
    print(f"{'size':>12} {'fabric:tcp':>11} {'mpi':>9} {'fabric/link':>12} {'mpi/link':>9} {'fabric/mpi':>11}")
    fab_ok = mpi_ok = ratio_ok = True
    big_n = 0
    for size in sorted(bw):
        f, mp = bw[size].get("fabric:tcp", 0), bw[size].get("mpi", 0)
        r = f / mp if mp else float("nan")
        print(f"{size:>12} {f:>11.4f} {mp:>9.4f} {f/link:>12.3f} {mp/link:>9.3f} {r:>11.3f}")
        if size >= 64 << 20:
            fab_ok &= f >= 0.9 * link
            mpi_ok &= mp >= 0.9 * link
            ratio_ok &= f >= mp
            big_n += 1
    say = lambda ok: ("met" if ok else "NOT met") if big_n else "no size measured"
    print(f"goals at >= 64 MB: fabric >= 0.90 x link {say(fab_ok)}; mpi >= 0.90 x link {say(mpi_ok)}; "
          f"fabric >= mpi {say(ratio_ok)}")
PY
