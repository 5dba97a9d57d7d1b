#!/usr/bin/env bash
# The buyer's figures on ddpsim's command line: the memory per GPU and its refusal when a
# configuration does not fit the card (exit 1, or a warning with --allow-oom), and the time, cost
# and energy of `--samples`/`--epochs`, recomputed here from predict's own JSON.
set -u
ddpsim=$1
. "$(dirname "$0")/lib.sh"

expect 1 "OOM at batch 64: 16.[0-9]+ of 16.00 GiB; largest batch that fits: [0-9]+ \(--allow-oom" -- predict --model bert-large --batch 64
"$ddpsim" predict --model bert-large --batch 64 --allow-oom --json >"$tmp/oom.json" 2>"$tmp/err"
check "--allow-oom: exit 0 with a warning" test $? -eq 0 -a -n "$(grep 'warning: OOM at batch 64' "$tmp/err")"
check "... and memory.fits false, the largest batch below 64" python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))["memory"]
parts = sum(m[k] for k in ("params_bytes", "grads_bytes", "buckets_bytes", "master_bytes", "optim_bytes",
                           "activations_bytes", "buffers_bytes", "context_bytes", "allocator_bytes"))
assert m["fits"] is False and 0 < m["max_batch_per_gpu"] < 64, m
assert parts == m["peak_bytes"] > m["device_bytes"], (parts, m)' "$tmp/oom.json"
expect 2 "--epochs and --dataset-size go together" -- predict --epochs 3
expect 2 "--samples and --epochs: choose one" -- predict --epochs 3 --dataset-size 100 --samples 5
expect 2 "--price and --grid-kgco2-per-kwh need the samples" -- predict --price 2
expect 2 "--optimizer must be none, sgd" -- predict --optimizer lamb
expect 2 "--samples must be" -- predict --samples -3

"$ddpsim" predict --model resnet50 --nodes 2 --epochs 90 --dataset-size 1281167 --price 2.5 \
  --grid-kgco2-per-kwh 0.4 --json >"$tmp/b.json"
check "budget: 90 epochs of ImageNet on 16 V100, recomputed from the prediction" python3 -c '
import json, math, sys
d = json.load(open(sys.argv[1])); b = d["budget"]
it = math.ceil(90 * 1281167 / (d["gpus"] * d["batch_per_gpu"]))
t = it * d["iteration_s"]
u = d["compute_s"] / d["iteration_s"]
w = 40 + u * (300 - 40)  # profiles/v100-dgx1v.json device: idle 40 W, TDP 300 W
close = lambda a, b: abs(a - b) <= 1e-9 * abs(b)
assert b["iterations"] == it and close(b["train_s"], t), (b, it, t)
assert close(b["gpu_hours"], 16 * t / 3600) and close(b["cost"], 2.5 * 16 * t / 3600), b
assert close(b["power_W_per_gpu"], w) and close(b["energy_kwh"], 16 * w * t / 3.6e6), b
assert close(b["co2_kg"], 0.4 * b["energy_kwh"]), b' "$tmp/b.json"
"$ddpsim" predict --model resnet50 --samples 1e6 >"$tmp/t.txt"
check "the table shows the memory peak, the card and the time to train" \
  test -n "$(grep '^memory peak' "$tmp/t.txt")" -a -n "$(grep '^card memory .*fits' "$tmp/t.txt")" -a -n "$(grep '^time to train' "$tmp/t.txt")"

# sweep: the buyer's columns, and --max-hours keeping what finishes in time (1 node: about 5 h).
"$ddpsim" sweep --model resnet50 --nodes 1,8 --epochs 90 --dataset-size 1281167 --price 2.5 --max-hours 3 --csv \
  >"$tmp/s.csv" 2>"$tmp/err"
check "sweep --max-hours 3 keeps the 8-node row only, and says so" python3 -c '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [r["nodes"] for r in rows] == ["8"], rows
r = rows[0]
assert float(r["train_s"]) <= 3 * 3600 and r["fits"] == "1" and float(r["memory_peak_bytes"]) > 0, r
assert abs(float(r["cost"]) - 2.5 * float(r["gpu_hours"])) <= 1e-6 * float(r["cost"]), r
assert "1 of 2 configurations fit and finish within 3 hours" in open(sys.argv[2]).read()' "$tmp/s.csv" "$tmp/err"
# a row that does not fit its card trains nothing, however fast it would be (issue 49)
"$ddpsim" sweep --model resnet50 --nodes 8 --batch 64,2048 --epochs 1 --dataset-size 1281167 --max-hours 100 --no-interval --csv \
  >"$tmp/s2.csv" 2>"$tmp/err2"
check "sweep --max-hours drops the batch that does not fit" python3 -c '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [r["batch_per_gpu"] for r in rows] == ["64"] and rows[0]["fits"] == "1", rows
assert "1 of 2 configurations fit and finish within 100 hours" in open(sys.argv[2]).read()' "$tmp/s2.csv" "$tmp/err2"
"$ddpsim" sweep --model resnet50 --batch 256,512 --json >"$tmp/s.json"
check "sweep --json: fits per row, null budget without --samples" python3 -c '
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
assert [r["fits"] for r in rows] == [1, 0] and rows[0]["train_s"] is None and rows[0]["max_batch_per_gpu"] > 256, rows' "$tmp/s.json"
expect 2 "--max-hours needs the samples to train" -- sweep --nodes 1,2 --max-hours 5

# How sure: --interval's factors, and its validated part recomputed from `ddpsim accuracy`.
"$ddpsim" predict --model resnet50 --nodes 2 --interval --samples 1e7 --price 2 --json >"$tmp/i.json"
"$ddpsim" accuracy --json >"$tmp/acc.json" 2>/dev/null
check "predict --interval: lo <= nominal <= hi, the parts add in quadrature, the validated part is accuracy's error model" python3 -c '
import json, math, re, sys
d = json.load(open(sys.argv[1])); iv = d["interval"]
t, s = d["iteration_s"], d["samples_per_s"]
close = lambda a, b, r=1e-9: abs(a - b) <= r * abs(b)
L = math.log
assert iv["draws"] == 16 and iv["profile_lo_factor"] <= 1 <= iv["profile_hi_factor"], iv
assert close(iv["iteration_s"]["lo"], t * math.exp(-math.hypot(L(iv["profile_lo_factor"]), L(iv["validated_lo_factor"])))), iv
assert close(iv["iteration_s"]["hi"], t * math.exp(math.hypot(L(iv["profile_hi_factor"]), L(iv["validated_hi_factor"])))), iv
assert iv["samples_per_s"]["lo"] < s < iv["samples_per_s"]["hi"], iv
assert close(iv["samples_per_s"]["lo"] * iv["iteration_s"]["hi"], s * t), iv
assert close(iv["cost"]["hi"] / d["budget"]["cost"], iv["iteration_s"]["hi"] / t), iv
# The validated part (validate/accuracy.h): log(true / predicted time) (images/s: predicted /
# published), centred on the v100-dgx1v fp16 points, spread by the sd over every validated point;
# its half-width over sd sqrt(1 + 1/n) is Student'"'"'s t(0.95, n - 1), 1.676 for n = 51.
mine, every = [], []
for p in json.load(open(sys.argv[2]))["points"]:
    m = re.search(r"(\S+), \S+, \d+ x \d+, batch \d+, (fp32|fp16|bf16)", p.get("scenario", ""))
    if p["kind"] != "validation" or "predicted" not in p or not m:
        continue
    l = L(p["published"] / p["predicted"] if p["unit"] == "hours" else p["predicted"] / p["published"])
    every.append(l)
    if (m.group(1), m.group(2)) == ("v100-dgx1v", "fp16"):
        mine.append(l)
n = len(every); mean = sum(every) / n; sd = math.sqrt(sum((x - mean) ** 2 for x in every) / (n - 1))
lo, hi = L(iv["validated_lo_factor"]), L(iv["validated_hi_factor"])
assert iv["validated_points"] == len(mine) > 0 and iv["validated_all_points"] == n, (iv, len(mine), n)
assert lo < 0 < hi and close((lo + hi) / 2, sum(mine) / len(mine), 1e-6), (iv, sum(mine) / len(mine))
tq = (hi - lo) / 2 / (sd * math.sqrt(1 + 1 / n))
assert (n != 51 or 1.67 < tq < 1.68) and 1.6 < tq < 2.1, (tq, n)
' "$tmp/i.json" "$tmp/acc.json"
# (the bundled A100 profile without its uncertainty object, which states its host costs' only)
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); del d["uncertainty"]; json.dump(d, open(sys.argv[2], "w"))' \
  "$(dirname "$0")/../../profiles/a100-dgxa100.json" "$tmp/nou.json"
"$ddpsim" predict --model resnet50 --profile "$tmp/nou.json" --topology dgxa100-ib --interval --json >"$tmp/a.json"
check "a profile without uncertainty: no draws, profile factors 1" python3 -c '
import json, sys
iv = json.load(open(sys.argv[1]))["interval"]
assert iv["draws"] == 0 and iv["profile_lo_factor"] == 1 == iv["profile_hi_factor"], iv' "$tmp/a.json"
"$ddpsim" sweep --model resnet50 --nodes 1,2 --interval --draws 4 --json >"$tmp/si.json"
check "sweep --interval --json: every row's iteration and throughput between lo and hi" python3 -c '
import json, sys
for r in json.load(open(sys.argv[1]))["rows"]:
    assert r["iteration_s_lo"] <= r["iteration_s"] <= r["iteration_s_hi"], r
    assert r["samples_per_s_lo"] <= r["samples_per_s"] <= r["samples_per_s_hi"], r' "$tmp/si.json"
"$ddpsim" sweep --model resnet50 --nodes 1,2 --draws 4 --jobs 2 --json >"$tmp/sj.json"
check "sweep --jobs 2: the draws spread over two processes give every row the same interval" python3 -c '
import json, sys
a, b = (json.load(open(f))["rows"] for f in sys.argv[1:3])
key = lambda r: [r[k] for k in ("iteration_s", "iteration_s_lo", "iteration_s_hi", "samples_per_s_lo", "samples_per_s_hi")]
assert [key(r) for r in a] == [key(r) for r in b], (a, b)' "$tmp/si.json" "$tmp/sj.json"
# A sweep simulates its rows' draws together, 64 rows at a time, each profile drawn once: 140 rows
# over two profiles cross batches, and each row's interval is the one predict gives it alone.
"$ddpsim" sweep --model resnet50 --nodes 1..70 --profile v100-dgx1v,p100-dgx1 --draws 4 --json >"$tmp/sb.json"
for r in "1 v100-dgx1v" "70 p100-dgx1" "33 v100-dgx1v" "65 p100-dgx1"; do
  set -- $r
  "$ddpsim" predict --model resnet50 --nodes "$1" --profile "$2" --draws 4 --json >"$tmp/sb-$1.json"
done
check "sweep: rows' intervals simulated in batches (140 rows, two profiles) equal predict's, row by row" python3 -c '
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
assert len(rows) == 140, len(rows)
for f in sys.argv[2:]:
    p = json.load(open(f))
    r = [r for r in rows if r["nodes"] == p["nodes"] and r["profile"] == p["profile"]]
    assert len(r) == 1, (f, len(r))
    iv = p["interval"]["iteration_s"]
    assert r[0]["iteration_s_lo"] == iv["lo"] < iv["hi"] == r[0]["iteration_s_hi"], (f, r[0], iv)
' "$tmp/sb.json" "$tmp"/sb-*.json
# The interval is the default; --no-interval leaves it out; the two flags together are misuse.
"$ddpsim" predict --model resnet50 --nodes 2 --samples 1e7 --price 2 --json >"$tmp/d.json"
"$ddpsim" predict --model resnet50 --nodes 2 --no-interval --json >"$tmp/n.json"
check "predict: the interval by default (the same as --interval's), none with --no-interval" python3 -c '
import json, sys
d, i, n = (json.load(open(f)) for f in sys.argv[1:4])
assert d["interval"] == i["interval"] and "interval" not in n, (d.get("interval"), n.keys())' "$tmp/d.json" "$tmp/i.json" "$tmp/n.json"
expect 2 "--interval and --no-interval: choose one" -- predict --interval --no-interval
"$ddpsim" sweep --model resnet50 --nodes 1,2 --no-interval --csv >"$tmp/sn.csv"
check "sweep --no-interval: the lo/hi columns empty" python3 -c '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 2 and all(r["iteration_s_lo"] == r["iteration_s_hi"] == "" for r in rows), rows' "$tmp/sn.csv"
# The validated part comes from the build's cache (validate/accuracy.h) and equals the points
# predicted for the run: a data dir whose published.txt differs by one comment line is a miss.
"$ddpsim" accuracy --ratios "$tmp/r.tsv"
check "accuracy --ratios writes the cache the build wrote beside ddpsim, byte for byte" \
  cmp "$tmp/r.tsv" "$(dirname "$ddpsim")/validated-ratios.tsv"
src=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$tmp/data/validate"
for d in models topologies profiles; do ln -s "$src/$d" "$tmp/data/$d"; done
{ echo "# one more comment"; cat "$src/validate/published.txt"; } >"$tmp/data/validate/published.txt"
DDPSIM_DATA_DIR="$tmp/data" "$ddpsim" predict --model resnet50 --nodes 2 --samples 1e7 --price 2 --json >"$tmp/live.json"
check "the cached validated part (validated_cached) equals the points predicted again (a stale row is not used)" python3 -c '
import json, sys
c, l = (json.load(open(f))["interval"] for f in sys.argv[1:3])
assert c["validated_cached"] is True and l["validated_cached"] is False, (c, l)
del c["validated_cached"], l["validated_cached"]
assert c == l, (c, l)' "$tmp/d.json" "$tmp/live.json"
# A jittered run: its draws run without jitter, against the same configuration without jitter, so
# its factors are the unjittered run's exactly; lo <= its jittered nominal <= hi.
"$ddpsim" predict --model resnet50 --nodes 2 --draws 4 --json >"$tmp/j0.json"
"$ddpsim" predict --model resnet50 --nodes 2 --draws 4 --jitter-cv 0.05 --json >"$tmp/j1.json"
check "jitter: the profile factors of the run without jitter; the interval holds the jittered nominal" python3 -c '
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
ia, ib = a["interval"], b["interval"]
assert b["iteration_s"] != a["iteration_s"], "the jitter changed nothing"
assert (ia["profile_lo_factor"], ia["profile_hi_factor"]) == (ib["profile_lo_factor"], ib["profile_hi_factor"]), (ia, ib)
assert ib["iteration_s"]["lo"] <= b["iteration_s"] <= ib["iteration_s"]["hi"], ib' "$tmp/j0.json" "$tmp/j1.json"
"$ddpsim" predict --model resnet50 --profile h100-dgxh100 --topology dgxh100-ib --draws 4 >"$tmp/h0.txt"
check "no published run of the profile and precision (H100, fp16): the table says the validated part is every point's" \
  grep -q "^# note: no published run of this profile and precision: the validated part is the error over all" "$tmp/h0.txt"
"$ddpsim" predict --model resnet50 --interval --draws 4 >"$tmp/it.txt"
check "... and says nothing of the kind where there are (V100, fp16)" test -z "$(grep 'no published run of this profile' "$tmp/it.txt")"
check "the table shows the interval" \
  grep -q '^iteration interval .* s   (90%; profile: 4 draws; validated: [0-9]* published points of this kind, spread of [0-9]*)' "$tmp/it.txt"
# No interval of zero width (issue 49): every bundled profile at every precision it runs, the
# calibrated profile (h100-measured: no uncertainty object of its own, no published point), and
# the A100 profile stripped of its uncertainty; where the kind has no published point the validated
# part is every point's, centred on their mean, so the width is never 0.
for prof in v100-dgx1v:dgx1v-ib p100-dgx1:dgx1-p100 a100-dgxa100:dgxa100-ib h100-dgxh100:dgxh100-ib h100-measured:dgxh100-ib; do
  for prec in fp32 fp16 bf16; do
    "$ddpsim" predict --model resnet50 --profile "${prof%%:*}" --topology "${prof##*:}" --precision $prec --draws 4 --json \
      >"$tmp/w.json" 2>"$tmp/w.err" || { grep -q "bf16" "$tmp/w.err" && continue; }
    check "${prof%%:*} $prec: lo <= nominal <= hi, lo < hi" python3 -c '
import json, sys
d = json.load(open(sys.argv[1])); iv = d["interval"]; lo, hi = iv["iteration_s"]["lo"], iv["iteration_s"]["hi"]
assert lo <= d["iteration_s"] <= hi and hi > 1.01 * lo, iv
# The validated factors hold 1 (a kind whose points all lie on one side widens that side to 1).
assert iv["validated_all_points"] > 0 and iv["validated_lo_factor"] <= 1 <= iv["validated_hi_factor"], iv
assert iv["validated_hi_factor"] > 1.01 * iv["validated_lo_factor"], iv' "$tmp/w.json"
  done
done
check "... the A100 profile without uncertainty too (no draws)" python3 -c '
import json, sys
d = json.load(open(sys.argv[1])); iv = d["interval"]
assert iv["draws"] == 0 and iv["iteration_s"]["lo"] < d["iteration_s"] < iv["iteration_s"]["hi"], iv' "$tmp/a.json"
# --price auto|CLASS: the bundled table's example for the profile's card, its date and source said.
h100=(--model resnet50 --profile h100-dgxh100 --topology dgxh100-ib --samples 1e7)
"$ddpsim" predict "${h100[@]}" --price auto --json >"$tmp/pa.json"
check "predict --price auto: the table's first h100-dgxh100 row prices the cost, its source in the budget" python3 -c '
import sys, json
b = json.load(open(sys.argv[1]))["budget"]
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[2]) if l.strip() and not l.startswith(("#", "ddpsim-prices"))]
first = [r for r in rows if r[0] == "h100-dgxh100"][0]
price = float(first[2])
assert b["price_per_gpu_hour"] == price and abs(b["cost"] - price * b["gpu_hours"]) <= 1e-9 * b["cost"], (b, first)
assert first[4] in b["price_source"] and first[6] in b["price_source"], b
assert b["currency"] == first[3] == "USD", b' "$tmp/pa.json" "$(dirname "$0")/../../profiles/prices.tsv"
"$ddpsim" predict "${h100[@]}" --price capacity-block >"$tmp/pc.txt"
check "predict --price CLASS: the table says the price's date and source" grep -qE '^# price: [0-9.]+ USD per GPU-hour: capacity-block, [0-9]{4}-[0-9]{2}.*, https?://' "$tmp/pc.txt"
"$ddpsim" sweep "${h100[@]}" --price on-demand,capacity-block,2.385 --csv >"$tmp/px.csv" 2>/dev/null
check "sweep over --price (an axis of classes and a number): each row at its own price, in its currency" python3 -c '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
rows_t = [l.rstrip("\n").split("\t") for l in open(sys.argv[2]) if l.strip() and not l.startswith(("#", "ddpsim-prices"))]
want = [float([r for r in rows_t if r[0] == "h100-dgxh100" and r[1] == c][0][2]) for c in ("on-demand", "capacity-block")] + [2.385]
got = [float(r["cost"]) / float(r["gpu_hours"]) for r in rows]
assert len(got) == 3 and all(abs(g - w) <= 1e-9 * w for g, w in zip(got, want)), (got, want)
assert [r["currency"] for r in rows] == ["USD", "USD", ""], rows' "$tmp/px.csv" "$(dirname "$0")/../../profiles/prices.tsv"
expect 1 "--price auto: .*prices.tsv has no price for profile v100-dgx1v \(it has none\); give --price X" -- predict --model resnet50 --samples 1e6 --price auto
expect 1 "--price spot: .*has no spot price for profile h100-dgxh100 \(it has: on-demand, " -- predict "${h100[@]}" --price spot
expect 2 "--price must be a price per GPU-hour in \(0, 1e6\], auto, or a class" -- predict --samples 1e6 --price 'On Demand'
expect 2 "--price must be" -- predict --samples 1e6 --price 0
expect 2 "--prices FILE is the table of --price auto or --price CLASS" -- predict --samples 1e6 --prices x.tsv
printf 'ddpsim-prices 1\nh100-dgxh100\ton-demand\t3\tUSD\tlast week\tx\thttps://a\n' >"$tmp/bad.tsv"
expect 1 "--price auto: .*/bad.tsv:2: the date must be YYYY-MM-DD or YYYY-MM" -- predict "${h100[@]}" --price auto --prices "$tmp/bad.tsv"
printf 'ddpsim-prices 1\nh100-dgxh100\tmine\t2.385\tUSD\t2026-11\tour own cluster\thttps://intranet.example/rates\n' >"$tmp/own.tsv"
"$ddpsim" sweep --model resnet50 --profile h100-dgxh100 --topology dgxh100-ib --nodes 1,2 --samples 1e7 --price mine \
  --prices "$tmp/own.tsv" --csv >"$tmp/ps.csv" 2>"$tmp/err"
check "sweep --price CLASS --prices FILE: every row's cost at the file's price, its source said once" python3 -c '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 2 and all(abs(float(r["cost"]) - 2.385 * float(r["gpu_hours"])) <= 1e-6 * float(r["cost"]) for r in rows), rows
err = open(sys.argv[2]).read()
assert err.count("price of h100-dgxh100: 2.385 USD per GPU-hour: mine, 2026-11, our own cluster, https://intranet.example/rates") == 1, err' \
  "$tmp/ps.csv" "$tmp/err"
finish
