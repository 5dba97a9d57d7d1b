#!/usr/bin/env bash
# ddpsim trace: the trace-event format's rules and the content (tests/sim/check_trace.py) for DDP
# with symmetry, a chosen set of ranks, the input pipeline with hooks and no_sync, DataParallel;
# the misuses; and the checker itself failing on broken traces.
set -u
ddpsim=$1
src=$2
. "$(dirname "$0")/lib.sh"
checker="python3 $src/tests/sim/check_trace.py"

nbuckets() { python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['buckets']))" "$1"; }

# scenario NAME MODEL CHECKER-ARGS -- ddpsim options...
scenario() {
  local name=$1 model=$2 extra=$3
  shift 4
  "$ddpsim" trace --format chrome -o "$tmp/$name.json" --model "$model" "$@" >/dev/null 2>"$tmp/err"
  check "$name: trace written" test $? -eq 0 -a -s "$tmp/$name.json"
  "$ddpsim" predict --json --model "$model" "$@" --format chrome --trace "$tmp/$name.again.json" >"$tmp/$name.p.json" 2>/dev/null
  check "$name: predict --trace writes the same trace" cmp -s "$tmp/$name.json" "$tmp/$name.again.json"
  local nb
  nb=$(nbuckets "$tmp/$name.p.json")
  [ "$nb" -gt 0 ] && nb="--buckets $nb" || nb=""
  $checker "$tmp/$name.json" --model "$src/models/$model.model" --predict "$tmp/$name.p.json" $nb $extra >"$tmp/$name.out" 2>&1
  local rc=$?
  sed "s/^/      $name: /" "$tmp/$name.out"
  check "$name: the checker passes" test $rc -eq 0
}

scenario r50 resnet50 "--ranks 16" -- --nodes 8
scenario r50-ranks resnet50 "--ranks 3" -- --nodes 8 --ranks 0,3,63
check "r50-ranks: rank 63 is shown as a copy of its twin, rank 15" \
  grep -q '"labels":"not simulated: a copy of its symmetric twin, rank 15"' "$tmp/r50-ranks.json"
check "r50-ranks: otherData says how ranks not simulated are shown" grep -q '"simulation":"symmetry: the engine simulated 2 of 8 nodes' "$tmp/r50-ranks.json"
scenario pipeline mlstm-4k "" -- --nodes 2 --num-workers 2 --load-ms 50 --prefetch --comm-hook fp16 --precision fp32 \
  --no-sync 2 --iterations 2
for t in "DataLoader worker 1" "H2D copy stream (prefetch)" "NCCL stream" "compute stream"; do
  check "pipeline: a thread named '$t'" grep -q "\"name\":\"$t\"" "$tmp/pipeline.json"
done
check "pipeline: the fp16 hook's casts" grep -q '"name":"compress hook cast, bucket 0"' "$tmp/pipeline.json"
check "pipeline: bucket copies inside backward segments, derived" grep -q '"name":"copy gradients into buckets"' "$tmp/pipeline.json"
scenario jitter resnet50 "--ranks 16" -- --nodes 2 --jitter-cv 0.05
# The host's track (sim/pipe.h): per iteration it issues forward, backward, the optimizer, then waits
# for the GPU, in that order, inside the iteration; what it spends issuing adds up to the report's
# host_busy (no launch queue fills here, so the clock only advances by its work).
scenario host-nccl resnet50 "--ranks 4" -- --nodes 2 --gpus-per-node 2 --host-dispatch-us 20
check "host-nccl: rank 0's host track, in order, inside each iteration, issuing = host_busy" python3 - "$tmp/host-nccl.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ev = [e for e in d["traceEvents"] if e.get("pid") == 0 and e.get("ph") == "X"]
its = sorted((e for e in ev if e.get("cat") == "iteration"), key=lambda e: e["ts"])
host = sorted((e for e in ev if e.get("cat") == "host"), key=lambda e: e["ts"])
want = ["host: issuing forward", "host: issuing backward", "host: issuing the optimizer", "host: waiting for the GPU"]
busy = d["otherData"]["host_device_rank0_per_iteration_us"]["host_busy"]
assert its and host, "no iterations or no host spans"
for it in its:
    mine = [e for e in host if it["ts"] - 1e-6 <= e["ts"] and e["ts"] + e["dur"] <= it["ts"] + it["dur"] + 1e-6]
    assert [e["name"] for e in mine] == want, [e["name"] for e in mine]
    assert all(a["ts"] + a["dur"] <= b["ts"] + 1e-6 for a, b in zip(mine, mine[1:])), "overlap"
    issuing = sum(e["dur"] for e in mine[:3])
    assert abs(issuing - busy) <= 1e-6 * busy + 1e-3, (issuing, busy)
PY
scenario dp resnet50 "--dataparallel" -- --framework dp --gpus-per-node 4 --dp-backward-gil
its=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["otherData"]["iterations"])' "$tmp/dp.json")
check "dp: the GIL's thread, held in forward and backward of each of $its iterations" \
  test "$(grep -o '"name":"GIL: replicas take turns launching"' "$tmp/dp.json" | wc -l)" -eq $((2 * its))
for k in "scatter inputs" "replicate parameters" "gather outputs" "reduce gradients"; do
  check "dp: '$k' on every GPU in every iteration" test "$(grep -o "\"name\":\"$k\"" "$tmp/dp.json" | wc -l)" -eq $((4 * its))
done
check "dp: the engine played every phase (simulated), the ops inside them derived" python3 - "$tmp/dp.json" <<'PY'
import json, sys
xs = [e for e in json.load(open(sys.argv[1]))["traceEvents"] if e.get("ph") == "X"]
phases = [e for e in xs if e.get("cat") != "op"]
assert phases and all(e["args"]["source"] == "simulated" for e in phases), [e["name"] for e in phases if e["args"]["source"] != "simulated"][:3]
assert all(e["args"]["source"].startswith("derived") for e in xs if e.get("cat") == "op")
PY

# FSDP (docs/fsdp.md): its pieces by unit, its copies, its collectives on their own streams, each of
# predict's fsdp_collectives once per rank and iteration; HSDP's all-reduces on a third stream.
scenario fsdp bert-base "--ranks 16" -- --framework fsdp --nodes 2
scenario hsdp bert-base "--ranks 16" -- --framework fsdp --nodes 2 --fsdp-replicate 2
for t in "NCCL stream (FSDP's all-gathers)" "NCCL stream (FSDP's reduce-scatters)"; do
  check "fsdp: a thread named '$t'" grep -q "\"name\":\"$t\"" "$tmp/fsdp.json"
done
check "hsdp: a thread named 'NCCL stream (HSDP's all-reduces)'" grep -q "\"name\":\"NCCL stream (HSDP's all-reduces)\"" "$tmp/hsdp.json"
for s in fsdp hsdp; do
  check "$s: every collective of predict's fsdp_collectives once per rank and iteration" python3 - "$tmp/$s.json" "$tmp/$s.p.json" <<'PY'
import json, sys
from collections import Counter
d = json.load(open(sys.argv[1]))
p = json.load(open(sys.argv[2]))
kinds = {"allgather": "all-gather", "reducescatter": "reduce-scatter", "allreduce": "all-reduce"}
want = Counter(f'{kinds[c["collective"]]} {c["unit"]}' + (f' ({c["before"]})' if c["before"] != "-" else "") for c in p["fsdp_collectives"])
ev = [e for e in d["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "nccl"]
its = {(e["pid"], e["args"]["iteration"]) for e in ev}
assert its, "no collectives"
for pid, it in its:
    got = Counter(e["name"] for e in ev if e["pid"] == pid and e["args"]["iteration"] == it)
    assert got == want, (pid, it, got - want, want - got)
PY
done
check "fsdp: forward and backward pieces named by unit" grep -q '"name":"backward: bert.encoder.layer.11"' "$tmp/fsdp.json"
"$ddpsim" predict --framework fsdp --model bert-base --nodes 2 --trace "$tmp/fsdp-k" >/dev/null 2>"$tmp/err"
check "fsdp: kineto traces, NCCL's kernels on streams 20 and 22" python3 - "$tmp/fsdp-k/rank0.pt.trace.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
k = {(e["tid"], e["name"].split("_")[1]) for e in d["traceEvents"] if e.get("cat") == "kernel" and e["name"].startswith("ncclDevKernel")}
assert {(20, "AllGather"), (22, "ReduceScatter")} <= k, k
PY

"$ddpsim" trace --format chrome -o "$tmp/x.json" --nodes 8 --ranks 64 >/dev/null 2>"$tmp/err"
check "--ranks 64 of 64 ranks: exit 2, naming the rank" test $? -eq 2 -a -n "$(grep 'rank 64 is not in the job' "$tmp/err")"
"$ddpsim" trace --format chrome -o "$tmp/x.json" --ranks 1,x >/dev/null 2>"$tmp/err"
check "--ranks 1,x: exit 2" test $? -eq 2 -a ! -e "$tmp/x.json"
"$ddpsim" predict --ranks 3 >/dev/null 2>"$tmp/err"
check "--ranks without --trace: exit 2" test $? -eq 2
"$ddpsim" trace --format chrome -o "$tmp/all.json" --model resnet50 --nodes 4 --ranks all --iterations 1 >/dev/null 2>&1
check "--ranks all shows all 32 ranks" $checker "$tmp/all.json" --ranks 32 >/dev/null

# Kineto (the default format): one PyTorch profiler trace per rank in a directory (tests/tools/test_hta.py
# reads them with HTA).
"$ddpsim" trace -o "$tmp/kin" --nodes 2 >/dev/null 2>"$tmp/err"
check "kineto: one rank<R>.pt.trace.json per simulated rank (16)" test $? -eq 0 -a "$(ls "$tmp/kin" | grep -c '^rank[0-9]*\.pt\.trace\.json$')" -eq 16
check "kineto: rank 9's file says rank 9 of 16, and carries ProfilerStep spans" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
i = d["distributedInfo"]
assert (i["rank"], i["world_size"], i["backend"]) == (9, 16, "nccl"), i
assert d["schemaVersion"] == 1 and "baseTimeNanoseconds" in d and d["deviceProperties"][0]["id"] == 1
ev = d["traceEvents"]
assert [e["name"] for e in ev if e["name"].startswith("ProfilerStep#")] == ["ProfilerStep#1", "ProfilerStep#2"]
k = [e for e in ev if e.get("cat") == "kernel"]
launch = {e["args"]["correlation"]: e for e in ev if e.get("cat") == "cuda_runtime"}
assert k and all(e["args"]["correlation"] in launch and launch[e["args"]["correlation"]]["ts"] <= e["ts"] for e in k)
assert any(e["name"].startswith("ncclDevKernel_AllReduce_Sum_f16_") for e in k)' "$tmp/kin/rank9.pt.trace.json"
"$ddpsim" trace -o "$tmp/kdp" --framework dp --gpus-per-node 4 >/dev/null 2>"$tmp/err"
check "kineto: DataParallel (one process) is refused with exit 2, no directory made" \
  test $? -eq 2 -a -n "$(grep 'format chrome' "$tmp/err")" -a ! -e "$tmp/kdp"
"$ddpsim" predict --format chrome >/dev/null 2>"$tmp/err"
check "--format without --trace: exit 2" test $? -eq 2 -a -n "$(grep 'give --trace PATH' "$tmp/err")"
: >"$tmp/afile"
"$ddpsim" trace -o "$tmp/afile" --nodes 2 >/dev/null 2>"$tmp/err"
check "kineto: -o naming a file fails with exit 1" test $? -eq 1 -a -n "$(grep 'not a directory' "$tmp/err")"

# The checker fails on traces that break the rules (each a copy of r50's with one fault).
break_trace() { # NAME PYTHON-STATEMENT (on the event list `ev`)
  python3 - "$tmp/r50.json" "$tmp/bad-$1.json" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); ev = d["traceEvents"]
exec(sys.argv[3])
json.dump(d, open(sys.argv[2], "w"))
PY
  $checker "$tmp/bad-$1.json" --model "$src/models/resnet50.model" --predict "$tmp/r50.p.json" \
    --buckets "$(nbuckets "$tmp/r50.p.json")" >/dev/null 2>&1
  check "the checker rejects a trace with $1" test $? -eq 1
}
break_trace "a flow without its end" 'ev.remove(next(e for e in ev if e["ph"] == "f"))'
break_trace "a negative duration" 'next(e for e in ev if e["ph"] == "X")["dur"] = -1'
break_trace "a span in seconds" 'e = next(e for e in ev if e["name"].startswith("iteration ")); e["dur"] /= 1e6'
break_trace "two ops swapped" 'o = [e for e in ev if e.get("cat") == "op"]; o[0]["name"], o[1]["name"] = o[1]["name"], o[0]["name"]'
break_trace "an all-reduce missing" 'ev.remove(next(e for e in ev if e["name"].startswith("all-reduce bucket")))'
break_trace "a thread without a name" 'ev.remove(next(e for e in ev if e["ph"] == "M" and e["name"] == "thread_name"))'
break_trace "crossing spans" 'x = [e for e in ev if e["name"] == "forward"][0]; x["dur"] *= 1.5'

# ---- issue 48: a Kineto folder is one run whole (common/afile.h, afile_dir) ----
# world_sizes RANKS DIR: every file of DIR is a trace of the world RANKS and there are RANKS of them
# (--ranks all), named as the writer names them, and nothing else is there.
one_run() {
  python3 - "$@" <<'PY'
import json, os, re, sys
n, d = int(sys.argv[1]), sys.argv[2]
names = sorted(os.listdir(d))
assert names == sorted(f"rank{r}.pt.trace.json" for r in range(n)), (len(names), names[:3])
for f in names:
    i = json.load(open(os.path.join(d, f)))["distributedInfo"]
    assert i["world_size"] == n and f == f"rank{i['rank']}.pt.trace.json", (f, i)
PY
}
no_temp() { test -z "$(cd "$tmp" && compgen -G "$1.tmp.*")" -a -z "$(cd "$tmp" && compgen -G "$1.old.*")"; }
"$ddpsim" trace -o "$tmp/two" --nodes 2 --ranks all >/dev/null 2>&1 &&
  "$ddpsim" trace -o "$tmp/two" --nodes 1 --ranks all >/dev/null 2>"$tmp/err"
check "a second trace over a first (16 ranks, then 8): exit $?, only the second run's 8 files" one_run 8 "$tmp/two"
check "  and no temporary folder beside it" no_temp two
"$ddpsim" predict --trace "$tmp/two/" --nodes 2 --ranks all >/dev/null 2>&1
check "predict --trace DIR/ (a trailing slash) over it: the 16 ranks of the new run" one_run 16 "$tmp/two"
chmod 750 "$tmp/two"
"$ddpsim" trace -o "$tmp/two" --nodes 1 --ranks all >/dev/null 2>&1
check "the folder keeps its mode (750) when replaced" test "$(stat -c %a "$tmp/two")" = 750
ln -s two "$tmp/link-to-two"
"$ddpsim" trace -o "$tmp/link-to-two" --nodes 2 --ranks all >/dev/null 2>&1
check "a link to the folder: written through, the link stays" test -L "$tmp/link-to-two" -a -d "$tmp/two"
check "  the folder it names holds the new run" one_run 16 "$tmp/two"
# A file that is not ours (nor a subfolder, nor a dot file): refused, exit 1, the folder untouched.
for foreign in notes.txt .hidden rank3.pt.trace.json.bak sub; do
  rm -rf "$tmp/f" && mkdir "$tmp/f" && "$ddpsim" trace -o "$tmp/f" --nodes 1 >/dev/null 2>&1
  if [ $foreign = sub ]; then mkdir "$tmp/f/sub"; else echo mine >"$tmp/f/$foreign"; fi
  (cd "$tmp/f" && stat -c "%a %Y" . && ls -lA --time-style=+%s.%N && md5sum rank*) >"$tmp/before" 2>&1
  "$ddpsim" trace -o "$tmp/f" --nodes 2 --ranks all >/dev/null 2>"$tmp/err"
  got=$?
  check "a folder holding '$foreign': refused, exit $got, naming it" \
    test $got -eq 1 -a -n "$(grep -F "holds '$foreign', which is not a file this command writes" "$tmp/err")"
  (cd "$tmp/f" && stat -c "%a %Y" . && ls -lA --time-style=+%s.%N && md5sum rank*) >"$tmp/after" 2>&1
  check "  the folder untouched" cmp -s "$tmp/before" "$tmp/after"
  check "  no temporary folder beside it" no_temp f
done
"$ddpsim" predict --trace "$tmp/f" --nodes 2 --ranks all >/dev/null 2>"$tmp/err"
check "predict --trace refuses it before simulating too (exit $?)" test $? -eq 1 -a -n "$(grep -F "holds 'sub'" "$tmp/err")"
# A signal part-way through a large trace over an old one: the old folder whole, nothing beside it.
# (256 ranks over 32; each case waits for the temporary folder to hold 10 files, then signals.)
"$ddpsim" trace -o "$tmp/old" --nodes 4 --ranks all >/dev/null 2>&1
for sig in TERM INT HUP; do
  for cmd in trace predict; do
    [ $cmd = trace ] && args=(trace -o "$tmp/old") || args=(predict --no-interval --trace "$tmp/old")
    env --default-signal=INT "$ddpsim" "${args[@]}" --nodes 32 --ranks all >/dev/null 2>&1 &
    pid=$!
    seen=0
    for _ in $(seq 1 3000); do
      t=$(cd "$tmp" && compgen -G 'old.tmp.*' | head -n 1)
      if [ -n "$t" ] && [ "$(ls "$tmp/$t" 2>/dev/null | wc -l)" -ge 10 ]; then seen=1; break; fi
      kill -0 $pid 2>/dev/null || break
      sleep 0.01
    done
    kill -s $sig $pid
    wait $pid 2>/dev/null
    got=$?
    check "SIG$sig during $cmd's write of 256 ranks (seen part-written: $seen): died of it (exit $got)" \
      test $seen -eq 1 -a $got -eq $((128 + $(kill -l $sig)))
    check "  the old folder is the old run whole (32 ranks)" one_run 32 "$tmp/old"
    check "  no temporary folder left" no_temp old
  done
done

finish
