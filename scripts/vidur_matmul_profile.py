#!/usr/bin/env python3
"""Builds the compute.fp16.gemm (and bf16) sections of the A100 profile from Vidur's A100 profiling data: the
fp16 kernel times of the linear layers of eight transformer models, per token count and tensor-
parallel degree, measured on an A100 80GB DGX (SXM4) with PyTorch's profiler. Every GEMM number of
that section is then reproducible from public per-shape data and none from an end-to-end run. The
same table model and fit as scripts/deepbench_profile.py.

usage: scripts/vidur_matmul_profile.py VIDUR_GIT_DIR COMMIT PROFILE
  VIDUR_GIT_DIR  a clone (or bare mirror) of github.com/microsoft/vidur holding COMMIT
  COMMIT         the commit whose data/profiling/compute/a100/<org>/<model>/mlp.csv files are read
  PROFILE        the profile JSON to update in place (profiles/a100-dgxa100.json)

What a row of mlp.csv is (vidur/profiling/mlp/ at the same commit): mlp_impl.py builds one
transformer block of the model in fp16 (mlp_wrapper.py: model.to(dtype=torch.float16)) with
sarathi's ColumnParallelLinear / RowParallelLinear at tensor-parallel degree tp
(num_tensor_parallel_workers), runs it on num_tokens tokens, and records per linear layer the CUDA
kernel time the profiler attributes to it (the default profile_method record_function: kernel
time, no host launch cost), 20 active steps after warm-up; the row keeps min, max, mean, median
and std in ms. Each linear layer is one GEMM C[m,n] = A[m,k] B[k,n] with m = num_tokens and, from
mlp_impl.py (head_dim = n_embd / n_head):
  attn_pre_proj   n = (n_head + 2 n_kv_head) head_dim / tp    k = n_embd
  attn_post_proj  n = n_embd                                  k = n_head head_dim / tp
  mlp_up_proj     n = (2 if use_gated_mlp else 1) n_expanded_embd / tp   k = n_embd
  mlp_down_proj   n = n_embd                                  k = n_expanded_embd / tp
time_s is the median. Only rows whose num_tokens is a power of two are taken (the files step
num_tokens finely; powers of two keep every model, layer and degree at 1/30 of the size).
The same points price bf16: NVIDIA's A100 datasheet gives fp16 and bf16 tensor cores the same
dense rate (312 TFLOP/s, the profile's peak_source), and that cuBLAS runs each shape at that rate in
bf16 too is a stated assumption, said in the bf16 section's source. peak_flops and mem_bw_Bps stay
the datasheet figures already in the profile; fp32 (TF32), ewise, host, h2d and comm are left as
they are.

Standard library only.
"""
import csv
import io
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from deepbench_profile import gemm_table, write_profile  # noqa: E402

REPO = "github.com/microsoft/vidur"
ROOT = "data/profiling/compute/a100/"
LAYERS = ("attn_pre_proj", "attn_post_proj", "mlp_up_proj", "mlp_down_proj")


def shape(row, layer):
    """(n, k) of a linear layer of a row, as vidur/profiling/mlp/mlp_impl.py builds it."""
    nh, nkv, e, x, tp = (int(row[c]) for c in ("n_head", "n_kv_head", "n_embd", "n_expanded_embd",
                                                "num_tensor_parallel_workers"))
    gated = row["use_gated_mlp"].strip().lower() in ("true", "1")
    hd = e // nh
    return {"attn_pre_proj": ((nh + 2 * nkv) * hd // tp, e),
            "attn_post_proj": (e, nh * hd // tp),
            "mlp_up_proj": ((2 if gated else 1) * x // tp, e),
            "mlp_down_proj": (e, x // tp)}[layer]


def main():
    if len(sys.argv) != 4:
        sys.stderr.write(__doc__)
        return 2
    gitdir, commit, profile = sys.argv[1:]
    commit = subprocess.check_output(["git", "-C", gitdir, "rev-parse", commit + "^{commit}"], text=True).strip()
    paths = [p for p in subprocess.check_output(["git", "-C", gitdir, "ls-tree", "-r", "--name-only", commit, ROOT],
                                                text=True).split() if p.endswith("/mlp.csv")]
    if not paths:
        sys.stderr.write("vidur_matmul_profile: commit %s has no %s*/mlp.csv\n" % (commit, ROOT))
        return 1
    gp, models = [], []
    for path in sorted(paths):
        text = subprocess.check_output(["git", "-C", gitdir, "show", "%s:%s" % (commit, path)], text=True)
        model = path[len(ROOT):-len("/mlp.csv")]
        models.append(model)
        for line, row in enumerate(csv.DictReader(io.StringIO(text)), start=2):
            m = int(row["num_tokens"])
            if m & (m - 1):
                continue
            for layer in LAYERS:
                n, k = shape(row, layer)
                ms = float(row["time_stats.%s.median" % layer])
                if not (ms > 0 and n > 0 and k > 0):
                    sys.stderr.write("vidur_matmul_profile: %s:%d: %s has no positive time or shape\n"
                                     % (path, line, layer))
                    return 1
                gp.append({"m": m, "n": n, "k": k, "time_s": ms * 1e-3, "vidur": "%s %s tp=%s" % (
                    model, layer, row["num_tensor_parallel_workers"])})
    with open(profile) as f:
        doc = json.load(f)
    report = []
    for prec in ("fp16", "bf16"):
        if prec not in doc["compute"]:
            continue
        g = doc["compute"][prec]["gemm"]
        old = g.get("fallback", g)
        peak, bw = old["peak_flops"], old["mem_bw_Bps"]
        peak_src = old.get("peak_source") or old["source"].split(". efficiency")[0]
        why = "" if prec == "fp16" else (
            " These are fp16 times: NVIDIA's A100 datasheet gives fp16 and bf16 tensor cores the same dense "
            "rate (peak_source); that cuBLAS runs each shape at the fp16 rate in bf16 too is a stated "
            "assumption.")
        source = ("%s %s<model>/mlp.csv at commit %s (%d models: %s): fp16 kernel times of the four linear "
                  "layers of one transformer block per num_tokens and tensor-parallel degree, measured on an "
                  "A100 80GB DGX (SXM4) with PyTorch's profiler (vidur/profiling/mlp/ at that commit: "
                  "record_function, CUDA kernel time, no host launch cost). Each point is one layer of one row "
                  "whose num_tokens is a power of two: m = num_tokens, n and k the layer's output and input "
                  "widths per mlp_impl.py, time_s the row's median; 'vidur' names the model, layer and degree. "
                  "Converted by scripts/vidur_matmul_profile.py.%s"
                  % (REPO, ROOT, commit, len(models), ", ".join(models), why))
        doc["compute"][prec]["gemm"], par, rel = gemm_table(gp, peak, bw, 2, peak_src, source,
                                                            "scripts/vidur_matmul_profile.py")
        fb = doc["compute"][prec]["gemm"]["fallback"]
        report.append("A100 %s from %d models: %d GEMMs; fit launch %.2f us, efficiency %.3f, mem_efficiency "
                      "%.3f; residual rms %.1f%%, max %.1f%%" % (prec, len(models), len(gp), par[0] * 1e6, par[1],
                                                                 par[2], fb["rms_rel_resid"] * 100,
                                                                 fb["max_rel_resid"] * 100))
    write_profile(doc, profile)
    print("\n".join(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
