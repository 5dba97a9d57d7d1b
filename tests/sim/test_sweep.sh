#!/usr/bin/env bash
# ddpsim sweep and recommend from the command line: any option as an axis, the CSV's and JSON's
# columns, the same rows with -j 1, -j 2 and under mpirun -np 2, recommend's JSON, its "no
# meaningful difference" answers, draws reproducible from a seed, and bad input (a malformed
# uncertainty: file and field; a bad axis: exit 2).
set -u
ddpsim=$1
src=$2
. "$(dirname "$0")/lib.sh"
# field FILE COLUMN: that column of a CSV, one value per row
col() { awk -F, -v c="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = i; next } { print $k }' "$1"; }
# jnum FILE KEY: the first number after "KEY": in cJSON's output
jnum() { awk -F'[:,]' -v k="\"$2\"" '$1 ~ k { gsub(/[ \t]/, "", $2); print $2; exit }' "$1"; }

# --- sweep: axes ---
r50=(--model resnet50 --topology dgx1v-10gbe)
"$ddpsim" sweep "${r50[@]}" --nodes 1..8x2 --precision fp32,fp16 --comm-hook none,fp16 --gradient-as-bucket-view=0,1 \
  --bucket-cap-mb 5,25 --no-interval --csv >"$tmp/a.csv"
check "sweep: 4 node counts x 2 precisions x 2 hooks x 2 views x 2 caps = 64 rows and a header" test "$(wc -l <"$tmp/a.csv")" -eq 65
check "sweep: nodes from the range 1..8x2 vary slowest" test "$(col "$tmp/a.csv" nodes | uniq | tr '\n' ' ')" = "1 2 4 8 "
check "sweep: bucket_cap_mb varies fastest" test "$(col "$tmp/a.csv" bucket_cap_mb | head -4 | tr '\n' ' ')" = "5 25 5 25 "
check "sweep: precision, comm_hook, gradient_as_bucket_view are columns with the values swept" \
  test "$(col "$tmp/a.csv" precision | sort -u | tr '\n' ' ')$(col "$tmp/a.csv" comm_hook | sort -u | tr '\n' ' ')$(col "$tmp/a.csv" gradient_as_bucket_view | sort -u | tr '\n' ' ')" = "fp16 fp32 fp16 none 0 1 "
check "sweep: bucket_cap_mb_given is 1 for a cap given on the command line" test "$(col "$tmp/a.csv" bucket_cap_mb_given | sort -u)" = 1
# Every column the docs list, in order (docs/cli.md, "sweep": its column table; tools_schemas holds
# that table to sim/fields.c's, units included).
cols=$(awk '/^## sweep/ { s = 1; next } /^## / { s = 0 }
  s && /^\| `/ { split($0, c, "|"); n = split(c[2], w, "`"); for (i = 2; i <= n; i += 2) printf "%s%s", (k++ ? "," : ""), w[i] }' "$src/docs/cli.md")
check "sweep --csv: the documented columns" test "$(head -1 "$tmp/a.csv")" = "$cols"
check "sweep: the fp16 hook halves nothing under fp16 (same time), and a view saves the copies (it divides in place)" awk -F, '
  NR == 1 { for (i = 1; i <= NF; i++) k[$i] = i; next }
  { key = $k["nodes"] "," $k["precision"] "," $k["gradient_as_bucket_view"] "," $k["bucket_cap_mb"]
    if ($k["precision"] == "fp16") { if (key in t && t[key] != $k["iteration_s"]) bad = 1; t[key] = $k["iteration_s"] }
    v = $k["nodes"] "," $k["precision"] "," $k["comm_hook"] "," $k["bucket_cap_mb"]
    if ($k["gradient_as_bucket_view"] == 1) view[v] = $k["bucket_copy_s"]; else copy[v] = $k["bucket_copy_s"] }
  END { for (v in view) if (!(v in copy) || (copy[v] > 0 ? !(view[v] > 0 && view[v] < copy[v]) : view[v] != 0)) bad = 1
        exit bad }' "$tmp/a.csv"
"$ddpsim" sweep --nodes 2 --batch 32..96+32 --pytorch 1.1,2.15 --mode ddp,flat --fidelity flow,step --no-interval --json >"$tmp/b.json"
check "sweep --json: 3 batches x 2 releases x 2 modes x 2 fidelities = 24 rows" \
  test "$(grep -c '"iteration_s":' "$tmp/b.json")" -eq 24 -a "$(grep -c '"pytorch":	"1.1"' "$tmp/b.json")" -eq 12
check "sweep --json: axes named as the JSON names them" grep -q '"axes":	\["batch", "pytorch", "mode", "fidelity"\]' "$tmp/b.json"
"$ddpsim" sweep --nodes 2 --nccl-algo 'ring;tree;ring,tree' --bucket-cap-mb-list '1,25;5,50' --csv >"$tmp/c.csv"
check "sweep: options whose value is a list take ';' between values: 3 x 2 rows" test "$(wc -l <"$tmp/c.csv")" -eq 7
check "sweep: such an axis keeps its own commas in its (quoted) column" test "$(sed -n 2p "$tmp/c.csv" | cut -c1-12)" = 'ring,"1,25",'
"$ddpsim" sweep --model resnet50,resnet18 --profile v100-dgx1v --topology dgx1v-ib,dgx1v-10gbe --csv >"$tmp/d.csv"
check "sweep: models and topologies as axes" test "$(col "$tmp/d.csv" model | tr '\n' ' ')$(col "$tmp/d.csv" topology | tr '\n' ' ')" = "resnet50 resnet50 resnet18 resnet18 dgx1v-ib dgx1v-10gbe dgx1v-ib dgx1v-10gbe "

# --- the same rows with -j 1, -j 2 and under mpirun (the intervals, computed by rank 0 after the
# rows, are compared at -j 1 and -j 2 only) ---
grid=("${r50[@]}" --nodes 1,2,4,16 --bucket-cap-mb 1,10,25 --batch 32,64 --csv)
"$ddpsim" sweep "${grid[@]}" -j 1 >"$tmp/j1i.csv"
"$ddpsim" sweep "${grid[@]}" -j 2 >"$tmp/j2i.csv"
check "sweep -j 2: the same rows and intervals, in the same order, as -j 1 ($(($(wc -l <"$tmp/j1i.csv") - 1)) rows)" cmp -s "$tmp/j1i.csv" "$tmp/j2i.csv"
grid+=(--no-interval)
"$ddpsim" sweep "${grid[@]}" -j 1 >"$tmp/j1.csv"
"$ddpsim" sweep "${grid[@]}" -j 2 --progress >/dev/null 2>"$tmp/prog"
check "sweep --progress: a line with the time left on stderr" grep -q "ddpsim sweep: 24/24 configurations, .* s, about 0 s left" "$tmp/prog"
"$ddpsim" sweep "${grid[@]}" -j 2 >/dev/null 2>"$tmp/quiet"
check "sweep without --progress, stderr not a terminal: no progress line" test -z "$(grep 'configurations, ' "$tmp/quiet")"
if command -v mpirun >/dev/null; then
  mpirun -np 2 --oversubscribe "$ddpsim" sweep "${grid[@]}" >"$tmp/mpi.csv" 2>"$tmp/mpi.err"
  check "mpirun -np 2 ddpsim sweep: exit 0 and the same rows as a local run ($(head -c 200 "$tmp/mpi.err"))" cmp -s "$tmp/j1.csv" "$tmp/mpi.csv"
  mpirun -np 2 --oversubscribe "$ddpsim" sweep "${grid[@]}" -j 2 >"$tmp/mpi2.csv" 2>/dev/null
  check "mpirun -np 2 ddpsim sweep -j 2: the same rows again" cmp -s "$tmp/j1.csv" "$tmp/mpi2.csv"
  mpirun -np 2 --oversubscribe "$ddpsim" sweep --nodes 1,x >/dev/null 2>"$tmp/mpi.err"
  check "mpirun: a bad axis is told once, by rank 0" test "$(grep -c "must be a positive integer, got 'x'" "$tmp/mpi.err")" -eq 1
else
  echo "skip  mpirun not found: the MPI sweep is not checked"
fi

# --- sweep: misuse (exit 2, naming the option) ---
expect 2 "--nodes must be a positive integer, got 'x'" -- sweep --nodes 1,x
expect 2 "--precision must be fp32, fp16 or bf16, got 'fp8'" -- sweep --precision fp32,fp8
expect 2 "--batch: the range '64..32' must go up" -- sweep --batch 64..32
expect 2 "--nodes: bad step in the range '1..8xa'" -- sweep --nodes 1..8xa
expect 2 "--gradient-as-bucket-view is a flag: as an axis it takes =0,1" -- sweep --gradient-as-bucket-view=0,maybe
expect 2 "--nodes is given twice" -- sweep --nodes 1,2 --nodes 4,8
expect 2 "--csv and --json: choose one" -- sweep --csv --json
expect 2 "unknown option '--nodez'" -- sweep --nodez 1,2
expect 2 "--jobs must be an integer from 1 to 1024" -- sweep -j 0

# --- recommend ---
"$ddpsim" recommend --model resnet18 --nodes 8 --topology dgx1v-10gbe --precision fp32 --samples 16 --json >"$tmp/r1.json"
check "recommend --json: the fields (docs/cli.md)" awk '
  BEGIN { n = split("samples seed uncertain_numbers regret_quantile interval_level min_gain default_bucket_cap_mb best_bucket_cap_mb recommended_bucket_cap_mb recommended_iteration_s meaningful gain_over_default caps advice mean_iteration_s iteration_s_lo iteration_s_hi worst_regret fastest knob setting applies helps same wins", w, " ") }
  { t = t $0 } END { for (i = 1; i <= n; i++) if (index(t, "\"" w[i] "\"") == 0) { print "missing " w[i]; exit 1 } }' "$tmp/r1.json"
"$ddpsim" recommend --model resnet18 --nodes 4 --topology dgx1v-10gbe --precision fp16 --samples 16 --no-advice --json >"$tmp/r0.json"
rec=$(jnum "$tmp/r0.json" recommended_bucket_cap_mb)
lo=$(awk '/"gain_over_default"/ { f = 1 } f && /"lo"/ { gsub(/[^0-9.e+-]/, "", $2); print $2; exit }' "$tmp/r0.json")
check "recommend: resnet18 fp16 on 4 nodes over 10 GbE: a cap below 25 MB ($rec) whose gain's interval starts above 1% ($lo)" \
  awk -v r="$rec" -v l="$lo" 'BEGIN { exit !(r < 25 && l >= 0.01 && l < 1) }'
check "recommend: meaningful is true there" grep -q '"meaningful":	true' "$tmp/r0.json"
check "recommend: every cap's band holds its mean (lo <= mean <= hi)" awk -F'[:,]' '
  /"mean_iteration_s"/ { m = $2 } /"iteration_s_lo"/ { l = $2 } /"iteration_s_hi"/ { h = $2; n++; if (!(l <= m && m <= h && l < h)) bad = 1 }
  END { exit !(n == 9 && !bad) }' "$tmp/r1.json"
check "recommend: the compression hook is tried for fp32 gradients" grep -q '"setting":	"register_comm_hook(None, fp16_compress_hook)"' "$tmp/r1.json"
check "recommend: the advice ranked by mean gain, the best first, those that do not apply last; broadcast_buffers tried on a model with buffers" python3 -c '
import json, sys
adv = json.load(open(sys.argv[1]))["advice"]
on = [a for a in adv if a["applies"]]
assert [a["applies"] for a in adv] == sorted((a["applies"] for a in adv), reverse=True), adv
assert all(x["gain"]["mean"] >= y["gain"]["mean"] for x, y in zip(on, on[1:])) and len(on) >= 4, on
assert any(a["knob"] == "broadcast_buffers" and a["setting"] == "broadcast_buffers=False" and "SyncBatchNorm" in a["note"] for a in on), adv
assert all(a["same"] == (a["gain"]["nominal"] == a["gain"]["lo"] == a["gain"]["hi"] == 0) for a in on), on
# resnet18 fp32 keeps the default cap there: bucket_cap_mb_list=[1, 25] is DDP'"'"'s own default buckets, no change
assert json.load(open(sys.argv[1]))["recommended_bucket_cap_mb"] != 25 or any(
    a["setting"] == "bucket_cap_mb_list=[1, 25]" and a["same"] for a in on), on' "$tmp/r1.json"
check "recommend: static_graph tried; without find_unused_parameters it changes no steady state" python3 -c '
import json, sys
(a,) = [a for a in json.load(open(sys.argv[1]))["advice"] if a["knob"] == "static_graph"]
assert a["applies"] and a["same"] and not a["helps"] and not a["hurts"], a
assert a["setting"] == "DistributedDataParallel(..., static_graph=True)", a' "$tmp/r1.json"
# With find_unused_parameters the Reducer keeps its construction-time buckets; static_graph lets it
# rebuild them in the gradients' order (docs/reducer.md). On resnet50 over 10 GbE the rebuilt
# buckets end with an 18 MB bucket of the first layers (the construction-time ones with 1.2 MB), so
# the model finds it slower there: the advice says so, not "no meaningful gain".
"$ddpsim" recommend --model resnet50 --nodes 8 --topology dgx1v-10gbe --samples 8 --find-unused-parameters --pytorch 1.10 \
  --json >"$tmp/rsg.json"
check "recommend --find-unused-parameters: static_graph simulated (the 1.10 method), a change either way" python3 -c '
import json, sys
(a,) = [a for a in json.load(open(sys.argv[1]))["advice"] if a["knob"] == "static_graph"]
assert a["applies"] and not a["same"] and a["setting"] == "ddp._set_static_graph()", a
assert a["hurts"] == (a["gain"]["hi"] <= -json.load(open(sys.argv[1]))["min_gain"]) and not (a["helps"] and a["hurts"]), a' "$tmp/rsg.json"
"$ddpsim" recommend --model resnet18 --nodes 8 --topology dgx1v-10gbe --precision fp32 --samples 16 --json -j 1 >"$tmp/r2.json"
check "recommend: the same seed gives the same answer (and -j 1 the same as -j 2)" cmp -s "$tmp/r1.json" "$tmp/r2.json"
"$ddpsim" recommend --model resnet18 --nodes 8 --topology dgx1v-10gbe --precision fp32 --samples 16 --sample-seed 2 --json >"$tmp/r3.json"
# (the first cap's mean over the draws: the first "mean" is an advice knob's gain, which is 0 in every
# draw whenever that knob equals the recommended configuration)
check "recommend: another seed draws other profiles" test "$(grep -m1 '"mean_iteration_s"' "$tmp/r1.json")" != "$(grep -m1 '"mean_iteration_s"' "$tmp/r3.json")"
"$ddpsim" recommend --model mlstm-4k --nodes 8 --topology dgx1v-10gbe --samples 8 >"$tmp/r4.txt"
check "recommend: mlstm-4k: no cap is meaningfully better than the default, said plainly" \
  grep -q "^recommended bucket_cap_mb 25 (the default): no cap is meaningfully better than the default" "$tmp/r4.txt"
"$ddpsim" recommend --model mlstm-4k --nodes 8 --topology dgx1v-10gbe --samples 8 --json --no-advice >"$tmp/r4.json"
check "recommend --json: meaningful false, recommended 25, best another cap" \
  awk '/"meaningful"/ && /false/ { m = 1 } /"recommended_bucket_cap_mb"/ && /25,/ { r = 1 } /"best_bucket_cap_mb"/ && !/25,/ { b = 1 } END { exit !(m && r && b) }' "$tmp/r4.json"
"$ddpsim" recommend --gpus-per-node 1 --samples 4 >"$tmp/r5.txt"
check "recommend: one GPU: no cap is better than the default" grep -q "^recommended bucket_cap_mb 25 (the default): no cap is better than the default" "$tmp/r5.txt"
"$ddpsim" recommend --model resnet50 --nodes 2 --samples 4 --precision fp16 >"$tmp/r6.txt"
check "recommend: fp16 gradients: the compression hook does not apply, and says why" grep -q "fp16_compress_hook): does not apply: the gradients are already 16-bit" "$tmp/r6.txt"
# AMP (the generators' amp option): fp16 GEMMs, fp32 parameters and so fp32 gradients, which the hook
# compresses; the buckets' header says which types the gradients are (issue 49).
"$ddpsim" genmodel gpt --layers 2 --hidden 256 --heads 4 --ffn 1024 --vocab 1000 --positions 128 --seq 128 --amp -o "$tmp/amp.model"
"$ddpsim" recommend --model "$tmp/amp.model" --nodes 2 --samples 4 --precision fp16 >"$tmp/r8.txt" 2>&1
check "recommend: AMP's fp32 gradients under an fp16 run: the compression hook applies" \
  sh -c '! grep -q "already 16-bit" "$1" && grep -q "fp16_compress_hook): .*gradients travel in fp16" "$1"' _ "$tmp/r8.txt"
"$ddpsim" buckets --model "$tmp/amp.model" --precision fp16 >"$tmp/b8.txt"
check "buckets: an AMP run's header names the fp16 run and its fp32 gradients" grep -q "^# .*, fp16 run, fp32 gradients, " "$tmp/b8.txt"
check "recommend: no_sync is advised with what it changes" grep -q "no_sync() for 1 of every 2 iterations: .*changes training" "$tmp/r6.txt"
"$ddpsim" recommend --model resnet50 --nodes 2 --samples 4 --pytorch 2.5 >"$tmp/r7.txt"
check "recommend: before 2.11 the first-bucket knob does not apply" grep -q "first_bucket_cap .*does not apply: .*bucket_cap_mb_list" "$tmp/r7.txt"
expect 2 "listed twice" -- recommend --bucket-cap-mb 5,5
expect 2 "--quantile must be" -- recommend --quantile 0
expect 2 "--level must be" -- recommend --level 1
expect 2 "option '--csv' does not apply here" -- recommend --csv

# --- a malformed uncertainty: the file and the field ---
cp "$src/profiles/v100-dgx1v.json" "$tmp/u.json"
sed -i 's/"rel_sd": 0.3,/"rel_sd": -0.3,/' "$tmp/u.json"
expect 1 "u.json: uncertainty.\"comm.links.10gbe.efficiency\".rel_sd must be a relative standard deviation" -- predict --profile "$tmp/u.json"
cp "$src/profiles/v100-dgx1v.json" "$tmp/u2.json"
sed -i 's/"comm.links.10gbe.efficiency": {/"comm.links.10gbe.eff": {/' "$tmp/u2.json"
expect 1 "u2.json: uncertainty.\"comm.links.10gbe.eff\": no such number in the profile" -- recommend --profile "$tmp/u2.json"

# --- issue 48: FSDP's options in a sweep with DDP rows apply to the FSDP rows; --fsdp-units splits
# on ';'; progress on request ---
"$ddpsim" sweep --framework ddp,fsdp --fsdp-reshard-after-forward true,false --no-interval --csv >"$tmp/fw.csv" 2>"$tmp/fw.err"
check "sweep --framework ddp,fsdp --fsdp-reshard-after-forward true,false: 4 rows, the DDP rows' FSDP value '-'" python3 -c '
import csv, sys
r = list(csv.DictReader(open(sys.argv[1])))
got = [(x["framework"], x["fsdp_reshard_after_forward"]) for x in r]
assert got == [("ddp", "-"), ("ddp", "-"), ("fsdp", "true"), ("fsdp", "false")], got' "$tmp/fw.csv"
"$ddpsim" sweep --framework fsdp --model bert-base --fsdp-units 'bert.encoder.layer.*;bert.encoder.layer.*,bert.embeddings' --no-interval --csv >"$tmp/units.csv"
"$ddpsim" predict --framework fsdp --model bert-base --fsdp-units 'bert.encoder.layer.*,bert.embeddings' --no-interval --json >"$tmp/units.json"
check "sweep --fsdp-units 'A;A,B': two rows, the second as predict --fsdp-units A,B" python3 -c '
import csv, json, sys
r = list(csv.DictReader(open(sys.argv[1])))
assert [x["fsdp_units"] for x in r] == ["bert.encoder.layer.*", "bert.encoder.layer.*,bert.embeddings"], r
p = json.load(open(sys.argv[2]))
assert abs(float(r[1]["iteration_s"]) - p["iteration_s"]) <= 1e-9 * p["iteration_s"], (r[1]["iteration_s"], p["iteration_s"])' "$tmp/units.csv" "$tmp/units.json"
"$ddpsim" sweep --nodes 1,2 --draws 2 --progress >/dev/null 2>"$tmp/prog.err"
check "sweep --progress: the simulations' line on stderr, ending at 2/2" grep -q "2/2 configurations" "$tmp/prog.err"
check "sweep --progress: the intervals' line, ending at 2/2" grep -q "2/2 intervals" "$tmp/prog.err"
"$ddpsim" sweep --nodes 1,2 --draws 2 >/dev/null 2>"$tmp/quiet.err"
check "sweep without --progress and without a terminal: no progress line" sh -c '! grep -q "configurations, \\|intervals, " "$1"' _ "$tmp/quiet.err"
check "sweep --help names --max-configs and the progress line" sh -c '"$1" sweep --help | grep -q -- "--max-configs N" && "$1" sweep --help | grep -q "progress on stderr"' _ "$ddpsim"

finish
