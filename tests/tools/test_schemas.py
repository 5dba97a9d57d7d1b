#!/usr/bin/env python3
"""The JSON Schemas of docs/schemas/ against what the tools write: predict --json (DDP, DataParallel,
flat mode, a hook, ResNet-50 on 4 nodes), sweep --json, recommend --json, compare --json, every bundled profile and a
profile ddpcalib writes; and the schemas reject a document with one fault each (so a check can
fail). Also what a schema cannot say: predict's breakdown adds up to iteration_s. With FIELDS
(tests/sim/test_fields, whose --list prints sim/fields.c's table of result fields): predict's
schema and docs/cli.md's predict tables list exactly the table's fields, and docs/cli.md's sweep
table exactly its columns, in order, with their units.

Usage: test_schemas.py DDPSIM DDPCALIB SOURCE_DIR [FIELDS]. Exits 77 when jsonschema (pinned in
scripts/setup_python.sh) is not installed."""

import copy
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

try:
    import jsonschema
except ImportError as exc:
    print(f"skip: jsonschema is not installed ({exc}); scripts/setup_python.sh installs it")
    sys.exit(77)

DDPSIM, DDPCALIB, SRC = sys.argv[1:4]
FIELDS = sys.argv[4] if len(sys.argv) > 4 else None
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
compare = schema("compare")

runs = [["predict", "--json"],
        ["predict", "--json", "--model", "resnet50", "--nodes", "4"],
        ["predict", "--json", "--framework", "dp", "--gpus-per-node", "4"],
        ["predict", "--json", "--model", "resnet50", "--nodes", "2", "--mode", "flat"],
        ["predict", "--json", "--model", "bert-base", "--nodes", "2", "--precision", "fp32", "--comm-hook", "fp16"],
        ["predict", "--json", "--model", "bert-base", "--nodes", "2", "--framework", "fsdp"],
        ["predict", "--json", "--model", "bert-base", "--nodes", "2", "--framework", "fsdp", "--fsdp-replicate", "2"]]
first = None
for args in runs:
    d = run_json(args)
    if d is None:
        continue
    first = first or d
    valid(predict, d, "predict " + " ".join(args[2:]))
    parts = sum(d.get(k, 0) for k in ("loading_s", "transfer_s", "buffer_broadcast_s", "compute_s", "exposed_comm_s", "straggler_wait_s"))
    if d["framework"] in ("ddp", "fsdp"):
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
for extra in ([], ["--epochs", "2", "--dataset-size", "1e5", "--price", "2.385", "--interval", "--draws", "2"]):
    d = run_json(["compare", "--model", "resnet50", "--setup", "topology=dgx1v-ib,nodes=2", "--setup", "topology=dgx1v-10gbe,nodes=1",
                  "--json"] + extra)
    if d:
        valid(compare, d, "compare --json " + " ".join(extra))
        bad = copy.deepcopy(d)
        bad["setups"] = bad["setups"][:1]
        rejects(compare, bad, "a comparison of one setup")
d = run_json(["recommend", "--model", "resnet50", "--nodes", "2", "--bucket-cap-mb", "5,25", "--samples", "2", "--json"])
if d:
    valid(recommend, d, "recommend --bucket-cap-mb 5,25 --samples 2")
    bad = copy.deepcopy(d)
    bad["caps"] = []
    rejects(recommend, bad, "a recommendation without caps")



def table_fields():
    """sim/fields.c's rows: (path, kind, frameworks, always, unit, column, position)."""
    r = subprocess.run([FIELDS, "--list"], capture_output=True, text=True)
    check(f"test_fields --list exits 0 ({r.stderr.strip()[:120]})", r.returncode == 0)
    return [dict(zip(("path", "kind", "fw", "always", "unit", "column", "position"), line.split("\t")))
            for line in r.stdout.splitlines()]


def schema_kind(prop, defs):
    """The kind of field a schema property can hold: number, bool, text (name or text), json."""
    if "$ref" in prop:
        prop = defs[prop["$ref"].split("/")[-1]]
    t = prop.get("type")
    t = t[0] if isinstance(t, list) else t
    if t in ("number", "integer"):
        return "number"
    if t == "boolean":
        return "bool"
    if t == "string" or "enum" in prop:
        return "text"
    return "json" if t in ("array", "object") else str(t)


def md_section(text, title):
    m = re.search(rf"^## {title}\n(.*?)(?=^## )", text, re.S | re.M)
    return m.group(1) if m else ""


def md_rows(section):
    """The rows of a section's tables: (names backticked in the first cell, the other cells)."""
    rows = []
    for line in section.splitlines():
        if not line.startswith("| `"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        rows.append((re.findall(r"`([A-Za-z0-9_]+)`", cells[0]), cells[1:]))
    return rows


if FIELDS:
    rows = [f for f in table_fields() if f["path"] != "-"]
    with open(os.path.join(SRC, "docs", "schemas", "predict.schema.json")) as fh:
        ps = json.load(fh)
    top = {f["path"].split(".")[0] for f in rows}
    groups = {f["path"].split(".")[0] for f in rows if "." in f["path"]}
    check(f"predict.schema.json has exactly the table's top-level fields (and ddpsim_version): missing "
          f"{sorted(top - set(ps['properties']))}, not in the table {sorted(set(ps['properties']) - top - {'ddpsim_version'})}",
          set(ps["properties"]) == top | {"ddpsim_version"})
    for g in sorted(groups):
        want = {f["path"].split(".")[1] for f in rows if f["path"].startswith(g + ".")}
        got = set(ps["properties"].get(g, {}).get("properties", {}))
        check(f"predict.schema.json's {g} has exactly the table's fields (missing {sorted(want - got)}, extra {sorted(got - want)})",
              got == want)
    # Required: what every report has, whatever the framework (a group where one of its fields is).
    always = {f["path"].split(".")[0] for f in rows if f["fw"] == "ddp,dp" and f["always"] == "1"} | {"ddpsim_version"}
    check(f"predict.schema.json requires exactly what every report has (missing {sorted(always - set(ps['required']))}, "
          f"extra {sorted(set(ps['required']) - always)})", set(ps["required"]) == always)
    wrong = []
    for f in rows:
        parts = f["path"].split(".")
        prop = ps["properties"].get(parts[0])
        if prop is not None and len(parts) == 2:
            prop = prop.get("properties", {}).get(parts[1])
        if prop is None:
            continue
        kind = "text" if f["kind"] == "name" else f["kind"]
        if schema_kind(prop, ps["$defs"]) != kind:
            wrong.append(f"{f['path']} ({f['kind']}: schema {schema_kind(prop, ps['$defs'])})")
    check(f"predict.schema.json gives each field a type of its kind ({', '.join(wrong)})", not wrong)

    with open(os.path.join(SRC, "docs", "cli.md")) as fh:
        cli = fh.read()
    predict_rows = md_rows(md_section(cli, "predict"))
    documented = [n for names, _ in predict_rows for n in names]
    check(f"docs/cli.md's predict tables name exactly the table's top-level fields: missing {sorted(top - set(documented))}, "
          f"not in the table {sorted(set(documented) - top)}", set(documented) == top)
    for g in sorted(groups):
        text = " ".join(" ".join(cells) for names, cells in predict_rows if g in names)
        missing = [f["path"] for f in rows if f["path"].startswith(g + ".") and f"`{f['path'].split('.')[1]}`" not in text]
        check(f"docs/cli.md's {g} row names each of its fields ({', '.join(missing)})", not missing)
    cols = sorted((f for f in table_fields() if f["column"] != "-"), key=lambda f: int(f["position"]))
    table = [(f["column"], f["unit"]) for f in cols]
    documented = []
    for names, cells in md_rows(md_section(cli, "sweep")):
        units = [u.strip() for u in cells[0].split(",")]
        documented += [(n, units[i] if len(units) == len(names) else cells[0]) for i, n in enumerate(names)]
    check(f"docs/cli.md's sweep table lists exactly sweep's columns in order, with their units "
          f"({[d for d, t in zip(documented, table) if d != t][:3]}; {len(documented)} documented, {len(table)} columns)",
          documented == table)
    r = subprocess.run([DDPSIM, "sweep", "--nodes", "1", "--csv"], capture_output=True, text=True)
    header = r.stdout.splitlines()[0].split(",") if r.returncode == 0 else []
    check("sweep's CSV header is the table's columns", header == [c for c, _ in table])

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
