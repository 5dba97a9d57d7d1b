#!/usr/bin/env bash
# ddpcalib import kineto on the real traces of tests/data/kineto (README.md there): what it reads is
# checked against an independent reading of each trace in Python (the expected values are never
# written here), the profile it writes loads in `ddpsim predict --profile` once merged with a
# compute part, each kind of bad trace is refused with exit 1 and a message naming what it lacks,
# and misuse exits 2. docs/calib.md, "import kineto".
# Usage: test_kineto.sh DDPCALIB DDPSIM|none SOURCE_DIR WORKDIR
set -u
calib=$1
ddpsim=$2
src=$3
work=$4
data=$src/tests/data/kineto
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
. "$src/tests/sim/lib.sh" # check, finish
# expect CODE PATTERN DESCRIPTION -- command...: the exit code, and PATTERN (grep -E; "": any) in
# its stdout and stderr
expect() {
  local code=$1 pat=$2 what=$3
  shift 4
  "$@" >out.txt 2>&1
  local rc=$?
  check "$what (exit $rc)" test "$rc" -eq "$code" -a \( -z "$pat" -o -n "$(grep -E -- "$pat" out.txt)" \)
  [[ $rc -eq $code ]] && { [[ -z $pat ]] || grep -qE -- "$pat" out.txt; } || sed 's/^/     | /' out.txt | head -12
}

# The independent reading: a trace and the profile written from it agree on every field.
cat >check.py <<'EOF'
import gzip, json, statistics, sys
trace, prof, fit = sys.argv[1], sys.argv[2], sys.argv[3]
d = json.load(gzip.open(trace))
p = json.load(open(prof))
k = p["kineto"]["traces"][0]
ev = [e for e in d["traceEvents"] if e.get("ph") == "X"]
kern = [e for e in ev if e.get("cat") in ("kernel", "Kernel")]
nccl = [e for e in kern if "nccl" in e["name"].lower()]
dev = next(x for x in d["deviceProperties"] if x["id"] == kern[0]["args"]["device"])
launch = [e["dur"] * 1e-6 for e in ev if e["name"] in ("cudaLaunchKernel", "cudaLaunchKernelExC")]
steps = sorted(e["dur"] * 1e-6 for e in ev if e["name"].startswith("ProfilerStep#") and e.get("cat") != "gpu_user_annotation")
di = d.get("distributedInfo", {})
fails = []
def want(what, got, exp):
    if got != exp:
        fails.append(f"{what}: read {got!r}, the trace has {exp!r}")
want("device.name", p["device"]["name"], dev["name"])
want("device.sm_count", p["device"]["sm_count"], dev["numSms"])
want("device.memory_bytes", p["device"]["memory_bytes"], dev["totalGlobalMem"])
want("compute capability", k["device"]["compute_capability"], f'{dev["computeMajor"]}.{dev["computeMinor"]}')
want("world size", k["run"].get("world_size"), di.get("world_size"))
want("rank", k["run"].get("rank"), di.get("rank"))
want("NCCL version", k["run"].get("nccl_version"), di.get("nccl_version"))
want("kernels", k["kernels"]["count"], len(kern))
want("NCCL kernels", k["kernels"]["nccl"], len(nccl))
want("NCCL kernels listed", len(k["nccl"]["kernels"]), len(nccl))
grids = sorted(g["args"]["grid"][0] * g["args"]["grid"][1] * g["args"]["grid"][2] for g in nccl)
want("NCCL thread blocks", sorted(x["thread_blocks"] for x in k["nccl"]["kernels"]), grids)
got = sorted(k["steps"]["wall_s"])
if len(got) != len(steps) or any(abs(a - b) > 1e-12 * b for a, b in zip(got, steps)):
    fails.append(f"steps: read {got}, the trace has {steps}")
want("launch calls", k["launch"]["calls"], len(launch))
if abs(k["launch"]["median_s"] - statistics.median(launch)) > 1e-12:
    fails.append(f'launch median {k["launch"]["median_s"]} != {statistics.median(launch)}')
blocked = sum(x > 10 * statistics.median(launch) for x in launch)
want("queue-blocked launches", k["launch"]["queue_blocked"], blocked)
if not 0 <= k["steps"]["median_input_wait_s"] < k["steps"]["median_wall_s"]:
    fails.append(f'input wait {k["steps"]["median_input_wait_s"]} outside [0, the step {k["steps"]["median_wall_s"]})')
ks = k["kernels"]
if not (0 <= ks["overlapping_nccl"] <= ks["compute"] and ks["compute"] + ks["nccl"] == ks["count"]
        and ks["overlapping_nccl"] + ks["apart"] == ks["compute"]):
    fails.append(f"kernel counts do not add up: {ks}")
# every all-reduce in the kernel args or its record_function range has its bytes
for x in k["nccl"]["kernels"]:
    if x["collective"] == "all_reduce" and x["bytes"] <= 0:
        fails.append(f"an all-reduce without bytes: {x}")
    if "in_nelems" in x and x.get("dtype") == "Float" and x["bytes"] != 4 * x["in_nelems"]:
        fails.append(f"bytes {x['bytes']} != 4 x In msg nelems {x['in_nelems']}")
links = p["comm"]["links"]
if fit == "fit":
    if len(links) != 1:
        fails.append(f"wanted one fitted link, got {list(links)}")
    for name, l in links.items():
        f = l["fit"] if "fit" in l else {}
        if not (l["lat_s"] > 0 and l["bw_Bps"] > 0 and "warning" not in l and "refused" not in p["kineto"]["fit"]):
            fails.append(f"comm.links.{name}: not a fit that passed the gate: {l.get('lat_s')}, {l.get('bw_Bps')}")
        if p["kineto"]["fit"]["link"] != "comm.links." + name:
            fails.append(f'kineto.fit.link {p["kineto"]["fit"]["link"]}')
else:
    if links or fit not in p["kineto"]["fit"].get("refused", ""):
        fails.append(f'wanted the fit refused naming "{fit}", got links {list(links)}, fit {p["kineto"]["fit"]}')
print("\n".join(fails))
sys.exit(1 if fails else 0)
EOF

a100=$data/hta_resnet50_2xa100_rank0.json.gz
control=$data/hta_trace_diff_control_rank3_8xa100.json.gz
v100=$data/kineto_resnet50_1xv100.json.gz
expect 0 "thread blocks 8\.\.8" "2-A100 trace: read, its all-reduces on 8 thread blocks" -- \
  "$calib" import kineto -o a100.json "$a100"
expect 0 "" "2-A100 trace: everything read agrees with the trace; the fit passes the gate" -- \
  python3 check.py "$a100" a100.json fit
expect 0 "rank 3 of 8" "8-A100 trace (rank 3): read" -- "$calib" import kineto -o control.json "$control"
expect 0 "" "8-A100 trace: everything read agrees with the trace; bytes from record_function; fitted" -- \
  python3 check.py "$control" control.json fit
expect 0 "no comm fit: no NCCL all-reduce" "1-V100 trace: read, no comm fit (no NCCL), said so" -- \
  "$calib" import kineto -o v100.json "$v100"
expect 0 "" "1-V100 trace: everything read agrees with the trace; the fit refused with its reason" -- \
  python3 check.py "$v100" v100.json "no NCCL all-reduce"
expect 0 "" "the 8-A100 all-reduces bytes come from the nccl:all_reduce ranges" -- python3 -c '
import json, sys
k = json.load(open("control.json"))["kineto"]["traces"][0]["nccl"]["kernels"]
sys.exit(not [x for x in k if x["collective"] == "all_reduce" and x["bytes_from"] == "record_function"])'

# ---- the profile loads in ddpsim, merged with a compute part (the bundled card's, without its comm)
if [[ $ddpsim != none && -x $ddpsim ]]; then
  for card in a100-dgxa100:dgxa100-ib:$a100 v100-dgx1v:dgx1v-ib:$v100; do
    IFS=: read -r prof topo trace <<<"$card"
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d.pop("comm"); d.pop("uncertainty", None); json.dump(d, open(sys.argv[2], "w"))' \
      "$src/profiles/$prof.json" compute-$prof.json
    expect 0 "wrote" "import kineto --topology $topo" -- "$calib" import kineto --topology $topo -o k-$prof.json "$trace"
    expect 0 "merged" "merge $prof's compute with it" -- "$calib" merge compute-$prof.json k-$prof.json -o m-$prof.json
    if [[ $prof == v100-dgx1v ]]; then # no NCCL in a 1-GPU trace: the comm comes from the bundled card
      python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); m["comm"]=json.load(open(sys.argv[2]))["comm"]; m["comm"].pop("nccl", None); json.dump(m, open(sys.argv[1], "w"))' \
        m-$prof.json "$src/profiles/$prof.json"
    fi
    expect 0 "iteration" "ddpsim predict --profile (merged from the $prof trace)" -- \
      "$ddpsim" predict --profile m-$prof.json --topology $topo --precision fp32 --batch 2 --nodes 1
  done
  # The round trip of the link: ddpsim's own traces of a 2-GPU run priced with the imported link
  # (sim/kineto.c writes them), imported again, give that link back.
  expect 0 "" "ddpsim predict --trace: the 2-A100 run's traces" -- "$ddpsim" predict --profile m-a100-dgxa100.json \
    --topology dgxa100-ib --precision fp32 --batch 2 --nodes 1 --gpus-per-node 2 --trace rt
  expect 0 "wrote" "import kineto of ddpsim's traces (both ranks)" -- \
    "$calib" import kineto --topology dgxa100-ib -o rt.json rt/rank0.pt.trace.json rt/rank1.pt.trace.json
  check "round trip: the link fitted from ddpsim's traces is the link it priced them with (0.1%)" python3 -c '
import json, sys
a = json.load(open("m-a100-dgxa100.json"))["comm"]["links"]["nvlink3"]
b = json.load(open("rt.json"))["comm"]["links"]["nvlink3"]
sys.exit(not all(abs(b[k] - a[k]) <= 1e-3 * a[k] for k in ("lat_s", "bw_Bps")))'
else
  echo "skip: ddpsim not built (the predict checks)"
fi

# ---- bad traces: exit 1, `file: what is wrong`, naming what the trace lacks
python3 - "$v100" <<'EOF'
import gzip, json, sys
d = json.load(gzip.open(sys.argv[1]))
ev = d["traceEvents"]
def write(name, doc):
    json.dump(doc, open(name, "w"))
write("cpu_only.json", {**{k: v for k, v in d.items() if k != "deviceProperties"},
                        "traceEvents": [e for e in ev if e.get("cat") not in ("Kernel", "Memcpy", "Memset", "Runtime")]})
write("no_steps.json", {**d, "traceEvents": [e for e in ev if not str(e.get("name", "")).startswith("ProfilerStep#")]})
write("inference.json", {**d, "traceEvents": [e for e in ev if "ackward" not in str(e.get("name", ""))]})
write("wrong.json", {"name": "not a trace", "events": []})
text = json.dumps(d)
open("truncated.json", "w").write(text[: len(text) // 2])
EOF
head -c 200000 "$v100" >truncated.json.gz
expect 1 "truncated.json:1: not valid JSON \(the document ends early" "a truncated trace" -- \
  "$calib" import kineto -o x.json truncated.json
expect 1 "truncated.json.gz: truncated or corrupt gzip data" "a truncated .json.gz" -- \
  "$calib" import kineto -o x.json truncated.json.gz
expect 1 "cpu_only.json: a CPU-only trace: no GPU kernels and no deviceProperties" "a CPU-only trace" -- \
  "$calib" import kineto -o x.json cpu_only.json
expect 1 "no_steps.json: no ProfilerStep#N ranges" "a trace without steps" -- \
  "$calib" import kineto -o x.json no_steps.json
expect 1 "inference.json: an inference trace: no backward ops" "an inference trace" -- \
  "$calib" import kineto -o x.json inference.json
expect 1 "wrong.json: not a Chrome trace: no \"traceEvents\" array" "JSON that is not a trace" -- \
  "$calib" import kineto -o x.json wrong.json
expect 1 "rank 0 again" "the same rank twice" -- "$calib" import kineto -o x.json "$a100" "$a100"
expect 1 "not the run of" "ranks of two runs" -- "$calib" import kineto -o x.json "$a100" "$control"
expect 1 "missing.json: cannot read" "a missing trace" -- "$calib" import kineto -o x.json missing.json
check "no profile written from a refused trace" test ! -e x.json
cp "$v100" same.json.gz
expect 1 "-o same.json.gz is the same file as trace same.json.gz" "-o the trace itself: refused" -- \
  "$calib" import kineto -o same.json.gz same.json.gz
check "the trace -o named is left as it was" cmp -s "$v100" same.json.gz

# ---- two ranks of one run: each size's fastest kernel over the ranks (rank 1 made from rank 0 by
# slowing every all-reduce kernel of one bucket size by half and speeding the others by a fifth)
python3 - "$a100" <<'EOF'
import gzip, json, sys
d = json.load(gzip.open(sys.argv[1]))
d["distributedInfo"]["rank"] = 1
ar = [e for e in d["traceEvents"] if e.get("cat") == "kernel" and "AllReduce" in e["name"]]
first = ar[0]["args"]["In msg nelems"]
for e in ar:
    e["dur"] *= 1.5 if e["args"]["In msg nelems"] == first else 0.8
json.dump(d, open("rank1.json", "w"))
EOF
expect 0 "wrote" "two ranks' traces of one run" -- "$calib" import kineto -o two.json "$a100" rank1.json
check "two ranks: each size's sample is its fastest kernel over both ranks" python3 -c '
import json, sys
p = json.load(open("two.json"))
pts = {}
for t in p["kineto"]["traces"]:
    for x in t["nccl"]["kernels"]:
        if x["collective"] == "all_reduce":
            pts[x["bytes"]] = min(pts.get(x["bytes"], 1e9), x["time_s"])
got = {s["bytes"]: s["median_s"] for s in p["samples"]["comm"]["nvlink"]["sizes"]}
sys.exit(not (len(p["kineto"]["traces"]) == 2 and got == pts and len(got) >= 3))'


# A trace with fields out of every range (tests/data/kineto/odd_fields.json, written by hand): read,
# nothing out of range reaches the card or a fit, nothing undefined computed (run it under ASan/UBSan).
expect 0 "no comm fit" "odd fields: read, no fit from them" -- "$calib" import kineto -o odd.json "$data/odd_fields.json"
check "odd fields: the card keeps only its name; no thread blocks, no bytes from a bad dim" python3 -c '
import json, sys
d = json.load(open("odd.json"))
k = d["kineto"]["traces"][0]["nccl"]["kernels"]
sys.exit(not (set(d["device"]) == {"kind", "name", "source"} and all(x["thread_blocks"] == -1 for x in k)
              and k[0]["bytes"] == 0 and [x["bytes"] for x in k[1:]] == [40, 400, 4000]))'

# ---- misuse: exit 2 naming the flag
expect 2 "-o PROFILE is required" "no -o" -- "$calib" import kineto "$v100"
expect 2 "no trace given" "no trace" -- "$calib" import kineto -o x.json
expect 2 "regimes" "--regimes 9" -- "$calib" import kineto --regimes 9 -o x.json "$v100"
expect 2 "hosts" "--hosts 0" -- "$calib" import kineto --hosts 0 -o x.json "$v100"
expect 2 "unknown" "an unknown option" -- "$calib" import kineto --bogus -o x.json "$v100"
expect 2 "known: nccl-tests, kineto" "an unknown format" -- "$calib" import chrome -o x.json "$v100"

finish
