#!/usr/bin/env python3
"""A real torch.utils.data.DataLoader over a nodeprobe-io dataset: the peer of
`nodeprobe-io sweep --peer torch` and of bench/io/compare_torch.sh. Optional,
never a dependency of nodeprobe: the native probe runs without Python.

Each sample is read the way an image pipeline reads JPEG bytes before decoding
(open, read the whole record into a bytearray, torch.frombuffer; shards:
pread at the record's offset), optionally followed by --burn-us of CPU (the
user's decode/transform, as nodeprobe-io's model declares it), then collated
with --collate stack (default_collate: one [B, S] tensor; equal sizes only) or
list (the batch as a list of tensors, what variable-size bytes need).

Two modes:
  --epochs N    throughput: one untimed warm-up epoch, then N timed epochs, no
                step (bench/io/compare_torch.sh).
  --seconds S   the training loop of the sweep: for S seconds, take a batch
                (timed as data wait), spend --step-ms in a sleep (the GPU
                step), repeat over epochs (S counted from the first batch);
                --cold evicts the dataset
                (posix_fadvise DONTNEED, as nodeprobe-io does) before every
                epoch. AU = step / (wait + step) with the first batch left out,
                as nodeprobe-io and MLPerf Storage count it.

Prints one JSON line: samples, seconds, samples_per_s (with --seconds: from the
first batch on), au, wait_fraction,
worker_cpu_s (the workers' CPU, from RUSAGE_CHILDREN after they exit),
main_cpu_s (this process's CPU while the loader ran), torch version, settings.
Exit 0, or 2 with one line on stderr for a dataset it cannot read.
"""
import argparse
import gc
import json
import os
import resource
import struct
import sys
import time


class SampleRecords:
    """index.bin of a nodeprobe-io dataset: per sample (offset, length, shard)."""

    def __init__(self, root):
        try:
            with open(os.path.join(root, "index.bin"), "rb") as f:
                data = f.read()
        except FileNotFoundError:
            raise ValueError(f"{root}: not a nodeprobe-io dataset (no index.bin)") from None
        if len(data) < 40 or data[:8] != b"NPIOIDX1":
            raise ValueError(f"{root}: not a nodeprobe-io dataset (no index.bin)")
        layout, n, k = struct.unpack_from("<IQI", data, 12)
        self.shards = layout == 1
        self.entries = [struct.unpack_from("<QII", data, 32 + 16 * i) for i in range(n)]
        self.shard_count = k
        self.root = root

    def path(self, i):
        if self.shards:
            return os.path.join(self.root, "shard-%05d.rec" % self.entries[i][2])
        return os.path.join(self.root, "samples", "%04d" % (i // 1000), "%08d.bin" % i)

    def files(self):
        if self.shards:
            return [os.path.join(self.root, "shard-%05d.rec" % s) for s in range(self.shard_count)]
        return [self.path(i) for i in range(len(self.entries))]


def burn(us):
    """Spends `us` microseconds of this thread's CPU (the user's transform)."""
    if us <= 0:
        return
    end = time.thread_time() + us * 1e-6
    while time.thread_time() < end:
        pass


def evict(records):
    for path in records.files():
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def make_dataset(torch, records, burn_us):
    from torch.utils.data import Dataset

    class Samples(Dataset):
        def __init__(self):
            self.fds = {}  # shards: one descriptor per shard, per worker process

        def __len__(self):
            return len(records.entries)

        def __getitem__(self, i):
            offset, length, shard = records.entries[i]
            buf = bytearray(length)
            if records.shards:
                fd = self.fds.get(shard)
                if fd is None:
                    fd = self.fds[shard] = os.open(records.path(i), os.O_RDONLY)
                got = os.preadv(fd, [buf], offset)
            else:
                with open(records.path(i), "rb", buffering=0) as f:
                    got = f.readinto(buf)
            if got != length:
                raise IOError(f"{records.path(i)}: short read {got} of {length}")
            burn(burn_us)
            return torch.frombuffer(buf, dtype=torch.uint8)

    return Samples()


def list_collate(batch):
    return batch


def batch_len(b):
    return len(b) if isinstance(b, list) else b.shape[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", required=True)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--prefetch", type=int, default=2)
    ap.add_argument("--epochs", type=int, default=0, help="throughput mode: timed epochs after a warm-up one")
    ap.add_argument("--seconds", type=float, default=0, help="training-loop mode: run this long")
    ap.add_argument("--step-ms", type=float, default=0)
    ap.add_argument("--cold", action="store_true", help="evict the dataset before every epoch")
    ap.add_argument("--collate", choices=("stack", "list"), default="stack")
    ap.add_argument("--burn-us", type=float, default=0, help="extra CPU per sample in the worker")
    ap.add_argument("--pin-memory", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    if (a.epochs > 0) == (a.seconds > 0):
        ap.error("give one of --epochs N or --seconds S")
    try:
        records = SampleRecords(a.dir)
    except (OSError, ValueError, struct.error) as e:
        print(f"torch_loader.py: {e}", file=sys.stderr)
        return 2
    import torch
    from torch.utils.data import DataLoader

    ds = make_dataset(torch, records, a.burn_us)
    g = torch.Generator()
    g.manual_seed(a.seed)
    loader = DataLoader(ds, batch_size=a.batch, shuffle=True, num_workers=a.workers,
                        prefetch_factor=a.prefetch if a.workers > 0 else None,
                        persistent_workers=a.workers > 0, drop_last=False, pin_memory=a.pin_memory,
                        generator=g, collate_fn=list_collate if a.collate == "list" else None)
    out = {"torch": torch.__version__, "workers": a.workers, "batch": a.batch, "prefetch": a.prefetch,
           "collate": a.collate, "burn_us": a.burn_us, "step_ms": a.step_ms, "cold": a.cold,
           "pin_memory": a.pin_memory}
    step_s = a.step_ms / 1e3
    samples = batches = 0
    wait = compute = first_wait = 0.0
    if a.epochs > 0:
        # One untimed epoch: worker start-up and first touches are not charged to
        # the peer (nodeprobe-io's own numbers include its start-up).
        for _ in loader:
            pass
        main0 = time.process_time()
        t0 = time.perf_counter()
        for _ in range(a.epochs):
            for b in loader:
                samples += batch_len(b)
                batches += 1
        seconds = time.perf_counter() - t0
    else:
        main0 = time.process_time()
        t0 = time.perf_counter()
        deadline = loop0 = t0 + a.seconds
        done = False
        while not done:
            if a.cold:
                evict(records)
            it = iter(loader)
            while True:
                w0 = time.perf_counter()
                b = next(it, None)
                w1 = time.perf_counter()
                if b is None:
                    break
                if batches == 0:
                    first_wait = w1 - w0
                    # Worker start-up (process spawn, imports) is not loop time: on a
                    # busy node it can take longer than the run itself.
                    deadline = w1 + a.seconds
                    loop0 = w1
                else:
                    wait += w1 - w0
                    samples += batch_len(b)
                batches += 1
                if step_s > 0:
                    time.sleep(step_s)
                compute += time.perf_counter() - w1
                del b
                if time.perf_counter() >= deadline:
                    done = True
                    break
            del it
        # Throughput over the loop, from the first batch (whose samples are left out, as its wait is).
        seconds = time.perf_counter() - loop0 if batches else 0.0
    main_cpu = time.process_time() - main0
    # Persistent workers exit when the loader goes; then their CPU is in RUSAGE_CHILDREN.
    del loader
    gc.collect()
    child = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = wait + compute
    out.update({"samples": samples, "batches": batches, "seconds": seconds,
                "samples_per_s": samples / seconds if seconds > 0 else 0.0,
                "wait_s": wait, "compute_s": compute, "first_wait_s": first_wait,
                "wait_fraction": wait / total if total > 0 else 0.0,
                "au": 1 - wait / total if total > 0 else 0.0,
                "main_cpu_s": main_cpu, "worker_cpu_s": child.ru_utime + child.ru_stime})
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
