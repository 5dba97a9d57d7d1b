#!/usr/bin/env bash
# The ddpcalib front end: help exits 0, every usage error exits 2, every runtime error exits 1 with
# a message, and a real CPU calibration (mpirun -np 2, MPI backend) writes a profile that
# validates and merges. One line per check; exits 1 if any check fails.
# Usage: test_cli.sh DDPCALIB WORKDIR PART
#   PART errors: help and every error path that starts no MPI process (run under LeakSanitizer);
#   PART mpi:    everything that runs MPI (comm under mpirun, then validate and merge its output).
set -u
calib=$1
work=$2
part=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
mpirun=(mpirun -np 2 --oversubscribe)
passed=0 failed=0

ok() { echo "ok   $1"; passed=$((passed + 1)); }
bad() { echo "FAIL $1"; failed=$((failed + 1)); }

# expect CODE PATTERN DESCRIPTION -- command...: exit code CODE and PATTERN (grep -E, may be empty)
# somewhere in stdout+stderr.
expect() {
  local code=$1 pattern=$2 what=$3
  shift 4
  "$@" >out.txt 2>&1
  local rc=$?
  if [[ $rc -ne $code ]]; then
    bad "$what: exit $rc, want $code"; sed 's/^/     | /' out.txt | head -8
    [[ $(wc -l <out.txt) -le 8 ]] || { echo "     | ..."; tail -n 3 out.txt | sed 's/^/     | /'; }
    return
  fi
  if [[ -n $pattern ]] && ! grep -Eq -- "$pattern" out.txt; then
    bad "$what: output lacks /$pattern/"; sed 's/^/     | /' out.txt | head -8; return
  fi
  ok "$what (exit $code)"
}

if [[ $part == errors ]]; then
# ---- help
expect 0 "usage: ddpcalib COMMAND" "--help" -- "$calib" --help
for c in comm compute h2d host merge validate train; do
  expect 0 "usage:" "$c --help" -- "$calib" $c --help
done

# ---- usage errors: exit 2
expect 2 "usage" "no command" -- "$calib"
expect 2 "unknown command" "unknown command" -- "$calib" frobnicate
expect 2 "--backend" "comm without --backend" -- "$calib" comm -b 8 -e 64
expect 2 "--backend must be mpi or nccl" "comm --backend bogus" -- "$calib" comm --backend bogus
expect 2 "-b" "comm -b 0" -- "$calib" comm --backend mpi -b 0
expect 2 "minbytes \\(-b\\) must be a size in bytes > 0, with an optional K, M or G suffix" "comm -b 12X" -- "$calib" comm --backend mpi -b 12X
expect 2 "minbytes \\(-b\\) must be a size.*got '12KB'" "comm -b 12KB" -- "$calib" comm --backend mpi -b 12KB
expect 2 "maxbytes \\(-e\\) must be a size in bytes > 0.*got '-5'" "comm -e -5" -- "$calib" comm --backend mpi -e -5
expect 2 "below min" "comm -e < -b" -- "$calib" comm --backend mpi -b 1M -e 1K
expect 2 "-f" "comm -f 1" -- "$calib" comm --backend mpi -b 8 -e 64 -f 1
expect 2 "-f" "comm -f abc" -- "$calib" comm --backend mpi -f abc
expect 2 "-n" "comm -n 0" -- "$calib" comm --backend mpi -n 0
expect 2 "-w" "comm -w x" -- "$calib" comm --backend mpi -w x
expect 2 "-g applies" "comm -g with mpi" -- "$calib" comm --backend mpi -g 2
expect 2 "unknown option '--frob'" "comm unknown long flag" -- "$calib" comm --backend mpi --frob
expect 2 "unknown option '-z'" "comm unknown short flag" -- "$calib" comm --backend mpi -z
expect 2 "needs a value" "comm flag without value" -- "$calib" comm --backend mpi -o
expect 2 "plain name" "comm --link-class with a dot" -- "$calib" comm --backend mpi --link-class a.b
expect 2 "--regimes" "comm --regimes 9" -- "$calib" comm --backend mpi --regimes 9
expect 2 "--nccl-tuning applies to --backend nccl only" "comm --nccl-tuning with --backend mpi" -- \
  "$calib" comm --backend mpi --nccl-tuning -b 8 -e 64
expect 0 "--nccl-tuning" "comm --help names --nccl-tuning" -- "$calib" comm --help
expect 2 "unexpected argument" "comm stray argument" -- "$calib" comm --backend mpi stray
expect 2 "two input" "merge with one input" -- "$calib" merge a.json -o c.json
expect 2 "-o" "merge without -o" -- "$calib" merge a.json b.json
expect 2 "unknown option '--frob'" "merge unknown flag" -- "$calib" merge --frob a b -o c
expect 2 "one profile" "validate without a file" -- "$calib" validate
expect 2 "--backend" "compute without --backend" -- "$calib" compute
expect 2 "--backend must be cpu or cuda" "compute --backend gpu" -- "$calib" compute --backend gpu
expect 2 "fp16 needs" "compute fp16 on cpu" -- "$calib" compute --backend cpu --precision fp16
expect 2 "--precision must be fp32, fp16 or bf16" "compute --precision fp8" -- "$calib" compute --backend cpu --precision fp8
expect 2 "--precision bf16 needs --backend cuda" "compute --precision bf16 on cpu" -- "$calib" compute --backend cpu --precision bf16
expect 2 "--tf32 needs --backend cuda and --precision fp32" "compute --tf32 on cpu" -- "$calib" compute --backend cpu --tf32
expect 2 "--tf32 needs --backend cuda and --precision fp32" "compute --tf32 in fp16" -- "$calib" compute --backend cuda --precision fp16 --tf32
expect 2 "--hidden" "compute --hidden 0" -- "$calib" compute --backend cpu --hidden 0
expect 2 "--hidden" "compute --hidden 64,,128" -- "$calib" compute --backend cpu --hidden 64,,128
expect 2 "--batch" "compute --batch x" -- "$calib" compute --backend cpu --batch x
expect 2 "--seq" "compute --seq 0" -- "$calib" compute --backend cpu --seq 0
expect 2 "--gemm-max" "compute --gemm-max 8" -- "$calib" compute --backend cpu --gemm-max 8
expect 2 "unknown option '--frob'" "compute unknown flag" -- "$calib" compute --backend cpu --frob
# ---- host: a stand-in helper gives known numbers, a failing one exit 1, a malformed one exit 1
printf '%s\n' 'import sys, json' \
  'print(json.dumps({"framework":"torch 0.0-test","device":"cpu","ops":100,"dispatch_s":2.5e-6,"jitter_s":3e-5,"reduce_Bps":4e9,"workload_s":[2.4e-4,2.6e-4]}))' >fake_host.py
expect 0 "dispatch per op +2\.500" "host with a stand-in helper" -- "$calib" host --helper fake_host.py -o host.json
if python3 -c 'import json,sys; h=json.load(open("host.json"))["compute"]["host"]; sys.exit(not (h["dispatch_s"]==2.5e-6 and h["jitter_s"]==3e-5 and h["reduce_Bps"]==4e9 and h["framework"]=="torch 0.0-test"))'; then
  ok "host writes compute.host.dispatch_s, jitter_s and the framework's version"
else bad "host.json lacks the helper's numbers"; fi
printf 'import sys\nsys.exit(3)\n' >fail_host.py
expect 1 "host helper failed \(exit status 3\)" "host: the helper fails" -- "$calib" host --helper fail_host.py
printf 'print("{\\"framework\\": \\"x\\", \\"device\\": \\"cpu\\", \\"ops\\": 1, \\"jitter_s\\": 0, \\"reduce_Bps\\": 1e9}")\n' >bad_host.py
expect 1 '"dispatch_s" is missing' "host: the helper's output lacks dispatch_s" -- "$calib" host --helper bad_host.py
expect 2 "--ops" "host --ops 0" -- "$calib" host --ops 0
expect 2 "cpu or cuda" "host --device tpu" -- "$calib" host --device tpu
expect 2 "needs a GPU" "h2d --backend cpu" -- "$calib" h2d --backend cpu
expect 2 "--backend" "h2d without --backend" -- "$calib" h2d
expect 2 "-f" "h2d -f 0.5" -- "$calib" h2d --backend cuda -f 0.5
expect 0 "--accept-poor-fit" "comm --help lists --accept-poor-fit" -- "$calib" comm --help
expect 0 "--accept-poor-fit" "compute --help lists --accept-poor-fit" -- "$calib" compute --help

# ---- runtime errors: exit 1 with `file: what is wrong`
expect 1 "nope.json: cannot read" "validate a missing file" -- "$calib" validate nope.json
printf '{"format": "ddpsim-profile",\n "version": 1,\n "name": oops}\n' >malformed.json
expect 1 "malformed.json:3: not valid JSON" "validate malformed JSON (line named)" -- "$calib" validate malformed.json
: >empty.json
expect 1 "empty.json: empty file" "validate an empty file" -- "$calib" validate empty.json
printf '{"format": "ddpsim-profile", "version": 2, "name": "x", "provenance": {}}\n' >v2.json
expect 1 "v2.json: unsupported profile version 2" "validate a wrong version" -- "$calib" validate v2.json
printf '{"format": "other", "version": 1}\n' >fmt.json
expect 1 "fmt.json: not a ddpsim profile" "validate a wrong format" -- "$calib" validate fmt.json
printf '{"format":"ddpsim-profile","version":1,"name":"x","provenance":{},"comm":{"links":{"shm":{"lat_s":-1,"bw_Bps":1e9}}}}\n' >neg.json
expect 1 "neg.json: comm.links.shm.lat_s must be a time in seconds from 1e-09 to 10 \\(or 0\\), got -1" \
  "validate a negative latency (path named)" -- "$calib" validate --part neg.json
expect 1 ".: cannot read: Is a directory" "validate a directory" -- "$calib" validate .
printf '{"format":"ddpsim-profile","version":1,"name":"x","provenance":{},"comm":{"links":{},"nccl":{"tree":{"LL128":{"base_lat_s":1e-6,"bw_factor":1.2}}}}}\n' >bwf.json
expect 1 "bwf.json: comm.nccl.tree.LL128.bw_factor must be a fraction from 0.001 to 1, got 1.2" \
  "validate comm.nccl bw_factor > 1 (path named)" -- "$calib" validate --part bwf.json
printf '{"format":"ddpsim-profile","version":1,"name":"x","provenance":{},"comm":{"links":{"nvlink":{"lat_s":1e-6,"bw_Bps":1e9,"hop_lat_s":{"ring":{"LL64":1e-6}}}}}}\n' >hop.json
expect 1 "hop.json: comm.links.nvlink.hop_lat_s.ring.LL64: unknown protocol" "validate hop_lat_s with an unknown protocol" -- \
  "$calib" validate --part hop.json
# One schema with ddpsim's loader (sim/profile.c): what ddpsim refuses, validate refuses.
G='{"model":"roofline","launch_s":2.5e-6,"peak_flops":1.57e13,"efficiency":0.63,"mem_bw_Bps":9e11}'
E='{"model":"roofline","launch_s":2.5e-6,"mem_bw_Bps":9e11}'
whole() { # LINKS [EXTRA]: a whole profile with fp32 compute, these comm.links and extra top-level members
  printf '{"format":"ddpsim-profile","version":1,"name":"x","provenance":{},"compute":{"fp32":{"gemm":%s,"ewise":%s}},"comm":{"links":%s}%s}\n' \
    "$G" "$E" "$1" "${2:-}"
}
whole '{"nvlink":{"lat_s":3.4e-6,"efficiency":0.8}}' >good.json
expect 0 "good.json: ok \(a whole profile\): compute fp32, no fp16, no bf16; links nvlink" "validate a whole profile: says what it holds" -- \
  "$calib" validate good.json
expect 1 "good.json: no gemm cost model for fp16" "validate --precision fp16 without compute.fp16" -- \
  "$calib" validate --precision fp32,fp16 good.json
expect 1 "no comm.links entry for link class 'ib-edr'" "validate --links naming a class the profile lacks" -- \
  "$calib" validate --links nvlink,ib-edr good.json
expect 0 "good.json: ok" "validate --precision fp32 --links nvlink" -- "$calib" validate --precision fp32 --links nvlink good.json
expect 2 "--precision" "validate --precision fp64" -- "$calib" validate --precision fp64 good.json
whole '{"nvlink":{"lat_s":3.4e-6,"bw_Bps":2e10,"efficiency":2.0}}' >eff2.json
expect 1 "eff2.json: comm.links.nvlink.efficiency must be a fraction from 0.001 to 1, got 2" \
  "validate efficiency 2.0 beside a bw_Bps" -- "$calib" validate eff2.json
whole '{}' >nolinks.json
expect 1 "nolinks.json: \"comm.links\" is empty" "validate a whole profile with empty links" -- "$calib" validate nolinks.json
expect 0 "nolinks.json: ok \(a part\)" "validate --part accepts it (a half for merge)" -- "$calib" validate --part nolinks.json
whole '{"nvlink":{"lat_s":1e-300,"bw_Bps":2e10}}' >tiny.json
expect 1 "tiny.json: comm.links.nvlink.lat_s must be a time in seconds from 1e-09 to 10 \(or 0\), got 1e-300" \
  "validate a latency of 1e-300" -- "$calib" validate tiny.json
whole '{"nvlink":{"lat_s":1e-6,"bw_Bps":1e308}}' >huge.json
expect 1 "huge.json: comm.links.nvlink.bw_Bps must be a bandwidth in bytes/s from 1000 to 1e\+15, got 1e\+308" \
  "validate a bandwidth of 1e308" -- "$calib" validate huge.json
whole '{"nvlink":{"lat_s":1e-6,"lat_s":2e-6,"bw_Bps":2e10}}' >dup.json
expect 1 "dup.json: comm.links.nvlink: \"lat_s\" is given twice" "validate a duplicate key (path named)" -- "$calib" validate dup.json
(cat good.json; echo '{"more": 1}') >trail.json
expect 1 "trail.json:2: data after the end of the JSON document" "validate trailing data after the JSON" -- \
  "$calib" validate trail.json
whole '{"nvlink":{"lat_s":1e-6,"bw_Bps":2e10}}' ',"samples":{"x":{"ratios":[1e999]}}' >inf.json
expect 1 "inf.json: samples.x.ratios\[0\]: number out of range" "validate 1e999 in a free-form section" -- \
  "$calib" validate inf.json
expect 1 "inf.json: samples.x.ratios\[0\]: number out of range" "merge refuses 1e999 (never writes null)" -- \
  "$calib" merge good.json inf.json -o m.json
[[ -e m.json ]] && bad "merge wrote m.json from a refused input" || ok "merge wrote nothing from a refused input"
expect 1 "dup.json: comm.links.nvlink: \"lat_s\" is given twice" "merge refuses a duplicate key" -- \
  "$calib" merge good.json dup.json -o m.json

# merge says what it took from each side; compute.jitter only with the compute it was measured with.
whole '{"nvlink":{"lat_s":3.4e-6,"efficiency":0.8}}' \
  ',"h2d":{"pinned_sync":{"lat_s":1e-5,"bw_Bps":1.2e10}}' | sed 's/"fp32":{/"fp16":{"gemm":'"$G"',"ewise":'"$E"'},&/' >gpu.json
printf '{"format":"ddpsim-profile","version":1,"name":"cpu","provenance":{},"compute":{"fp32":{"gemm":%s,"ewise":%s},"jitter":{"model":"empirical","ratios":[0.77,1.23]}},"comm":{"links":{}}}\n' \
  "$G" "$E" >cpu.json
expect 0 "from gpu.json: compute.fp16.gemm, compute.fp16.ewise, comm.links.nvlink, h2d.pinned_sync$" \
  "merge: stderr names what came from the first file" -- "$calib" merge gpu.json cpu.json -o gc.json
grep -q "from cpu.json: name, compute.fp32.gemm, compute.fp32.ewise" out.txt && ok "merge: stderr names what came from the second file" \
  || { bad "merge: the second file's parts not named"; sed 's/^/     | /' out.txt; }
grep -q "compute.jitter of cpu.json left out: .* compute.fp16.gemm comes from gpu.json" out.txt \
  && ok "merge: jitter measured with another machine's compute is left out, and merge says so" \
  || { bad "merge: jitter not reported as left out"; sed 's/^/     | /' out.txt; }
grep -q '"jitter":[[:space:]]*{' gc.json && bad "merge: compute.jitter written though fp16 comes from gpu.json" \
  || ok "merge: no compute.jitter in the result"
sed 's/"provenance":{}/&,"uncertainty":{}/' cpu.json >cpu-u.json
expect 0 "from cpu-u.json: name" "merge of two files with an empty uncertainty object" -- "$calib" merge gpu.json cpu-u.json -o gcu.json
grep -q "uncertainty" out.txt && { bad "merge: an empty uncertainty object named as a part taken"; sed 's/^/     | /' out.txt; } \
  || ok "merge: an empty uncertainty object is no part taken from either file"
expect 0 "compute.jitter from cpu.json \(--jitter second\)" "merge --jitter second keeps it, said" -- \
  "$calib" merge gpu.json cpu.json --jitter second -o gc2.json
grep -q '"ratios"' gc2.json && ok "merge --jitter second: compute.jitter written" || bad "merge --jitter second: jitter missing"
whole '{"nvlink":{"lat_s":3.4e-6,"efficiency":0.8}}' >gpu32.json
expect 0 "compute.jitter from cpu.json, which also gave all the merge's compute" \
  "merge: jitter kept when its file gave all the compute" -- "$calib" merge gpu32.json cpu.json -o gc3.json
expect 0 "left out \(--jitter none\)" "merge --jitter none" -- "$calib" merge gpu32.json cpu.json --jitter none -o gc4.json
expect 2 "--jitter" "merge --jitter sometimes" -- "$calib" merge gpu32.json cpu.json --jitter sometimes -o gc4.json
# Two fp32 GEMM tables of one card at the two maths (compute with and without --tf32): the merge keeps
# the later's as gemm and the earlier's beside it as gemm_<its math> (docs/calib.md, "merge"); a later
# merge over a TF32 gemm swaps them, and the older twin of the new gemm's math goes.
sed 's/"gemm":{/"gemm":{"math":"strict",/' cpu.json >strict.json
sed 's/"gemm":{/"gemm":{"math":"tf32",/; s/"name":"cpu"/"name":"tf32"/' cpu.json >tf32.json
expect 0 "from tf32.json: compute.fp32.gemm_tf32" "merge of a TF32 and a strict compute: the TF32 table kept, said" -- \
  "$calib" merge tf32.json strict.json -o both.json
python3 -c '
import json, sys
f = json.load(open(sys.argv[1]))["compute"]["fp32"]
assert f["gemm"]["math"] == "strict" and f["gemm_tf32"]["math"] == "tf32" and "gemm_strict" not in f, f' both.json &&
  "$calib" validate --part both.json >/dev/null && ok "merge: gemm strict and gemm_tf32 beside it, a profile that validates (a part)" ||
  bad "merge: the two maths' tables not kept side by side"
expect 0 "" "merge of that over a TF32 compute" -- "$calib" merge both.json tf32.json -o swap.json
python3 -c '
import json, sys
f = json.load(open(sys.argv[1]))["compute"]["fp32"]
assert f["gemm"]["math"] == "tf32" and f["gemm_strict"]["math"] == "strict" and "gemm_tf32" not in f, f' swap.json &&
  ok "merge: the later TF32 gemm wins, the strict one stays as gemm_strict, the older gemm_tf32 goes" ||
  bad "merge: the tables' maths not swapped"
# An uncertainty entry follows its number: cpu.json replaces compute.fp32.gemm, so gpu.json's entry
# for it goes; the fp16 one stays (docs/calib.md, "merge").
u='"uncertainty":{"compute.fp32.gemm.efficiency":{"rel_sd":0.1,"origin":"sourced"},"compute.fp16.gemm.efficiency":{"rel_sd":0.2,"origin":"sourced"}}'
sed 's/}$/,'"$u"'}/' gpu.json >gpu-u.json
expect 0 "" "merge a profile with uncertainty" -- "$calib" merge gpu-u.json cpu.json -o gcu.json
grep -q '"compute.fp16.gemm.efficiency"' gcu.json && ! grep -q '"compute.fp32.gemm.efficiency"' gcu.json &&
  ok "merge: the uncertainty of a replaced number is dropped, the other kept" || bad "merge: uncertainty entries not following their numbers"
# The device is one unit: a later file's card replaces the earlier's whole (a GPU's SM count never
# stays beside a CPU's name and memory), and the replacement is listed.
whole '{"nvlink":{"lat_s":3.4e-6,"efficiency":0.8}}' \
  ',"device":{"name":"Tesla V100-SXM2-16GB","memory_bytes":17179869184,"sm_count":80,"hbm_Bps":9e11,"tdp_W":300,"idle_W":40,"source":"s"}' >gdev.json
whole '{"nvlink":{"lat_s":3.4e-6,"efficiency":0.8}}' ',"device":{"name":"cpu","memory_bytes":8589934592,"source":"c"}' >cdev.json
expect 0 "from cdev.json: .*, device$" "merge two cards: the device taken whole from the second" -- "$calib" merge gdev.json cdev.json -o gcdev.json
python3 -c 'import json,sys; m=json.load(open("gcdev.json")); sys.exit(not (m["device"] == json.load(open("cdev.json"))["device"] and "device from cdev.json" in m["provenance"]["replaced"]))' \
  && ok "merge: the device is the second's exactly, recorded as replaced" || bad "merge: the device mixed two cards' figures"
whole '{"nvlink":{"lat_s":3.4e-6,"efficiency":0.8}}' >nodev.json
expect 0 "" "merge a card with a profile without one" -- "$calib" merge gdev.json nodev.json -o gnodev.json
python3 -c 'import json,sys; sys.exit(json.load(open("gnodev.json"))["device"] != json.load(open("gdev.json"))["device"])' \
  && ok "merge: the only device is kept whole" || bad "merge: the only device was not kept"
expect 1 "nope.json: cannot read" "merge a missing file" -- "$calib" merge nope.json v2.json -o m.json
expect 1 "malformed.json:3" "merge a malformed file" -- "$calib" merge malformed.json neg.json -o m.json

fi

if [[ $part == mpi ]]; then
expect 2 "" "comm usage error under mpirun" -- "${mpirun[@]}" "$calib" comm --backend mpi -n 0
expect 1 "2" "comm with one process (no ring)" -- "$calib" comm --backend mpi -b 8 -e 64
# --nccl-tuning without a GPU (it opens MPI, hence this part): a runtime failure with a message,
# never a usage error. Where GPUs are, test_gpu.sh runs it for real instead.
if ! nvidia-smi -L 2>/dev/null | grep -q GPU; then
  expect 1 "no CUDA device|built without CUDA" "comm --backend nccl --nccl-tuning without a GPU" -- \
    "$calib" comm --backend nccl --nccl-tuning -g 2 -b 8 -e 64K -n 2 -w 1 -o tuning.json
  [[ -e tuning.json ]] && bad "comm --nccl-tuning without a GPU wrote a profile" || ok "comm --nccl-tuning without a GPU wrote nothing"
fi

# ---- a real CPU calibration: MPI all-reduce between 2 processes. What is checked here is the
# sweep's table and the profile it writes, not the fit's quality (tests/calib/test_fit.c has the
# gate): --accept-poor-fit keeps a fit that a busy machine made noisy, where a refusal would fail
# the test for the machine's load (docs/testing.md, "A busy machine").
expect 0 "# Avg bus bandwidth" "comm: mpirun -np 2 sweep 8 B..1 MiB with -c" -- \
  "${mpirun[@]}" "$calib" comm --backend mpi -b 8 -e 1M -f 4 -n 5 -w 2 -c --accept-poor-fit -o comm.json
cp out.txt comm.out
if grep -Eq '^ +[0-9]+ +[0-9]+ +float +sum +[0-9.]+ +[0-9.]+ +[0-9.]+ +0$' comm.out; then
  ok "comm: data rows have size count type redop time algbw busbw #wrong=0"
else
  bad "comm: no well-formed data row"; sed 's/^/     | /' comm.out | head -20
fi
nrows=$(grep -Ec '^ +[0-9]' comm.out)
[[ $nrows -eq 9 ]] && ok "comm: one row per size (9 sizes: 8, 32, ... 512 KiB)" || bad "comm: $nrows rows, want 9"
if grep -v '^#' comm.out | grep -Ev '^ +[0-9]' | grep -q .; then
  bad "comm: a non-data line lacks '#'"; grep -v '^#' comm.out | grep -Ev '^ +[0-9]' | head -3
else
  ok "comm: every non-data line starts with '#'"
fi
grep -q '(B) *(elements) *(us) *(GB/s) *(GB/s)' comm.out && ok "comm: units row" || bad "comm: units row missing"
# busbw = algbw * 2(n-1)/n = algbw for n = 2
awk '/^ +[0-9]/ { if ($6 != $7) exit 1 }' comm.out && ok "comm: busbw = algbw * 2(n-1)/n (n=2)" || bad "comm: busbw != algbw at n=2"
expect 0 "comm.json: ok \\(a part\\)" "comm: the written profile validates as a part" -- "$calib" validate --part comm.json
expect 1 "comm.json: \"compute\" has none of" "comm: the written part is not a whole profile" -- "$calib" validate comm.json
grep -q '"shm":' comm.json && ok "comm: default link class on one host is shm" || bad "comm: no comm.links.shm"
for key in lat_s bw_Bps regimes rms_rel_resid times_s command date host libraries; do
  grep -q "\"$key\":" comm.json && ok "comm: profile has $key" || bad "comm: profile lacks $key"
done
ls comm.json.tmp.* >/dev/null 2>&1 && bad "comm: a temporary file was left behind" || ok "comm: no temporary file left"
# The fit's measured uncertainty (docs/calib.md): bandwidth and latency, each with a rel_sd > 0.
for f in bw_Bps lat_s; do
  awk -v k="\"comm.links.shm.$f\":" 'index($0, k) { f = 1 } f && /"rel_sd":/ { gsub(/[^0-9.e+-]/, "", $2); sd = $2 } f && /"origin":[ \t]*"measured"/ { o = 1 } f && /}/ { r = sd > 0 && sd <= 2 && o; f = 0; seen = 1 } END { exit !(seen && r) }' comm.json &&
    ok "comm: uncertainty of comm.links.shm.$f, measured, rel_sd in (0, 2]" || bad "comm: no measured uncertainty for comm.links.shm.$f"
done

# --topology: the ring over 2 ranks of a node whose GPUs drive 2 links each spans 2 links, so the
# profile's bw_Bps (one link's) is the ring's bandwidth / 2, and says so.
printf 'ddpsim-topology 1\nname box2\ngpus_per_node 2\nintra shm links=2 bw=10GBps\nnic none\n' >box2.topo
expect 0 "spans 2 shm link" "comm --topology: the ring spans the topology's links" -- \
  "${mpirun[@]}" "$calib" comm --backend mpi -b 64K -e 1M -f 4 -n 3 -w 1 --topology box2.topo --accept-poor-fit -o span.json
ring=$(grep -o '"ring_bw_Bps":[^,]*' span.json | cut -d: -f2) per=$(grep -o '"bw_Bps":[^,]*' span.json | head -1 | cut -d: -f2)
units=$(grep -o '"link_units":[^,]*' span.json | cut -d: -f2)
awk -v r="$ring" -v p="$per" -v u="$units" 'BEGIN { exit !(u == 2 && r > 0 && (p * 2 - r) ^ 2 < (1e-9 * r) ^ 2) }' &&
  ok "comm --topology: bw_Bps $per = ring_bw_Bps $ring / link_units $units" || bad "comm --topology: bw_Bps $per, ring $ring, units $units"
grep -q "over the 2 links" span.json && ok "comm --topology: the source says what was divided" || bad "comm --topology: source silent"
expect 2 "topology's 'shm'" "comm --topology with another --link-class" -- \
  "${mpirun[@]}" "$calib" comm --backend mpi -b 8 -e 64 --topology box2.topo --link-class nvlink
expect 2 "unknown topology 'nosuch'" "comm --topology naming nothing" -- \
  "${mpirun[@]}" "$calib" comm --backend mpi -b 8 -e 64 --topology nosuch

mkdir -p adir
expect 1 "adir: is a directory" "comm: -o naming a directory is refused before measuring" -- \
  "${mpirun[@]}" "$calib" comm --backend mpi -b 8 -e 64K -f 8 -n 3 -w 1 -o adir
ls adir.tmp.* >/dev/null 2>&1 && bad "comm: failed write left a temporary file" || ok "comm: failed write cleaned up"
expect 1 "cannot create a file there" "comm: -o into a missing directory" -- \
  "${mpirun[@]}" "$calib" comm --backend mpi -b 8 -e 64K -f 8 -n 3 -w 1 -o no/such/dir/p.json

expect 0 "" "comm: a second link class (--link-class net-test)" -- \
  "${mpirun[@]}" "$calib" comm --backend mpi -b 1K -e 256K -f 4 -n 3 -w 1 --link-class net-test --accept-poor-fit -o comm2.json

# ---- compute at a tiny size (CPU kernels, CBLAS), then merged with comm
expect 0 "wrote compute.json" "compute --backend cpu at H=32, B=2, T=3" -- \
  "$calib" compute --backend cpu --hidden 32 --batch 2 --seq 3 -n 3 -w 1 --gemm-max 64 --accept-poor-fit -o compute.json
cp out.txt compute.out
for op in prepare fwd_step decoder_fwd decoder_bwd bwd_step wgrad embed_grad iteration hh_m d_w_hh grid copy; do
  grep -q "^$op " compute.out && ok "compute: timed $op" || bad "compute: $op missing"
done
grep -Eq '^fwd_step +32 +2 +3 .* 9 ' compute.out && ok "compute: fwd_step keeps one sample per step (3 steps x 3 runs)" \
  || bad "compute: fwd_step sample count"
expect 0 "compute.json: ok \\(a part\\)" "compute: the written profile validates as a part" -- "$calib" validate --part compute.json
expect 1 "compute.json: \"comm.links\" is empty" "compute: the written part is not a whole profile" -- "$calib" validate compute.json
grep -q '"model":.*"table"' compute.json && grep -q '"fallback"' compute.json && ok "compute: table with fallback" \
  || bad "compute: no table model"
# Copies past the last-level cache (calib/computebench.h, COMPUTEBENCH_COPY_MAX_BYTES): the ewise
# table's largest point is a 256 MiB copy (2 x 256 MiB moved), larger than this CPU's largest cache.
if python3 - compute.json <<'EOP'
import glob, json, sys
e = json.load(open(sys.argv[1]))["compute"]["fp32"]["ewise"]
top = max(p["bytes"] for p in e["points"])
unit = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
llc = max([int(s[:-1]) * unit[s[-1]] if s[-1] in unit else int(s)
           for s in (open(f).read().strip() for f in glob.glob("/sys/devices/system/cpu/cpu0/cache/index*/size"))] or [0])
print("     largest copy point %d bytes moved; largest cache %d bytes" % (top, llc))
sys.exit(not (top == 2 * 256 * 2**20 and e["max_bytes"] == top and top / 2 > llc))
EOP
then ok "compute: copies run to 256 MiB, past the last-level cache"; else bad "compute: the largest copy is not 256 MiB past the cache"; fi
# The device by the name an exporter's --time writes (docs/profile.md, device.name): the CPU's model name.
cpu=$(grep -m1 '^model name' /proc/cpuinfo | sed 's/^[^:]*: *//')
python3 -c 'import json,sys; sys.exit(json.load(open("compute.json"))["device"]["name"] != sys.argv[1])' "${cpu:-cpu}" \
  && ok "compute: device.name is this CPU's model name (${cpu:-cpu})" || bad "compute: device.name is not '${cpu:-cpu}'"
# The card's memory as the host reports it (calib/devinfo.h): /proc/meminfo's MemTotal within a page;
# no SMs or memory bandwidth on a CPU (ddpsim's GPU-sharing model stays off), each field's call named.
if python3 - compute.json "$(getconf PAGESIZE)" <<'EOP'
import json, sys
d = json.load(open(sys.argv[1]))["device"]
kb = [int(l.split()[1]) for l in open("/proc/meminfo") if l.startswith("MemTotal:")][0]
print("     memory_bytes %s, MemTotal %d bytes" % (d.get("memory_bytes"), kb * 1024))
sys.exit(not (abs(d["memory_bytes"] - kb * 1024) <= int(sys.argv[2]) and "sm_count" not in d and "hbm_Bps" not in d
              and "sysconf(_SC_PHYS_PAGES)" in d["source"]))
EOP
then ok "compute: device.memory_bytes is MemTotal within a page; no sm_count, hbm_Bps; source names sysconf"
else bad "compute: device figures"; fi
expect 0 "merged" "merge compute.json comm.json" -- "$calib" merge compute.json comm.json -o both.json
expect 0 "both.json: ok" "merge: compute + comm validates" -- "$calib" validate both.json
grep -q '"fp32":' both.json && grep -q '"shm":' both.json && ok "merge: has compute.fp32 and comm.links.shm" \
  || bad "merge: lost a section"

# ---- compute --model: the model's own GEMM and conv (implicit GEMM) shapes are timed and recorded
cat > tiny.model <<'EOM'
ddpsim-model 3
name tiny
batch 2
tokens 1 images
precision fp32
param conv.weight 8x3x3x3
param fc.weight 10x512
forward
conv conv pass=fwd n=B c=3 h=8 w=8 k=8 r=3 s=3 pad=1
gemm fc m=10 n=B k=512
backward
gemm fc.wgrad m=10 n=512 k=B ready=fc.weight
conv conv.wgrad pass=wgrad n=B c=3 h=8 w=8 k=8 r=3 s=3 pad=1 ready=conv.weight
optimizer
ewise sgd elems=1096 arrays=5
EOM
expect 0 "4 distinct GEMM shapes at batch 3" "compute --model tiny.model --model-batch 3" -- \
  "$calib" compute --backend cpu --hidden 16 --batch 2 --seq 2 -n 2 -w 1 --gemm-max 64 --model tiny.model \
  --model-batch 3 --accept-poor-fit -o cmodel.json  # what is checked is the shapes: 2 runs on a busy CI may fit poorly
# fwd: m=K=8 n=N*P*Q=3*64=192 k=C*R*S=27; wgrad: m=8 n=27 k=192; fc: 10x3x512, 10x512x3.
for s in "8x192x27" "8x27x192" "10x3x512" "10x512x3"; do
  grep -Eq "^model .* $s " out.txt && ok "compute --model: timed $s" || bad "compute --model: $s not timed"
done
python3 - cmodel.json <<'EOP' && ok "compute --model: the profile records the 4 model shapes" || bad "compute --model: model_shapes"
import json, sys
g = json.load(open(sys.argv[1]))["compute"]["fp32"]["gemm"]
ms = g["model_shapes"]
pts = sorted((p["m"], p["n"], p["k"]) for p in g["points"] if p.get("model") == "tiny")
assert ms["model"] == "tiny" and ms["batch"] == 3 and ms["shapes"] == 4, ms
assert pts == [(8, 27, 192), (8, 192, 27), (10, 3, 512), (10, 512, 3)], pts
EOP
expect 0 "cmodel.json: ok \\(a part\\)" "compute --model: the written part validates" -- "$calib" validate --part cmodel.json
expect 2 "--model-batch needs --model" "compute --model-batch without --model" -- \
  "$calib" compute --backend cpu --model-batch 3
expect 1 "nope.model" "compute --model of a missing file" -- "$calib" compute --backend cpu --model nope.model

# ---- merge
expect 0 "merged" "merge comm.json comm2.json" -- "$calib" merge comm.json comm2.json -o merged.json
expect 0 "merged.json: ok \\(a part\\)" "merge: the result validates" -- "$calib" validate --part merged.json
grep -q '"shm":' merged.json && grep -q '"net-test":' merged.json && ok "merge: both link classes kept" \
  || bad "merge: a link class was lost"
grep -q '"kind":.*"merged"' merged.json && ok "merge: provenance kind merged" || bad "merge: provenance kind"
expect 0 "" "merge a profile with itself" -- "$calib" merge comm.json comm.json -o self.json
expect 0 "" "merge comm2 over comm (conflict on name)" -- "$calib" merge comm2.json comm.json -o m2.json
grep -q '"replaced"' m2.json && ok "merge: conflicts listed in provenance.replaced" || bad "merge: no replaced list"
# ---- gloo's all-reduce (calib/gloo_sweep.py), imported as the tcp link (docs/calib.md)
sweep=$(cd "$(dirname "$0")/../.." && pwd)/calib/gloo_sweep.py
expect 2 "--procs" "gloo_sweep.py --procs 1" -- python3 "$sweep" --procs 1
if python3 -c 'import torch.distributed as d; import sys; sys.exit(not d.is_gloo_available())' 2>/dev/null; then
  expect 0 "" "gloo_sweep.py: 2 processes, 1 KiB .. 16 MiB" -- python3 "$sweep" --procs 2 --max-bytes 16777216 --factor 4 --iters 5 --warmup 1
  cp out.txt gloo.log
  expect 0 "comm.links.tcp" "import the gloo sweep as the tcp link" -- \
    "$calib" import nccl-tests --in-place --accept-poor-fit --link-class tcp -o tcp.json gloo.log
  python3 -c 'import json,sys; l=json.load(open("tcp.json"))["comm"]["links"]["tcp"]; sys.exit(not (l["nranks"]==2 and l["lat_s"]>0 and l["bw_Bps"]>0))' \
    && ok "gloo sweep: a tcp link of 2 ranks with a latency and a bandwidth" || bad "gloo sweep: tcp.json lacks the link"
else
  expect 3 "PyTorch" "gloo_sweep.py without PyTorch's gloo: exit 3" -- python3 "$sweep" --procs 2
fi
fi

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
