#!/usr/bin/env python3
"""The host side of PyTorch, measured with the PyTorch installed here (`ddpcalib host` runs this).

Prints one JSON object on stdout:
  framework       "torch <version>"
  device          "cpu" or the CUDA device's name
  dispatch_s      median host time of one framework op called from Python: a 1-element add into a
                  preallocated output (Python call, argument parsing, the dispatcher, the kernel or
                  its launch), on the device asked for; on CUDA the host's time only (no sync)
  dispatch_samples_s   the per-op times of each timed batch
  workload_s      the fixed host workload's times (`ops` framework ops each), one per repetition
  jitter_s        their standard deviation: an additive host noise per iteration of that much work
  reduce_Bps      bytes per second the CPU sums one float32 buffer into another (out.add_(x) on
                  `--reduce-mb` MiB, median of 5): gloo's reduction on the host
  ops             framework ops in the fixed workload

No third-party code beyond PyTorch; exits 2 on misuse, 1 when PyTorch or the device is missing.
"""
import argparse
import json
import statistics
import sys
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--ops", type=int, default=2000, help="framework ops per timed batch and per workload")
    ap.add_argument("--iters", type=int, default=30, help="timed batches (and workload repetitions)")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--reduce-mb", type=int, default=64, help="buffer summed on the CPU, MiB")
    a = ap.parse_args()
    if a.ops < 1 or a.iters < 2 or a.warmup < 0:
        ap.error("--ops >= 1, --iters >= 2, --warmup >= 0")
    try:
        import torch
    except ImportError as exc:
        print(f"host_overhead: PyTorch is not installed: {exc}", file=sys.stderr)
        return 1
    torch.set_num_threads(1)
    if a.device == "cuda" and not torch.cuda.is_available():
        print("host_overhead: no CUDA device", file=sys.stderr)
        return 1
    dev = torch.device(a.device)
    x = torch.ones(1, device=dev)
    y = torch.ones(1, device=dev)
    out = torch.empty(1, device=dev)
    add = torch.add

    def batch():
        t0 = time.perf_counter()
        for _ in range(a.ops):
            add(x, y, out=out)
        return time.perf_counter() - t0

    def sync():
        if a.device == "cuda":
            torch.cuda.synchronize()

    for _ in range(a.warmup):
        batch()
        sync()
    per_op, workload = [], []
    for _ in range(a.iters):
        sync()
        t = batch()
        per_op.append(t / a.ops)
        workload.append(t)
    sync()
    n = max(1, a.reduce_mb) * (1 << 20) // 4
    acc, part = torch.ones(n), torch.ones(n)
    acc.add_(part)
    red = []
    for _ in range(5):
        t0 = time.perf_counter()
        acc.add_(part)
        red.append(4 * n / (time.perf_counter() - t0))
    name = torch.cuda.get_device_name(0) if a.device == "cuda" else "cpu"
    print(json.dumps({
        "framework": f"torch {torch.__version__}",
        "device": name,
        "ops": a.ops,
        "dispatch_s": statistics.median(per_op),
        "dispatch_samples_s": per_op,
        "workload_s": workload,
        "jitter_s": statistics.stdev(workload),
        "reduce_Bps": statistics.median(red),
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
