#!/usr/bin/env python3
"""The JSON Schemas of docs/schemas/ against what the tools write: predict --json (DDP, DataParallel,
flat mode, a hook, ResNet-50 on 4 nodes), sweep --json, recommend --json, every bundled profile and a
profile ddpcalib writes; and the schemas reject a document with one fault each (so a check can
fail). Also what a schema cannot say: predict's breakdown adds up to iteration_s.

Usage: test_schemas.py DDPSIM DDPCALIB SOURCE_DIR. Exits 77 when jsonschema (pinned in
scripts/setup_python.sh) is not installed."""

import copy
import glob
import json
import os
import subprocess
import sys
import tempfile

try:
    import jsonschema
except ImportError as exc:
    print(f"skip: jsonschema is not installed ({exc}); scripts/setup_python.sh installs it")
    sys.exit(77)

DDPSIM, DDPCALIB, SRC = sys.argv[1:4]
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from pycheck import Checks  # noqa: E402

check = Checks()


def schema(name):
    with open(os.path.join(SRC, "docs", "schemas", f"{name}.schema.json")) as f:
        s = json.load(f)
    jsonschema.Draft202012Validator.check_schema(s)
    return jsonschema.Draft202012Validator(s)


def valid(v, doc, what):
    errs = sorted(v.iter_errors(doc), key=lambda e: list(e.path))
    msg = "; ".join(f"{'/'.join(map(str, e.path))}: {e.message[:120]}" for e in errs[:3])
    check(f"{what} matches its schema{(' (' + msg + ')') if errs else ''}", not errs)


def rejects(v, doc, what):
    check(f"the schema rejects {what}", not v.is_valid(doc))


def run_json(args):
    r = subprocess.run([DDPSIM] + args, capture_output=True, text=True)
    check(f"ddpsim {' '.join(args)} exits 0 ({r.stderr.strip()[:200]})", r.returncode == 0)
    return json.loads(r.stdout) if r.returncode == 0 else None


predict, sweep, recommend, profile = schema("predict"), schema("sweep"), schema("recommend"), schema("profile")

runs = [["predict", "--json"],
        ["predict", "--json", "--model", "resnet50", "--nodes", "4"],
        ["predict", "--json", "--framework", "dp", "--gpus-per-node", "4"],
        ["predict", "--json", "--model", "resnet50", "--nodes", "2", "--mode", "flat"],
        ["predict", "--json", "--model", "bert-base", "--nodes", "2", "--precision", "fp32", "--comm-hook", "fp16"]]
first = None
for args in runs:
    d = run_json(args)
    if d is None:
        continue
    first = first or d
    valid(predict, d, "predict " + " ".join(args[2:]))
    parts = sum(d.get(k, 0) for k in ("loading_s", "transfer_s", "buffer_broadcast_s", "compute_s", "exposed_comm_s", "straggler_wait_s"))
    if d["framework"] == "ddp":
        check(f"predict {' '.join(args[2:])}: the breakdown adds up to iteration_s ({parts:.9g} vs {d['iteration_s']:.9g})",
              abs(parts - d["iteration_s"]) <= 1e-9 * d["iteration_s"])
if first:
    bad = copy.deepcopy(first)
    bad["iteration_s"] = -1.0
    rejects(predict, bad, "a negative iteration time")
    bad = copy.deepcopy(first)
    bad["scaling_efficiency"] = 1.2
    rejects(predict, bad, "a scaling efficiency above 100%")
    bad = copy.deepcopy(first)
    bad["buckets"][0]["protocol"] = "LL64"
    rejects(predict, bad, "an NCCL protocol that does not exist")
    bad = copy.deepcopy(first)
    del bad["ddpsim_version"]
    rejects(predict, bad, "a report without its version")

d = run_json(["sweep", "--nodes", "1,2", "--bucket-cap-mb", "5,25", "--json"])
if d:
    valid(sweep, d, "sweep --nodes 1,2 --bucket-cap-mb 5,25")
    check("sweep: every row has every column", all(set(d["columns"]) <= set(r) for r in d["rows"]))
    bad = copy.deepcopy(d)
    bad["rows"][0]["gpus"] = 0
    rejects(sweep, bad, "a sweep row of 0 GPUs")
d = run_json(["recommend", "--model", "resnet50", "--nodes", "2", "--bucket-cap-mb", "5,25", "--samples", "2", "--json"])
if d:
    valid(recommend, d, "recommend --bucket-cap-mb 5,25 --samples 2")
    bad = copy.deepcopy(d)
    bad["caps"] = []
    rejects(recommend, bad, "a recommendation without caps")

for f in sorted(glob.glob(os.path.join(SRC, "profiles", "*.json"))):
    with open(f) as fh:
        valid(profile, json.load(fh), "profiles/" + os.path.basename(f))
with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "m.json")
    r = subprocess.run([DDPCALIB, "merge", os.path.join(SRC, "profiles", "v100-dgx1v.json"),
                        os.path.join(SRC, "profiles", "p100-dgx1.json"), "-o", out], capture_output=True, text=True)
    check(f"ddpcalib merge writes a profile ({r.stderr.strip()[-120:]!r})", r.returncode == 0)
    if r.returncode == 0:
        with open(out) as fh:
            m = json.load(fh)
        valid(profile, m, "a profile ddpcalib merge wrote")
        bad = copy.deepcopy(m)
        bad["format"] = "other"
        rejects(profile, bad, "a profile of another format")
        bad = copy.deepcopy(m)
        next(iter(bad["comm"]["links"].values()))["lat_s"] = -1e-6
        rejects(profile, bad, "a negative link latency")
        bad = copy.deepcopy(m)
        bad["compute"]["fp16"]["gemm"] = {"model": "table", "points": []}
        rejects(profile, bad, "a GEMM table without points")
sys.exit(check.finish())
