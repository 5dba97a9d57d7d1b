#!/usr/bin/env python3
"""scripts/vidur_matmul_profile.py on a small Vidur-like repository: each linear layer becomes the
GEMM vidur/profiling/mlp/mlp_impl.py builds (grouped-query attention, gated and plain MLPs,
tensor-parallel division), only power-of-two token counts are kept, times are the median in
seconds, bf16 gets the same points and says it is an assumption, and a bad row is refused with
file:line. usage: test_vidur_profile.py SCRIPT"""
import json
import os
import subprocess
import sys
import tempfile

HEAD = ("n_head,n_kv_head,n_embd,n_expanded_embd,vocab_size,use_gated_mlp,num_tokens,num_tensor_parallel_workers,"
        "time_stats.attn_pre_proj.median,time_stats.attn_post_proj.median,time_stats.mlp_up_proj.median,"
        "time_stats.mlp_down_proj.median\n")
fails = 0


def check(ok, what):
    global fails
    print(("ok    " if ok else "FAIL  ") + what)
    fails += 0 if ok else 1


def repo(root, files):
    subprocess.run(["git", "init", "-q", root], check=True)
    for path, text in files.items():
        os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
        with open(os.path.join(root, path), "w") as f:
            f.write(text)
    subprocess.run(["git", "-C", root, "add", "."], check=True)
    subprocess.run(["git", "-C", root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "t"],
                   check=True)


def profile(path):
    roof = {"model": "roofline", "peak_flops": 312e12, "mem_bw_Bps": 2.039e12, "efficiency": 0.5,
            "mem_efficiency": 0.8, "launch_s": 5e-6, "source": "peak_flops: datasheet. efficiency 0.5: assumed"}
    with open(path, "w") as f:
        json.dump({"compute": {"fp16": {"gemm": dict(roof)}, "bf16": {"gemm": dict(roof)}}}, f)


def main():
    script = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        good = os.path.join(tmp, "good")
        repo(good, {
            # grouped-query attention (8 kv heads of 32), gated MLP, tp 2; 1000 tokens is not a power of two
            "data/profiling/compute/a100/org/gqa/mlp.csv": HEAD +
            "32,8,4096,14336,32000,True,1024,2,1.0,2.0,3.0,4.0\n"
            "32,8,4096,14336,32000,True,1000,2,9.0,9.0,9.0,9.0\n",
            # plain attention and MLP, tp 1
            "data/profiling/compute/a100/org/plain/mlp.csv": HEAD + "32,32,2560,10240,51200,False,512,1,0.5,0.25,1.5,2.5\n",
            "data/profiling/compute/a100/org/plain/attention.csv": "not read\n",
        })
        prof = os.path.join(tmp, "p.json")
        profile(prof)
        r = subprocess.run([sys.executable, script, good, "HEAD", prof], capture_output=True, text=True)
        check(r.returncode == 0, "the script converts a good repository: %s" % (r.stderr.strip() or "rc 0"))
        doc = json.load(open(prof))
        pts = doc["compute"]["fp16"]["gemm"]["points"]
        got = sorted((p["m"], p["n"], p["k"], round(p["time_s"] * 1e3, 9), p["vidur"]) for p in pts)
        want = sorted([
            (1024, (32 + 2 * 8) * 128 // 2, 4096, 1.0, "org/gqa attn_pre_proj tp=2"),
            (1024, 4096, 32 * 128 // 2, 2.0, "org/gqa attn_post_proj tp=2"),
            (1024, 2 * 14336 // 2, 4096, 3.0, "org/gqa mlp_up_proj tp=2"),
            (1024, 4096, 14336 // 2, 4.0, "org/gqa mlp_down_proj tp=2"),
            (512, 3 * 2560, 2560, 0.5, "org/plain attn_pre_proj tp=1"),
            (512, 2560, 2560, 0.25, "org/plain attn_post_proj tp=1"),
            (512, 10240, 2560, 1.5, "org/plain mlp_up_proj tp=1"),
            (512, 2560, 10240, 2.5, "org/plain mlp_down_proj tp=1"),
        ])
        check(got == want, "every layer is its GEMM (m tokens, n out, k in), power-of-two token counts only:\n  %s"
              % "\n  ".join(map(str, got)))
        g16, g_bf = doc["compute"]["fp16"]["gemm"], doc["compute"]["bf16"]["gemm"]
        check(g16["model"] == "table" and g16["fallback"]["points"] == 8 and g16["measured_range"]["m"] == [512, 1024],
              "a table with its fitted fallback and measured range")
        check(g_bf["points"] == g16["points"] and "stated assumption" in g_bf["source"]
              and "stated assumption" not in g16["source"], "bf16: the same points, and it says that is an assumption")
        check(g16["fallback"]["peak_flops"] == 312e12 and "datasheet" in g16["fallback"]["peak_source"],
              "the peak stays the datasheet's")

        bad = os.path.join(tmp, "bad")
        repo(bad, {"data/profiling/compute/a100/org/m/mlp.csv": HEAD + "32,32,2560,10240,51200,False,512,1,0.5,0,1.5,2.5\n"})
        profile(prof)
        before = open(prof).read()
        r = subprocess.run([sys.executable, script, bad, "HEAD", prof], capture_output=True, text=True)
        check(r.returncode == 1 and "data/profiling/compute/a100/org/m/mlp.csv:2: attn_post_proj" in r.stderr
              and open(prof).read() == before, "a zero time: exit 1, file:line, the profile untouched (%s)"
              % r.stderr.strip())
        r = subprocess.run([sys.executable, script, good, "HEAD"], capture_output=True, text=True)
        check(r.returncode == 2 and "usage" in r.stderr, "misuse: exit 2 with the usage")
    print("%s" % ("all passed" if not fails else "%d failed" % fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
