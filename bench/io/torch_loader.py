#!/usr/bin/env python3
"""PyTorch DataLoader peer for bench/io/compare_torch.sh (benchmark only; never a
dependency of nodeprobe). Reads a nodeprobe-io dataset in the files layout the
way an image pipeline reads JPEG bytes before decoding: open, read the whole
file into a uint8 tensor, identity transform, default collate (a [B, S] batch).

Prints one JSON line: {"samples": N, "seconds": T, "samples_per_s": R, ...}.
"""
import argparse
import json
import os
import struct
import time

import torch
from torch.utils.data import DataLoader, Dataset


class SampleFiles(Dataset):
    """The files layout: samples/NNNN/NNNNNNNN.bin, sizes from index.bin."""

    def __init__(self, root):
        with open(os.path.join(root, "index.bin"), "rb") as f:
            data = f.read()
        if data[:8] != b"NPIOIDX1":
            raise SystemExit(f"{root}: not a nodeprobe-io dataset")
        layout, n = struct.unpack_from("<IQ", data, 12)
        if layout != 0:
            raise SystemExit(f"{root}: shards layout; this peer reads the files layout")
        self.lengths = [struct.unpack_from("<I", data, 32 + 16 * i + 8)[0] for i in range(n)]
        self.root = root

    def __len__(self):
        return len(self.lengths)

    def __getitem__(self, i):
        path = os.path.join(self.root, "samples", "%04d" % (i // 1000), "%08d.bin" % i)
        buf = bytearray(self.lengths[i])
        with open(path, "rb", buffering=0) as f:
            got = f.readinto(buf)
        if got != len(buf):
            raise IOError(f"{path}: short read {got} of {len(buf)}")
        return torch.frombuffer(buf, dtype=torch.uint8)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--prefetch", type=int, default=2)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    ds = SampleFiles(a.dir)
    g = torch.Generator()
    g.manual_seed(a.seed)
    loader = DataLoader(ds, batch_size=a.batch, shuffle=True, num_workers=a.workers,
                        prefetch_factor=a.prefetch if a.workers > 0 else None,
                        persistent_workers=a.workers > 0, drop_last=False, pin_memory=False, generator=g)
    # One untimed epoch: worker start-up and first touches are not charged to
    # the peer (nodeprobe-io's own numbers include its start-up).
    for _ in loader:
        pass
    samples = 0
    t0 = time.perf_counter()
    for _ in range(a.epochs):
        for batch in loader:
            samples += batch.shape[0]
    seconds = time.perf_counter() - t0
    print(json.dumps({"samples": samples, "seconds": seconds, "samples_per_s": samples / seconds,
                      "torch": torch.__version__, "workers": a.workers, "batch": a.batch,
                      "prefetch": a.prefetch}))


if __name__ == "__main__":
    main()
