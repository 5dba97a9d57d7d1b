#!/usr/bin/env python3
"""Keeps a profiler trace's first STEPS ProfilerStep ranges, so that a vendored trace stays small.

Usage: trim.py IN.json.gz OUT.json.gz STEPS

Kept: every metadata event and top-level key as they are; host events (ops, runtime calls,
annotations, flows) that start inside the kept steps; GPU events launched from a kept runtime call
(the same "correlation") or starting inside the kept steps. The rest is dropped. The events kept
are written unchanged, in their order."""
import gzip
import json
import sys

src, dst, nsteps = sys.argv[1], sys.argv[2], int(sys.argv[3])
doc = json.load(gzip.open(src))
ev = doc["traceEvents"]
steps = sorted((e for e in ev if str(e.get("name", "")).startswith("ProfilerStep#")
                and e.get("cat") != "gpu_user_annotation"), key=lambda e: e["ts"])
if len(steps) < nsteps:
    sys.exit(f"{src}: {len(steps)} steps, fewer than {nsteps}")
t0, t1 = steps[0]["ts"], steps[nsteps - 1]["ts"] + steps[nsteps - 1]["dur"]
gpu = ("kernel", "Kernel", "gpu_memcpy", "Memcpy", "gpu_memset", "Memset", "gpu_user_annotation")


def inside(e):
    return "ts" in e and t0 <= e["ts"] <= t1


corr = {e["args"]["correlation"] for e in ev
        if e.get("cat") in ("cuda_runtime", "Runtime") and inside(e) and "correlation" in e.get("args", {})}
keep = []
for e in ev:
    if e.get("ph") == "M" or e.get("cat") == "Trace":
        keep.append(e)
    elif e.get("cat") in gpu:
        if e.get("args", {}).get("correlation") in corr or inside(e):
            keep.append(e)
    elif inside(e):
        keep.append(e)
doc["traceEvents"] = keep
with gzip.GzipFile(dst, "wb", compresslevel=9, mtime=0) as f:
    f.write(json.dumps(doc, separators=(",", ":")).encode())
print(f"{dst}: {len(keep)} of {len(ev)} events, steps {steps[0]['name']}..{steps[nsteps - 1]['name']}")
