"""ddpsim's FSDP plan against real FSDP2 (CPU, gloo, 2 and 4 processes): zero mismatches allowed.

For a small GPT-style model (also with frozen, with unused, and with tied parameters) and torchvision's
resnet18 (tests/torch/fsdp_oracle.py), each block fully_shard'ed with reshard_after_forward True
and False and the root with none, and (EXTRA) with mixed precision (param_dtype, reduce_dtype),
explicit forward prefetch, other units than the blocks, and HSDP:
  1. every rank issues the same sequence in the steady-state (second) iteration;
  2. each unit's all-gather and reduce-scatter bytes are W x the sum over its parameters of
     ceil(dim0 / W) x the other dims x the element size, no other padding (the rule ddpsim must
     model), frozen and unused parameters gathered and not reduced, and the reduce-scatter runs
     in reduce_dtype, the parameters' fp32 where None;
  3. the sequence (all-gathers, reduce-scatters, unit forwards, backward, in issue order, with
     bytes) equals the `fsdp_issue` lines of `ddpsim plan --framework fsdp` on the model file the
     project's exporter writes of the same module, with the units given as --fsdp-units;
  4. ddpsim's default units (no --fsdp-units) give the same lines as the explicit ones.

  python3 test_fsdp.py DDPSIM [W ...]
Exits 77 (skipped) when torch cannot be imported, or when this ddpsim has no FSDP (no --fsdp-units)
(steps 1 and 2 still run and fail the test if they find a mismatch).
"""
import math
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

sys.path.insert(0, os.path.dirname(HERE))
from pycheck import can_import, need  # noqa: E402

need("torch")
import torch  # noqa: E402

sys.path.insert(0, HERE)
import fsdp_oracle  # noqa: E402

MODELS = {"gpt": None, "gpt-frozen": None, "gpt-unused": None, "gpt-tied": None, "resnet": "torchvision"}
WORLDS = (2, 4)
# Beyond reshard_after_forward on both models: MixedPrecisionPolicy (param_dtype alone, which since
# 2.15 leaves the reduce-scatter fp32; with reduce_dtype) and explicit forward prefetch
# (set_modules_to_forward_prefetch of the next 1 or 2 blocks); other modules as units beside the
# blocks (the token embedding, whose input needs no gradient; every child of the root, leaving the
# root without parameters); HSDP (2 replicas of W / 2, at W = 4).
EXTRA = ["model=gpt,raf=1,mp=bf16", "model=gpt,raf=0,mp=bf16,rd=bf16", "model=gpt,raf=1,mp=fp16,rd=fp16",
         "model=gpt,raf=1,fp=1", "model=gpt,raf=0,fp=2", "model=resnet,raf=1,fp=2",
         "model=gpt,raf=1,units=emb", "model=gpt,raf=1,units=all,fp=1", "model=gpt,raf=0,units=all",
         "model=gpt,raf=1,rep=2", "model=gpt,raf=0,rep=2,mp=bf16,rd=bf16", "model=resnet,raf=1,rep=2"]
TOPOLOGY, PROFILE = "dgxa100-ib", "a100-dgxa100"  # bundled, 8 GPUs per node (W = 2 and 4 fit one), bf16 priced


def first_difference(ours, real, label):
    """None where equal, else lines that show the first difference in context."""
    if ours == real:
        return None
    i = next((k for k, (a, b) in enumerate(zip(ours, real)) if a != b), min(len(ours), len(real)))
    out = [f"FAIL  {label}: first difference at line {i + 1} (ddpsim {len(ours)} lines, real {len(real)})"]
    for k in range(max(0, i - 2), min(max(len(ours), len(real)), i + 4)):
        a = ours[k] if k < len(ours) else "(none)"
        b = real[k] if k < len(real) else "(none)"
        out.append(f"      {'!' if a != b else ' '} {k + 1:3d} ddpsim: {a:<45} real: {b}")
    return "\n".join(out)


def padding_rule(run, world):
    """Messages where a unit's recorded bytes are not S x sum(ceil(dim0/S) x rest) x the element
    size (S = W / rep, the shard group), the all-reduce's (HSDP) 1/S of the reduce-scatter's: the
    all-gather's param_dtype's, the reduce-scatter's and all-reduce's reduce_dtype's, each the
    parameters' own (fp32) where None (since 2.15 also under a param_dtype: MixedPrecisionPolicy's
    docstring, _fsdp_api.py)."""
    bad = []
    facts = run["facts"]
    cfg = fsdp_oracle.parse_config(run["config"])
    shard = world // cfg["rep"]
    dtype = {"all_gather": fsdp_oracle.DTYPES[cfg["mp"] or "fp32"],
             "reduce_scatter": fsdp_oracle.DTYPES[cfg["rd"] or "fp32"]}
    dtype["all_reduce"] = dtype["reduce_scatter"]
    size = {kind: torch.empty(0, dtype=t).element_size() for kind, t in dtype.items()}
    want = str(dtype["reduce_scatter"]).replace("torch.", "")
    if facts["reduce_scatter_dtypes"] != [want]:
        bad.append(f"reduce-scatter dtypes {facts['reduce_scatter_dtypes']}, expected {want}")
    kinds = {line.split()[1] for line in run["ranks"][0]}
    if ("all_reduce" in kinds) != (cfg["rep"] > 1):
        bad.append("all-reduces " + ("issued without" if cfg["rep"] == 1 else "missing with") + " HSDP")
    for unit, info in facts["units"].items():
        numel = {"all_gather": 0, "reduce_scatter": 0}  # frozen and unused ones are gathered, not reduced
        for p in info["params"]:
            shape = p["shape"]
            rule = [math.ceil(shape[0] / shard)] + shape[1:]
            if p["padded_sharded"] != rule:
                bad.append(f"{p['name']} {shape}: padded shard {p['padded_sharded']}, rule {rule}")
            numel["all_gather"] += shard * math.prod(rule)
            numel["reduce_scatter"] += shard * math.prod(rule) if p["reduced"] else 0
        numel["all_reduce"] = numel["reduce_scatter"] // shard
        for line in run["ranks"][0]:
            words = line.split()
            if words[1] in size and words[2] == unit:
                want = numel[words[1]] * size[words[1]]
                if int(words[3]) != want:
                    bad.append(f"{line}: expected {want} bytes")
    return bad


def ddpsim_lines(ddpsim, path, world, cfg, units):
    """(exit status, stderr, the fsdp_issue lines) of ddpsim's plan of a CONFIG."""
    # HSDP: ddpsim models a replica per node (--fsdp-replicate R = --nodes).
    args = [ddpsim, "plan", "--framework", "fsdp", "--nodes", str(cfg["rep"]),
            "--gpus-per-node", str(world // cfg["rep"]), "--model", path, "--precision", "fp32", "--topology", TOPOLOGY, "--profile", PROFILE,
            "--fsdp-reshard-after-forward", "true" if cfg["raf"] else "false"]
    if cfg["mp"]:
        args += ["--fsdp-param-dtype", cfg["mp"]]
    if cfg["rd"]:
        args += ["--fsdp-reduce-dtype", cfg["rd"]]
    if cfg["fp"]:
        args += ["--fsdp-forward-prefetch", str(cfg["fp"])]
    if cfg["rep"] > 1:
        args += ["--fsdp-replicate", str(cfg["rep"])]
    if units is not None:
        args += ["--fsdp-units", units]
    p = subprocess.run(args, capture_output=True, text=True)
    return p.returncode, p.stderr.strip(), [l.strip() for l in p.stdout.splitlines() if l.startswith("fsdp_issue ")]


def main(argv):
    if not argv:
        raise SystemExit(__doc__)
    ddpsim = argv[0]
    worlds = [int(w) for w in argv[1:]] or list(WORLDS)
    print(f"real PyTorch {torch.__version__}")
    models = []
    for name, package in MODELS.items():
        if package and not can_import(package, name):
            continue
        models.append(name)
    if not models:
        print("SKIP no model could run")
        return 77
    configs = [f"model={m},raf={r}" for m in models for r in (1, 0)] + \
        [c for c in EXTRA if fsdp_oracle.parse_config(c)["model"] in models]
    cases = mismatches = 0
    # A ddpsim without FSDP: the comparison is skipped (the recordings are still checked).
    usage = subprocess.run([ddpsim, "plan", "--help"], capture_output=True, text=True).stdout
    refused = None if "--fsdp-units" in usage else "`ddpsim plan --help` has no --fsdp-units"
    with tempfile.TemporaryDirectory() as tmp:
        files = {}
        for name in models:
            files[name] = os.path.join(tmp, name + ".model")
            fsdp_oracle.export(name, files[name])
        for world in worlds:
            # HSDP where each replica keeps a shard group of 2 or more (ddpsim refuses groups of 1).
            here = [c for c in configs if world // fsdp_oracle.parse_config(c)["rep"] >= 2]
            real = fsdp_oracle.record(world, here)
            for run in real["runs"]:
                cfg = fsdp_oracle.parse_config(run["config"])
                label = f"W={world} {run['config']}"
                lines = run["ranks"][0]
                cases += 1
                differ = [r for r, seq in enumerate(run["ranks"]) if seq != lines]
                if differ or not lines:
                    mismatches += 1
                    print(f"FAIL  {label}: ranks {differ} issue another sequence than rank 0" if differ
                          else f"FAIL  {label}: nothing recorded")
                    continue
                print(f"ok    {label}: {world} ranks issue the same {len(lines)} lines")
                cases += 1
                bad = padding_rule(run, world)
                if bad:
                    mismatches += 1
                    print(f"FAIL  {label}: padding rule: " + "; ".join(bad[:5]))
                else:
                    print(f"ok    {label}: bytes per unit = S x sum(ceil(dim0/S) x rest) x element size")
                if refused:
                    continue
                explicit, patterns = None, fsdp_oracle.unit_patterns(cfg)
                # The default units are the blocks: checked against the explicit ones where those
                # are the blocks alone.
                for units in [patterns] + ([None] if cfg["units"] == "blocks" else []):
                    rc, err, ours = ddpsim_lines(ddpsim, files[cfg["model"]], world, cfg, units)
                    what = f"--fsdp-units {units}" if units else "default units"
                    cases += 1
                    if rc != 0:
                        mismatches += 1
                        print(f"FAIL  {label} ({what}): ddpsim plan exited {rc}: {err}")
                        continue
                    if units is None:
                        if ours != explicit:
                            mismatches += 1
                            print(first_difference(ours, explicit, f"{label}: default units against explicit")
                                  .replace("real:", "explicit:"))
                        else:
                            print(f"ok    {label}: default units equal --fsdp-units {patterns}")
                        continue
                    explicit = ours
                    diff = first_difference(ours, lines, f"{label} ({what})")
                    if diff:
                        mismatches += 1
                        n = sum(a != b for a, b in zip(ours, lines)) + abs(len(ours) - len(lines))
                        print(diff + f"\n      {n} of {len(lines)} lines differ")
                    else:
                        print(f"ok    {label} ({what}): ddpsim's {len(ours)} lines equal real FSDP2's")
    print(f"{cases} cases, {mismatches} mismatches")
    if mismatches:
        return 1
    if refused:
        print(f"SKIP the comparison with ddpsim: this ddpsim has no FSDP ({refused})")
        return 77
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
