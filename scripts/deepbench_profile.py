#!/usr/bin/env python3
"""Builds the compute.<precision>.gemm and .conv sections of a bundled profile from Baidu's
DeepBench training results (per-shape GEMM and convolution times), so that every compute number
of the profile is reproducible from public per-shape data and none from an end-to-end run.

usage: scripts/deepbench_profile.py DEEPBENCH_GIT_DIR COMMIT GPU PROFILE
  DEEPBENCH_GIT_DIR  a clone (or bare mirror) of github.com/baidu-research/DeepBench
  COMMIT             the commit whose results/train/DeepBench_NV_<GPU>.xlsx is read
  GPU                V100 or P100
  PROFILE            the profile JSON to update in place (profiles/v100-dgx1v.json, p100-dgx1.json)

What it writes (docs/profile.md, "GEMM tables"; docs/profiles.md says how the bundled ones were
made): for fp32 and fp16, compute.<p>.gemm = {"model": "table", "points": every DeepBench GEMM
(m, n, k, time; transposes kept as repeats of the shape, which ddpsim averages), "fallback": a
roofline whose launch floor, compute efficiency and GEMM-operand memory efficiency are fitted to
those points (least squares on log(fit / measured)), with the fit's residuals and the measured
range}; compute.<p>.conv = every DeepBench convolution with its forward, data-gradient and
weight-gradient times. peak_flops and mem_bw_Bps stay the datasheet figures already in the
profile. Everything else in the profile (ewise, host, h2d, comm) is left as it is.

Standard library only: the .xlsx is read with zipfile and ElementTree.
"""
import json
import math
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
import zipfile
from io import BytesIO

NS = {"m": "http://schemas.openxmlformats.org/spreadsheetml/2006/main"}
REPO = "github.com/baidu-research/DeepBench"


def col_of(ref):
    return "".join(ch for ch in ref if ch.isalpha())


def read_sheets(blob):
    """{sheet name: [{column letter: text}]} of every row."""
    z = zipfile.ZipFile(BytesIO(blob))
    strings = [
        "".join(t.text or "" for t in si.iter("{%s}t" % NS["m"]))
        for si in ET.fromstring(z.read("xl/sharedStrings.xml")).findall("m:si", NS)
    ]
    wb = ET.fromstring(z.read("xl/workbook.xml"))
    out = {}
    for i, s in enumerate(wb.find("m:sheets", NS)):
        sheet = ET.fromstring(z.read("xl/worksheets/sheet%d.xml" % (i + 1)))
        rows = []
        for r in sheet.iter("{%s}row" % NS["m"]):
            cells = {}
            for c in r.findall("m:c", NS):
                v = c.find("m:v", NS)
                if v is None or v.text is None:
                    continue
                cells[col_of(c.get("r"))] = strings[int(v.text)] if c.get("t") == "s" else v.text
            rows.append(cells)
        out[s.get("name")] = rows
    return out


def num(x):
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) and v > 0 else None


def section(rows, title):
    """The header row (column letter -> name) of the block whose first cell starts with title, and
    the data rows up to the next empty stretch."""
    for i, r in enumerate(rows):
        if r.get("A", "").startswith(title):
            hdr = r if any(k != "A" and k != "B" for k in r) else rows[i + 1]
            start = i + 1 if hdr is r else i + 2
            names = {k: v.strip() for k, v in hdr.items()}
            data = []
            for rr in rows[start:]:
                if rr.get("A", "").strip():
                    break
                data.append(rr)
            return names, data
    raise SystemExit("no '%s' block" % title)


def find(names, *keys):
    # A one-letter name matches only itself or "X (...)": "H" is not "Horizontal stride".
    for want in keys:
        w = want.lower()
        for k, v in names.items():
            v = v.lower()
            if v == w or v.startswith(w + " ") or (len(w) > 1 and v.startswith(w)):
                return k
    raise SystemExit("no column %s in %s" % (keys, sorted(names.values())))


def gemms(rows):
    names, data = section(rows, "Dense Matrix Multiplication")
    cm, cn, ck = find(names, "M"), find(names, "N"), find(names, "K")
    ca, cb, ct = find(names, "A Transpose"), find(names, "B Transpose"), find(names, "Time")
    pts = []
    for r in data:
        m, n, k, t = num(r.get(cm)), num(r.get(cn)), num(r.get(ck)), num(r.get(ct))
        if m and n and k and t:
            pts.append({"m": int(m), "n": int(n), "k": int(k), "ta": r.get(ca, "N"), "tb": r.get(cb, "N"),
                        "time_s": t * 1e-3})
    return pts


def convs(rows):
    """DeepBench's conv tuple (kernels/conv_problems.h): W, H, C, N, K, S (filter width),
    R (filter height), pad_w, pad_h, wstride, hstride. The V100 sheet's headers say so; the P100
    sheet labels its filter columns R, S and its pads/strides h then w, so columns are found by
    header and a sheet labelled "R" before "S" is read in that order."""
    names, data = section(rows, "Convolution")
    cw, ch, cc, cn, ck = find(names, "W"), find(names, "H"), find(names, "C"), find(names, "N"), find(names, "K")
    cs, cr = find(names, "S"), find(names, "R")
    cpw, cph = find(names, "pad_w"), find(names, "pad_h")
    csw, csh = find(names, "Horizontal stride"), find(names, "Vertical stride")
    cf, cd, cg = find(names, "Forward"), find(names, "wrt Inputs"), find(names, "wrt Parameters")
    pts = []
    for r in data:
        g = [r.get(c) for c in (cn, cc, ch, cw, ck, cr, cs)]
        if not all(num(x) for x in g):
            continue
        pad = [float(r.get(cph, 0)), float(r.get(cpw, 0))]
        p = dict(zip(("n", "c", "h", "w", "k", "r", "s"), (int(float(x)) for x in g)))
        p.update(pad_h=int(pad[0]), pad_w=int(pad[1]), stride_h=int(float(r[csh])), stride_w=int(float(r[csw])))
        for key, col in (("fwd_s", cf), ("dgrad_s", cd), ("wgrad_s", cg)):
            t = num(r.get(col))
            if t:
                p[key] = t * 1e-3
        if any(k in p for k in ("fwd_s", "dgrad_s", "wgrad_s")):
            pts.append(p)
    return pts


def roof(par, peak, bw, es, m, n, k):
    launch, eff, meff = par
    return launch + max(2.0 * m * n * k / (peak * eff), es * (m * k + k * n + m * n) / (bw * meff))


def fit(pts, peak, bw, es):
    """Least squares on log(fit / measured) over (launch_s, efficiency, mem_efficiency): a coarse
    grid, then coordinate refinement. Returns the parameters and the relative residuals."""
    def cost(par):
        return sum(math.log(roof(par, peak, bw, es, p["m"], p["n"], p["k"]) / p["time_s"]) ** 2 for p in pts)

    grid_l = [x * 1e-6 for x in (1, 2, 3, 5, 8, 12, 20, 30)]
    grid_e = [x / 20 for x in range(1, 21)]
    best = min(((cost((l, e, m)), (l, e, m)) for l in grid_l for e in grid_e for m in grid_e))[1]
    step = [best[0] / 2, 0.025, 0.025]
    lo, hi = [1e-7, 1e-3, 1e-3], [1e-3, 1.0, 1.0]
    for _ in range(60):
        improved = False
        for d in range(3):
            for sgn in (1, -1):
                trial = list(best)
                trial[d] = min(hi[d], max(lo[d], trial[d] + sgn * step[d]))
                if cost(trial) < cost(best):
                    best, improved = tuple(trial), True
        if not improved:
            step = [s / 2 for s in step]
    rel = [roof(best, peak, bw, es, p["m"], p["n"], p["k"]) / p["time_s"] - 1 for p in pts]
    return best, rel


def gemm_table(gp, peak, bw, es, peak_src, source, script):
    """compute.<precision>.gemm as a table over the points gp (dicts with m, n, k, time_s and any
    provenance keys, written as they are), with the roofline fallback fitted to them (fit), the
    fit's residuals and the measured range. Returns (section, fitted parameters, residuals)."""
    par, rel = fit(gp, peak, bw, es)
    rms = math.sqrt(sum(x * x for x in rel) / len(rel))
    rng = {d: [min(p[d] for p in gp), max(p[d] for p in gp)] for d in ("m", "n", "k")}
    section = {
        "model": "table",
        "source": source,
        "measured_range": rng,
        "fallback": {
            "model": "roofline",
            "peak_flops": peak,
            "mem_bw_Bps": bw,
            "launch_s": round(par[0], 9),
            "efficiency": round(par[1], 4),
            "mem_efficiency": round(par[2], 4),
            "points": len(gp),
            "rms_rel_resid": round(rms, 4),
            "max_rel_resid": round(max(abs(x) for x in rel), 4),
            "peak_source": peak_src,
            "source": "launch_s, efficiency, mem_efficiency: least squares on log(roofline / measured) over "
            "the %d GEMM points above (%s); bytes of a GEMM are its "
            "operands', (mk + kn + mn) x %d B" % (len(gp), script, es),
        },
        "points": gp,
    }
    return section, par, rel


def write_profile(doc, profile):
    """Writes doc to profile through a temporary file, so that nothing is half-written."""
    tmp = profile + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    os.replace(tmp, profile)


def main():
    if len(sys.argv) != 5 or sys.argv[3] not in ("V100", "P100"):
        sys.stderr.write(__doc__)
        return 2
    gitdir, commit, gpu, profile = sys.argv[1:]
    commit = subprocess.check_output(["git", "-C", gitdir, "rev-parse", commit + "^{commit}"], text=True).strip()
    path = "results/train/DeepBench_NV_%s.xlsx" % gpu
    sheets = read_sheets(subprocess.check_output(["git", "-C", gitdir, "show", "%s:%s" % (commit, path)]))
    cite = "%s %s at commit %s" % (REPO, path, commit)
    with open(profile) as f:
        doc = json.load(f)
    # Which sheet is which precision: the sheet's own "Precision" line.
    names = list(sheets)
    what = {"fp32": names[0], "fp16": names[1]}
    report = []
    for prec, sheet in what.items():
        rows = sheets[sheet]
        precision_line = next((r.get("B", "") for r in rows if r.get("A", "").startswith("Precision")), "?")
        es = 4 if prec == "fp32" else 2
        g = doc["compute"][prec]["gemm"]
        old = g.get("fallback", g)
        peak, bw = old["peak_flops"], old["mem_bw_Bps"]
        peak_src = old.get("peak_source") or old["source"].split(". efficiency")[0].split("; efficiency")[0]
        gp, cp = gemms(rows), convs(rows)
        src = "%s, sheet '%s' (precision: %s)" % (cite, sheet, precision_line)
        doc["compute"][prec]["gemm"], par, rel = gemm_table(
            gp, peak, bw, es, peak_src,
            "every dense GEMM of " + src + "; time_s = the sheet's 'Time (msec)' / 1000; ta, tb: "
            "the sheet's A and B transposes (repeats of a shape, averaged by ddpsim). Converted by "
            "scripts/deepbench_profile.py.", "scripts/deepbench_profile.py")
        rms = math.sqrt(sum(x * x for x in rel) / len(rel))
        doc["compute"][prec]["conv"] = {
            "source": "every convolution of " + src + "; fwd_s, dgrad_s, wgrad_s = the sheet's 'Forward', "
            "'wrt Inputs', 'wrt Parameters' (msec) / 1000 (absent where the sheet has N/A); geometry in "
            "cuDNN's names, read from DeepBench's (W, H, C, N, K, S, R, pad_w, pad_h, wstride, hstride). "
            "Converted by scripts/deepbench_profile.py.",
            "points": cp,
        }
        report.append("%s %s: %d GEMMs, %d convolutions; fit launch %.2f us, efficiency %.3f, mem_efficiency "
                      "%.3f; residual rms %.1f%%, max %.1f%%" % (gpu, prec, len(gp), len(cp), par[0] * 1e6, par[1],
                                                                  par[2], rms * 100, max(abs(x) for x in rel) * 100))
    write_profile(doc, profile)
    print("\n".join(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
