#!/usr/bin/env python3
"""Per-op errors of a prediction against measured op times: the model file's time_s (the exporter's
--time, docs/export.md) against the durations `ddpsim trace` gives the same ops (rank 0's first
iteration, kernels in order: one per op line of the model). Prints, per kind of op (conv, gemm,
ewise), the count, measured and predicted totals, their ratio, the median |error| per op, and the
ops with the largest absolute differences. Ops without a measured time are left out and counted.

usage: scripts/op_errors.py MODEL TRACE_JSON [--worst N]
  e.g. ddpsim trace --model M --profile P --nodes 1 --gpus-per-node 1 --no-h2d -o DIR
       scripts/op_errors.py M DIR/rank0.pt.trace.json
"""
import argparse
import json
import statistics
import sys

KINDS = ("conv", "gemm", "ewise")


def model_ops(path):
    """(kind, name, measured seconds or None) per op line, in file order."""
    ops = []
    with open(path) as f:
        for line in f:
            t = line.split("#", 1)[0].split()
            if len(t) >= 2 and t[0] in KINDS:
                kv = dict(x.split("=", 1) for x in t[2:] if "=" in x)
                ops.append((t[0], t[1], float(kv["time_s"]) if "time_s" in kv else None))
    return ops


def trace_kernels(path):
    """Kernel durations (seconds) of the first iteration on the trace's first step, in order."""
    with open(path) as f:
        doc = json.load(f)
    ev = doc["traceEvents"] if isinstance(doc, dict) else doc
    steps = sorted((e for e in ev if e.get("ph") == "X" and e.get("name", "").startswith("ProfilerStep")), key=lambda e: e["ts"])
    if not steps:
        raise SystemExit("op_errors.py: %s: no ProfilerStep span" % path)
    s = steps[0]
    ks = sorted((e for e in ev if e.get("ph") == "X" and e.get("cat") == "kernel" and s["ts"] <= e["ts"] < s["ts"] + s["dur"]),
                key=lambda e: e["ts"])
    return [(e["name"], e["dur"] / 1e6) for e in ks]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    ap.add_argument("trace")
    ap.add_argument("--worst", type=int, default=5, help="ops with the largest differences to list (default 5)")
    a = ap.parse_args()
    ops, ks = model_ops(a.model), trace_kernels(a.trace)
    if len(ops) != len(ks) or any(o[1] != k[0] for o, k in zip(ops, ks)):
        bad = next((i for i, (o, k) in enumerate(zip(ops, ks)) if o[1] != k[0]), min(len(ops), len(ks)))
        print("op_errors.py: the trace's kernels are not the model's ops (%d ops, %d kernels; first difference at %d)"
              % (len(ops), len(ks), bad), file=sys.stderr)
        return 1
    rows = [(kind, name, meas, pred) for (kind, name, meas), (_, pred) in zip(ops, ks) if meas is not None]
    print("%-6s %5s %12s %12s %8s %14s" % ("kind", "ops", "measured ms", "predicted ms", "ratio", "median |err|"))
    for kind in KINDS + ("all",):
        sel = [r for r in rows if kind in ("all", r[0])]
        if not sel:
            continue
        m, p = sum(r[2] for r in sel), sum(r[3] for r in sel)
        errs = [abs(r[3] / r[2] - 1) for r in sel if r[2] > 0]
        print("%-6s %5d %12.3f %12.3f %8.3f %13.1f%%" % (kind, len(sel), 1e3 * m, 1e3 * p, p / m if m else float("nan"),
                                                       100 * statistics.median(errs) if errs else float("nan")))
    print("# %d of %d ops carry no measured time (left out)" % (len(ops) - len(rows), len(ops)))
    print("# largest differences (predicted - measured):")
    for kind, name, m, p in sorted(rows, key=lambda r: -abs(r[3] - r[2]))[:a.worst]:
        print("#   %-5s %-50s measured %8.3f ms, predicted %8.3f ms" % (kind, name, 1e3 * m, 1e3 * p))
    return 0


if __name__ == "__main__":
    try:
        rc = main()
        sys.stdout.flush()
    except OSError as exc:  # a write error on stdout is an error, said in one line
        print("op_errors.py: %s" % exc, file=sys.stderr)
        rc = 1
    sys.exit(rc)
