#!/usr/bin/env python3
"""Reads netns_algos.sh's reports (one JSON per variant and round, named
VARIANT.rROUND.json) and prints, per size, the fabric against Open MPI.

usage: netns_algos_report.py RATE DIR

Two ratios per size, fabric busbw over the better MPI's (from the mean time,
as nccl-tests):
- "fab/mpi": each variant's median over the rounds, the best of Open MPI's
  default and six forced algorithms. Picking the largest of seven noisy
  medians favours MPI (the winner's curse: the variant chosen is partly the
  one that was lucky in these rounds).
- "held-out" (three rounds or more): for each round, the MPI variant is
  chosen from the other rounds' medians and compared with the fabric in the
  left-out round, where neither was used to choose; the median over the
  rounds. The choice is made without the numbers it is judged on.
"""
import glob, json, os, re, statistics, sys

rate, out = sys.argv[1], sys.argv[2]
m = re.fullmatch(r"([0-9.]+)([kmgt]?)(bit|bps)", rate)
link = float(m.group(1)) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}[m.group(2)] / (8 if m.group(3) == "bit" else 1) / 1e9
names = {"1": "linear", "2": "nonoverlap", "3": "rd", "4": "ring", "5": "segring", "6": "rabenseifner"}
# samples[(variant, size)][round] = (busbw, time, p50)
samples, algos, rounds = {}, {}, set()
for path in sorted(glob.glob(os.path.join(out, "*.json"))):
    run, _, rnd = os.path.basename(path)[:-5].partition(".r")
    rounds.add(rnd)
    try:
        p = json.load(open(path))["probes"][0]
    except Exception as e:
        print(f"{run}: no report ({e})"); continue
    for t in p["data"].get("targets", []):
        if t["status"] not in ("pass", "warn"):
            print(f"{run} {t['target']}: {t['status']} {t['reason']}")
        for row in t.get("table", []):
            o = row.get("out_of_place")
            if not o: continue
            if o.get("wrong"): print(f"{run} {t['target']} {row['size']}: {o['wrong']} wrong")
            size = row["size"]
            p50 = o.get("time_p50_us", o["time_us"])
            if "-fab_" in run:
                variant = "fab:" + run.split("-fab_", 1)[1]   # the fabric forced to one algorithm
            elif t["target"].startswith("fabric"):
                variant = "fabric"
                algos[size] = row.get("algorithm", "?")
            else:
                variant = "default" if run.endswith("default") else names[run[-1]]
            # The small, mid and large ranges do not share sizes: one sample per range and round.
            samples.setdefault((variant, size), {})[run.split("-")[0] + "." + rnd] = (o["busbw_GBps"], o["time_us"], p50)

def med(got, i):
    return statistics.median(x[i] for x in got)

def med_of(variant, size, i):
    """The median over rounds of field i (0 busbw, 1 time, 2 p50) of a variant at a size."""
    return med(samples[(variant, size)].values(), i)

sizes = sorted({s for (v, s) in samples if v == "fabric"})
def mpi_variants(size):
    return [v for (v, s) in samples if s == size and v != "fabric" and not v.startswith("fab:")]

def held_out(size):
    """Median over rounds of fabric/chosen MPI (busbw) and chosen/fabric (p50 time), the
    MPI variant chosen on the other rounds; None with fewer than three common rounds."""
    fab = samples[("fabric", size)]
    common = set(fab)
    variants = mpi_variants(size)
    for v in variants: common &= set(samples[(v, size)])
    if len(common) < 3 or not variants: return None
    ratios, ratios50 = [], []
    for r in sorted(common):
        rest = [q for q in common if q != r]
        best = max(variants, key=lambda v: statistics.median(samples[(v, size)][q][0] for q in rest))
        best50 = min(variants, key=lambda v: statistics.median(samples[(v, size)][q][2] for q in rest))
        ratios.append(fab[r][0] / samples[(best, size)][r][0])
        ratios50.append(samples[(best50, size)][r][2] / fab[r][2])
    return statistics.median(ratios), statistics.median(ratios50)

print(f"\n{len(rounds)} round(s) per size range; each number the median over its rounds")
print(f"\nlink rate {rate} = {link:.4f} GB/s; 4 ranks: the ring's busbw optimum is the link rate")
print(f"{'size':>10} {'algo':>13} {'fab us':>9} {'fab busbw':>10} {'mpi dflt':>9} {'best forced':>20} "
      f"{'fab/mpi':>8} {'p50 ratio':>9} {'held-out':>8} {'p50':>6} {'fab/link':>9}")
worst, worst50, worst_ho, worst_ho50, big_ok, big_n = 9e9, 9e9, 9e9, 9e9, True, 0
for size in sizes:
    fb, us, f50 = (med_of("fabric", size, i) for i in range(3))
    d, d50 = (med_of("default", size, 0), med_of("default", size, 2)) if ("default", size) in samples else (0, 0)
    f = {v: (med_of(v, size, 0), med_of(v, size, 2)) for v in mpi_variants(size) if v != "default"}
    best = max(f.items(), key=lambda kv: kv[1][0]) if f else ("-", (0, 0))
    peer = max(d, best[1][0])
    ratio = fb / peer if peer else float("nan")
    # p50: the fastest MPI variant's median time over fabric's
    m50 = min([x[1] for x in f.values() if x[1] > 0] + ([d50] if d50 > 0 else []), default=0)
    r50 = m50 / f50 if f50 > 0 and m50 > 0 else float("nan")
    worst, worst50 = min(worst, ratio), min(worst50, r50)
    ho = held_out(size)
    ho_txt = f"{ho[0]:>8.3f} {ho[1]:>6.3f}" if ho else f"{'-':>8} {'-':>6}"
    if ho: worst_ho, worst_ho50 = min(worst_ho, ho[0]), min(worst_ho50, ho[1])
    extra = ""
    if size >= 64 << 20:
        extra = f"{fb / link:>9.3f}"
        big_ok &= fb >= 0.93 * link
        big_n += 1
    print(f"{size:>10} {algos[size]:>13} {us:>9.1f} {fb:>10.5f} {d:>9.5f} {best[0]:>12} {best[1][0]:>7.5f} "
          f"{ratio:>8.3f} {r50:>9.3f} {ho_txt} {extra}")
print(f"\nfabric / better MPI: worst {worst:.3f} (p50: {worst50:.3f}; goal >= 1.0 at every size: {'met' if worst >= 1.0 else 'NOT met'})")
if worst_ho < 9e9:
    print(f"held out (MPI variant chosen on the other rounds): worst {worst_ho:.3f} (p50: {worst_ho50:.3f}; "
          f"goal >= 1.0 at every size: {'met' if worst_ho >= 1.0 else 'NOT met'})")
fab_algos = sorted({v for (v, s) in samples if v.startswith("fab:")})
if fab_algos:
    print("\nthe fabric per algorithm (--fabric-algos), p50 us, median over the rounds; auto's choice first")
    print(f"{'size':>10} {'auto':>20}" + "".join(f"{v[4:]:>14}" for v in fab_algos))
    for size in sizes:
        cells = [f"{med_of(v, size, 2):>8.1f}" if (v, size) in samples else f"{'-':>8}" for v in ["fabric"] + fab_algos]
        print(f"{size:>10} {algos[size]:>11} {cells[0]}" + "".join(f"{c:>14}" for c in cells[1:]))
print(f"fabric >= 0.93 x link at >= 64 MB: {('met' if big_ok else 'NOT met') if big_n else 'no size measured'}")
