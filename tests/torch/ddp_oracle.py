"""What real PyTorch does, recorded for ddpsim's tests (tests/torch/test_reducer.py).

  python3 ddp_oracle.py ready MODEL
      the gradient-ready order: parameter names in the order autograd finished accumulating
      their gradients (post-accumulate-grad hooks), one forward and backward on CPU.
  python3 ddp_oracle.py ddp MODEL CONFIG [CONFIG ...]
      a real 2-process gloo DistributedDataParallel on CPU per CONFIG, 4 iterations each; for
      every iteration, the buckets DDP all-reduced, in launch order (recorded by a comm hook
      around the default all-reduce): bytes and registration indices of their parameters.
      CONFIG: cap=X|none,fup=0|1,static=0|1

MODEL: resnet18, resnet50 (torchvision), bert-base (Hugging Face BertForPreTraining built from
BertConfig(), no download), mlstm-tiny (tests/torch/mlstm_module.py). JSON on stdout.
"""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def file_name(model, name):
    """A parameter's name as the model file writes it."""
    if model.startswith("mlstm-"):
        import mlstm_module
        return mlstm_module.file_name(name)
    return name


def build(name):
    """(module, example inputs, loss function of the outputs) for a model name."""
    torch.manual_seed(0)
    if name in ("resnet18", "resnet50"):
        import torchvision
        m = getattr(torchvision.models, name)(weights=None)
        return m, (torch.randn(2, 3, 64, 64),), lambda out: out.float().mean()
    if name == "bert-base":
        import transformers
        m = transformers.BertForPreTraining(transformers.BertConfig())
        ids = torch.randint(0, 30522, (2, 16))
        return m, (ids,), lambda out: out.prediction_logits.mean() + out.seq_relationship_logits.mean()
    if name.startswith("mlstm-"):
        import mlstm_module
        m = mlstm_module.MLSTM(**mlstm_module.SIZES[name])
        return m, (m.example_input(2),), lambda out: out.mean()
    raise SystemExit(f"ddp_oracle: unknown model {name!r}")


def ready_order(name):
    m, inputs, loss_of = build(name)
    order = []
    for pname, p in m.named_parameters():
        if p.requires_grad:
            p.register_post_accumulate_grad_hook(lambda _p, n=pname: order.append(n))
    loss_of(m(*inputs)).backward()
    return {"model": name, "params": [file_name(name, n) for n, _ in m.named_parameters()],
            "ready": [file_name(name, n) for n in order],
            "buffer_bytes": sum(b.numel() * b.element_size() for b in m.buffers())}


def parse_config(text):
    kv = dict(item.split("=", 1) for item in text.split(","))
    cap = None if kv["cap"] == "none" else float(kv["cap"])
    return {"text": text, "cap": cap, "fup": kv.get("fup", "0") == "1", "static": kv.get("static", "0") == "1"}


def ddp_worker(rank, world, name, configs):
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
    results = []
    for cfg in configs:
        m, inputs, loss_of = build(name)
        index = {id(p): i for i, p in enumerate(p for p in m.parameters() if p.requires_grad)}
        kwargs = {"find_unused_parameters": cfg["fup"], "static_graph": cfg["static"]}
        if cfg["cap"] is not None:
            kwargs["bucket_cap_mb"] = cfg["cap"]
        ddp = torch.nn.parallel.DistributedDataParallel(m, **kwargs)
        seen = []

        def hook(state, bucket):
            buf = bucket.buffer()
            seen.append({"bytes": buf.numel() * buf.element_size(),
                         "params": [index[id(p)] for p in bucket.parameters()]})
            return default_hooks.allreduce_hook(None, bucket)

        ddp.register_comm_hook(None, hook)
        iterations = []
        for _ in range(4):
            seen.clear()
            loss_of(ddp(*inputs)).backward()
            iterations.append(list(seen))
        results.append({"config": cfg["text"], "iterations": iterations})
        del ddp
    return results


def ddp_runs(name, config_texts):
    import gloo_group
    configs = [parse_config(t) for t in config_texts]
    runs = gloo_group.run(ddp_worker, 2, name, configs)[0]
    return {"model": name, "torch": torch.__version__, "runs": runs}


def main(argv):
    if len(argv) >= 2 and argv[0] == "ready":
        print(json.dumps(ready_order(argv[1])))
    elif len(argv) >= 3 and argv[0] == "ddp":
        print(json.dumps(ddp_runs(argv[1], argv[2:])))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
