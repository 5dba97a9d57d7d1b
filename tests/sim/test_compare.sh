#!/usr/bin/env bash
# ddpsim compare: one job on several setups. Each setup's figures are predict's for that setup
# (checked against predict itself), the decision's margin is recomputed here by hand from them, an
# OOM setup is reported and named in the decision, --interval's verdict follows the intervals, and
# every misuse exits 2 naming the flag.
set -u
ddpsim=$1
. "$(dirname "$0")/lib.sh"

job=(--model resnet50 --epochs 90 --dataset-size 1281167)
"$ddpsim" compare "${job[@]}" --price 2.5 --no-interval --setup topology=dgx1v-ib,nodes=4,name=IB \
  --setup topology=dgx1v-10gbe,nodes=4,price=2.15,name=eth --json >"$tmp/c.json"
check "compare --json exits 0" test $? -eq 0
"$ddpsim" predict "${job[@]}" --price 2.5 --topology dgx1v-ib --nodes 4 --json >"$tmp/ib.json"
"$ddpsim" predict "${job[@]}" --price 2.15 --topology dgx1v-10gbe --nodes 4 --json >"$tmp/eth.json"
check "each setup's figures are predict's for that setup; its price is its own" python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))["setups"]
for s, f in zip(c, sys.argv[2:]):
    p = json.load(open(f)); b = p["budget"]
    assert s["gpus"] == p["gpus"] == 32 and s["iteration_s"] == p["iteration_s"], (s, p["iteration_s"])
    assert s["samples_per_s"] == p["samples_per_s"] and s["train_s"] == b["train_s"], s
    assert s["cost"] == b["cost"] and s["energy_kwh"] == b["energy_kwh"], (s, b)
    assert s["memory_peak_bytes"] == p["memory"]["peak_bytes"] and s["fits"] is True, s
assert [s["price_per_gpu_hour"] for s in c] == [2.5, 2.15], c' "$tmp/c.json" "$tmp/ib.json" "$tmp/eth.json"
check "the margin, by hand: time saved of the slower, cost change of the faster's over the slower's" python3 -c '
import json, sys
d = json.load(open(sys.argv[1])); (ib, eth), (m,) = d["setups"], d["decisions"]
assert ib["train_s"] < eth["train_s"] and m["faster"] == "IB" and m["slower"] == "eth", m
saved = (eth["train_s"] - ib["train_s"]) / eth["train_s"]
change = (ib["cost"] - eth["cost"]) / eth["cost"]
assert abs(m["time_saved"] - saved) < 1e-12 and abs(m["cost_change"] - change) < 1e-12, (m, saved, change)
assert 0.05 < saved < 0.5, saved   # the same GPUs, 10 GbE against 4 x EDR: slower, not absurdly
words = "more" if change > 0 else "less"
assert m["text"] == "IB saves %.1f%% of the time for %.1f%% %s cost" % (100 * saved, 100 * abs(change), words), m["text"]
assert m["cost_basis"] == "cost" and m["within_uncertainty"] is None, m' "$tmp/c.json"

# Without a job: time per sample and GPU-hours per sample, different GPU counts.
"$ddpsim" compare --model resnet50 --setup topology=dgx1v-ib,nodes=1 --setup topology=dgx1v-10gbe,nodes=2 --json >"$tmp/n.json"
check "no job: the margin weighs time and GPU-time per sample" python3 -c '
import json, sys
d = json.load(open(sys.argv[1])); (a, b), (m,) = d["setups"], d["decisions"]
ta, tb = 1 / a["samples_per_s"], 1 / b["samples_per_s"]
(f, s, tf, ts) = (b, a, tb, ta) if tb < ta else (a, b, ta, tb)
assert m["faster"] == f["name"] and abs(m["time_saved"] - (ts - tf) / ts) < 1e-12, m
gf, gs = f["gpus"] * tf, s["gpus"] * ts
assert m["cost_basis"] == "gpu_hours" and abs(m["cost_change"] - (gf - gs) / gs) < 1e-12, m
assert a["train_s"] is None and a["cost"] is None and "GPU-hours" in m["text"], (a, m)' "$tmp/n.json"

# A setup whose memory does not fit: reported, not refused; the decision says so.
"$ddpsim" compare --model bert-large --batch 64 --setup topology=dgx1v-ib,profile=v100-dgx1v,nodes=2,name=V100 \
  --setup topology=dgxa100-ib,profile=a100-dgxa100,name=A100 >"$tmp/oom.txt"
check "an OOM setup: exit 0, 'fits the card NO', its OOM line and the decision naming it" \
  test $? -eq 0 -a -n "$(grep -E '^fits the card +NO +yes$' "$tmp/oom.txt")" \
  -a -n "$(grep '^# V100: OOM at batch 64: ' "$tmp/oom.txt")" -a -n "$(grep -E '; V100 does not fit its cards. memory$' "$tmp/oom.txt")"

# --interval: lo/hi per setup, and the verdict is whether the time intervals overlap.
"$ddpsim" compare "${job[@]}" --interval --draws 4 --setup topology=dgx1v-ib,nodes=2 --setup topology=dgx1v-ib,nodes=8 \
  --json >"$tmp/i.json"
check "--interval: train_s within lo..hi, within_uncertainty = the time saved's paired interval reaches 0" python3 -c '
import json, sys
d = json.load(open(sys.argv[1])); (a, b), (m,) = d["setups"], d["decisions"]
for s in (a, b):
    assert s["train_s_lo"] <= s["train_s"] <= s["train_s_hi"], s
    assert s["samples_per_s_lo"] <= s["samples_per_s"] <= s["samples_per_s_hi"], s
f, s = (a, b) if m["faster"] == a["name"] else (b, a)
assert m["time_saved_lo"] <= m["time_saved"] <= m["time_saved_hi"], m
assert m["within_uncertainty"] == (m["time_saved_lo"] <= 0), m
assert m["paired_draws"] is True and m["shared_validated_error"] is True, m   # one profile, one precision
assert m["text"].endswith("within the uncertainty: " + ("yes" if m["within_uncertainty"] else "no")), m
# 8 nodes against 2: about 4 times as fast, far outside the interval.
assert m["faster"] == b["name"] and m["within_uncertainty"] is False, m' "$tmp/i.json"
# Paired (issue 49): IB against 10 GbE on the same V100s share the profile's draws and the card's
# validated error, so only what differs (the links' stated uncertainty) widens the difference: its
# interval excludes 0, where the setups' own intervals overlap (the unpaired reading said "yes").
"$ddpsim" compare "${job[@]}" --draws 8 --setup topology=dgx1v-ib,nodes=4,name=IB --setup topology=dgx1v-10gbe,nodes=4,name=eth \
  --json >"$tmp/pair.json"
check "compare IB vs 10 GbE: a paired difference whose interval excludes 0, though the intervals overlap" python3 -c '
import json, sys
d = json.load(open(sys.argv[1])); (ib, eth), (m,) = d["setups"], d["decisions"]
assert m["faster"] == "IB" and m["paired_draws"] and m["shared_validated_error"], m
assert 0 < m["time_saved_lo"] < m["time_saved"] < m["time_saved_hi"] < 1 and m["within_uncertainty"] is False, m
assert ib["train_s_hi"] >= eth["train_s_lo"], (ib, eth)
assert "(90%: " in m["text"], m["text"]' "$tmp/pair.json"
# sweep pairs its rows the same way (issue 49): the 10 GbE row's speedup over the first (IB) row is
# compare's 1 - time saved, its interval compare's paired one (within 1%: compare takes the draws'
# quantiles of the inverse ratio, interpolated between draws); the caps' best line says its margin's.
"$ddpsim" sweep "${job[@]}" --draws 8 --nodes 4 --topology dgx1v-ib,dgx1v-10gbe --json >"$tmp/swp.json"
check "sweep's speedup_vs_first: compare's paired difference, the first row its own reference (1)" python3 -c '
import json, sys
(ib, eth), (m,) = json.load(open(sys.argv[1]))["rows"], json.load(open(sys.argv[2]))["decisions"]
assert ib["speedup_vs_first"] == ib["speedup_vs_first_lo"] == ib["speedup_vs_first_hi"] == 1, ib
close = lambda a, b: abs(a - b) < 1e-9
assert close(eth["speedup_vs_first"], 1 - m["time_saved"]), (eth, m)
near = lambda a, b: abs(a / b - 1) < 0.01
assert near(eth["speedup_vs_first_lo"], 1 - m["time_saved_hi"]) and near(eth["speedup_vs_first_hi"], 1 - m["time_saved_lo"]), (eth, m)
assert eth["speedup_vs_first_lo"] < eth["speedup_vs_first"] < eth["speedup_vs_first_hi"] < 1, eth' "$tmp/swp.json" "$tmp/pair.json"
"$ddpsim" sweep --model resnet50 --topology dgx1v-10gbe --nodes 8 --bucket-cap-mb 1,25 --draws 8 >"$tmp/caps.txt"
check "sweep: the best cap's margin with its paired interval" \
  grep -qE '^# best bucket cap: 1 MB, [0-9.]+% faster than the next best \(25 MB; paired 90% interval [-+][0-9.]+% \.\. \+[0-9.]+%\)$' "$tmp/caps.txt"
"$ddpsim" sweep --model resnet50 --nodes 1,2 --no-interval --csv >"$tmp/ni.csv"
check "sweep --no-interval: speedup_vs_first without its interval" python3 -c '
import csv, sys
a, b = csv.DictReader(open(sys.argv[1]))
assert a["speedup_vs_first"] == "1" and a["speedup_vs_first_lo"] == "" and b["speedup_vs_first_hi"] == "", (a, b)
assert abs(float(b["speedup_vs_first"]) - float(b["samples_per_s"]) / float(a["samples_per_s"])) < 1e-9, b' "$tmp/ni.csv"
# Different cards: nothing shared but the job; the difference's interval is wider than the paired one.
"$ddpsim" compare --model resnet50 --draws 8 --setup topology=dgx1v-ib,name=V100 \
  --setup topology=dgxa100-ib,profile=a100-dgxa100,name=A100 --json >"$tmp/cards.json"
check "compare across cards: not paired, the validated errors independent" python3 -c '
import json, sys
(m,) = json.load(open(sys.argv[1]))["decisions"]
assert m["paired_draws"] is False and m["shared_validated_error"] is False, m
assert m["time_saved_lo"] < m["time_saved"] < m["time_saved_hi"] and m["time_saved_hi"] - m["time_saved_lo"] > 0.1, m' "$tmp/cards.json"
"$ddpsim" compare --model resnet50 --interval --draws 4 --setup nodes=1 --setup nodes=2 >"$tmp/it.txt"
check "the table shows interval rows" grep -qE '^  interval +[0-9.]+\.\.[0-9.]+ +[0-9.]+\.\.[0-9.]+$' "$tmp/it.txt"

# --price auto prices each setup's card from the bundled table; price= a class, per setup.
"$ddpsim" compare --model resnet50 --samples 1e7 --price auto --setup topology=dgxa100-ib,profile=a100-dgxa100 \
  --setup topology=dgxh100-ib,profile=h100-dgxh100 --setup topology=dgxh100-ib,profile=h100-dgxh100,price=capacity-block \
  --json >"$tmp/pa.json"
check "--price auto: each setup at its own card's first row, price=CLASS at that row, sources given" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))["setups"]
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[2]) if l.strip() and not l.startswith(("#", "ddpsim-prices"))]
def row(p, c=None): return [r for r in rows if r[0] == p and (c is None or r[1] == c)][0]
want = [row("a100-dgxa100"), row("h100-dgxh100"), row("h100-dgxh100", "capacity-block")]
for s, r in zip(d, want):
    assert s["price_per_gpu_hour"] == float(r[2]) and r[6] in s["price_source"] and r[4] in s["price_source"], (s, r)
    assert abs(s["cost"] - float(r[2]) * s["gpu_hours"]) <= 1e-9 * s["cost"], s' "$tmp/pa.json" "$(dirname "$0")/../../profiles/prices.tsv"
expect 1 "--price auto: .* has no price for profile v100-dgx1v" -- compare --samples 1e6 --price auto --setup nodes=1 --setup nodes=2

expect 2 "--setup: give two or more setups to compare \(got 1\)" -- compare --setup nodes=2
expect 2 "--setup 'foo=1': unknown key 'foo'" -- compare --setup foo=1 --setup nodes=2
expect 2 "--setup 'nodes=x': nodes= must be an integer" -- compare --setup nodes=x --setup nodes=2
expect 2 "--setup 'nodes=2,nodes=3': nodes= given twice" -- compare --setup nodes=2,nodes=3 --setup nodes=2
expect 2 "--setup 'topology': 'topology' is not KEY=VALUE" -- compare --setup topology --setup nodes=2
expect 2 "--setup price= needs the samples to train" -- compare --setup nodes=1 --setup nodes=2,price=3
expect 2 "--setup price= must be a price per GPU-hour" -- compare --samples 1e6 --setup nodes=1 --setup nodes=2,price=Cheap!
expect 2 "option '--allow-oom' does not apply here" -- compare --setup nodes=1 --setup nodes=2 --allow-oom
expect 1 "no-such-topo" -- compare --setup nodes=1 --setup topology=no-such-topo
# DDP or FSDP in one command: each setup's framework, labelled; FSDP's knobs only with it.
"$ddpsim" compare --model bert-base --setup nodes=2,framework=ddp --setup nodes=2,framework=fsdp --json >"$tmp/fw.json"
check "compare framework=ddp against framework=fsdp: both predicted, labelled, FSDP's memory smaller" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
s = d["setups"]
assert [x["name"] for x in s] == ["dgx1v-ib x2 ddp", "dgx1v-ib x2 fsdp"], [x["name"] for x in s]
assert s[1]["memory_peak_bytes"] < s[0]["memory_peak_bytes"], s' "$tmp/fw.json"
expect 2 "setup 2: fsdp-reshard-after-forward= and fsdp-replicate= are FSDP's" -- compare --setup nodes=1 --setup nodes=2,fsdp-replicate=2
# --- issue 48: --fsdp-* apply to the FSDP setups; setups labelled alike are told apart ---
"$ddpsim" compare --model bert-base --setup nodes=2,framework=ddp --setup nodes=2,framework=fsdp --fsdp-forward-prefetch 2 --no-interval --json >"$tmp/pf.json"
"$ddpsim" predict --model bert-base --nodes 2 --framework fsdp --fsdp-forward-prefetch 2 --no-interval --json >"$tmp/pf_fsdp.json"
"$ddpsim" predict --model bert-base --nodes 2 --no-interval --json >"$tmp/pf_ddp.json"
check "compare framework=ddp and framework=fsdp with --fsdp-forward-prefetch 2: each setup as predict runs it" python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["setups"]
f, d = (json.load(open(p))["iteration_s"] for p in sys.argv[2:4])
assert abs(s[1]["iteration_s"] - f) <= 1e-9 * f, (s[1]["iteration_s"], f)
assert abs(s[0]["iteration_s"] - d) <= 1e-9 * d, (s[0]["iteration_s"], d)' "$tmp/pf.json" "$tmp/pf_fsdp.json" "$tmp/pf_ddp.json"
"$ddpsim" compare --setup name=a,nodes=1 --setup name=a,nodes=2 --setup name=a,nodes=2 --setup name=b --no-interval --json >"$tmp/names.json"
check "compare: setups named alike get labels saying what differs, or their place; a unique name is kept" python3 -c '
import json, sys
n = [x["name"] for x in json.load(open(sys.argv[1]))["setups"]]
assert n == ["a (nodes=1)", "a (setup 2)", "a (setup 3)", "b"], n' "$tmp/names.json"
expect 2 "--setup 'framework=fsdp,framework=ddp': framework= given twice" -- compare --setup framework=fsdp,framework=ddp --setup nodes=2

finish
