#!/usr/bin/env python3
"""Benchmark: real PyTorch DDP over gloo on this machine's CPU (2 processes, one thread each)
against ddpsim's prediction of the same job (docs/validation.md, "Real DDP on this CPU").

For each model:
  1. the exporter records it with measured op times on this CPU (python3 -m ddpsim_export
     --time, one process, one thread): the compute ddpsim is given;
  2. two processes train it with DistributedDataParallel over gloo, SGD with momentum as the
     exporter's step, at every bucket cap of --caps (none: DDP's default), interleaved
     (A, B, C, A, B, C, ...) for --rounds rounds, each run --warmup untimed and --steps timed
     iterations; a run's figure is the mean of its timed iterations on rank 0;
  3. the plain step (no DDP) is timed without the profiler, in one process alone and in two at
     once (each its own copy, nothing communicated), interleaved for --rounds rounds: what the
     profiler adds to the measured op times, and what a process's compute loses beside its twin;
  4. ddpsim predicts each cap with --backend gloo and four profiles: --profile as `ddpcalib
     machine` wrote it (its gloo link, comm.links.tcp, from machine's own gloo sweep, taking turns
     with compute on the cores; MPI's shm where machine wrote no tcp link), and that profile with
     this run's gloo all-reduce as the tcp link (measured first: 1 KiB
     to 128 MiB, alone, written in nccl-tests' layout and fitted by `ddpcalib import nccl-tests`),
     taking turns with compute, taking the share of a core it was measured to keep busy
     (cpu_share, docs/profile.md), or costing compute nothing; and, as the baseline, the model
     without its measured times (priced by the profile's tables and formulas) with the gloo link
     taking turns.
It prints, per model and cap, the measured median over the rounds with its spread (min..max), the
prediction and the signed error, then whether ddpsim ranks each pair of caps as the runs do where
the measured difference exceeds the spread of both, and the load average before and after.

  python3 scripts/bench_ddp_cpu.py --ddpsim build/sim/ddpsim --ddpcalib build/calib/ddpcalib
      --profile cpu.json --topology cpu.topo
      [--models mlp,resnet18,bert4,lstm] [--caps none,1,25,100] [--rounds 3] [--steps 10]
      [--warmup 3] [--workdir DIR] [--json FILE]

Not a timed test: the figures are measurements of a shared machine; scripts/bench_ddp_cpu.sh runs
it whole, tests/scripts runs one small model once to check that it works.
"""
import argparse
import copy
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "tests", "torch"))
sys.path.insert(0, os.path.join(ROOT, "tests", "export"))
sys.path.insert(0, os.path.join(ROOT, "calib"))


def gloo_sweep_mod():
    """calib/gloo_sweep.py: gloo's all-reduce sweep and its nccl-tests log."""
    import gloo_sweep as gs
    return gs


# ---- the models (each a callable the exporter can name as scripts/bench_ddp_cpu.py:NAME) ----

def mlp():
    """A 25M-parameter MLP: GEMM-bound, with a gradient all-reduce of about 100 MB."""
    import torch.nn as nn
    return nn.Sequential(nn.Linear(1024, 4096), nn.ReLU(), nn.Linear(4096, 4096), nn.ReLU(), nn.Linear(4096, 1024))


def resnet18():
    import torchvision
    return torchvision.models.resnet18(weights=None)


def bert4():
    """A 4-layer BERT (hidden 256, 4 heads), built from its config: no download."""
    import transformers
    cfg = transformers.BertConfig(num_hidden_layers=4, hidden_size=256, num_attention_heads=4, intermediate_size=1024)
    return transformers.BertModel(cfg)


def lstm():
    """A 2-layer LSTM language model (vocabulary 10,000, width 512)."""
    import torch.nn as nn

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(10000, 512)
            self.lstm = nn.LSTM(512, 512, 2, batch_first=True)
            self.dec = nn.Linear(512, 10000)

        def forward(self, x):
            h, _ = self.lstm(self.emb(x))
            return self.dec(h)

    return LM()


# name: (builder, the exporter's --input arguments, batch per process)
MODELS = {
    "mlp": (mlp, ["1024"], 32),
    "resnet18": (resnet18, ["3x64x64"], 8),
    "bert4": (bert4, ["input_ids=128:int64"], 4),
    "lstm": (lstm, ["35:int64"], 8),
}


def inputs(spec, batch):
    """(args, kwargs) as the exporter builds them: zeros of each --input's shape and type, read by
    its own parse_input."""
    import torch
    from ddpsim_export.__main__ import parse_input
    args, kwargs = [], {}
    for s in spec:
        name, dims, dtype = parse_input(s)
        t = torch.zeros([batch] + dims, dtype=getattr(torch, dtype))
        if name:
            kwargs[name] = t
        else:
            args.append(t)
    return args, kwargs


# ---- the real runs ----

def train(module, args, kwargs, warmup, steps):
    """The exporter's step (SGD with momentum) on module: the times of the steps after `warmup`."""
    import torch
    from ddpsim_export.step import _default_loss
    opt = torch.optim.SGD(module.parameters(), lr=0.01, momentum=0.9, foreach=True)
    times = []
    for i in range(warmup + steps):
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = _default_loss(module(*args, **kwargs))
        loss.backward()
        opt.step()
        if i >= warmup:
            times.append(time.perf_counter() - t0)
    return times


def rank_runs(rank, world, name, caps, rounds, warmup, steps):
    """Every (round, cap) run of one rank, in the interleaved order: [{cap, round, times}]."""
    import torch
    from torch.nn.parallel import DistributedDataParallel as DDP
    build, spec, batch = MODELS[name]
    torch.manual_seed(0)
    base = build()
    args, kwargs = inputs(spec, batch)
    out = []
    for r in range(rounds):
        for cap in caps:
            m = copy.deepcopy(base)
            ddp = DDP(m) if cap is None else DDP(m, bucket_cap_mb=cap)
            out.append({"cap": cap, "round": r, "times": train(ddp, args, kwargs, warmup, steps)})
            del ddp, m
    return out


def step_runs(rank, world, name, warmup, steps):
    """The plain training step (no DDP, nothing communicated) of one rank: its mean iteration. With
    world 2 the two processes run it at once, each on its own copy: what a process's compute costs
    beside its twin on the other core."""
    import torch
    build, spec, batch = MODELS[name]
    torch.manual_seed(0)
    args, kwargs = inputs(spec, batch)
    return statistics.fmean(train(build(), args, kwargs, warmup, steps))


def untimed(path):
    """A copy of the exported model file beside it without its measured times."""
    from modelfile import strip_times
    out = path[:-len(".model")] + "-untimed.model"
    strip_times(path, out)
    return out


def gloo_sweep(rank, world, sizes, iters, warmup):
    """gloo's all-reduce sweep in this rank's process group (calib/gloo_sweep.py's, one implementation)."""
    return gloo_sweep_mod().sweep(sizes, iters, warmup)


def gloo_profiles(a, gloo_group):
    """This machine's profile with gloo's own all-reduce as its `tcp` link (the class ddpsim prices
    gloo's ring on where a profile has it; MPI's `shm` stays), three times: as imported (gloo's
    thread beside compute costs nothing), with shares_compute and the CPU share the sweep measured
    (the median over 1 MiB and up, where buckets are: compute beside it runs at the rest of its
    rate), and with shares_compute alone (the two take turns)."""
    sizes = [1024 << k for k in range(18)]  # 1 KiB .. 128 MiB
    rows = gloo_group.run(gloo_sweep, 2, sizes, 10, 3)[0]
    log = os.path.join(a.workdir, "gloo_all_reduce.log")
    with open(log, "w") as f:
        f.write(gloo_sweep_mod().nccl_tests_log(rows, 2, 10, 3))
    link = os.path.join(a.workdir, "gloo_link.json")
    # A poor fit (a busy machine) is kept, and the report says so (the link's warning).
    subprocess.run([a.ddpcalib, "import", "nccl-tests", "--in-place", "--accept-poor-fit", "--link-class", "tcp", "-o", link, log], check=True,
                   stdout=subprocess.DEVNULL)
    with open(a.profile) as f:
        prof = json.load(f)
    with open(link) as f:
        tcp = json.load(f)["comm"]["links"]["tcp"]
    share = min(1.0, max(1e-3, statistics.median(x["cpu_share"] for x in rows if x["bytes"] >= 1 << 20)))
    out = {}
    for v, extra in (("gloo-free", {"shares_compute": False}), ("gloo-share", {"shares_compute": True, "cpu_share": share}),
                     ("gloo-turns", {"shares_compute": True})):
        prof["comm"]["links"]["tcp"] = dict(tcp, **extra)
        path = os.path.join(a.workdir, f"{v}.json")
        with open(path, "w") as f:
            json.dump(prof, f, indent=1)
        out[v] = path
    return rows, share, out


def load():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def export(name, workdir, steps):
    _, spec, batch = MODELS[name]
    path = os.path.join(workdir, f"{name}.model")
    cmd = [sys.executable, "-m", "ddpsim_export", "--model", f"{os.path.abspath(__file__)}:{name}", "--batch", str(batch),
           "--optimizer", "sgd", "--time", str(steps), "-o", path]
    for s in spec:
        cmd += ["--input", s]
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), OMP_NUM_THREADS="1")
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)
    return path


def predict(a, profile, model, cap):
    cmd = [a.ddpsim, "predict", "--profile", profile, "--topology", a.topology, "--model", model, "--backend", "gloo",
           "--precision", "fp32", "--no-interval", "--json"]  # the nominal figure is what is compared
    if cap is not None:
        cmd += ["--bucket-cap-mb", str(cap)]
    r = subprocess.run(cmd, check=True, capture_output=True, text=True)
    d = json.loads(r.stdout)
    return d["iteration_s"], d


def check_output(path):
    """An output path must be a regular file or not exist (never a device, FIFO or directory), in a
    folder that exists: checked before the runs, not after."""
    if os.path.lexists(path) and not os.path.isfile(path):
        return f"--json {path}: not a regular file"
    if not os.path.isdir(os.path.dirname(os.path.abspath(path))):
        return f"--json {path}: no such folder"
    return None


def write_json(path, obj):
    """obj into path atomically: a temporary file beside it, synced, then renamed over it."""
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)), prefix=".bench_ddp_cpu.")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(obj, f, indent=1)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def cap_name(cap):
    return "default" if cap is None else f"{cap:g} MB"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ddpsim", required=True)
    ap.add_argument("--ddpcalib", required=True)
    ap.add_argument("--profile", required=True)
    ap.add_argument("--topology", required=True)
    ap.add_argument("--models", default="mlp,resnet18,bert4,lstm")
    ap.add_argument("--caps", default="none,1,25,100")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--workdir", default=".")
    ap.add_argument("--json", default=None, help="write every run and prediction here")
    a = ap.parse_args()
    models = a.models.split(",")
    for m in models:
        if m not in MODELS:
            ap.error(f"--models: unknown model {m!r} (known: {', '.join(MODELS)})")
    try:
        caps = [None if c == "none" else float(c) for c in a.caps.split(",")]
    except ValueError:
        ap.error("--caps: a list of caps in MB or none")
    if a.rounds < 1 or a.steps < 1 or a.warmup < 0:
        ap.error("--rounds and --steps must be at least 1, --warmup at least 0")
    if a.json and check_output(a.json):
        ap.error(check_output(a.json))
    os.makedirs(a.workdir, exist_ok=True)
    import torch
    import gloo_group
    report = {"torch": torch.__version__, "cores": os.cpu_count(), "load_before": load(), "models": []}
    print(f"# scripts/bench_ddp_cpu.py: {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}, torch {torch.__version__}, "
          f"{os.cpu_count()} cores, 2 processes x 1 thread, gloo; load average {report['load_before']}")
    sweep, share, gp = gloo_profiles(a, gloo_group)
    report["gloo_sweep"], report["gloo_cpu_share"] = sweep, share
    for v, prof in (("machine", a.profile), ("gloo", gp["gloo-free"])):
        with open(prof) as f:
            links = json.load(f)["comm"]["links"]
        for cls in ("shm", "tcp") if v == "machine" else ("tcp",):
            if links.get(cls, {}).get("warning"):
                print(f"# warning: the {v} profile's {cls} link's fit: {links[cls]['warning']}")
    print("# gloo's all-reduce alone (2 processes): " + ", ".join(
        f"{x['bytes'] >> 10} KiB {1e3 * x['time_s']:.3g} ms ({100 * x['cpu_share']:.0f}% of a core)" for x in sweep[::4]))
    # The predictions: the profile as `ddpcalib machine` writes it (gloo's ring on its tcp link,
    # sharing the cores), and with this run's measured gloo all-reduce as the link, taking turns
    # with compute on the cores, taking its share, or costing them nothing.
    variants = [("machine", a.profile)] + [(v, gp[v]) for v in ("gloo-turns", "gloo-share", "gloo-free")] + \
        [("untimed", gp["gloo-turns"])]
    print(f"# {a.rounds} rounds of caps {a.caps} interleaved, {a.warmup} + {a.steps} iterations per run; "
          "measured: median over rounds of each run's mean iteration (min..max); predicted with the link of")
    print("#   machine: ddpcalib machine's (its gloo sweep, or MPI's all-reduce without one, taking turns with compute on "
          "the cores); this run's gloo "
          f"all-reduce: gloo-turns taking turns, gloo-share taking {100 * share:.0f}% of a core beside compute (measured), "
          "gloo-free costing compute nothing; untimed: the model without its measured op times, gloo-turns' link")
    print(f"{'model':9} {'cap':>8} {'measured s':>10} {'spread s':>17}" +
          "".join(f" {v:>12} {'error':>7}" for v, _ in variants))
    tally = {v: [0, 0] for v, _ in variants}
    unresolved = 0
    for name in models:
        path = export(name, a.workdir, a.steps)
        bare = untimed(path)
        alone, twin = [], []
        for r in range(a.rounds):
            alone.append(gloo_group.run(step_runs, 1, name, a.warmup, a.steps)[0])
            twin.append(statistics.fmean(gloo_group.run(step_runs, 2, name, a.warmup, a.steps)))
        runs = gloo_group.run(rank_runs, 2, name, caps, a.rounds, a.warmup, a.steps)[0]
        rows = []
        for cap in caps:
            means = [statistics.fmean(x["times"]) for x in runs if x["cap"] == cap]
            med = statistics.median(means)
            row = {"cap": cap, "runs_s": means, "measured_s": med, "lo_s": min(means), "hi_s": max(means), "predicted": {}}
            line = f"{name:9} {cap_name(cap):>8} {med:10.4f} {row['lo_s']:8.4f}..{row['hi_s']:7.4f}"
            for v, prof in variants:
                pred, d = predict(a, prof, bare if v == "untimed" else path, cap)
                row["predicted"][v] = {"iteration_s": pred, "error": (pred - med) / med, "exposed_comm_s": d.get("exposed_comm_s"),
                                       "single_s": d.get("single_gpu_iteration_s")}
                line += f" {pred:12.4f} {100 * (pred - med) / med:+6.1f}%"
            rows.append(row)
            print(line)
        # Cap ranking: a pair counts where the runs tell the caps apart (their ranges do not overlap);
        # predictions within 0.1% of each other do not tell them apart.
        for i in range(len(rows)):
            for j in range(i + 1, len(rows)):
                x, y = rows[i], rows[j]
                if not (x["hi_s"] < y["lo_s"] or y["hi_s"] < x["lo_s"]):
                    unresolved += 1
                    continue
                said = []
                for v, _ in variants:
                    px, py = x["predicted"][v]["iteration_s"], y["predicted"][v]["iteration_s"]
                    tied = abs(px - py) <= 1e-3 * max(px, py)
                    same = not tied and (x["measured_s"] < y["measured_s"]) == (px < py)
                    tally[v][0 if same else 1] += 1
                    said.append(f"{v} {'the same' if tied else 'faster' if px < py else 'slower'}")
                print(f"#   {name}: {cap_name(x['cap'])} vs {cap_name(y['cap'])}: measured "
                      f"{'faster' if x['measured_s'] < y['measured_s'] else 'slower'}; predicted: {', '.join(said)}")
        # The compute: ddpsim's one process from the measured op times (the twin of every
        # prediction: the same for every cap) against the step timed without the profiler.
        one = rows[0]["predicted"]["gloo-turns"].get("single_s")
        al, tw = statistics.median(alone), statistics.median(twin)
        compute = {"alone_s": alone, "twin_s": twin, "predicted_one_s": one}
        print(f"#   {name}: the step without DDP: alone {al:.4f} s ({min(alone):.4f}..{max(alone):.4f}), beside its twin "
              f"{tw:.4f} s ({min(twin):.4f}..{max(twin):.4f}, {100 * (tw - al) / al:+.1f}%); ddpsim's one process from the "
              f"measured ops {one:.4f} s ({100 * (one - al) / al:+.1f}% of alone)")
        report["models"].append({"model": name, "file": path, "rows": rows, "compute": compute})
    report.update(load_after=load(), ranking_within_noise=unresolved, summary={})
    for v, _ in variants:
        errs = [abs(r["predicted"][v]["error"]) for m in report["models"] for r in m["rows"]]
        report["summary"][v] = {"median_abs_error": statistics.median(errs), "ranking_agree": tally[v][0],
                                "ranking_disagree": tally[v][1]}
        print(f"# {v}: median |error| {100 * statistics.median(errs):.1f}% over {len(errs)} configurations; cap pairs "
              f"told apart by the runs: {tally[v][0]} ranked as measured, {tally[v][1]} not")
    print(f"# {unresolved} cap pairs within the noise; load average before {report['load_before']}, after {report['load_after']}")
    if a.json:
        write_json(a.json, report)
    sys.stdout.flush()  # a write error on stdout (a full disk) is a failure, not lost
    return 0


if __name__ == "__main__":
    sys.exit(main())
