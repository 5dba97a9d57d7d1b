#!/usr/bin/env python3
"""`ddpcalib import nccl-tests`: logs written in nccl-tests' exact stdout layout (by
tests/data/nccl-tests/gen.py, with the format strings of v2.13.4 and of v2.0-v2.11), from a
known ring (t = nsteps (lat + S / (n bw)), 2% deterministic noise), are imported; the fitted
latency and bandwidth come back within 5% of the truth, both ways; bad logs fail naming file:line;
the profile, merged with a bundled compute profile, predicts.

Usage: test_import.py DDPCALIB DDPSIM SOURCE_DIR"""

import json
import os
import subprocess
import sys
import tempfile

DDPCALIB, DDPSIM, SRC = sys.argv[1:4]
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from pycheck import Checks  # noqa: E402

check = Checks()


sys.path.insert(0, os.path.join(SRC, "tests", "data", "nccl-tests"))
import gen  # noqa: E402  (the fixtures' writer: each release's format strings)


def log(coll, ranks_per_host, hosts, lat_s, bw_Bps, concluded=True, prefix="", root=True, corrupt=None):
    """A log in v2.13.4's layout (root=False: v2.0-v2.11's, without the root column), sizes 8 B to 1 GiB."""
    lines = gen.log("v2.13.4" if root else "v2.11", coll, ranks_per_host, hosts, lat_s, bw_Bps, sizes=(8, 1 << 30),
                    concluded=concluded, corrupt_row=25 if corrupt == "busbw" else None)
    return "\n".join(prefix + line if line else line for line in lines) + "\n"


def run(args):
    return subprocess.run(args, capture_output=True, text=True)


with tempfile.TemporaryDirectory() as tmp:
    def write(name, text):
        p = os.path.join(tmp, name)
        with open(p, "w") as f:
            f.write(text)
        return p

    # One DGX-like node (8 GPUs) and two nodes (16 GPUs), as DDP's ring would run them; a 4-GPU log
    # of the same node class (fitted, printed, not written: the 8-GPU ring is).
    truth = {"nvlink3": (6e-6, 130e9), "ib-hdr": (9e-6, 42e9)}
    intra = write("ar8.log", log("all_reduce", 8, 1, *truth["nvlink3"]))
    intra4 = write("ar4.log", log("all_reduce", 4, 1, *truth["nvlink3"], root=False))
    inter = write("ag16.log", log("all_gather", 8, 2, *truth["ib-hdr"], prefix=" 0: "))
    out = os.path.join(tmp, "imported.json")
    r = run([DDPCALIB, "import", "nccl-tests", "--topology", "dgxa100-ib", "-o", out, intra, intra4, inter])
    check(f"import of 3 logs (all_reduce 8 and 4 GPUs, all_gather on 2 nodes, srun prefix, no root column) exits 0 "
          f"({r.stderr.strip()[:300]})", r.returncode == 0)
    # Without the closing line (before v2.16.7) all_gather's rows are alltoall's too: refused,
    # naming the remedy; given --collective, read.
    silent = write("ag16silent.log", log("all_gather", 8, 2, *truth["ib-hdr"], concluded=False))
    r = run([DDPCALIB, "import", "nccl-tests", "-o", os.path.join(tmp, "x.json"), silent])
    check(f"all_gather without its closing line: exit 1 naming alltoall and --collective ({r.stderr.strip()[:300]})",
          r.returncode == 1 and "alltoall" in r.stderr and "--collective" in r.stderr)
    r = run([DDPCALIB, "import", "nccl-tests", "--collective", "all_gather", "-o", os.path.join(tmp, "silent.json"), silent])
    check(f"... and with --collective all_gather: exit 0 ({r.stderr.strip()[:300]})", r.returncode == 0)
    print("\n".join("      " + line for line in r.stdout.splitlines()))
    if r.returncode == 0:
        with open(out) as f:
            prof = json.load(f)
        links = prof["comm"]["links"]
        for cls, (lat, bw) in truth.items():
            got = links.get(cls, {})
            ring = got.get("ring_bw_Bps", got.get("bw_Bps", 0))
            check(f"{cls}: lat_s {got.get('lat_s', 0):.4g} within 5% of {lat:.4g}", abs(got.get("lat_s", 0) - lat) <= 0.05 * lat)
            check(f"{cls}: ring bandwidth {ring:.4g} within 5% of {bw:.4g}", abs(ring - bw) <= 0.05 * bw)
            check(f"{cls}: the uncertainty of bw_Bps is recorded", f"comm.links.{cls}.bw_Bps" in prof.get("uncertainty", {}))
        check("nvlink3 comes from the 8-GPU log (the most ranks)", links.get("nvlink3", {}).get("nranks") == 8)
        check("ib-hdr's source names the all_gather log", "all_gather_perf" in links.get("ib-hdr", {}).get("source", ""))
        # The compute half of the bundled A100 profile, as `ddpcalib compute` would write one (its
        # comm.nccl tuning names hop latencies of its own links: left out with them).
        with open(os.path.join(SRC, "profiles", "a100-dgxa100.json")) as f:
            a100 = json.load(f)
        compute = write("compute.json", json.dumps({k: a100[k] for k in ("format", "version", "name", "provenance", "compute")}))
        merged = os.path.join(tmp, "merged.json")
        r = run([DDPCALIB, "merge", compute, out, "-o", merged])
        check(f"merged with the bundled A100 compute ({r.stderr.strip()[:200]})", r.returncode == 0)
        r = run([DDPSIM, "predict", "--profile", merged, "--topology", "dgxa100-ib", "--model", "resnet50", "--nodes", "2", "--json"])
        check(f"the merged profile predicts ({r.stderr.strip()[:200]})", r.returncode == 0 and json.loads(r.stdout)["iteration_s"] > 0)
        # The bucket table speaks nccl-tests' units: algbw = bytes all-reduced / time, busbw = algbw x 2(n-1)/n.
        if r.returncode == 0:
            rep = json.loads(r.stdout)
            n = rep["gpus"]
            for b in rep["buckets"]:
                alg = b["wire_bytes"] / (b["comm_end_s"] - b["comm_start_s"]) / 1e9
                check(f"bucket {b['index']}: algbw {b['algbw_GBps']:.3f} = wire_bytes / time {alg:.3f} GB/s, busbw "
                      f"{b['busbw_GBps']:.3f} = algbw x 2({n}-1)/{n}",
                      abs(b["algbw_GBps"] - alg) <= 1e-9 * alg and abs(b["busbw_GBps"] - alg * 2 * (n - 1) / n) <= 1e-9 * alg)
            # ddpsim buckets --nodes: NCCL's estimate of each bucket on the imported links, in the same units.
            rb = run([DDPSIM, "buckets", "--model", "resnet50", "--nodes", "2", "--topology", "dgxa100-ib", "--profile", merged, "--json"])
            check(f"ddpsim buckets --nodes 2 on the imported profile ({rb.stderr.strip()[:200]})", rb.returncode == 0)
            if rb.returncode == 0:
                bk = json.loads(rb.stdout)
                check("buckets: as many as predict's, the job's 16 GPUs", len(bk["buckets"]) == len(rep["buckets"]) and bk["gpus"] == 16)
                for b in bk["buckets"]:
                    a = b["allreduce"]
                    alg = a["wire_bytes"] / a["nccl_estimate_s"] / 1e9
                    check(f"buckets {b['index']}: algbw {a['algbw_GBps']:.3f} = wire_bytes / estimate, busbw {a['busbw_GBps']:.3f} "
                          f"= algbw x 2(16-1)/16",
                          abs(a["algbw_GBps"] - alg) <= 1e-9 * alg and abs(a["busbw_GBps"] - alg * 30 / 16) <= 1e-9 * alg)
                    sim = rep["buckets"][b["index"]]
                    check(f"buckets {b['index']}: the idle-network estimate is no slower than the simulated all-reduce "
                          f"(busbw {a['busbw_GBps']:.2f} >= {sim['busbw_GBps']:.2f} GB/s, within 1%)",
                          a["busbw_GBps"] >= 0.99 * sim["busbw_GBps"])
            one = json.loads(run([DDPSIM, "predict", "--profile", merged, "--topology", "dgxa100-ib", "--model", "resnet50",
                                  "--gpus-per-node", "1", "--json"]).stdout)
            check("one GPU: no all-reduce, algbw and busbw 0", all(b["algbw_GBps"] == 0 and b["busbw_GBps"] == 0 for b in one["buckets"]))

    # 40 hosts, one GPU each: more host names than the provenance string holds; every one counts.
    wide = write("wide.log", log("all_reduce", 1, 40, 9e-6, 42e9))
    r = run([DDPCALIB, "import", "nccl-tests", "-o", os.path.join(tmp, "wide.json"), wide])
    if r.returncode == 0:
        with open(os.path.join(tmp, "wide.json")) as f:
            net = json.load(f)["comm"]["links"].get("net", {})
    check(f"40 hosts of one GPU: the class between hosts, nhosts 40 ({r.stderr.strip()[:200]})",
          r.returncode == 0 and net.get("nhosts") == 40 and net.get("nranks") == 40)

    # Failures name the file and line.
    bad = write("bad.log", log("all_reduce", 8, 1, 6e-6, 130e9, corrupt="busbw"))
    r = run([DDPCALIB, "import", "nccl-tests", "-o", os.path.join(tmp, "x.json"), bad])
    check(f"a row whose busbw is not algbw x 2(n-1)/n: exit 1 naming the line ({r.stderr.strip()[:200]})",
          r.returncode == 1 and "bad.log:" in r.stderr and "busbw" in r.stderr and not os.path.exists(os.path.join(tmp, "x.json")))
    wrong = write("wrongcoll.log", log("all_gather", 8, 1, 6e-6, 130e9))
    r = run([DDPCALIB, "import", "nccl-tests", "--collective", "all_reduce", "-o", os.path.join(tmp, "x.json"), wrong])
    check(f"--collective against the log's own: exit 1 ({r.stderr.strip()[:200]})", r.returncode == 1 and "all_gather" in r.stderr)
    r = run([DDPCALIB, "import", "nccl-tests", "-o", os.path.join(tmp, "x.json"), os.path.join(SRC, "README.md")])
    check(f"a file that is no log: exit 1 ({r.stderr.strip()[:200]})", r.returncode == 1)
    r = run([DDPCALIB, "import", "csv", "-o", os.path.join(tmp, "x.json"), intra])
    check(f"an unknown format: exit 2 ({r.stderr.strip()[:200]})", r.returncode == 2)
sys.exit(check.finish())
