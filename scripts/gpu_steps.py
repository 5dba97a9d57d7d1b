#!/usr/bin/env python3
"""Real training steps on one GPU, timed without a profiler: the measurement a single-GPU prediction
is compared with (docs/validation.md). Each step is the exporter's own (python/ddpsim_export/step.py,
`train_step`: gradients set to None, forward and loss under autocast when asked, backward, the
optimizer's step), with AdamW (the exporter's default optimizer, PyTorch's default implementation),
on zero inputs as the exporter builds them. Each case: --warmup untimed steps, then --steps steps
each timed with CUDA events and the host's clock (synchronized); medians and ranges printed, every
sample written to --json. Exits 77 without PyTorch with CUDA.

usage: PYTHONPATH=python scripts/gpu_steps.py [--json FILE] [--steps N] [--warmup N] [--quick]
"""
import argparse
import statistics
import sys
import time

from gpu_common import check_json_arg, cuda_torch, write_json

CASES = [  # name, model, inputs (name, shape, dtype), batch, amp, loss
    ("resnet50", "torchvision.models.resnet50", [(None, [3, 224, 224], "float32")], 32, None, "cross-entropy"),
    ("resnet50-amp", "torchvision.models.resnet50", [(None, [3, 224, 224], "float32")], 32, "fp16", "cross-entropy"),
    ("gpt2", "transformers.GPT2LMHeadModel", [("input_ids", [1024], "int64"), ("labels", [1024], "int64")], 8, None, None),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", metavar="FILE")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="ResNet-50 only, 3 steps")
    a = ap.parse_args()
    if a.steps < 1 or a.warmup < 0:
        ap.error("--steps takes a number >= 1, --warmup >= 0")
    check_json_arg(ap, a.json)
    torch = cuda_torch()
    if torch is None:
        return 77
    from ddpsim_export.__main__ import resolve
    from ddpsim_export.step import train_step
    steps = 3 if a.quick else a.steps
    dev = torch.device("cuda")
    out = dict(device=torch.cuda.get_device_name(dev), torch=torch.__version__, cudnn=torch.backends.cudnn.version(),
               tf32_matmul=torch.backends.cuda.matmul.allow_tf32, tf32_cudnn=torch.backends.cudnn.allow_tf32,
               cudnn_benchmark=torch.backends.cudnn.benchmark, steps=steps, warmup=a.warmup,
               date=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), cases=[])
    print("# %s, torch %s, cuDNN %s; TF32: matmul %s, cuDNN %s; cudnn.benchmark %s" % (
        out["device"], out["torch"], out["cudnn"], out["tf32_matmul"], out["tf32_cudnn"], out["cudnn_benchmark"]))
    print("%-14s %6s %12s %12s %12s" % ("case", "batch", "gpu ms", "(min-max)", "host ms"))
    for name, model, inputs, batch, amp, loss in CASES[:1] if a.quick else CASES:
        try:
            module = resolve(model, {}).to(dev)
            args, kw = [], {}
            for iname, dims, dt in inputs:
                t = torch.zeros([batch] + dims, dtype=getattr(torch, dt), device=dev)
                (kw.__setitem__(iname, t) if iname else args.append(t))
            loss_fn = None
            if loss == "cross-entropy":
                def loss_fn(o):
                    return torch.nn.functional.cross_entropy(o, torch.zeros(o.shape[0], dtype=torch.long, device=dev))
            opt = torch.optim.AdamW(module.parameters())
            for _ in range(a.warmup):
                train_step(module, args, kw, loss_fn, amp, opt)
            torch.cuda.synchronize()
            gpu, host = [], []
            for _ in range(steps):
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                h0 = time.perf_counter()
                s.record()
                train_step(module, args, kw, loss_fn, amp, opt)
                e.record()
                torch.cuda.synchronize()
                host.append(time.perf_counter() - h0)
                gpu.append(s.elapsed_time(e) / 1e3)
            out["cases"].append(dict(name=name, model=model, batch=batch, amp=amp, step_s=gpu, host_step_s=host))
            print("%-14s %6d %12.3f %5.3f-%6.3f %12.3f" % (name, batch, 1e3 * statistics.median(gpu), 1e3 * min(gpu),
                                                          1e3 * max(gpu), 1e3 * statistics.median(host)))
            del module, opt, args, kw
            torch.cuda.empty_cache()
        except Exception as exc:  # one case failing leaves the others to run
            print("%-14s failed: %s: %s" % (name, type(exc).__name__, exc))
            out["cases"].append(dict(name=name, error="%s: %s" % (type(exc).__name__, exc)))
    if a.json:
        write_json(a.json, out)
    return 0 if all("error" not in c for c in out["cases"]) else 1


if __name__ == "__main__":
    sys.exit(main())
