#!/usr/bin/env python3
"""Builds the compute.<precision>.gemm sections of a bundled profile from OpenXLA's default matmul
performance table (per-shape achieved FLOP/s of single dots on one GPU architecture), so that
every GEMM number of the profile is reproducible from public per-shape data and none from an
end-to-end run. The same table model and fit as scripts/deepbench_profile.py.

usage: scripts/xla_matmul_profile.py XLA_GIT_DIR COMMIT ARCH PROFILE
  XLA_GIT_DIR  a clone (or bare mirror) of github.com/openxla/xla, or of a fork holding COMMIT
  COMMIT       the commit whose table is read: xla/service/gpu/model/default_matmul_perf_table.txtpb
               or, before July 2026, xla/service/gpu/model/matmul_interpolator_data.h
  ARCH         the table's device key, e.g. sm_90 (H100); the script says which keys there are
  PROFILE      the profile JSON to update in place (profiles/h100-dgxh100.json)

The table (written by xla/tools/matmul_perf_table_gen.cc at the same commit) holds, per device
key, entries (b, m, n, k) of the HLO dot lhs[b,m,k] x rhs[b,k,n] -> [b,m,n] with, per dtype key,
flops = 2bmnk / t, t the median kernel time of 5 traced runs after a warm-up. Only b = 1 entries
are used: ddpsim's table points are single GEMMs (C[m,n] = A[m,k] B[k,n]), time_s = 2mnk / flops.
Which dtype key prices which precision (docs/profiles.md says why):
  bf16  "bf16xbf16->bf16"
  fp16  "bf16xbf16->bf16" (the datasheets give fp16 and bf16 tensor cores the same rate)
  fp32  "f32xf32->f32" (XLA's DEFAULT precision runs an f32 dot in TF32 on sm_80 and later)
peak_flops and mem_bw_Bps stay the datasheet figures already in the profile; ewise, host, h2d and
comm are left as they are; a precision the profile lacks is not added.

Standard library only.
"""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from deepbench_profile import gemm_table, write_profile  # noqa: E402

REPO = "github.com/openxla/xla"
PATHS = ("xla/service/gpu/model/default_matmul_perf_table.txtpb",
         "xla/service/gpu/model/matmul_interpolator_data.h")
DTYPE = {"bf16": "bf16xbf16->bf16", "fp16": "bf16xbf16->bf16", "fp32": "f32xf32->f32"}
ELEM = {"bf16": 2, "fp16": 2, "fp32": 4}
WHY = {
    "bf16": "",
    "fp16": " (bf16 data: NVIDIA's datasheets give fp16 and bf16 tensor cores the same dense rate, "
            "the profile's peak_source; that cuBLAS's fp16 kernels run each shape at the bf16 rate is a "
            "stated assumption)",
    "fp32": " (TF32: the generator's dot has no precision_config, i.e. DEFAULT, and XLA allows TF32 for "
            "it: xla/service/gpu/matmul_utils.cc IsTf32Allowed returns compute_precision <= 1 for "
            "ALG_UNSET, and third_party/tsl/tsl/platform/tensor_float_32_utils.cc enables TF32 by "
            "default; the table's f32 rates exceed the non-tensor-core fp32 peak)",
}


def parse(text, where):
    """{device key: [{b, m, n, k, flops: {dtype: flop/s}, line}]} of a kDefaultMatmulPTable textproto
    (entries { key: DEVICE value { entries { b m n k flops { key: DTYPE value: X } ... } } }), read by
    block nesting, so that one-line and multi-line layouts read alike."""
    out, stack, dev, ent, fl = {}, [], None, None, None
    for tok in re.finditer(r'(\w+)\s*\{|\}|(\w+)\s*:\s*("[^"]*"|[-+0-9.eE]+)', text):
        no = text.count("\n", 0, tok.start()) + 1
        if tok.group(1):
            stack.append(tok.group(1))
            if stack == ["entries", "value", "entries"]:
                ent = {"line": no, "flops": {}}
                out.setdefault(dev, []).append(ent)
            elif stack == ["entries", "value", "entries", "flops"]:
                fl = {}
        elif tok.group(0) == "}":
            if not stack:
                raise SystemExit("%s:%d: unbalanced '}'" % (where, no))
            if stack == ["entries", "value", "entries", "flops"]:
                if "key" not in fl or "value" not in fl:
                    raise SystemExit("%s:%d: flops without key or value" % (where, no))
                ent["flops"][fl["key"].lower()] = float(fl["value"])  # "BF16xBF16->BF16" in 2025-05
            stack.pop()
        else:
            name, val = tok.group(2), tok.group(3)
            if stack == ["entries"] and name == "key":
                dev = val.strip('"')
            elif stack == ["entries", "value", "entries"] and name in "bmnk":
                ent[name] = int(val)
            elif stack == ["entries", "value", "entries", "flops"]:
                fl[name] = val.strip('"')
    if stack:
        raise SystemExit("%s: unbalanced '{'" % where)
    for dev, ents in out.items():
        for e in ents:
            for d in "bmnk":
                if not e.get(d):
                    raise SystemExit("%s:%d: entry of %s lacks a positive %s" % (where, e["line"], dev, d))
    return out


def main():
    if len(sys.argv) != 5:
        sys.stderr.write(__doc__)
        return 2
    gitdir, commit, arch, profile = sys.argv[1:]
    commit = subprocess.check_output(["git", "-C", gitdir, "rev-parse", commit + "^{commit}"], text=True).strip()
    for path in PATHS:
        r = subprocess.run(["git", "-C", gitdir, "show", "%s:%s" % (commit, path)], capture_output=True, text=True)
        if r.returncode == 0:
            break
    else:
        sys.stderr.write("xla_matmul_profile: commit %s has none of %s\n" % (commit, ", ".join(PATHS)))
        return 1
    table = parse(r.stdout, "%s:%s" % (commit[:12], path))
    if arch not in table:
        sys.stderr.write("xla_matmul_profile: %s at %s holds no %s, only %s\n"
                         % (path, commit[:12], arch, ", ".join(sorted(table))))
        return 1
    cite = "%s %s at commit %s, device key %s" % (REPO, path, commit, arch)
    with open(profile) as f:
        doc = json.load(f)
    report = []
    for prec, dtype in DTYPE.items():
        if prec not in doc["compute"]:
            continue
        es = ELEM[prec]
        ents = [e for e in table[arch] if e["b"] == 1 and e["flops"].get(dtype, 0) > 0]
        skipped = sum(1 for e in table[arch] if e["b"] != 1)
        if not ents:
            sys.stderr.write("xla_matmul_profile: %s has no b = 1 entry with %s\n" % (arch, dtype))
            return 1
        gp = [{"m": e["m"], "n": e["n"], "k": e["k"], "time_s": 2.0 * e["m"] * e["n"] * e["k"] / e["flops"][dtype],
               "xla_flop_s": e["flops"][dtype]} for e in ents]
        g = doc["compute"][prec]["gemm"]
        old = g.get("fallback", g)
        peak, bw = old["peak_flops"], old["mem_bw_Bps"]
        peak_src = old.get("peak_source") or old["source"].split(". efficiency")[0].split("; efficiency")[0]
        source = ("every b = 1 entry of %s, dtype key '%s'%s; time_s = 2mnk / the entry's flops (kept as "
                  "xla_flop_s). The table's generator (xla/tools/matmul_perf_table_gen.cc at that commit) "
                  "times the HLO dot lhs[b,m,k] x rhs[b,k,n] as XLA compiles it (cuBLAS or Triton): median "
                  "traced kernel time of 5 runs after a warm-up, so no host launch cost is in it. The %d "
                  "entries with b = 2 or 4 (batched dots) are left out. Converted by "
                  "scripts/xla_matmul_profile.py." % (cite, dtype, WHY[prec], skipped))
        doc["compute"][prec]["gemm"], par, rel = gemm_table(gp, peak, bw, es, peak_src, source,
                                                            "scripts/xla_matmul_profile.py")
        if prec == "fp32":  # XLA's DEFAULT precision runs it in TF32 (WHY above); ddpsim warns by it
            g = doc["compute"][prec]["gemm"]
            doc["compute"][prec]["gemm"] = dict([("model", g["model"]), ("math", "tf32")] +
                                                [(k, v) for k, v in g.items() if k != "model"])
        fb = doc["compute"][prec]["gemm"]["fallback"]
        report.append("%s %s from '%s': %d GEMMs; fit launch %.2f us, efficiency %.3f, mem_efficiency %.3f; "
                      "residual rms %.1f%%, max %.1f%%" % (arch, prec, dtype, len(gp), par[0] * 1e6, par[1], par[2],
                                                          fb["rms_rel_resid"] * 100, fb["max_rel_resid"] * 100))
    write_profile(doc, profile)
    print("\n".join(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
