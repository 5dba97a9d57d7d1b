#!/usr/bin/env bash
# ddpsim's command line: help, defaults, JSON fields, and every misuse and bad-input path
# (exit 2 for misuse, 1 for failure, with a message naming the problem).
set -u
ddpsim=$1
src=$2
. "$(dirname "$0")/lib.sh"

for c in "" predict sweep recommend trace plan buckets "genmodel" accuracy compare; do
  "$ddpsim" $c --help >"$tmp/out" 2>&1
  check "ddpsim $c --help exits 0 and prints usage" test $? -eq 0 -a -n "$(grep usage "$tmp/out")"
done

"$ddpsim" predict --json >"$tmp/p.json" 2>"$tmp/err"
check "predict with every default succeeds" test $? -eq 0
# Every JSON object of the report names each key once (a key written twice is lost by most readers).
check "predict --json has no key twice in any object" python3 -c '
import json, sys
def once(pairs):
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)): sys.exit("repeated: %s" % sorted({k for k in keys if keys.count(k) > 1}))
    return dict(pairs)
json.load(open(sys.argv[1]), object_pairs_hook=once)' "$tmp/p.json"
for f in gpus iteration_s samples_per_s tokens_per_s compute_s exposed_comm_s scaling_efficiency buckets \
         index bytes params ready_s comm_start_s comm_end_s; do
  check "predict --json has \"$f\"" grep -q "\"$f\":" "$tmp/p.json"
done
check "defaults: mlstm-4k on dgx1v-ib, 8 GPUs, cap 25" grep -q '"bucket_cap_mb":	25' "$tmp/p.json"

"$ddpsim" buckets --json --precision fp32 >"$tmp/b.json"
check "buckets --json lists w_hh_v at index 8" grep -q '"w_hh_v"' "$tmp/b.json"
check "predict --json names NCCL's algorithm and protocol per bucket" grep -q '"protocol":' "$tmp/p.json"
"$ddpsim" predict --nodes 2 --topology dgx1v-10gbe --format chrome --trace "$tmp/trace.json" >/dev/null
check "predict --trace writes a Chrome trace with every bucket's all-reduce" grep -q '"name":"all-reduce bucket 2"' "$tmp/trace.json"
check "... and the compute stream's phases" grep -q '"name":"waiting for all-reduces"' "$tmp/trace.json"
"$ddpsim" predict --format chrome --trace "$tmp/nodir/t.json" >/dev/null 2>&1
check "--trace into a missing directory fails with exit 1 and leaves nothing" test $? -eq 1 -a ! -e "$tmp/nodir/t.json"

# trace: predict --trace without the report.
"$ddpsim" trace --format chrome -o "$tmp/trace2.json" --nodes 2 >"$tmp/out" 2>&1
check "trace -o writes the same Chrome trace, and no report" \
  test $? -eq 0 -a -n "$(grep '"name":"all-reduce bucket 2"' "$tmp/trace2.json")" -a -z "$(grep chars/s "$tmp/out")"
expect 2 "-o PATH is required" -- trace --nodes 2
expect 2 "option '--json' does not apply here" -- trace -o "$tmp/t3.json" --json

# recommend (more in tests/sim/test_sweep.sh): ResNet-50 fp32 on 8 nodes over 10 GbE has a
# U-shaped sweep: with the nominal profile the best cap is inside it.
"$ddpsim" recommend --model resnet50 --precision fp32 --nodes 8 --topology dgx1v-10gbe --samples 0 --no-advice --json >"$tmp/rec.json" 2>"$tmp/err"
rec=$(awk -F'[:,]' '/"best_bucket_cap_mb"/ { gsub(/[ \t]/, "", $2); print $2 }' "$tmp/rec.json")
gain=$(awk -F'[:,]' '/"nominal"/ { gsub(/[ \t]/, "", $2); print $2; exit }' "$tmp/rec.json")
check "recommend: resnet50 fp32 on 8 x 8 GPUs over 10 GbE, nominal profile: best $rec MB, between 1 and 25, gain $gain over 25 MB" \
  awk -v r="$rec" -v g="$gain" 'BEGIN { exit !(r >= 1 && r < 25 && g > 0) }'
# (without compute sharing the GPU, which sets caps apart by a few parts in 10^5 here)
"$ddpsim" recommend --bucket-cap-mb 5,50 --samples 2 --no-gpu-sharing >"$tmp/out" 2>&1
# (they tie to a few parts in 10^5: per-bucket host work can tell them apart in a draw)
check "recommend: caps that all tie keep the default (25 MB added to the list)" \
  test $? -eq 0 -a -n "$(grep -E 'recommended bucket_cap_mb 25 \(the default\): no cap is (meaningfully )?better' "$tmp/out")"
expect 2 "listed twice" -- recommend --bucket-cap-mb 5,5
expect 2 "--bucket-cap-mb must be a cap from one byte .* to 1e9 MB, got 'x'" -- recommend --bucket-cap-mb 5,x
expect 2 "option '--csv' does not apply here" -- recommend --csv
"$ddpsim" predict --framework dp --gpus-per-node 4 --json >"$tmp/dp.json"
check "predict --framework dp reports DataParallel's phases" grep -q '"replicate_s":' "$tmp/dp.json"
"$ddpsim" predict --nodes 4 --nccl-algo ring --nccl-proto simple --json >"$tmp/rs.json"
check "--nccl-algo ring --nccl-proto simple forces ring/Simple" test "$(grep -c '"algorithm":	"ring"' "$tmp/rs.json")" -gt 0 -a "$(grep -c '"protocol":	"Simple"' "$tmp/rs.json")" -eq "$(grep -c '"protocol":' "$tmp/rs.json")"

"$ddpsim" sweep --nodes 1,2 --bucket-cap-mb 1,25 --topology dgx1v-ib,dgx1v-10gbe --csv >"$tmp/s.csv"
check "sweep --csv: header and 8 rows" test "$(wc -l <"$tmp/s.csv")" -eq 9

"$ddpsim" sweep --nodes 2 --bucket-cap-mb 1,25 --topology dgx1v-10gbe --precision fp32 >"$tmp/s.txt"
check "sweep over caps names the best one" grep -q "^# best bucket cap: 1 MB, .*% faster than the next best (25 MB[;)]" "$tmp/s.txt"
"$ddpsim" sweep --model resnet50 --nodes 1 --gpus-per-node 1 --bucket-cap-mb 1,25 --topology dgx1v-ib >"$tmp/s2.txt"
check "sweep says when every cap ties (one GPU: nothing to all-reduce)" grep -q "^# best bucket cap: all 2 caps tie" "$tmp/s2.txt"

# The bundled models are what the generators write.
for spec in "resnet --depth 18:resnet18" "resnet --depth 50:resnet50" "bert --size base:bert-base" "bert --size large:bert-large"; do
  "$ddpsim" genmodel ${spec%%:*} -o "$tmp/z.model"
  check "models/${spec#*:}.model is 'ddpsim genmodel ${spec%%:*}'" cmp -s "$tmp/z.model" "$src/models/${spec#*:}.model"
done
for h in 4k:4096 8k:8192; do
  "$ddpsim" genmodel mlstm --hidden "${h#*:}" --name "mlstm-${h%%:*}" -o "$tmp/m.model"
  check "models/mlstm-${h%%:*}.model is the generator's output" cmp -s "$tmp/m.model" "$src/models/mlstm-${h%%:*}.model"
done

# Misuse: exit 2.
expect 2 "unknown command" -- bogus
expect 2 "unknown option" -- predict --frobnicate
expect 2 "--nodes must be a positive integer" -- predict --nodes 0
expect 2 "--nodes must be a positive integer" -- predict --nodes two
expect 2 "--bucket-cap-mb must be a cap from one byte \(9.54e-07 MB\) to 1e9 MB" -- predict --bucket-cap-mb -3
expect 2 "--precision must be fp32, fp16 or bf16" -- predict --precision fp8
expect 2 "--mode must be ddp or flat" -- predict --mode ring
expect 2 "--fidelity must be flow or step" -- predict --fidelity exact
expect 2 "--iterations must be" -- predict --iterations 0
expect 2 "option '--iterations' does not apply here" -- buckets --iterations 4
expect 2 "option '--trace' does not apply here" -- sweep --trace x.json
expect 2 "--nccl-algo must list ring, tree, pat and/or hier" -- predict --nccl-algo hypercube
# PAT runs all-gathers and reduce-scatters only (NCCL 2.23's tuning.cc): DDP's all-reduces refuse it,
# and beside the ring they stay the ring's.
expect 2 "--nccl-algo: .*pat runs no allreduce" -- predict --nccl-algo pat # issue 48: the flag named, exit 2
"$ddpsim" predict --nodes 4 --gpus-per-node 1 --nccl-algo pat,ring --json | grep -v -e wall_s -e peak_rss >"$tmp/pat.json"
"$ddpsim" predict --nodes 4 --gpus-per-node 1 --nccl-algo ring --json | grep -v -e wall_s -e peak_rss >"$tmp/ring.json"
check "--nccl-algo pat,ring: DDP's all-reduces run as the ring, the report unchanged" cmp -s "$tmp/pat.json" "$tmp/ring.json"
# The hierarchical all-reduce (not NCCL's) only when asked: every bucket runs it.
"$ddpsim" predict --nodes 2 --nccl-algo hier --json >"$tmp/hier.json"
check "--nccl-algo hier: every bucket's all-reduce is hier" test "$(grep -c '"algorithm":	"hier"' "$tmp/hier.json")" -gt 0 -a "$(grep -c '"algorithm":	"hier"' "$tmp/hier.json")" -eq "$(grep -c '"algorithm":' "$tmp/hier.json")"
expect 2 "--num-workers must be an integer from 0 to 256" -- predict --num-workers -1
expect 2 "--load-ms must be from 0 to 3600000 ms" -- predict --load-ms soon
expect 2 "--no-h2d contradicts" -- predict --no-h2d --pin-memory
expect 2 "--framework must be ddp, dp or fsdp" -- predict --framework horovod
# FSDP (docs/fsdp.md): its knobs only with it, DDP's Reducer knobs not with it, its units named.
expect 2 "--fsdp-\\* options are FSDP's: give --framework fsdp" -- predict --fsdp-reshard-after-forward false
expect 2 "FSDP has no Reducer" -- predict --framework fsdp --comm-hook fp16
expect 2 "--fsdp-units: 'encoder.nothing.\\*' matches no module of bert-base" -- predict --framework fsdp --model bert-base --fsdp-units 'encoder.nothing.*'
expect 2 "--fsdp-reshard-after-forward must be false or true" -- predict --framework fsdp --fsdp-reshard-after-forward 2
expect 2 "FSDP is modelled on NCCL only" -- predict --framework fsdp --backend gloo
"$ddpsim" predict --framework fsdp --model bert-base --nodes 2 --json >"$tmp/fsdp.json"
check "predict --framework fsdp: BERT-base on 2 nodes, efficiency within (0, 1], unsharded units in the memory" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["framework"] == "fsdp" and 0 < d["scaling_efficiency"] <= 1 and d["memory"]["unsharded_bytes"] > 0, d
' "$tmp/fsdp.json"
check "predict --framework fsdp on an exported model (EfficientNet-B0, its first stage's backward named after another module)" \
  "$ddpsim" predict --framework fsdp --model efficientnet-b0 --batch 128 --nodes 2
"$ddpsim" recommend --framework fsdp --model bert-base --nodes 2 --samples 0 --json >"$tmp/fsdp-rec.json"
check "recommend --framework fsdp: FSDP's knobs and DDP itself tried, no caps" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert sorted(a["knob"] for a in d["advice"]) == sorted(["reshard_after_forward", "hsdp", "forward_prefetch", "framework"]), d["advice"]  # ranked by gain
assert len(d["caps"]) == 1, d["caps"]' "$tmp/fsdp-rec.json"
expect 2 "--bucket-cap-mb: FSDP has no buckets" -- recommend --framework fsdp --bucket-cap-mb 10,25
"$ddpsim" plan --framework fsdp --model bert-base --fsdp-reshard-after-forward false >"$tmp/fsdp.plan"
check "plan --framework fsdp: 13 all-gathers and 13 reduce-scatters without resharding" test "$(grep -c '^fsdp_issue all_gather' "$tmp/fsdp.plan")" -eq 13 -a "$(grep -c '^fsdp_issue reduce_scatter' "$tmp/fsdp.plan")" -eq 13
expect 2 "--host-launch-us must be from 0 to 1000000 us" -- predict --host-launch-us -5
expect 2 "DataParallel runs in one process: one node only" -- predict --framework dp --nodes 2
expect 2 "--nccl-proto must list LL, LL128 and/or Simple" -- predict --nccl-proto LL256
expect 2 "unexpected argument" -- predict extra
expect 2 "--nodes must be a positive integer, got 'x'" -- sweep --nodes 1,x
expect 2 "needs --hidden" -- genmodel mlstm
expect 2 "unknown family 'lstm'.*known: mlstm, resnet, bert, gpt" -- genmodel lstm
expect 2 "unknown family 'gpt2'.*known: mlstm, resnet, bert, gpt" -- genmodel gpt2
expect 2 "BERT hidden size 5 is not a multiple of the 12 heads" -- genmodel bert --hidden 5
expect 2 "genmodel bert: option '--untied' does not apply to it" -- genmodel bert --untied
expect 2 "genmodel mlstm: option '--layers' does not apply to it" -- genmodel mlstm --hidden 64 --layers 2
expect 2 "GPT size 'huge' is not small, medium, large or xl" -- genmodel gpt --size huge
expect 2 "GPT sequence 2048 is longer than its 1024 position embeddings" -- genmodel gpt --seq 2048
"$ddpsim" genmodel gpt --layers 2 --hidden 1024 --heads 16 -o "$tmp/g4h.model"
check "genmodel gpt --hidden 1024 without --ffn: the MLP is 4H (GPT2Config's n_inner None)" grep -q "ffn 4096," "$tmp/g4h.model"
expect 2 "ResNet depth 7 is not one of torchvision's" -- genmodel resnet --depth 7
expect 2 "needs --depth" -- genmodel resnet
expect 2 "genmodel bert: option '--uint8-input' does not apply to it" -- genmodel bert --uint8-input
# --uint8-input: 3 x 224 x 224 pixels of one byte and an int64 label per sample cross to the GPU.
"$ddpsim" genmodel resnet --depth 18 --uint8-input >"$tmp/r8.model" 2>"$tmp/err"
check "genmodel resnet --uint8-input: input 150536 bytes per sample" grep -qE '^input 150536 .*uint8' "$tmp/r8.model"
# --channels-last: the activations' layout; NCHW (PyTorch's default) otherwise. On the A100, whose
# TF32 convolution kernels take NHWC, the NCHW model pays cuDNN's transposes and runs slower.
expect 2 "genmodel bert: option '--channels-last' does not apply to it" -- genmodel bert --channels-last
"$ddpsim" genmodel resnet --depth 18 --channels-last --precision fp32 >"$tmp/rnhwc.model" 2>"$tmp/err"
check "genmodel resnet --channels-last: layout nhwc" grep -qE '^layout nhwc' "$tmp/rnhwc.model"
check "genmodel resnet: layout nchw by default" grep -qE '^layout nchw' "$tmp/r8.model"
a100_sps() { # a100_sps MODEL: samples/s of one A100 in TF32
  "$ddpsim" predict --model "$1" --precision fp32 --profile a100-dgxa100 --topology dgxa100-ib --gpus-per-node 1 --json |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["samples_per_s"])'
}
nhwc_sps=$(a100_sps "$tmp/rnhwc.model")
nchw_sps=$(a100_sps "$tmp/r8.model")
check "A100 TF32: the NCHW ResNet-18 ($nchw_sps/s) is slower than the NHWC one ($nhwc_sps/s)" \
  python3 -c "import sys; sys.exit(not 0 < $nchw_sps < $nhwc_sps)"
# Values out of range are misuse too, wherever they are found (the option table or the library).
expect 2 "at most 1048576 GPUs can be simulated" -- predict --nodes 200000
expect 2 "--batch must be a per-GPU batch from 1 to 1073741824 \(2\^30\) samples" -- predict --batch 2147483647
expect 2 "mLSTM sizes must be at most hidden and embed 1048576" -- genmodel mlstm --hidden 2147483647
expect 2 "--bucket-cap-mb must be a cap from one byte .* to 1e9 MB, got '1e300'" -- predict --bucket-cap-mb 1e300
expect 2 "--first-bucket-mb must be a cap from one byte .* to 1e9 MB" -- predict --first-bucket-mb 1e300
expect 2 "--nodes has an empty item in '1,,2'" -- sweep --nodes 1,,2
expect 2 "--nodes has an empty item in '1,'" -- sweep --nodes 1,
expect 2 "--bucket-cap-mb has an empty item" -- sweep --bucket-cap-mb ,25
expect 2 "--jitter-cv|jitter" -- predict --framework dp --gpus-per-node 2 --jitter-cv 0.1

# Bad input: exit 1 with the file and line, or the list of bundled names.
expect 1 "unknown model 'nope' \(bundled: .*mlstm-4k, mlstm-8k" -- predict --model nope
expect 1 "unknown topology 'nope' \(bundled: .*dgx1v-10gbe, dgx1v-ib" -- predict --topology nope
expect 1 "unknown profile 'nope' \(bundled: .*v100-dgx1v" -- predict --profile nope
mkdir -p "$tmp/adir"
expect 1 "adir: is a directory, not a model file" -- predict --model "$tmp/adir"
expect 1 "adir: is a directory, not a topology file" -- predict --topology "$tmp/adir"
expect 1 "adir: is a directory, not a profile file" -- predict --profile "$tmp/adir"
printf 'ddpsim-model 1\nname x\nbatch 2\nprecision fp32\ntokens 1 chars\nparam a 3\nbackward\ngemm g m=9223372036854775807*B n=2 k=2 ready=a\n' >"$tmp/huge.model"
expect 1 "huge.model:8: m: '9223372036854775807\\*B' exceeds the largest dimension" -- predict --model "$tmp/huge.model"
sed 's/"lat_s": 3.4e-06/"lat_s": 1e-300/' "$src/profiles/v100-dgx1v.json" >"$tmp/tiny.json"
expect 1 "tiny.json: comm.links.nvlink.lat_s must be a time in seconds from 1e-09 to 10" -- predict --profile "$tmp/tiny.json"
(cat "$src/profiles/v100-dgx1v.json"; echo ']') >"$tmp/trail.json"
expect 1 "trail.json:[0-9]+: data after the end of the JSON document" -- predict --profile "$tmp/trail.json"
sed 's/"lat_s": 3.4e-06,/"lat_s": 3.4e-06, "warning": "poor fit kept by --accept-poor-fit: 140% rms",/' \
  "$src/profiles/v100-dgx1v.json" >"$tmp/poor.json"
expect 0 "warning: profile .*poor.json: comm.links.nvlink: poor fit kept by --accept-poor-fit: 140% rms" -- \
  predict --profile "$tmp/poor.json"
# An exported foreach optimizer (torch.optim's CUDA default from PyTorch 2.0) under an older release: warned.
printf 'ddpsim-model 5\nname fe\nbatch 2\nprecision fp32\ntokens 1 chars\nparam a 3\nforward\ngemm f m=3 n=2*B k=3\nbackward\ngemm g m=3 n=3 k=2*B ready=a\noptimizer\newise sgd._foreach_mul_ elems=3 arrays=2 dtype=fp32 fwops=1\n' >"$tmp/foreach.model"
expect 0 "model fe: its optimizer is torch.optim's foreach step \\(1 ops\\), the default on CUDA from PyTorch 2.0; PyTorch 1.9 ran the for-loop" -- \
  predict --model "$tmp/foreach.model" --pytorch 1.9 --gpus-per-node 2 --no-interval
"$ddpsim" predict --model "$tmp/foreach.model" --gpus-per-node 2 --no-interval >/dev/null 2>"$tmp/err"
check "the same model at PyTorch 2.15 (foreach its default): no warning about its optimizer" test -z "$(grep -i foreach "$tmp/err")"
printf 'ddpsim-model 1\nname x\nbatch 2\nbogus line\n' >"$tmp/bad.model"
expect 1 "bad.model:4: unknown line 'bogus'" -- predict --model "$tmp/bad.model"
printf 'ddpsim-topology 1\nname x\ngpus_per_node 8\nintra nvlink links=6 bw=fast\n' >"$tmp/bad.topo"
expect 1 "bad.topo:4: bw 'fast'" -- predict --topology "$tmp/bad.topo"
printf '{"format": "ddpsim-profile",\n "version": 1,\n "compute": [}\n' >"$tmp/bad.json"
expect 1 "bad.json:3: not valid JSON" -- predict --profile "$tmp/bad.json"
printf '{"format": "ddpsim-profile", "version": 9}' >"$tmp/v9.json"
expect 1 "v9.json: unsupported profile version 9" -- predict --profile "$tmp/v9.json"
sed 's/"ib-edr"/"ib-hdr"/' "$src/profiles/v100-dgx1v.json" >"$tmp/noib.json"
expect 1 "no comm.links entry for link class 'ib-edr'" -- predict --profile "$tmp/noib.json" --nodes 2
printf 'ddpsim-topology 1\nname solo\ngpus_per_node 2\nintra nvlink links=1 bw=25GBps\nnic none\n' >"$tmp/solo.topo"
expect 1 "has no NIC" -- predict --topology "$tmp/solo.topo" --nodes 2
expect 1 "no such model file" -- predict --model ./missing.model
sed '/^  "h2d": {/,/^  },/d' "$src/profiles/v100-dgx1v.json" >"$tmp/noh2d.json"
expect 1 "no h2d.pinned_sync" -- predict --profile "$tmp/noh2d.json" --pin-memory
"$ddpsim" predict --topology "$tmp/solo.topo" --nodes 1 >/dev/null 2>&1
check "a NIC-less topology still runs on one node" test $? -eq 0

# plan: what would be simulated, without simulating it.
"$ddpsim" plan --nodes 64 --model resnet50 >"$tmp/plan.txt" 2>&1
check "plan of 64 nodes: 2 simulated, one line per bucket" \
  test $? -eq 0 -a -n "$(grep 'simulated 2 nodes (16 ranks)' "$tmp/plan.txt")" -a -n "$(grep '^bucket 0 .* allreduce ' "$tmp/plan.txt")"
"$ddpsim" plan --nodes 64 --jitter-cv 0.1 >"$tmp/plan.txt" 2>&1
check "plan with jitter simulates all 512 GPUs" test $? -eq 0 -a -n "$(grep 'simulated 64 nodes (512 ranks)' "$tmp/plan.txt")"
expect 2 "DataParallel runs in one process" -- plan --framework dp --nodes 2
"$ddpsim" predict --nodes 3 --no-symmetry --json >"$tmp/full.json" && "$ddpsim" predict --nodes 3 --json >"$tmp/sym.json"
check "--no-symmetry simulates all 24 GPUs, the default 16, same iteration" \
  test -n "$(grep '"ranks_simulated":.24,' "$tmp/full.json")" -a -n "$(grep '"ranks_simulated":.16,' "$tmp/sym.json")" \
  -a "$(grep '"iteration_s"' "$tmp/full.json")" = "$(grep '"iteration_s"' "$tmp/sym.json")"

# DDP's Reducer by release (docs/reducer.md): the steady state by default, earlier iterations apart.
"$ddpsim" buckets --model resnet18 --precision fp32 >"$tmp/rb.txt"
check "buckets: resnet18's steady state is the rebuilt 2,052,000 / 28,852,224 / 15,853,824 bytes" \
  test "$(awk '/^ +[0-9]/ {printf "%s ", $2}' "$tmp/rb.txt")" = "2052000 28852224 15853824 "
"$ddpsim" buckets --model resnet18 --precision fp32 --ddp-iteration 1 >"$tmp/rb.txt"
check "buckets --ddp-iteration 1: one bucket of every gradient (2.15)" test "$(grep -c '^ \+[0-9]' "$tmp/rb.txt")" -eq 1
"$ddpsim" buckets --model resnet18 --precision fp32 --pytorch 1.5 >"$tmp/rb.txt"
check "buckets --pytorch 1.5: construction-time buckets for ever, limits [1 MiB, 25 MiB]" \
  test "$(awk '/^ +[0-9]/ {printf "%s ", $2}' "$tmp/rb.txt")" = "11497376 33744896 1515776 "
"$ddpsim" predict --nodes 2 --static-graph >"$tmp/sg.txt"
check "predict --static-graph reports iterations 1 and 2 apart from the steady state" \
  test -n "$(grep '^# iteration 1: .* once (one bucket per dtype, all after backward)' "$tmp/sg.txt")" \
  -a -n "$(grep '^# iteration 2: .* once (one bucket per dtype)' "$tmp/sg.txt")" -a -n "$(grep 'steady state, rebuilt buckets' "$tmp/sg.txt")"
"$ddpsim" predict --nodes 2 --find-unused-parameters >"$tmp/fu.txt"
check "predict --find-unused-parameters: construction-time buckets, nothing reported apart" \
  test -n "$(grep 'steady state, construction-time buckets' "$tmp/fu.txt")" -a -z "$(grep '^# iteration 1' "$tmp/fu.txt")"
expect 2 "from 0.2 to 2.15" -- predict --pytorch 3.0
expect 2 "only with the gloo backend" -- predict --pytorch 0.3 --backend nccl
expect 2 "only with the nccl and gloo backends" -- predict --pytorch 1.0 --backend mpi
expect 2 "bucket_cap_mb \\(--bucket-cap-mb\\) needs PyTorch 1.0" -- predict --pytorch 0.4 --bucket-cap-mb 5
expect 2 "bucket_cap_mb \\(--bucket-cap-mb\\) needs PyTorch 1.0" -- buckets --pytorch 0.3 --bucket-cap-mb 5
expect 2 "find_unused_parameters needs PyTorch 1.1" -- predict --pytorch 1.0 --find-unused-parameters
expect 2 "broadcast_buffers=False \\(--no-broadcast-buffers\\) needs PyTorch 0.4" -- predict --pytorch 0.3 --no-broadcast-buffers
expect 2 "first bucket's size \\(--first-bucket-mb\\) needs PyTorch 1.1" -- buckets --pytorch 1.0 --first-bucket-mb 2
expect 2 "rebuilt buckets are the C\\+\\+ Reducer's" -- buckets --pytorch 0.4 --rebuilt
expect 2 "recommend chooses DDP's bucket_cap_mb, an argument from PyTorch 1.0" -- recommend --pytorch 0.4
# DDP before the C++ Reducer (docs/reducer.md), the mLSTM-4k in fp32 by hand. 0.2: a new 1 MiB bucket
# once one is reached, in registration order: [encoder, decoder.weight] 4,259,840; [decoder.bias ..
# w_ih_v] 4,391,936; [w_hh_g, w_hh_v] 268,500,992; [w_mih_g, w_mih_v] 1,064,960; [w_mhh_g, w_mhh_v]
# 67,125,248; reduced as each one's last gradient is ready (W_mhh, W_mih, W_hh, W_ih, the encoder).
"$ddpsim" buckets --model mlstm-4k --precision fp32 --pytorch 0.2 >"$tmp/b02.txt"
check "buckets --pytorch 0.2: 1 MiB buckets in registration order, reduced as they become ready" \
  test "$(awk '/^ +[0-9]/ {printf "%s ", $2}' "$tmp/b02.txt")" = "67125248 1064960 268500992 4391936 4259840 "
# 0.4 with nccl: 256 MiB (_take_tensors: closed before a tensor would pass it), after backward in that order.
"$ddpsim" buckets --model mlstm-4k --precision fp32 --pytorch 0.4 >"$tmp/b04.txt"
check "buckets --pytorch 0.4 (nccl): 256 MiB buckets closed before passing the limit" \
  test "$(awk '/^ +[0-9]/ {printf "%s ", $2}' "$tmp/b04.txt")" = "8717312 268435456 68190208 "
# 1.0: take_tensors at 25 MB (>= closes; no 1 MiB first bucket), reduced from the last.
"$ddpsim" buckets --model mlstm-4k --precision fp32 --pytorch 1.0 >"$tmp/b10.txt"
check "buckets --pytorch 1.0: 25 MB buckets, no first bucket, the last reduced first" \
  test "$(awk '/^ +[0-9]/ {printf "%s ", $2}' "$tmp/b10.txt")" = "68190208 277152768 "
# The 2017 run: PyTorch 0.2's DDP works only over gloo, the default there, whose ring runs over TCP
# between the processes (the profile's comm.links.tcp), its sums on the host (compute.host.reduce_Bps):
# the bundled profile predicts it from the release, the model and the hardware alone.
"$ddpsim" predict --pytorch 0.2 --model mlstm-4k --profile p100-dgx1 --topology dgx1-p100 --gpus-per-node 1 >"$tmp/p02one.txt"
check "predict --pytorch 0.2 DDP on one GPU runs (nothing to all-reduce)" grep -q "PyTorch 0.2 DDP, 1 MiB buckets" "$tmp/p02one.txt"
"$ddpsim" predict --pytorch 0.2 --model mlstm-4k --profile p100-dgx1 --topology dgx1-p100 --nodes 1 --json >"$tmp/p02.json"
check "predict --pytorch 0.2: DDP over gloo, 8 GPUs, 1 MiB buckets, one ring at the TCP connection's 5 GB/s, slower than on one GPU" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
s = json.dumps(r)
assert r["gpus"] == 8 and "a reduction thread each" in s, s[:300]
assert 0 < r["scaling_efficiency"] < 1, r["scaling_efficiency"]
assert r["links"]["channels"] == 1 and r["links"]["channel_bw_Bps"] == 5e9, r["links"]
' "$tmp/p02.json"
python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); del p["comm"]["links"]["tcp"]; json.dump(p,open(sys.argv[2],"w"))' \
  "$src/profiles/p100-dgx1.json" "$tmp/p100notcp.json"
expect 1 "comm.links.tcp" -- predict --pytorch 0.2 --model mlstm-4k --profile "$tmp/p100notcp.json" --topology dgx1-p100 --nodes 1
for v in 0.3 0.4; do
  "$ddpsim" predict --framework dp --gpus-per-node 2 --pytorch $v --json >"$tmp/dpv.json"
  want=$([ $v = 0.3 ] && echo true || echo false)
  check "predict --framework dp --pytorch $v: backward under the GIL $want (the release's default)" \
    grep -Eq "\"backward_gil\":[[:space:]]*$want" "$tmp/dpv.json"
done
expect 2 "--pytorch" -- predict --pytorch two
expect 2 "static_graph needs PyTorch 1.9" -- predict --static-graph --pytorch 1.8
expect 2 "bucket_cap_mb_list needs PyTorch 2.11" -- buckets --bucket-cap-mb-list 10,25 --pytorch 2.10
expect 2 "gradient_as_bucket_view needs PyTorch 1.7" -- predict --gradient-as-bucket-view --pytorch 1.6
expect 2 "bf16_compress_hook needs PyTorch 1.10" -- predict --comm-hook bf16 --pytorch 1.9
expect 2 "--bucket-cap-mb-list" -- buckets --bucket-cap-mb-list 10,,25
expect 2 "DataParallel has no Reducer" -- predict --framework dp --static-graph
# broadcast_buffers (PyTorch's default): resnet50's 212,904 bytes of BatchNorm buffers, from rank 0, before forward.
"$ddpsim" predict --model resnet50 --nodes 2 --json >"$tmp/bb.json"
"$ddpsim" predict --model resnet50 --nodes 2 --json --no-broadcast-buffers >"$tmp/nb.json"
jnum() { grep "\"$1\":" "$2" | head -1 | tr -d ' \t,' | cut -d: -f2; }
check "broadcast_buffers costs the iteration exactly its broadcast; --no-broadcast-buffers removes it" \
  awk -v a="$(jnum iteration_s "$tmp/bb.json")" -v b="$(jnum iteration_s "$tmp/nb.json")" \
      -v x="$(jnum buffer_broadcast_s "$tmp/bb.json")" -v y="$(jnum buffer_broadcast_s "$tmp/nb.json")" \
      'BEGIN { d = a - b - x; exit !(x > 0 && y == 0 && d < 1e-9 && d > -1e-9) }'
"$ddpsim" plan --model resnet50 --nodes 2 >"$tmp/bp.txt"
check "plan says the buffer broadcast" grep -q "^buffer broadcast .* s before every forward" "$tmp/bp.txt"

# genmodel -o writes atomically: a failure leaves no file behind.
"$ddpsim" genmodel mlstm --hidden 64 -o "$tmp/nodir/x.model" 2>/dev/null
check "genmodel into a missing directory fails with exit 1" test $? -eq 1
check "... and leaves nothing behind" test ! -e "$tmp/nodir/x.model"

# Written files honour the umask, keep an existing file's mode, write through a symbolic link, and
# a directory as the target is refused.
(umask 022 && "$ddpsim" genmodel mlstm --hidden 64 -o "$tmp/m022.model")
check "genmodel -o under umask 022 makes a 0644 file" test "$(stat -c %a "$tmp/m022.model")" = 644
(umask 077 && "$ddpsim" genmodel mlstm --hidden 64 -o "$tmp/m077.model")
check "genmodel -o under umask 077 makes a 0600 file" test "$(stat -c %a "$tmp/m077.model")" = 600
chmod 640 "$tmp/m022.model"
"$ddpsim" genmodel mlstm --hidden 32 -o "$tmp/m022.model"
check "rewriting a 0640 file keeps 0640" test "$(stat -c %a "$tmp/m022.model")" = 640
ln -s m077.model "$tmp/link.model"
"$ddpsim" genmodel mlstm --hidden 48 -o "$tmp/link.model"
check "-o through a symbolic link rewrites its target and keeps the link" \
  test -L "$tmp/link.model" -a -n "$(grep 'hidden 48\|mlstm-48' "$tmp/m077.model")"
ln -s nowhere/x.model "$tmp/dangling.model"
"$ddpsim" genmodel mlstm --hidden 48 -o "$tmp/dangling.model" 2>"$tmp/err"
check "-o to a dangling link fails with exit 1 and says so" test $? -eq 1 -a -n "$(grep 'symbolic link' "$tmp/err")"
"$ddpsim" genmodel mlstm --hidden 48 -o "$tmp" 2>"$tmp/err"
check "-o to a directory fails with exit 1" test $? -eq 1 -a -n "$(grep 'is a directory' "$tmp/err")"
check "no temporary file is left beside the outputs" test -z "$(ls "$tmp" | grep '\.tmp\.')"

# SimGrid (and ns-3) only where events are played (sim/events.h): the loader's record of what it
# loaded (glibc's LD_DEBUG=files) names libsimgrid for FSDP's events, never for --help, plan or a
# prediction in closed form.
loaded() { LD_DEBUG=files "$ddpsim" "$@" 2>&1 >/dev/null | grep -c 'file=libsimgrid.*needed by' || true; }
check "ddpsim --help loads no SimGrid" test "$(loaded --help)" = 0
check "ddpsim plan loads no SimGrid" test "$(loaded plan --nodes 2)" = 0
check "a closed-form predict (with its interval, its 1-GPU twin) loads no SimGrid" test "$(loaded predict --nodes 4)" = 0
check "FSDP's events load SimGrid, once" test "$(loaded predict --framework fsdp --model bert-large --nodes 2)" = 1

finish
