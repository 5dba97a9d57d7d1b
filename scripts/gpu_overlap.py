#!/usr/bin/env python3
"""Compute beside an NCCL-like kernel on one GPU: how much slower overlapped compute runs, measured,
against ddpsim's model of it (docs/simulation.md, "Work sharing the GPU"): beside a collective, an op
keeps 1 - ((1 - mem) x sm_frac + mem x hbm_frac) of its rate, sm_frac = the collective's thread blocks
over the card's SMs, hbm_frac = its memory traffic over the card's bandwidth, mem = 0 for a
compute-bound op (a GEMM), 1 for a memory-bound one (an elementwise add).

One GPU cannot run NCCL's all-reduce between ranks (NCCL refuses two ranks on one device), so a
stand-in takes its place: C thread blocks (NCCL's channels, one block each) of 544 threads (512 and
Simple's sync warp) holding 64 KiB of shared memory each (NCCL's 40-80 KiB), each streaming its own
slice as a ring step does: read two buffers, write one (reduce and send), from device memory (the
FIFOs' worst case: what L2 absorbs is not modelled), optionally paced with __nanosleep as when the
links bound NCCL. Its sm_frac is C / SMs; its hbm_frac is its measured traffic running alone over
the card's copy bandwidth measured here (a device-to-device copy, bytes read and written).

Each pair (the op alone, the op beside the stand-in) is timed with CUDA events, interleaved over
--rounds rounds; medians and ranges are printed, and everything goes to --json. Exits 77 without a
GPU, PyTorch with CUDA, or CuPy (the stand-in's kernel is compiled with NVRTC through CuPy).

usage: scripts/gpu_overlap.py [--json FILE] [--rounds N] [--quick]
"""
import argparse
import statistics
import sys
import time

from gpu_common import check_json_arg, cuda_torch, write_json

KERNEL = r"""
extern "C" __global__ void __launch_bounds__(544)
ring_step(const float4* __restrict__ a, const float4* __restrict__ b, float4* __restrict__ c,
          long long per_block, int iters, unsigned pause_ns) {
  extern __shared__ float4 held[];
  const long long base = (long long)blockIdx.x * per_block;
  for (int it = 0; it < iters; ++it) {
    for (long long i = threadIdx.x; i < per_block; i += blockDim.x) {
      float4 x = a[base + i], y = b[base + i];
      c[base + i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
      if (pause_ns) __nanosleep(pause_ns);
    }
    __syncthreads();
  }
  if (iters < 0) held[threadIdx.x] = c[base];  /* keeps the shared allocation referenced */
}
"""
THREADS = 544
SHARED = 64 * 1024
SLICE = 4 << 20  # bytes per block per buffer: 3 buffers x 32 blocks x 4 MiB = 384 MiB, past any L2


def _external(cupy, stream):
    """A CuPy stream for a PyTorch stream (ExternalStream: deprecated in CuPy 14, still working there)."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return cupy.cuda.ExternalStream(stream.cuda_stream)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", metavar="FILE", help="write every timing and the comparison here")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    ap.add_argument("--quick", action="store_true", help="smaller ops and fewer configurations")
    a = ap.parse_args()
    if a.rounds < 1:
        ap.error("--rounds takes a number >= 1")
    check_json_arg(ap, a.json)
    torch = cuda_torch()
    if torch is None:
        return 77
    try:
        import cupy
    except ImportError:
        print("skip: CuPy is not installed (the stand-in kernel is compiled through it)")
        return 77

    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    sms = props.multi_processor_count
    main_s, side_s = torch.cuda.Stream(), torch.cuda.Stream()
    kern = cupy.RawKernel(KERNEL, "ring_step")
    kern.max_dynamic_shared_size_bytes = SHARED
    max_blocks = 32
    n4 = SLICE // 16
    bufs = [cupy.asarray(torch.randn(max_blocks * n4 * 4, device=dev)) for _ in range(3)]  # shared, not copied

    def ev():
        return torch.cuda.Event(enable_timing=True)

    def standin(blocks, iters, pause):
        with _external(cupy, side_s):
            kern((blocks,), (THREADS,), (bufs[0], bufs[1], bufs[2], cupy.int64(n4), cupy.int32(iters),
                                         cupy.uint32(pause)),
                 shared_mem=SHARED)

    def time_standin(blocks, iters, pause):
        s, e = ev(), ev()
        with torch.cuda.stream(side_s):
            s.record()
            standin(blocks, iters, pause)
            e.record()
        torch.cuda.synchronize()
        return s.elapsed_time(e) / 1e3

    # The card's copy bandwidth (bytes read + written), the ceiling hbm_frac is taken against.
    big = torch.empty(1 << 29, device=dev)  # 2 GiB
    dst = torch.empty_like(big)
    for _ in range(2):
        dst.copy_(big)
    torch.cuda.synchronize()
    copies = []
    for _ in range(5):
        s, e = ev(), ev()
        s.record()
        dst.copy_(big)
        e.record()
        torch.cuda.synchronize()
        copies.append(2 * big.numel() * 4 / (s.elapsed_time(e) / 1e3))
    hbm_Bps = statistics.median(copies)
    del big, dst

    size = 4096 if a.quick else 8192
    ops = {
        "gemm_bf16_%d" % size: (0.0, lambda t=[torch.randn(size, size, device=dev, dtype=torch.bfloat16) for _ in range(3)]:
                                torch.matmul(t[0], t[1], out=t[2])),
        "gemm_fp32_4096": (0.0, lambda t=[torch.randn(4096, 4096, device=dev) for _ in range(3)]:
                           torch.matmul(t[0], t[1], out=t[2])),
        "add_fp32_1GiB": (1.0, lambda t=[torch.randn(1 << 28, device=dev) for _ in range(3)]:
                          torch.add(t[0], t[1], out=t[2])),
    }
    configs = [(32, 0), (16, 0), (8, 0), (4, 0), (2, 0), (1, 0), (32, 2000)] if not a.quick else [(16, 0)]

    # Each op repeated to a window of about 40 ms.
    reps = {}
    for name, (_mem, fn) in ops.items():
        fn()
        torch.cuda.synchronize()
        s, e = ev(), ev()
        with torch.cuda.stream(main_s):
            s.record()
            for _ in range(5):
                fn()
            e.record()
        torch.cuda.synchronize()
        one = s.elapsed_time(e) / 1e3 / 5
        reps[name] = max(3, int(0.04 / one))

    # The stand-in's rate alone, per configuration; its iterations sized to outlast every window.
    standin_rate = {}
    iters_for = {}
    for blocks, pause in configs:
        time_standin(blocks, 1, pause)
        t1 = statistics.median(time_standin(blocks, 2, pause) for _ in range(3)) / 2
        iters_for[(blocks, pause)] = max(2, int(0.12 / t1) + 1)
        standin_rate[(blocks, pause)] = 3 * blocks * SLICE / t1

    def window(name, fn, beside):
        s, e = ev(), ev()
        se = ev()
        if beside:
            blocks, pause = beside
            with torch.cuda.stream(side_s):
                standin(blocks, iters_for[beside], pause)
                se.record()
        with torch.cuda.stream(main_s):
            s.record()
            for _ in range(reps[name]):
                fn()
            e.record()
        torch.cuda.synchronize()
        covered = (e.elapsed_time(se) > 0) if beside else True  # the stand-in outlasted the window
        return s.elapsed_time(e) / 1e3 / reps[name], covered

    def standin_beside(name, fn, cfg):
        """The stand-in's time for a fixed amount of work while the op runs throughout beside it."""
        blocks, pause = cfg
        iters = max(2, iters_for[cfg] // 4)  # about 30 ms alone
        s, e, ce = ev(), ev(), ev()
        with torch.cuda.stream(side_s):
            s.record()
            standin(blocks, iters, pause)
            e.record()
        with torch.cuda.stream(main_s):
            for _ in range(2 * reps[name]):
                fn()
            ce.record()
        torch.cuda.synchronize()
        return s.elapsed_time(e) / 1e3 / iters, e.elapsed_time(ce) > 0

    rows = []
    for name, (mem, fn) in ops.items():
        for cfg in configs:
            alone, beside, uncovered = [], [], 0
            s_alone, s_beside = [], []
            for _ in range(a.rounds):
                alone.append(window(name, fn, None)[0])
                t, cov = window(name, fn, cfg)
                beside.append(t)
                uncovered += not cov
                s_alone.append(time_standin(cfg[0], max(2, iters_for[cfg] // 4), cfg[1]) / max(2, iters_for[cfg] // 4))
                t, cov = standin_beside(name, fn, cfg)
                s_beside.append(t)
                uncovered += not cov
            blocks, pause = cfg
            sm_frac = blocks / sms
            hbm_frac = min(1.0, standin_rate[cfg] / hbm_Bps)
            pred = max(0.05, 1 - ((1 - mem) * sm_frac + mem * hbm_frac))
            meas = statistics.median(alone) / statistics.median(beside)
            rows.append(dict(op=name, mem=mem, blocks=blocks, pause_ns=pause, sm_frac=sm_frac,
                             hbm_frac=hbm_frac, standin_Bps=standin_rate[cfg],
                             alone_s=alone, beside_s=beside, windows_not_covered=uncovered,
                             rate_measured=meas, rate_predicted=pred,
                             standin_alone_s=s_alone, standin_beside_s=s_beside,
                             standin_rate=statistics.median(s_alone) / statistics.median(s_beside),
                             error=(pred - meas) / meas))

    print("# %s, %d SMs; copy bandwidth %.0f GB/s (median of 5, bytes read + written); torch %s, CuPy %s"
          % (props.name, sms, hbm_Bps / 1e9, torch.__version__, cupy.__version__))
    print("# stand-in: blocks of %d threads, %d KiB shared each; its rate alone per configuration:"
          % (THREADS, SHARED // 1024))
    for (blocks, pause), r in standin_rate.items():
        print("#   %2d blocks, pause %4d ns: %6.0f GB/s (hbm_frac %.2f)" % (blocks, pause, r / 1e9, min(1, r / hbm_Bps)))
    print("# rate: the op's rate beside the stand-in over its rate alone (model: ddpsim's); stand-in: its own rate")
    print("# beside the op over alone (ddpsim assumes 1: a collective is not slowed by compute)")
    print("%-16s %6s %6s %8s %8s %10s %10s %8s %9s %s" % ("op", "blocks", "pause", "sm_frac", "hbm_frac",
                                                    "rate meas", "rate model", "error", "stand-in", "alone ms (min-max)"))
    for r in rows:
        print("%-16s %6d %6d %8.3f %8.3f %10.3f %10.3f %+7.1f%% %9.3f %.3f (%.3f-%.3f)%s" % (
            r["op"], r["blocks"], r["pause_ns"], r["sm_frac"], r["hbm_frac"], r["rate_measured"],
            r["rate_predicted"], 100 * r["error"], r["standin_rate"], 1e3 * statistics.median(r["alone_s"]),
            1e3 * min(r["alone_s"]), 1e3 * max(r["alone_s"]),
            "  (the two did not overlap throughout in %d windows)" % r["windows_not_covered"]
            if r["windows_not_covered"] else ""))
    if a.json:
        doc = dict(device=props.name, sms=sms, copy_Bps=hbm_Bps, copy_samples_Bps=copies,
                   torch=torch.__version__, cupy=cupy.__version__, threads=THREADS, shared_bytes=SHARED,
                   slice_bytes=SLICE, rounds=a.rounds, date=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                   standin_Bps={"%d/%d" % k: v for k, v in standin_rate.items()},
                   kernel_regs=kern.attributes.get("num_regs"), rows=rows)
        write_json(a.json, doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
