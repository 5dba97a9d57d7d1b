"""ddpsim's DDP against real PyTorch (CPU, gloo, 2 processes): zero mismatches allowed.

For resnet18 and resnet50 (torchvision), bert-base (Hugging Face BertForPreTraining from
BertConfig()) and a small mLSTM written as the model file (tests/torch/mlstm_module.py):
  1. the parameters, by name and in registration order, equal the model file's, and so do the bytes
     of the module's buffers (what DDP's broadcast_buffers sends before every forward);
  2. the gradient-ready order from post-accumulate-grad hooks equals the model file's ready= order;
  3. for several bucket_cap_mb values, with find_unused_parameters on and off and with
     static_graph, the buckets real DDP all-reduces in each of its first 4 iterations (bytes and
     parameter indices, in launch order; recorded by a comm hook) equal `ddpsim buckets
     --pytorch <installed> --ddp-iteration K` (K = 1, 2, 3; the steady state for 4).

  python3 test_reducer.py DDPSIM [MODEL ...]
Exits 77 (skipped) when torch cannot be imported; a model whose package (torchvision,
transformers) is missing is skipped and said so; 77 if none could run.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

sys.path.insert(0, os.path.join(ROOT, "tests"))
from pycheck import can_import, need  # noqa: E402

need("torch")
import torch  # noqa: E402

sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "export"))
import ddp_oracle  # noqa: E402
from modelfile import ModelFile  # noqa: E402  (the model-file reader the exporter's tests use)

# Configurations per model: bucket_cap_mb (None: not given), find_unused_parameters, static_graph.
FULL = ["cap=none,fup=0,static=0", "cap=1,fup=0,static=0", "cap=5,fup=0,static=0", "cap=25,fup=0,static=0",
        "cap=none,fup=1,static=0", "cap=5,fup=1,static=0", "cap=25,fup=1,static=0",
        "cap=none,fup=0,static=1", "cap=5,fup=0,static=1"]
SHORT = ["cap=none,fup=0,static=0", "cap=5,fup=0,static=0", "cap=none,fup=1,static=0", "cap=5,fup=1,static=0",
         "cap=none,fup=0,static=1"]
MODELS = {"resnet18": ("torchvision", FULL), "resnet50": ("torchvision", SHORT),
          "bert-base": ("transformers", SHORT), "mlstm-tiny": (None, FULL)}


def model_file(name, tmp, ddpsim):
    if name != "mlstm-tiny":
        return os.path.join(ROOT, "models", name + ".model")
    size = ddp_oracle.__dict__.get("mlstm_module") or __import__("mlstm_module")
    s = size.SIZES[name]
    path = os.path.join(tmp, name + ".model")
    subprocess.run([ddpsim, "genmodel", "mlstm", "--hidden", str(s["hidden"]), "--embed", str(s["embed"]),
                    "--vocab", str(s["vocab"]), "--seq", str(s["seq"]), "--precision", "fp32", "-o", path], check=True)
    return path


def file_orders(path):
    """(parameter names, gradient-ready order, buffer bytes) of a model file."""
    mf = ModelFile(path)
    buffers = 0
    with open(path) as f:
        for line in f:
            words = line.split("#", 1)[0].split()
            if len(words) == 2 and words[0] == "buffers":
                buffers = int(words[1])
    return [name for name, _ in mf.params], mf.ready, buffers


def ddpsim_buckets(ddpsim, path, version, cfg, iteration):
    kv = dict(item.split("=") for item in cfg.split(","))
    args = [ddpsim, "buckets", "--model", path, "--precision", "fp32", "--pytorch", version, "--json"]
    if kv["cap"] != "none":
        args += ["--bucket-cap-mb", kv["cap"]]
    if kv["fup"] == "1":
        args.append("--find-unused-parameters")
    if kv["static"] == "1":
        args.append("--static-graph")
    if iteration <= 3:
        args += ["--ddp-iteration", str(iteration)]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return [{"bytes": b["bytes"], "params": b["param_indices"]} for b in json.loads(out)["buckets"]]


def main(argv):
    if not argv:
        raise SystemExit(__doc__)
    ddpsim = argv[0]
    wanted = argv[1:] or list(MODELS)
    version = ".".join(torch.__version__.split("+")[0].split(".")[:2])
    print(f"real PyTorch {torch.__version__} (ddpsim --pytorch {version})")
    cases = mismatches = ran = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name in wanted:
            package, configs = MODELS[name]
            if package and not can_import(package, name):
                continue
            ran += 1
            path = model_file(name, tmp, ddpsim)
            params, ready, buffers = file_orders(path)
            real = ddp_oracle.ready_order(name)
            cases += 1
            if buffers != real["buffer_bytes"]:
                mismatches += 1
                print(f"FAIL  {name}: the model file's buffers {buffers} bytes, the module's {real['buffer_bytes']}")
            else:
                print(f"ok    {name}: buffers ({buffers} bytes, which DDP broadcasts) equal the module's")
            for what, mine, theirs in (("parameters", params, real["params"]), ("ready order", ready, real["ready"])):
                cases += 1
                if mine != theirs:
                    mismatches += 1
                    diff = sum(a != b for a, b in zip(mine, theirs)) + abs(len(mine) - len(theirs))
                    print(f"FAIL  {name}: {what} differ in {diff} of {len(theirs)} positions")
                else:
                    print(f"ok    {name}: {what} ({len(theirs)}) equal the model file's")
            runs = ddp_oracle.ddp_runs(name, configs)
            for run in runs["runs"]:
                for k, real_buckets in enumerate(run["iterations"], start=1):
                    cases += 1
                    ours = ddpsim_buckets(ddpsim, path, version, run["config"], k)
                    label = f"{name} {run['config']} iteration {k}"
                    if ours != real_buckets:
                        mismatches += 1
                        print(f"FAIL  {label}: ddpsim {[(b['bytes'], b['params']) for b in ours]} "
                              f"real {[(b['bytes'], b['params']) for b in real_buckets]}")
                    else:
                        print(f"ok    {label}: {len(ours)} buckets {[b['bytes'] for b in ours]}")
    if ran == 0:
        print("SKIP no model could run")
        return 77
    print(f"{cases} cases, {mismatches} mismatches")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
