#!/usr/bin/env python3
"""Writes the fixtures of this folder: one nccl-tests log per release layout, each line printed
with the format strings of that release's source (NVIDIA/nccl-tests, BSD-3-Clause; the tag and
file of each are in README.md), from a known ring (t = nsteps (lat + S / (n bw)), 2% deterministic
noise), and the bad logs the reader must refuse. MANIFEST lists each with what the test expects.
Run it again after changing it: python3 gen.py (writes next to itself)."""
import math
import os

HERE = os.path.dirname(os.path.abspath(__file__))
STEPS = {"all_reduce": lambda n: 2 * (n - 1), "all_gather": lambda n: n - 1, "reduce_scatter": lambda n: n - 1,
         "broadcast": lambda n: n, "alltoall": lambda n: n - 1, "sendrecv": lambda n: 1, "reduce": lambda n: n}
FACTOR = {"all_reduce": lambda n: 2 * (n - 1) / n, "all_gather": lambda n: (n - 1) / n, "reduce_scatter": lambda n: (n - 1) / n,
          "broadcast": lambda n: 1.0, "alltoall": lambda n: (n - 1) / n, "sendrecv": lambda n: 1.0, "reduce": lambda n: 1.0}
REDUCES = {"all_reduce", "reduce_scatter", "reduce", "sendrecv"}
ROOTED = {"broadcast", "reduce"}


def tstr_v2(us):  # src/common.cu v2.0.0..v2.17.2: %7.0f from 10 ms, %7.1f from 100 us, else %7.2f
    return "%7.0f" % us if us >= 10000.0 else "%7.1f" % us if us >= 100.0 else "%7.2f" % us


def fstr(v, w):  # src/util.cu getFloatStr, v2.17.3 on
    for f in ("%*.2f", "%*.1f", "%*.0f"):
        s = f % (w, v)
        if len(s) <= w:
            return s
    return ("%*.1e" if w >= 7 else "%*.0e") % (w, v)


def rank_line(rel, r, host, dev, gpn):
    bus = 0x07 + 4 * dev
    name = "NVIDIA H100 80GB HBM3" if rel >= "v2.14" else "NVIDIA A100-SXM4-80GB"
    if rel == "v1.0":
        return "#   Rank %2d on %10s device %2d [0x%02x] %s" % (r, host, dev, bus, name)
    if rel < "v2.13.4":
        return "#   Rank %2d Pid %6d on %10s device %2d [0x%02x] %s" % (r, 4100 + r, host, dev, bus, name)
    if rel < "v2.14.1":
        return "#  Rank %2d Group %2d Pid %6d on %10s device %2d [0x%02x] %s" % (r, 0, 4100 + r, host, dev, bus, name)
    return "#  Rank %2d Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] %s" % (r, 0, 4100 + r, host, dev, 0, bus, 0, name)


def log(rel, coll, gpn, hosts, lat, bw, sizes=(1024, 1 << 30), concluded=None, ts=False, periter=False, bitdiff=False,
        host_fmt="node%02d", wrongs=None, info_lines=(), corrupt_row=None):
    """The lines of `coll`'s log in release `rel`'s layout: gpn GPUs on each of `hosts` hosts, a
    ring of latency lat (s) and bandwidth bw (B/s); corrupt_row: that row's busbw 1.5 times too
    high (a log the reader must refuse). tests/calib/test_import.py writes its logs with it too."""
    n = gpn * hosts
    new = rel >= "v2.16.7"
    concluded = new if concluded is None else concluded
    prog = coll + "_perf"
    out = []
    if rel >= "v2.17.6":
        out.append("# nccl-tests version %s nccl-headers=22703 nccl-library=22703" % rel[1:])
    if new:
        out.append("# Collective test starting: %s" % prog)
    if rel == "v1.0":  # printed without '#' in v1.0.0
        out.append("nThread 1 nGpus %d minBytes %d maxBytes %d step: 2(factor) warmup iters: 5 iters: 20 validation: 1 "
                   % (gpn, sizes[0], sizes[1]))
    elif rel < "v2.13":
        out.append("# nThread 1 nGpus 1 minBytes %d maxBytes %d step: 2(factor) warmup iters: 5 iters: 20 validation: 1 "
                   % sizes)
        out.append("#")
    else:
        extra = " unalign: 0" if rel >= "v2.18" else ""
        out.append("# nThread 1 nGpus 1 minBytes %d maxBytes %d step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 "
                   "validation: 1 graph: 0%s" % (sizes[0], sizes[1], extra))
        if periter:
            out.append("# Per-Iteration Report: CUDA event timing; i_* uses max over process rows ")
        if bitdiff:
            out.append("# Bitwise Repeatability: 2 comparisons after one reference run ")
        out.append("#")
    out.append("# Using devices")
    for r in range(n):
        out.append(rank_line(rel, r, host_fmt % (r // gpn), r % gpn, gpn))
    out.extend(info_lines)
    root_col = rel >= "v2.13" or coll in ROOTED
    places = 1 if (rel == "v1.0" and coll == "broadcast") else 2
    if rel == "v1.0":
        c4 = "root" if coll == "broadcast" else "op"
        out.append("# %10s  %12s  %6s  %6s        out-of-place                    in-place" % ("", "", "", ""))
        cols = ["time", "algbw", "busbw", "res"] * places
        out.append(("# %10s  %12s  %6s  %6s" + "  %7s  %5s  %5s  %7s" * places) % tuple(["bytes", "N", "type", c4] + cols))
    elif rel < "v2.13":
        lead = ["size", "count", "type"] + (["redop", "root"] if coll == "reduce" else ["root"] if coll in ROOTED else ["redop"])
        out.append("# %10s  %12s  %8s  %6s            out-of-place                       in-place          " % ("", "", "", ""))
        fmt = "# %10s  %12s  %8s" + "  %6s" * (len(lead) - 3) + "  %7s  %6s  %6s  %5s" * 2
        out.append(fmt % tuple(lead + ["time", "algbw", "busbw", "error"] * 2))
        out.append(fmt % tuple(["(B)", "(elements)", ""] + [""] * (len(lead) - 3) + ["(us)", "(GB/s)", "(GB/s)", ""] * 2))
    else:
        tsl = ("timestamp" if ts else "")
        out.append("#")
        if bitdiff:
            out.append("# %10s  %12s  %8s  %6s  %6s               out-of-place + bitwise                           in-place "
                       "+ bitwise          " % ("", "", "", "", ""))
            out.append(("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %8s  %7s  %6s  %6s  %6s  %8s %*s") %
                       ("size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "#bitdiff", "time",
                        "algbw", "busbw", "#wrong", "#bitdiff", 19 if ts else 0, tsl))
        elif periter:
            out.append("# %10s  %12s  %8s  %6s  %6s              out-of-place (+ per-iteration)                                "
                       "in-place (+ per-iteration)" % ("", "", "", "", ""))
            out.append(("# %10s  %12s  %8s  %6s  %6s" + "  %7s  %6s  %6s  %6s  %7s  %7s  %7s  %7s" * 2 + " %*s") %
                       tuple(["size", "count", "type", "redop", "root"] + ["time", "algbw", "busbw", "#wrong", "i_min",
                                                                           "i_max", "i_p99", "i_cv%"] * 2 + [19 if ts else 0, tsl]))
        else:
            out.append("# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          "
                       % ("", "", "", "", ""))
            out.append("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s" %
                       ("size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw",
                        "busbw", "#wrong", 19 if ts else 0, tsl))
        out.append("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s" %
                   ("(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "",
                    19 if ts else 0, "%Y-%m-%d %H:%M:%S" if ts else ""))
    size, k, bus = sizes[0], 0, []
    if coll in REDUCES:
        op = "sum"
    else:
        op = "none" if rel >= "v2.13.4" else ""
    root = 0 if coll in ROOTED else -1
    while size <= sizes[1]:
        count = size // 4 // (n if coll in ("all_gather", "reduce_scatter", "alltoall") else 1)
        if rel == "v1.0":
            row = "%12li  %12li  %6s  %6s" % (size, count, "float", root if coll == "broadcast" else op)
        elif rel < "v2.13":
            row = "%12li  %12li  %8s" % (size, count, "float")
            row += ("  %6s  %6i" % (op, root)) if coll == "reduce" else ("  %6i" % root) if coll in ROOTED else "  %6s" % op
        else:
            row = "%12li  %12li  %8s  %6s  %6s" % (size, count, "float", op, "%6i" % root)
        for place in range(places):
            noise = 1 + 0.02 * math.sin(1.7 * k + 0.9 * place)
            t = STEPS[coll](n) * (lat + size / (n * bw)) * noise * 1e6
            if rel == "v1.0":
                tp = "%7.3f" % (t / 1e3)
                alg = size / (float(tp) * 1e6)
            elif rel < "v2.17.3":
                tp = tstr_v2(t)
                alg = size / (float(tp) * 1e3)
            else:
                tp = fstr(t, 7)
                alg = size / (float(tp) * 1e3)
            busv = alg * FACTOR[coll](n) * (1.5 if k == corrupt_row else 1)
            w = 0 if wrongs is None else wrongs.get((k, place), 0)
            if rel == "v1.0":
                row += "  %7s  %5.2f  %5.2f  %7.0e" % (tp, alg, busv, 1e-7 if coll in REDUCES else 0)
            elif rel < "v2.13":
                row += "  %7s  %6.2f  %6.2f  %5.0e" % (tp, alg, busv, 2e-7 if coll in REDUCES else 0)
            elif rel < "v2.17.3":
                row += "  %7s  %6.2f  %6.2f  %5s" % (tp, alg, busv, w if isinstance(w, str) else "%5g" % w)
            else:
                row += "  %7s  %6s  %6s  %6s" % (tp, fstr(alg, 6), fstr(busv, 6), w if isinstance(w, str) else "%6g" % w)
            if bitdiff:
                row += "  %8g" % 0
            if periter:
                row += "  %7s  %7s  %7s  %7s" % (fstr(t * 0.97, 7), fstr(t * 1.08, 7), fstr(t * 1.07, 7), fstr(2.5 + k % 3, 7))
            if place == 0:
                bus.append(busv)
        if ts:
            row += "%21s" % ("2026-07-%02d 10:%02d:%02d" % (10 + k % 3, k, (7 * k) % 60))
        out.append(row)
        size *= 2
        k += 1
    if rel == "v1.0":
        out.append(" Out of bounds values : 0 OK")
        out.append(" Avg bus bandwidth    : %g " % (sum(bus) / len(bus)))
        out.append("")
    else:
        out.append("# Out of bounds values : 0 OK")
        out.append("# Avg bus bandwidth    : %g " % (sum(bus) / len(bus)))
        out.append("#")
        if concluded:
            out.append("# Collective test concluded: %s" % prog)
    return out


def prefixed(lines, kind):
    if kind == "srun":  # srun -l: "%d: " per task; rank 0 prints
        return [" 0: " + l for l in lines]
    if kind == "mpich":  # MPICH / Intel MPI -prepend-rank
        return ["[0] " + l for l in lines]
    if kind == "ompi":  # Open MPI --tag-output
        return ["[1,0]<stdout>:" + l for l in lines]
    return lines


def write(name, lines):
    with open(os.path.join(HERE, name), "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    manifest = ["# file\tcollective\trelease layout the reader names\tranks\thosts\tlat_s\tbw_Bps\textra flags (- for none)"]


    def good(name, rel, coll, gpn, hosts, lat, bw, label, flags="-", prefix=None, **kw):
        write(name, prefixed(log(rel, coll, gpn, hosts, lat, bw, **kw), prefix))
        manifest.append("\t".join([name, coll, label, str(gpn * hosts), str(hosts), repr(lat), repr(bw), flags]))


    NV = (6e-6, 130e9)
    IB = (9e-6, 42e9)
    good("v1.0.0_all_reduce.log", "v1.0", "all_reduce", 4, 1, *NV, "v1.0.0", sizes=(8192, 1 << 28))
    good("v2.0-v2.11_all_reduce.log", "v2.11", "all_reduce", 8, 1, *NV, "v2.0.0..v2.11.0")
    good("v2.0-v2.11_broadcast.log", "v2.11", "broadcast", 4, 2, *IB, "v2.0.0..v2.11.0")
    good("v2.0-v2.11_all_gather.log", "v2.11", "all_gather", 8, 1, *NV, "v2.0.0..v2.11.0", flags="--collective all_gather")
    good("v2.13.0-v2.13.3_all_gather.log", "v2.13.0", "all_gather", 8, 1, *NV, "v2.13.0..v2.13.3", flags="--collective all_gather")
    good("v2.13.4-v2.14.0_reduce_scatter_srun.log", "v2.13.4", "reduce_scatter", 4, 2, *IB, "v2.13.4..v2.14.0", prefix="srun")
    nccl_info = ["10-4-3-3:97095:97196 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/direct pointer",
                 "10-4-3-3:97095:97191 [5] NCCL INFO Connected all rings, use ring PXN 0 GDR 1",
                 "NCCL version 2.21.5+cuda12.4"]
    good("v2.14.1-v2.16.6_all_reduce_mpich.log", "v2.14.1", "all_reduce", 8, 2, *IB, "v2.14.1..v2.16.6", prefix="mpich",
         host_fmt="10-4-3-%d", info_lines=nccl_info)
    good("v2.16.7-v2.17.3_broadcast_ompi.log", "v2.16.7", "broadcast", 8, 1, *NV, "v2.16.7..v2.17.3", prefix="ompi")
    good("v2.17.6_all_gather_timestamp.log", "v2.17.6", "all_gather", 8, 2, *IB, "v2.17.6", ts=True)
    good("v2.19.6_all_reduce_periter.log", "v2.19.6", "all_reduce", 8, 1, *NV, "v2.19.6 per-iteration", periter=True, ts=True)
    good("v2.19.6_all_reduce_bitdiff.log", "v2.19.6", "all_reduce", 8, 1, *NV, "v2.19.6 #bitdiff", bitdiff=True)

    # The bad logs: each a reproducer of a log once misread, and what the reader must say.
    bad = ["# file\textra flags (- for none)\texit\twhat stderr must hold"]


    def badlog(name, lines, want, flags="-", code=1):
        write("bad/" + name, lines)
        bad.append("\t".join([name, flags, str(code), want]))


    base = dict(rel="v2.13.4", coll="all_reduce", gpn=8, hosts=1, lat=NV[0], bw=NV[1], sizes=(1 << 20, 1 << 26))
    badlog("wrong_1e308.log", log(**base, wrongs={(3, 0): "1e308"}), "#wrong '1e308' is not a count")
    badlog("wrong_1e+20.log", log(**base, wrongs={(2, 1): "1e+20"}), "#wrong '1e+20' is not a count")
    badlog("wrong_minus3.log", log(**base, wrongs={(1, 0): "-3"}), "#wrong '-3' is not a non-negative number")
    badlog("wrong_9e18_twice.log", log(**base, wrongs={(1, 0): "9e+18", (2, 0): "9e+18"}), "9223372036854775807 wrong elements")
    badlog("alltoall_silent.log", log(**dict(base, coll="alltoall")), "all_gather_perf or alltoall_perf alike: give --collective")
    badlog("sendrecv_2ranks.log", log(**dict(base, coll="sendrecv", gpn=2)), "all_reduce_perf or sendrecv_perf alike: give --collective")
    badlog("reduce_silent.log", log(**dict(base, coll="reduce")), "reduce_perf's: ddpsim models")
    badlog("broadcast_given_reduce.log", log(**dict(base, coll="reduce")), "not broadcast's", flags="--collective broadcast")
    rows = log(**base)
    cut = [l if i != len(rows) - 6 else l[:l.rindex(" ")].rstrip() for i, l in enumerate(rows)]
    badlog("truncated_line.log", cut, "where the column header (line")
    noheader = [l for l in rows if not l.startswith("#      ") and "size" not in l]
    cut2 = [l if i != len(noheader) - 6 else l[:l.rindex(" ")].rstrip() for i, l in enumerate(noheader)]
    badlog("truncated_no_header.log", cut2, "is a root, not a time")
    third = [i for i, l in enumerate(rows) if l.split() and l.split()[0].isdigit()][2]
    wide = [l + "  1.00  2.00  3.00  4.00  5.00  6.00  7.00" if i == third else l for i, l in enumerate(rows)]
    badlog("twenty_fields.log", wide, "a data line of 20 fields")
    dup = [l.replace("Rank  1 ", "Rank  0 ") for l in rows]
    badlog("rank_twice.log", dup, "rank 0 listed twice")

    with open(os.path.join(HERE, "MANIFEST"), "w") as f:
        f.write("\n".join(manifest) + "\n")
    with open(os.path.join(HERE, "bad", "MANIFEST"), "w") as f:
        f.write("\n".join(bad) + "\n")


if __name__ == "__main__":
    main()
