#!/usr/bin/env python3
"""DDP's copy back against its last all-reduce, in a real PyTorch profiler trace of DDP (Kineto JSON,
.json or .json.gz): per training step, the device-to-device copies (`Memcpy DtoD` on the compute
stream: the Reducer copying each reduced bucket back into its gradients) that start while the step's
last all-reduce kernel still runs. Where the Reducer waited for every bucket before copying any back,
there would be none; reducer.cpp's finalize_backward waits for bucket b, copies it back, then waits
for b + 1 (docs/simulation.md, "Stream programs"), so the earlier buckets' copies run beside the last
all-reduce.

A step is the span from one group of all-reduces to the next: the trace's all-reduce kernels
(`ncclKernel_AllReduce...` or `ncclDevKernel_AllReduce...`) in time order, grouped by gaps longer
than --gap-ms between one kernel's end and the next's start (backward's ready buckets go out within
a step; the forward between two steps is the gap).

usage: scripts/trace_copy_back.py TRACE [--gap-ms G] [--check]
  --check: exit 1 unless every step has at least one copy starting during its last all-reduce
  e.g. scripts/trace_copy_back.py tests/data/kineto/hta_resnet50_2xa100_rank0.json.gz --check
"""
import argparse
import gzip
import json
import sys


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        doc = json.load(f)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def steps(allreduces, gap_s):
    """The all-reduce kernels grouped into steps (lists, in time order)."""
    out = []
    for e in allreduces:
        if out and e["ts"] - (out[-1][-1]["ts"] + out[-1][-1]["dur"]) <= gap_s * 1e6:
            out[-1].append(e)
        else:
            out.append([e])
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--gap-ms", type=float, default=80.0)
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    try:
        ev = load(a.trace)
    except (OSError, ValueError, KeyError) as exc:
        print("%s: cannot read a Kineto trace: %s" % (a.trace, exc), file=sys.stderr)
        return 1
    gpu = sorted((e for e in ev if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy")), key=lambda e: e["ts"])
    ar = [e for e in gpu if e.get("cat") == "kernel" and "AllReduce" in e.get("name", "")]
    if not ar:
        print("%s: no all-reduce kernels (not a GPU trace of DDP with NCCL)" % a.trace, file=sys.stderr)
        return 1
    groups = steps(ar, a.gap_ms / 1e3)
    ok = True
    print("%s: %d all-reduce kernels in %d steps" % (a.trace, len(ar), len(groups)))
    print("# step  all-reduces  last_ms  copies_during  MB_during")
    for i, g in enumerate(groups):
        last = g[-1]
        a0, a1 = last["ts"], last["ts"] + last["dur"]
        during = [e for e in gpu if e.get("cat") == "gpu_memcpy" and "DtoD" in e.get("name", "") and a0 <= e["ts"] < a1]
        mb = sum((e.get("args") or {}).get("bytes", 0) for e in during) / 1e6
        print("  %-5d %-12d %-8.3f %-14d %.1f" % (i, len(g), last["dur"] / 1e3, len(during), mb))
        ok &= len(during) > 0
    if a.check and not ok:
        print("check: a step without a copy back beside its last all-reduce", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
