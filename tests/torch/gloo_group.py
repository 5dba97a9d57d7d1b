"""W processes joined in one gloo process group on CPU: how the oracles run real DDP
(ddp_oracle.py) and FSDP (fsdp_oracle.py)."""
import json
import os
import socket
import tempfile


def _worker(rank, world, port, out_dir, fn, args):
    import torch
    import torch.distributed as dist
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    result = fn(rank, world, *args)
    with open(os.path.join(out_dir, f"rank{rank}.json"), "w") as f:
        json.dump(result, f)
    dist.barrier()
    dist.destroy_process_group()


def run(fn, world, *args):
    """[fn(rank, world, *args) for every rank], each rank in its own process (torch.multiprocessing
    spawn) inside the process group, on a free local port; fn is a module-level function and
    returns what JSON can hold."""
    import torch.multiprocessing as mp
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with tempfile.TemporaryDirectory() as d:
        mp.spawn(_worker, args=(world, port, d, fn, args), nprocs=world, join=True)
        results = []
        for rank in range(world):
            with open(os.path.join(d, f"rank{rank}.json")) as f:
                results.append(json.load(f))
        return results
