"""What the lent-GPU measurement scripts (scripts/gpu_overlap.py, gpu_steps.py) share: their --json
output, never replacing a non-regular file and written whole, and PyTorch with CUDA or a skip (77)."""
import json
import os


def check_json_arg(ap, path):
    """Refuses (argparse usage error, exit 2) a --json path that exists and is not a regular file."""
    if path and os.path.exists(path) and not os.path.isfile(path):
        ap.error("--json %s exists and is not a regular file: it is never replaced" % path)


def write_json(path, doc):
    """doc into path through a temporary beside it, so that nothing is half-written."""
    with open(path + ".tmp", "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(path + ".tmp", path)


def cuda_torch():
    """torch where it sees a CUDA device; else None, the reason printed as a skip line."""
    try:
        import torch
    except ImportError:
        print("skip: PyTorch is not installed")
        return None
    if not torch.cuda.is_available():
        print("skip: PyTorch sees no CUDA device")
        return None
    return torch
