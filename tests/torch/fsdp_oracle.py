"""What real FSDP2 (torch.distributed.fsdp.fully_shard) issues, recorded for tests/torch/test_fsdp.py.

  python3 fsdp_oracle.py record W CONFIG [CONFIG ...]
      W gloo processes on CPU; per CONFIG a fresh model, each unit fully_shard'ed, then two training
      iterations (forward, loss.backward(), optimizer.step()). JSON on stdout: per CONFIG and rank,
      the lines the host issued in the second (steady-state) iteration, in issue order:
        fsdp_issue all_gather UNIT BYTES       (the all-gather's output: S x the per-rank input)
        fsdp_issue reduce_scatter UNIT BYTES   (the reduce-scatter's input)
        fsdp_issue all_reduce UNIT BYTES       (HSDP only: the reduced shard, across replicas)
        fsdp_issue forward UNIT                (the unit's module forward begins)
        fsdp_issue backward                    (just before loss.backward())
      and the facts the simulator relies on (reduce-scatter dtype, per-unit padded sizes, whether
      the root reshards after forward). S, the shard group's size, is W (W / rep with HSDP).
      CONFIG: model=gpt|gpt-frozen|gpt-unused|gpt-tied|resnet,raf=0|1[,mp=bf16|fp16][,rd=fp32|bf16|fp16]
              [,fp=0|1|2][,units=...][,rep=1|2]
        raf: reshard_after_forward of every block (the root is given none);
        mp, rd (gpt only): MixedPrecisionPolicy(param_dtype=mp, reduce_dtype=rd) on every unit,
          either left None where not given;
        fp: each unit's (the root's none) set_modules_to_forward_prefetch of the next fp units
          to run forward (default 0);
        units (gpt only): blocks (default), emb (wte too), all (every child of the root);
        rep: HSDP with rep replicas, a (rep, W / rep) device mesh (default 1: FSDP)
  python3 fsdp_oracle.py export MODEL PATH
      the model file of MODEL (python/ddpsim_export, fp32, at the batch the oracle runs).

Models: gpt (a small GPT-2-shaped model: blocks in a ModuleList `h`, embeddings, final norm and
head at the root; sizes chosen so that dims do not divide by 2 or 4 and FSDP pads), gpt-frozen
(the same with the position embedding and each block's ln_1 frozen, requires_grad=False),
gpt-unused (each block with a Linear(18, 5) `spare` its forward never calls), gpt-tied (the
head's weight the token embedding's, as GPT-2's), resnet
(torchvision resnet18 with 10 classes on 32x32 images; each layerK.J block a unit).
UNIT is the module path given to fully_shard, `<root>` for the root module.
"""
import json
import os
import sys

import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
BATCH = 2
# The blocks' pattern for ddpsim's --fsdp-units, per model (ddpsim's default units).
BLOCK_PATTERNS = {"gpt": "h.*", "gpt-frozen": "h.*", "gpt-unused": "h.*", "gpt-tied": "h.*", "resnet": "layer*.*"}
# CONFIG's units=: which of the GPT's root children are units beside the blocks (the root is
# always one): none, the token embedding (emb), or every one (all: the root keeps no parameter).
UNIT_SETS = {"blocks": ([], []), "emb": (["wte"], []), "all": (["wte", "wpe"], ["ln_f", "lm_head"])}


def unit_patterns(cfg):
    """--fsdp-units for a CONFIG: the modules it fully_shards, the blocks as their pattern."""
    before, after = UNIT_SETS[cfg["units"]]
    return ",".join(before + [BLOCK_PATTERNS[cfg["model"]]] + after)


class Attention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.c_attn = nn.Linear(d, 3 * d)
        self.c_proj = nn.Linear(d, d)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.c_attn(x).split(d, dim=2)
        q, k, v = (t.view(b, s, self.heads, d // self.heads).transpose(1, 2) for t in (q, k, v))
        y = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.c_proj(y.transpose(1, 2).reshape(b, s, d))


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d)
        self.attn = Attention(d, heads)
        self.ln_2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    """GPT-2's layout, tiny: vocab 11, 7 positions and width 18 divide by neither 2 nor 4 (18 by 2
    only), so the embeddings, the head and every LayerNorm are padded on dim 0 at W = 4."""

    def __init__(self, vocab=11, seq=7, d=18, heads=2, layers=3):
        super().__init__()
        self.seq = seq
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(seq, d)
        self.h = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d)
        self.lm_head = nn.Linear(d, vocab)

    def forward(self, ids):
        x = self.wte(ids) + self.wpe(torch.arange(ids.shape[1], device=ids.device))
        for block in self.h:
            x = block(x)
        return self.lm_head(self.ln_f(x))


def build(name):
    """(module, example inputs, loss of the output, the blocks' module paths) for a model name."""
    torch.manual_seed(0)
    if name in ("gpt", "gpt-frozen", "gpt-unused", "gpt-tied"):
        m = GPT()
        if name == "gpt-tied":  # GPT-2's tied head: one parameter, in the root's unit once
            m.lm_head.weight = m.wte.weight
        if name == "gpt-unused":  # a parameter forward never uses: all-gathered, no gradient
            for block in m.h:
                block.spare = nn.Linear(18, 5)
        if name == "gpt-frozen":  # requires_grad=False: all-gathered, never reduce-scattered
            m.wpe.requires_grad_(False)
            for block in m.h:
                block.ln_1.requires_grad_(False)
        ids = torch.randint(0, 11, (BATCH, m.seq))
        return m, (ids,), lambda out: out.float().mean(), [f"h.{i}" for i in range(len(m.h))]
    if name == "resnet":
        import torchvision
        m = torchvision.models.resnet18(weights=None, num_classes=10)
        units = [f"layer{k}.{j}" for k in range(1, 5) for j in range(len(getattr(m, f"layer{k}")))]
        return m, (torch.randn(BATCH, 3, 32, 32),), lambda out: out.float().mean(), units
    raise SystemExit(f"fsdp_oracle: unknown model {name!r}")


DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
# CONFIG's keys, their values and defaults; each also a flag of `ddpsim plan --framework fsdp`.
KEYS = {"model": (tuple(BLOCK_PATTERNS), None), "raf": (("0", "1"), None), "mp": (("bf16", "fp16"), None),
        "rd": (tuple(DTYPES), None), "fp": (("0", "1", "2"), "0"), "units": (tuple(UNIT_SETS), "blocks"),
        "rep": (("1", "2"), "1")}


def parse_config(text):
    """A CONFIG as {"text", "model", "raf": bool, "mp", "rd": None or a DTYPES name, "fp": int,
    "units": a UNIT_SETS name, "rep": int}."""
    kv = dict(item.split("=", 1) for item in text.split(","))
    bad = [k for k, v in kv.items() if k not in KEYS or v not in KEYS[k][0]]
    if bad or "model" not in kv or "raf" not in kv:
        usage = __doc__[__doc__.index("CONFIG: "):__doc__.index("  python3 fsdp_oracle.py export")]
        raise SystemExit(f"fsdp_oracle: bad CONFIG {text!r}: {usage}")
    cfg = {k: kv.get(k, default) for k, (_, default) in KEYS.items()}
    if cfg["model"] == "resnet" and (cfg["mp"] or cfg["rd"] or cfg["units"] != "blocks"):
        # BatchNorm's running statistics are buffers FSDP does not cast: CPU batch_norm refuses them.
        raise SystemExit(f"fsdp_oracle: {text!r}: mp, rd and units are for gpt only "
                         "(resnet's BatchNorm buffers stay fp32)")
    cfg.update(text=text, raf=cfg["raf"] == "1", fp=int(cfg["fp"]), rep=int(cfg["rep"]))
    return cfg


class Recorder:
    """The host's issue order. Collectives are recorded by wrapping the torch.distributed functions
    FSDP2 calls (torch 2.15, distributed/fsdp/_fully_shard/_fsdp_collectives.py: DefaultAllGather
    calls dist.all_gather_single, DefaultReduceScatter dist.reduce_scatter_single, foreach_reduce
    dist.all_reduce for HSDP; the *_into_tensor/_tensor forms too, should a release switch back),
    looked up on the module at call time, so patching torch.distributed's attributes catches them.
    Each is attributed to the unit whose FSDPParamGroup method issued it: FSDPParamGroup.unshard
    (every all-gather: pre-forward, pre-backward and both prefetches go through it) and
    FSDPParamGroup.post_backward (the reduce-scatter and HSDP all-reduce, also when the root's
    final callback runs it) are wrapped to name their group's `_module_fqn` (FSDP's own path of
    the unit, set in FSDPState._init_fqns) while they run. This keys on two methods and one
    attribute rather than on record_function labels, which FSDP only formats for profiling and
    which leave the root's label without a name. A collective issued outside those methods is
    recorded with unit `?`, so it cannot go unnoticed."""

    def __init__(self):
        self.lines = []
        self.on = False
        self.units = []
        self.rs_dtypes = set()

    def unit(self):
        if not self.units:
            return "?"
        return self.units[-1] or "<root>"

    def add(self, line):
        if self.on:
            self.lines.append(line)

    def install(self):
        import torch.distributed as dist
        from torch.distributed.fsdp._fully_shard._fsdp_param_group import FSDPParamGroup
        rec = self

        def collective(kind, fn, tensor_of):
            def wrapped(*args, **kwargs):
                t = tensor_of(*args, **kwargs)
                rec.add(f"fsdp_issue {kind} {rec.unit()} {t.numel() * t.element_size()}")
                if kind == "reduce_scatter" and rec.on:
                    rec.rs_dtypes.add(str(t.dtype).replace("torch.", ""))
                return fn(*args, **kwargs)
            return wrapped

        def arg(pos, name):
            return lambda *a, **k: k[name] if name in k else a[pos]

        for fname, kind, tensor_of in (
                ("all_gather_single", "all_gather", arg(0, "output_tensor")),
                ("all_gather_into_tensor", "all_gather", arg(0, "output_tensor")),
                ("reduce_scatter_single", "reduce_scatter", arg(1, "input")),
                ("reduce_scatter_tensor", "reduce_scatter", arg(1, "input")),
                ("all_reduce", "all_reduce", arg(0, "tensor"))):
            setattr(dist, fname, collective(kind, getattr(dist, fname), tensor_of))

        def in_unit(method):
            def wrapped(group, *args, **kwargs):
                rec.units.append(group._module_fqn)
                try:
                    return method(group, *args, **kwargs)
                finally:
                    rec.units.pop()
            return wrapped

        FSDPParamGroup.unshard = in_unit(FSDPParamGroup.unshard)
        FSDPParamGroup.post_backward = in_unit(FSDPParamGroup.post_backward)


def run_config(cfg, rec):
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
    from torch.distributed.fsdp._fully_shard._fsdp_state import _get_module_fsdp_state
    m, inputs, loss_of, blocks = build(cfg["model"])
    before, after = UNIT_SETS[cfg["units"]]
    units = before + blocks + after
    kw = {"mp_policy": MixedPrecisionPolicy(param_dtype=DTYPES.get(cfg["mp"]), reduce_dtype=DTYPES.get(cfg["rd"]))}
    if cfg["rep"] > 1:  # HSDP: shard within each of rep groups, all-reduce across them
        import torch.distributed as dist
        from torch.distributed.device_mesh import init_device_mesh
        world = dist.get_world_size()
        kw["mesh"] = init_device_mesh("cpu", (cfg["rep"], world // cfg["rep"]),
                                      mesh_dim_names=("replicate", "shard"))
    for path in units:
        fully_shard(m.get_submodule(path), reshard_after_forward=cfg["raf"], **kw)
    fully_shard(m, **kw)
    # Each unit but the root prefetches the next fp units to run forward (units is in forward order).
    modules = [m.get_submodule(path) for path in units]
    for i, module in enumerate(modules):
        if cfg["fp"] and i + 1 < len(modules):
            module.set_modules_to_forward_prefetch(modules[i + 1:i + 1 + cfg["fp"]])
    # Registered after fully_shard: they run after FSDP's own pre-forward (registered with
    # prepend=True, _fsdp_state.py FSDPState.init), i.e. after the unit's all-gather was issued.
    for path in ["<root>"] + units:
        module = m if path == "<root>" else m.get_submodule(path)
        module.register_forward_pre_hook(lambda *_, p=path: rec.add(f"fsdp_issue forward {p}"))
    opt = torch.optim.AdamW(m.parameters(), lr=1e-3)
    for it in range(2):
        rec.on = it == 1
        loss = loss_of(m(*inputs))
        rec.add("fsdp_issue backward")
        loss.backward()
        # The sharded gradients FSDP wrote: the parameters it reduce-scattered (unused and frozen
        # ones get none).
        reduced = {name for name, p in m.named_parameters() if p.grad is not None}
        opt.step()
        opt.zero_grad()
        rec.on = False
    facts = {"reduce_scatter_dtypes": sorted(rec.rs_dtypes), "units": {}}
    for path in ["<root>"] + units:
        module = m if path == "<root>" else m.get_submodule(path)
        group = _get_module_fsdp_state(module)._fsdp_param_group
        if group is None:  # a unit without parameters of its own: no group, no collective
            facts["units"][path] = {"reshard_after_forward": None, "params": []}
            continue
        facts["units"][path] = {
            "reshard_after_forward": group.post_forward_mesh_info is not None,
            "params": [{"name": p._param_fqn, "shape": list(p._orig_size), "reduced": p._param_fqn in reduced,
                        "padded_sharded": list(p.padded_sharded_param_size)} for p in group.fsdp_params]}
    return facts


def record_worker(rank, world, configs):
    rec = Recorder()
    rec.install()
    results = []
    for cfg in configs:
        rec.lines, rec.rs_dtypes = [], set()
        facts = run_config(cfg, rec)
        results.append({"config": cfg["text"], "lines": list(rec.lines), "facts": facts})
    return results


def record(world, config_texts):
    """{"torch": version, "world": W, "runs": [{"config", "ranks": [lines per rank], "facts"}]}."""
    import gloo_group
    configs = [parse_config(t) for t in config_texts]
    per_rank = gloo_group.run(record_worker, world, configs)
    runs = [{"config": cfg["text"], "ranks": [per_rank[r][i]["lines"] for r in range(world)],
             "facts": per_rank[0][i]["facts"]} for i, cfg in enumerate(configs)]
    return {"torch": torch.__version__, "world": world, "runs": runs}


def export(name, path):
    """Writes MODEL's file with the project's exporter (fp32, the batch the oracle runs)."""
    sys.path.insert(0, os.path.join(ROOT, "python"))
    from ddpsim_export import export as ddpsim_export
    m, inputs, loss_of, _ = build(name)
    return ddpsim_export(m, inputs, path, loss_fn=loss_of, precision="fp32", optimizer="adamw", name=name)


def main(argv):
    if len(argv) >= 3 and argv[0] == "record":
        print(json.dumps(record(int(argv[1]), argv[2:])))
    elif len(argv) == 3 and argv[0] == "export":
        export(argv[1], argv[2])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
