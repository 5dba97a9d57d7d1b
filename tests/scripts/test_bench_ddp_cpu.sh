#!/usr/bin/env bash
# scripts/bench_ddp_cpu.sh works end to end on one small configuration: this machine calibrated
# (--quick), the MLP exported with measured times, gloo's all-reduce swept and imported, real DDP
# run at two caps, every one predicted four ways and from the model without its times; the plain
# step timed alone and beside its twin. Checks what the JSON holds, not how fast
# anything ran (the benchmark's figures are measurements of a shared machine).
# Usage: test_bench_ddp_cpu.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
root=$(cd "$(dirname "$0")/../.." && pwd)
python3 -c 'import torch, torchvision, transformers' 2>/dev/null || { echo "SKIP: torch, torchvision or transformers not installed (scripts/setup_python.sh)"; exit 77; }
out=$(mktemp -d /tmp/ddpsim-test-bench-ddp.XXXXXX)
trap 'rm -rf "$out"' EXIT
QUICK=1 "$root/scripts/bench_ddp_cpu.sh" "$build" "$out/b.txt" --models mlp --caps none,100 --rounds 1 --steps 2 --warmup 1 >/dev/null
python3 - "$out/b.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
bad = []
VARIANTS = {"machine", "gloo-turns", "gloo-share", "gloo-free", "untimed"}
def check(what, ok):
    print(("ok    " if ok else "FAIL  ") + what)
    ok or bad.append(what)
check("the gloo sweep covers 1 KiB to 128 MiB with positive times and CPU shares in [0, 2]",
      [x["bytes"] for x in r["gloo_sweep"]] == [1024 << k for k in range(18)] and
      all(x["time_s"] > 0 and 0 <= x["cpu_share"] <= 2 for x in r["gloo_sweep"]))
rows = r["models"][0]["rows"]
check("the MLP ran at both caps (default and 100 MB), one run each", [x["cap"] for x in rows] == [None, 100.0] and
      all(len(x["runs_s"]) == 1 and x["lo_s"] <= x["measured_s"] <= x["hi_s"] and x["measured_s"] > 0 for x in rows))
check("each cap is predicted with the four links and untimed, the error signed against the run",
      all(set(x["predicted"]) == VARIANTS and
          all(p["iteration_s"] > 0 and abs(p["error"] - (p["iteration_s"] - x["measured_s"]) / x["measured_s"]) < 1e-9
              for p in x["predicted"].values()) for x in rows))
check("the summary has each variant's median |error|", set(r["summary"]) == VARIANTS)
c = r["models"][0]["compute"]
check("the plain step timed alone and beside its twin (one run each), and ddpsim's one process from the measured ops",
      len(c["alone_s"]) == len(c["twin_s"]) == 1 and min(c["alone_s"] + c["twin_s"]) > 0 and c["predicted_one_s"] > 0)
base = [x["predicted"]["untimed"]["iteration_s"] for x in rows]
timed = [x["predicted"]["gloo-turns"]["iteration_s"] for x in rows]
check("the untimed baseline is another prediction than the measured times' (%s against %s)" % (base, timed), base != timed)
check("gloo's CPU share is a fraction of a core", 1e-3 <= r["gloo_cpu_share"] <= 1)
sys.exit(1 if bad else 0)
PY
