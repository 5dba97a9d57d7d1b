#!/usr/bin/env bash
# --measured-step-s: one GPU's measured step calibrates the host (sim/predict.h, predict_host_from_step).
# The first seed's case (docs/calib.md, "One measured step"): from its 1-V100 point alone
# (4,800 chars/s, mLSTM-4k with the per-step cell, batch 32, fp32, PyTorch 0.2; NVIDIA
# sentiment-discovery, figures/both_scalability.png), DataParallel at 2-8 GPUs shows little to no
# speedup (the seed: "little to no speedup for recurrent architectures", the GIL) and DDP scales.
# The bounds are the seed's words, not fitted numbers: DP within 0.7-1.3x of one GPU, DDP at 8
# GPUs at least 4x and at most 8x. Usage: test_measured_step.sh DDPSIM
ddpsim=$1
source "$(dirname "$0")/lib.sh"

"$ddpsim" genmodel mlstm --hidden 4096 --cell autograd --batch 32 --precision fp32 -o "$tmp/m.model" || exit 1
T=$(python3 -c 'print(32 * 256 / 4800)') # seconds per step at 4,800 chars/s, 256 chars a sample
job=(--model "$tmp/m.model" --pytorch 0.2 --profile v100-dgx1v --topology dgx1v-ib --no-interval)

# json FILE EXPR: a value of predict's JSON
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
within() { python3 -c "import sys; v,lo,hi=map(float,sys.argv[1:]); sys.exit(0 if lo <= v <= hi else 1)" "$@"; }

"$ddpsim" predict "${job[@]}" --framework dp --gpus-per-node 1 --json >"$tmp/dp1-profile.json" || exit 1
"$ddpsim" predict "${job[@]}" --framework dp --gpus-per-node 8 --json >"$tmp/dp8-profile.json" || exit 1
for fw in dp ddp; do
  for g in 1 2 4 8; do
    "$ddpsim" predict "${job[@]}" --framework $fw --gpus-per-node $g --measured-step-s "$T" --json >"$tmp/$fw$g.json" 2>"$tmp/err" ||
      { echo "FAIL  predict --framework $fw --gpus-per-node $g: $(head -3 "$tmp/err")"; fail=$((fail + 1)); }
  done
  it1=$(json "$tmp/${fw}1.json" 'd["iteration_s"]')
  check "$fw: the simulated 1-GPU step is the measured $T s (got $it1)" within "$it1" "$(python3 -c "print($T*(1-1e-5))")" \
    "$(python3 -c "print($T*(1+1e-5))")"
  scale=$(json "$tmp/${fw}1.json" 'd["host_scale"]')
  check "$fw: the host's costs are scaled by one factor ($scale), launch and dispatch alike" \
    python3 - "$tmp/${fw}1.json" "$tmp/dp1-profile.json" <<'PY'
import json, sys
d, p = (json.load(open(f)) for f in sys.argv[1:])
ok = all(abs(d[k] / p[k] / d["host_scale"] - 1) < 1e-9 for k in ("host_launch_s", "host_dispatch_s"))
sys.exit(0 if ok and p["host_launch_s"] > 0 and "host_scale" not in p and "measured_step_s" not in p else 1)
PY
done
t1=$(json "$tmp/dp1.json" 'd["samples_per_s"]')
for g in 2 4 8; do
  s=$(json "$tmp/dp$g.json" "d['samples_per_s'] / $t1")
  check "DataParallel on $g GPUs: little to no speedup (${s}x of one GPU; 0.7-1.3)" within "$s" 0.7 1.3
done
s=$(json "$tmp/ddp8.json" "d['samples_per_s'] / $t1")
check "DDP on 8 GPUs scales (${s}x of one GPU; 4-8)" within "$s" 4 8
s=$(python3 -c "import json,sys; a,b=(json.load(open(f))['samples_per_s'] for f in sys.argv[1:]); print(b/a)" \
  "$tmp/dp1-profile.json" "$tmp/dp8-profile.json")
check "without the step, the profile's own host costs leave DataParallel near-linear (${s}x at 8 GPUs; 5-8)" within "$s" 5 8

# The table says where the host's costs came from.
"$ddpsim" predict "${job[@]}" --gpus-per-node 2 --measured-step-s "$T" >"$tmp/table"
check "predict's table shows the measured step and the factor" grep -qE '^measured 1-GPU step +1\.706667 s +\(given; the host.s costs from it: [0-9.]+ x the profile.s, [0-9.]+ us a launch' "$tmp/table"
# A step shorter than the profile's GPU alone takes, a profile without host costs, and what a
# measured step cannot be given to.
expect 1 'measured-step-s 0.5: profile v100-dgx1v.s GPU alone takes [0-9.]+ s .*faster than the profile.s' -- \
  predict "${job[@]}" --measured-step-s 0.5
expect 1 'measured-step-s: profile v100-dgx1v has no host cost to scale' -- \
  predict "${job[@]}" --measured-step-s 2 --host-launch-us 0 --host-dispatch-us 0
expect 2 'measured-step-s must be a time' -- predict "${job[@]}" --measured-step-s 0
expect 2 'a sweep over --profile gives it to several' -- sweep --profile v100-dgx1v,a100-dgxa100 --measured-step-s 1 --no-interval
expect 2 'a sweep over --batch gives it to several' -- sweep "${job[@]}" --batch 16,32 --measured-step-s 1
expect 2 'setups 2 and 1 have different profiles' -- compare --setup topology=dgx1v-ib,nodes=2 \
  --setup topology=dgxa100-ib,profile=a100-dgxa100,nodes=2 --measured-step-s 1 --no-interval
# A sweep over node counts and frameworks takes it: each row's 1-GPU twin is the measured step.
"$ddpsim" sweep "${job[@]}" --framework dp,ddp --gpus-per-node 1,8 --measured-step-s "$T" --csv >"$tmp/sweep.csv" 2>"$tmp/err"
check "a sweep over frameworks and GPUs: each row's 1-GPU step is the measured one" python3 - "$tmp/sweep.csv" "$T" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
T = float(sys.argv[2])
sys.exit(0 if len(rows) == 4 and all(abs(float(r["single_gpu_iteration_s"]) / T - 1) < 1e-5 for r in rows) else 1)
PY
finish
