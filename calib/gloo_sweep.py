#!/usr/bin/env python3
"""gloo's own all-reduce between processes of this host, swept over sizes: the measurement behind a
profile's `comm.links.tcp`, the link ddpsim prices gloo's ring on (docs/calib.md, "gloo's
all-reduce"). scripts/bench_ddp_cpu.py imports `sweep` and `nccl_tests_log`.

    python3 calib/gloo_sweep.py --procs 2 >gloo.log
    ddpcalib import nccl-tests --in-place --link-class tcp -o tcp.json gloo.log

N processes (torch.multiprocessing, one thread each) join a gloo process group over TCP on this
host and all-reduce float32 tensors in place, from --min-bytes to --max-bytes by --factor: --warmup
untimed calls, then --iters timed ones per size. Rank 0 prints the sweep on stdout in nccl-tests'
all_reduce_perf layout (src/common.cu at 01d67614), which `ddpcalib import nccl-tests --in-place`
fits into a link: the mean time per call, the same figure in the in-place and out-of-place columns.

No third-party code beyond PyTorch; exits 2 on misuse, 3 when PyTorch (or its gloo backend) is not
installed, 1 when the run fails.
"""
import argparse
import os
import sys
import time


def sweep(sizes, iters, warmup):
    """gloo's all-reduce of float32 tensors of each size in bytes, alone, in the process group already
    initialised: [{bytes, time_s, cpu_share}], the mean over `iters` timed calls and the process's
    CPU time over the wall time during them."""
    import torch
    import torch.distributed as dist
    out = []
    for size in sizes:
        t = torch.ones(max(1, size // 4))
        for _ in range(warmup):
            dist.all_reduce(t)
        dist.barrier()
        c0, t0 = time.process_time(), time.perf_counter()
        for _ in range(iters):
            dist.all_reduce(t)
        wall = time.perf_counter() - t0
        out.append({"bytes": size, "time_s": wall / iters, "cpu_share": (time.process_time() - c0) / wall})
    return out


def nccl_tests_log(rows, world, iters=20, warmup=5, factor=2):
    """The sweep in nccl-tests' all_reduce_perf layout, which `ddpcalib import nccl-tests` reads
    (docs/calib.md): one host, `world` ranks."""
    def us(t):
        return "%7.0f" % t if t >= 10000.0 else "%7.1f" % t if t >= 100.0 else "%7.2f" % t
    out = [f"# nThread 1 nGpus {world} minBytes {rows[0]['bytes']} maxBytes {rows[-1]['bytes']} step: {factor}(factor) "
           f"warmup iters: {warmup} iters: {iters} agg iters: 1 validation: 0 graph: 0", "#", "# Using devices"]
    for r in range(world):
        out.append("#  Rank %2d Group %2d Pid %6d on %10s device %2d [0x%02x] %s" % (r, 0, 1000 + r, "localhost", r, r,
                                                                                   "gloo on the CPU"))
    out += ["#", "# %10s  %12s  %8s  %6s  %6s" % ("size", "count", "type", "redop", "root") +
            "  %7s  %6s  %6s %6s" % ("time", "algbw", "busbw", "#wrong") * 2]
    for x in rows:
        t = float(us(x["time_s"] * 1e6))
        alg = x["bytes"] / (t * 1e3)
        # gloo's all-reduce is in place: the same measurement in both columns (imported --in-place).
        one = "  %7s  %6.2f  %6.2f  %5s" % (us(x["time_s"] * 1e6), alg, alg * 2 * (world - 1) / world, "N/A")
        out.append("%12li  %12li  %8s  %6s  %6i" % (x["bytes"], x["bytes"] // 4, "float", "sum", -1) + one + one)
    out += ["# Avg bus bandwidth    : 0 ", "#", "# Collective test concluded: all_reduce_perf"]
    return "\n".join(out) + "\n"


def _rank(rank, world, store, sizes, iters, warmup, queue):
    import torch
    import torch.distributed as dist
    torch.set_num_threads(1)
    try:
        dist.init_process_group("gloo", init_method="file://" + store, rank=rank, world_size=world)
        rows = sweep(sizes, iters, warmup)
        dist.destroy_process_group()
        if rank == 0:
            queue.put(rows)
    except Exception as exc:  # reported by rank 0's parent, which exits 1
        queue.put("rank %d: %s: %s" % (rank, type(exc).__name__, exc))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--procs", type=int, default=2, help="processes (ranks), 2 or more")
    ap.add_argument("--min-bytes", type=int, default=1024)
    ap.add_argument("--max-bytes", type=int, default=128 << 20)
    ap.add_argument("--factor", type=int, default=2)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    a = ap.parse_args()
    if a.procs < 2 or a.min_bytes < 4 or a.max_bytes < a.min_bytes or a.factor < 2 or a.iters < 1 or a.warmup < 0:
        ap.error("--procs >= 2, 4 <= --min-bytes <= --max-bytes, --factor >= 2, --iters >= 1, --warmup >= 0")
    try:
        import torch.distributed as dist
        import torch.multiprocessing as mp
    except ImportError as exc:
        print(f"gloo_sweep: PyTorch is not installed: {exc}", file=sys.stderr)
        return 3
    if not dist.is_available() or not dist.is_gloo_available():
        print("gloo_sweep: this PyTorch has no gloo backend", file=sys.stderr)
        return 3
    sizes = []
    s = a.min_bytes
    while s <= a.max_bytes:
        sizes.append(s)
        s *= a.factor
    import tempfile
    fd, store = tempfile.mkstemp(prefix="gloo_sweep.", suffix=".store")
    os.close(fd)
    os.unlink(store)  # the file store creates it
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=_rank, args=(r, a.procs, store, sizes, a.iters, a.warmup, queue)) for r in range(a.procs)]
    try:
        for p in procs:
            p.start()
        got = queue.get(timeout=600)
        for p in procs:
            p.join(timeout=60)
    finally:
        for p in procs:
            if p.is_alive():
                p.kill()
        if os.path.exists(store):
            os.unlink(store)
    if isinstance(got, str) or any(p.exitcode for p in procs):
        print("gloo_sweep: the sweep failed: %s" % (got if isinstance(got, str) else "a rank exited with an error"),
              file=sys.stderr)
        return 1
    try:
        sys.stdout.write(nccl_tests_log(got, a.procs, a.iters, a.warmup, a.factor))
        sys.stdout.flush()
    except OSError as exc:
        print(f"gloo_sweep: cannot write the log: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
