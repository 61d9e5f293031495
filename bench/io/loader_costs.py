#!/usr/bin/env python3
"""Measures what a real PyTorch DataLoader costs in CPU on this node: the inputs
of nodeprobe-io's loader model (bench/io/loader_model.cpp, docs/io.md "The
loader model"). Benchmark tooling: needs torch (and, for --jpeg, pillow and
torchvision); nodeprobe itself never runs it.

For each sample size it prepares a files dataset of equal-sized samples with
nodeprobe-io, then runs torch_loader.py (one worker, prefetch 2, warm page
cache, no step) with list and with stack collate, and takes
  worker CPU per sample  = the workers' CPU (RUSAGE_CHILDREN) / samples read
  main CPU per batch     = the main process's CPU over the timed epochs / batches
and fits
  worker per sample = READ_BASE + READ_PER_MB x MB + SHARE_TENSOR x tensors / batch
  main per batch    = BATCH_BASE + TENSOR x tensors
(list collate sends `batch` tensors, stack one). With --jpeg it also times the
ImageNet training transform (PIL decode of ~110 kB JPEGs, RandomResizedCrop 224,
flip, ToTensor, Normalize; stack collate) and prints the preset's extra CPU per
sample beyond a plain read of its output.

  .venv-bench/bin/python bench/io/loader_costs.py --np build/bin/nodeprobe-io [--dir D]
        [--sizes 16k,110k,1M] [--batch 32] [--epochs 3] [--repeats 3] [--jpeg]

Prints a table, the fitted constants (for loader_model.cpp) and the flags that
pass this node's own costs to `nodeprobe-io sweep`.
"""
import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def parse_size(text):
    mult = {"k": 1e3, "M": 1e6, "G": 1e9}
    return int(float(text[:-1]) * mult[text[-1]]) if text[-1] in mult else int(text)


def run_loader(py, ds, collate, batch, epochs, samples):
    out = subprocess.run([py, os.path.join(HERE, "torch_loader.py"), "--dir", ds, "--workers", "1", "--prefetch", "2",
                          "--batch", str(batch), "--epochs", str(epochs), "--collate", collate],
                         check=True, capture_output=True, text=True).stdout
    j = json.loads(out.strip().splitlines()[-1])
    # The workers read the untimed warm-up epoch too.
    worker_us = j["worker_cpu_s"] / (samples * (epochs + 1)) * 1e6
    main_us = j["main_cpu_s"] / j["batches"] * 1e6
    return worker_us, main_us, j["torch"]


def calibration_us(np_bin, ds):
    """nodeprobe-io's start-up calibration work on this CPU, now (from a tiny sweep's report)."""
    rep = json.loads(subprocess.run([np_bin, "sweep", "--dir", ds, "--step-ms", "1000", "--workers-list", "1",
                                     "--prefetch-list", "1", "--seconds-per-point", "0.1", "--json", "-", "-q"],
                                    check=True, capture_output=True, text=True).stdout)
    return rep["probes"][0]["data"]["recommendation"]["model"]["calibration_us"]


def least_squares(rows, ys):
    """Coefficients c minimising |rows c - ys| (normal equations, Gaussian elimination)."""
    n = len(rows[0])
    a = [[sum(r[i] * r[j] for r in rows) for j in range(n)] + [sum(r[i] * y for r, y in zip(rows, ys))]
         for i in range(n)]
    for i in range(n):
        p = max(range(i, n), key=lambda k: abs(a[k][i]))
        a[i], a[p] = a[p], a[i]
        for k in range(n):
            if k != i and a[i][i]:
                f = a[k][i] / a[i][i]
                a[k] = [x - f * y for x, y in zip(a[k], a[i])]
    return [a[i][n] / a[i][i] if a[i][i] else 0.0 for i in range(n)]


def jpeg_costs(batch, workdir, n=256):
    """Worker CPU per sample and main CPU per batch of the ImageNet train transform."""
    import numpy as np
    import torch
    from PIL import Image
    from torch.utils.data import DataLoader, Dataset
    from torchvision import transforms

    rng = np.random.default_rng(0)
    paths, sizes = [], []
    h, w = 375, 500  # ImageNet's typical 500 x 375
    yy, xx = np.mgrid[0:h, 0:w]
    for i in range(n):
        # Photo-like content: smooth colour fields, edges and texture, so the
        # JPEG is ~110 kB at quality 90 like an ImageNet training image.
        base = np.stack([(xx * (1 + i % 5) + yy * (2 + i % 3)) % 256, (xx * yy // 97 + 40 * i) % 256,
                         (yy * 3 + i * 11) % 256], axis=-1).astype(np.float32)
        img = np.clip(base + rng.normal(0, 18, base.shape), 0, 255).astype(np.uint8)
        p = os.path.join(workdir, "%05d.jpg" % i)
        Image.fromarray(img).save(p, quality=90)
        paths.append(p)
        sizes.append(os.path.getsize(p))
    tf = transforms.Compose([transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(),
                             transforms.ToTensor(),
                             transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])

    class Jpegs(Dataset):
        def __len__(self):
            return len(paths)

        def __getitem__(self, i):
            with open(paths[i], "rb") as f:
                img = Image.open(f)
                img = img.convert("RGB")
            return tf(img)

    epochs = 2
    # Children this process waited for before (nodeprobe-io runs) are not the workers'.
    child0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    loader = DataLoader(Jpegs(), batch_size=batch, shuffle=True, num_workers=1, prefetch_factor=2,
                        persistent_workers=True)
    main0 = time.process_time()
    batches = 0
    for _ in range(epochs):
        for _b in loader:
            batches += 1
    main = time.process_time() - main0
    del loader
    child = resource.getrusage(resource.RUSAGE_CHILDREN)
    worker_s = child.ru_utime + child.ru_stime - child0.ru_utime - child0.ru_stime
    return worker_s * 1e6 / (n * epochs), main * 1e6 / batches, statistics.fmean(sizes)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--np", required=True, help="path of nodeprobe-io")
    ap.add_argument("--dir", help="scratch directory (default: a temporary one)")
    ap.add_argument("--sizes", default="16k,110k,1M")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--jpeg", action="store_true", help="also measure the jpeg-224 preset (pillow, torchvision)")
    a = ap.parse_args()
    py = sys.executable
    base = a.dir or tempfile.mkdtemp(prefix="nodeprobe-loader-costs-")
    os.makedirs(base, exist_ok=True)
    rows = []
    cals = []
    torch_version = "?"
    try:
        for text in a.sizes.split(","):
            size = parse_size(text)
            samples = max(256, min(4096, int(400e6 / size)))  # ~400 MB at most, stays cached
            ds = os.path.join(base, "costs-" + text)
            subprocess.run([a.np, "prepare", "--dir", ds, "--files", str(samples), "--size", text, "--size-spread",
                            "0", "--overwrite", "-q"], check=True, stdout=subprocess.DEVNULL)
            # Warm the cache and measure the native reader's own CPU per sample alongside.
            rep = json.loads(subprocess.run([a.np, "read", "--dir", ds, "--warm", "-w", "1", "-e", "3", "--json", "-",
                                             "-q"], check=True, capture_output=True, text=True).stdout)
            native_us = sum(w["cpu_s"] for w in rep["probes"][0]["data"]["workers"]) / \
                rep["probes"][0]["data"]["samples"] * 1e6
            cals.append(calibration_us(a.np, ds))
            for collate in ("list", "stack"):
                ws, ms = [], []
                for _ in range(a.repeats):
                    w, m, torch_version = run_loader(py, ds, collate, a.batch, a.epochs, samples)
                    ws.append(w)
                    ms.append(m)
                rows.append({"size": size, "collate": collate, "worker_us": statistics.median(ws),
                             "main_us": statistics.median(ms), "native_us": native_us,
                             "runs": {"worker_us": ws, "main_us": ms}})
            cals.append(calibration_us(a.np, ds))
            subprocess.run([a.np, "clean", "--dir", ds, "-q"], check=True, stdout=subprocess.DEVNULL)
        print("# torch %s, host %s, %d cores, load average %s, batch %d, 1 worker, warm, no step" %
              (torch_version, os.uname().nodename, os.cpu_count(), " ".join("%.1f" % x for x in os.getloadavg()),
               a.batch))
        print("%-9s %-6s %16s %16s %16s" % ("size", "collate", "worker us/sample", "main us/batch",
                                             "native us/sample"))
        for r in rows:
            print("%-9d %-6s %16.1f %16.1f %16.1f" % (r["size"], r["collate"], r["worker_us"], r["main_us"],
                                                      r["native_us"]))
        b = a.batch
        def tensors(r):
            return b if r["collate"] == "list" else 1
        # worker per sample = READ_BASE + READ_PER_MB x MB + SHARE_TENSOR x tensors / batch
        read_base, per_mb, share = least_squares(
            [[1.0, r["size"] / 1e6, tensors(r) / b] for r in rows], [r["worker_us"] for r in rows])
        # main per batch = BATCH_BASE + TENSOR x tensors + MAIN_PER_MB x MB per batch
        batch_base, tensor, main_mb = least_squares(
            [[1.0, tensors(r), r["size"] * b / 1e6] for r in rows], [r["main_us"] for r in rows])
        print("\n# fit (loader_model.cpp):")
        print("kReadBaseUs = %.1f  kReadPerMBUs = %.1f  kShareTensorUs = %.1f" % (read_base, per_mb, share))
        print("kBatchBaseUs = %.1f  kTensorUs = %.1f  kMainPerMBUs = %.1f" % (batch_base, tensor, main_mb))
        print("kCalibrationRefUs = %.1f  (nodeprobe-io's calibration work around the runs: %s)" %
              (statistics.median(cals), " ".join("%.1f" % c for c in cals)))
        print("# fit residuals (us): worker %s | main %s" % (
            " ".join("%+.0f" % (r["worker_us"] - read_base - per_mb * r["size"] / 1e6 - share * tensors(r) / b)
                     for r in rows),
            " ".join("%+.0f" % (r["main_us"] - batch_base - tensor * tensors(r) - main_mb * r["size"] * b / 1e6)
                     for r in rows)))
        print("# this node's own costs, to pass to nodeprobe-io sweep (batch %d):" % b)
        for r in rows:
            print("#   %d-byte samples, %s collate: --collate %s --sample-cpu-us %.0f --batch-cpu-us %.0f"
                  % (r["size"], r["collate"], r["collate"], r["worker_us"], r["main_us"]))
        if a.jpeg:
            work = tempfile.mkdtemp(prefix="jpeg-", dir=base)
            try:
                w, m, mean = jpeg_costs(a.batch, work)
            finally:
                shutil.rmtree(work, ignore_errors=True)
            out_mb = 3 * 224 * 224 * 4 / 1e6
            plain = read_base + per_mb * out_mb + share / b
            print("\n# jpeg-224: %.0f kB JPEGs: worker %.0f us/sample, main %.0f us/batch; extra beyond a plain read "
                  "of its output: %.0f us" % (mean / 1e3, w, m, w - plain))
        print(json.dumps({"rows": rows, "fit": {"read_base_us": read_base, "read_per_mb_us": per_mb,
                                                 "share_tensor_us": share, "batch_base_us": batch_base,
                                                 "tensor_us": tensor, "main_per_mb_us": main_mb,
                                                 "calibration_us": cals}}), file=sys.stderr)
    finally:
        if not a.dir:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
