#!/usr/bin/env bash
# Where ddpsim, ddpcalib and the exporter write (issue 29): standard output into a full device is
# exit 1 with "write error"; an -o output that is a device node or a FIFO is written in place and
# never replaced; a signal during an atomic write leaves no temporary file. Every node is made with
# mknod in this test's own temporary folder (never under /dev): c 1 7 is what /dev/full is, c 1 3
# what /dev/null is. Exits 77 where mknod is not permitted.
# usage: test_outputs.sh DDPSIM DDPCALIB SOURCE_DIR
set -u
ddpsim=$(readlink -f "$1")
ddpcalib=$(readlink -f "$2")
src=$(readlink -f "$3")
. "$src/tests/sim/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1

if ! mknod "$tmp/full" c 1 7 2>/dev/null || ! mknod "$tmp/null" c 1 3 2>/dev/null; then
  echo "skipped: mknod is not permitted here (it needs CAP_MKNOD)"
  exit 77
fi
chmod 666 "$tmp/full" "$tmp/null"
cd "$tmp"
"$ddpsim" sweep --nodes 1,2 --csv >s.csv 2>/dev/null
"$ddpsim" predict --json >p.json 2>/dev/null

# ---- standard output into a full device: exit 1, "write error", for every command ----
# (with the reason where the failing write is the last one; an earlier one, in the middle of a long
# output, leaves stdio only its error flag, and the message is "write error" alone, as coreutils')
full() { # full DESCRIPTION PROGRAM ARGS...
  local what=$1
  shift
  "$@" >"$tmp/full" 2>"$tmp/err"
  local got=$?
  check "$what > full: exit $got, $(head -c 120 "$tmp/err" | tr '\n' ' ')" \
    test "$got" -eq 1 -a -n "$(grep -E '^[a-z ./0-9_-]+: write error(: No space left on device)?$' "$tmp/err")"
}
full "ddpsim predict" "$ddpsim" predict
full "ddpsim predict --json" "$ddpsim" predict --json
full "ddpsim sweep --csv" "$ddpsim" sweep --nodes 1..8 --no-interval --csv
full "ddpsim sweep --json" "$ddpsim" sweep --nodes 1,2 --json
full "ddpsim recommend --json" "$ddpsim" recommend --samples 2 --no-advice --json
full "ddpsim recommend" "$ddpsim" recommend --samples 2
full "ddpsim trace" "$ddpsim" trace -o t1.json
full "ddpsim plan" "$ddpsim" plan
full "ddpsim buckets --json" "$ddpsim" buckets --json
full "ddpsim genmodel" "$ddpsim" genmodel bert
full "ddpsim accuracy" "$ddpsim" accuracy
full "ddpsim plot" "$ddpsim" plot scaling -i s.csv -o p1.png
full "ddpsim --help" "$ddpsim" --help
full "ddpsim sweep --help" "$ddpsim" sweep --help
full "ddpcalib validate" "$ddpcalib" validate "$src/profiles/v100-dgx1v.json"
full "ddpcalib merge" "$ddpcalib" merge "$src/profiles/v100-dgx1v.json" "$src/profiles/a100-dgxa100.json" -o m1.json
full "ddpcalib --help" "$ddpcalib" --help
# A failure's own exit code stays: a misuse is still 2.
"$ddpsim" predict --nodes 0 >"$tmp/full" 2>/dev/null
check "a misuse with stdout full is still exit 2" test $? -eq 2

# ---- -o onto a device node: written in place, the node stays ----
node() { # node DESCRIPTION TARGET PROGRAM ARGS...
  local what=$1 target=$2
  shift 2
  "$@" >/dev/null 2>"$tmp/err"
  local got=$?
  check "$what onto a device node: exit $got $(head -c 100 "$tmp/err" | tr '\n' ' ')" test "$got" -eq 0
  check "$what: $target is still the character device 1,3" test -c "$target" -a "$(stat -c %t,%T "$target")" = 1,3
}
mknod null.png c 1 3 && mknod null.svg c 1 3 && chmod 666 null.png null.svg
ln -s null link-to-null
node "trace -o" null "$ddpsim" trace --format chrome -o null
node "trace -o (a link to the node)" null "$ddpsim" trace --format chrome -o link-to-null
check "the link to it is still a link" test -L link-to-null
node "predict --trace" null "$ddpsim" predict --format chrome --trace null
# A Kineto trace is a directory: a device node there is refused, and stays.
"$ddpsim" trace -o null >/dev/null 2>"$tmp/err"
got=$?
check "trace -o (kineto, a directory) onto a device node: refused, exit $got: $(head -c 100 "$tmp/err")" \
  test $got -eq 1 -a -n "$(grep "exists and is not a directory" "$tmp/err")"
check "trace -o (kineto): null is still the character device 1,3" test -c null -a "$(stat -c %t,%T null)" = 1,3
node "genmodel -o" null "$ddpsim" genmodel mlstm --hidden 64 -o null
node "plot -o" null.png "$ddpsim" plot scaling -i s.csv -o null.png
node "plot --script" null "$ddpsim" plot timeline -i p.json -o p2.svg --script null
node "ddpcalib merge -o" null "$ddpcalib" merge "$src/profiles/v100-dgx1v.json" "$src/profiles/a100-dgxa100.json" -o null
export PYTHONPATH="$src/python${PYTHONPATH:+:$PYTHONPATH}"
have_torch=0
python3 -c 'import torch' 2>/dev/null && have_torch=1
export_args=(--model torch.nn.Linear --kwargs '{"in_features": 4, "out_features": 3}' --input 4 --batch 2)
if [ $have_torch -eq 1 ]; then
  node "exporter -o" null python3 -m ddpsim_export "${export_args[@]}" -o null
  python3 -m ddpsim_export "${export_args[@]}" -o x.model >"$tmp/full" 2>"$tmp/err"
  got=$?
  check "exporter > full: exit $got, $(head -c 100 "$tmp/err")" test $got -eq 1 -a -n "$(grep 'write error' "$tmp/err")"
else
  echo "note  the exporter's cases left out: torch is not importable here"
fi

# ---- -o onto a FIFO with a reader: the reader gets the text, the FIFO stays ----
fifo() { # fifo DESCRIPTION REFERENCE PROGRAM ARGS... (the output named f; REFERENCE: the same run into a
  # file, or "profile": the reader must get a profile ddpcalib validates, its provenance being dated)
  local what=$1 ref=$2
  shift 2
  rm -f f got
  mkfifo f
  cat f >got &
  local reader=$!
  timeout 120 "$@" >/dev/null 2>"$tmp/err"
  local got=$?
  # A writer that failed before opening the FIFO leaves the reader waiting: open and close it.
  kill -0 $reader 2>/dev/null && timeout 5 bash -c 'exec 3>f' 2>/dev/null
  wait $reader
  check "$what onto a FIFO: exit $got $(head -c 100 "$tmp/err" | tr '\n' ' ')" test "$got" -eq 0
  check "$what: f is still a FIFO" test -p f
  if [ "$ref" = profile ]; then
    check "$what: the reader got a whole profile ($(wc -c <got) bytes)" "$ddpcalib" validate got
  else
    check "$what: the reader got what a file gets ($(wc -c <got) bytes)" cmp -s got "$ref"
  fi
}
"$ddpsim" genmodel mlstm --hidden 64 -o ref.model
fifo "genmodel -o" ref.model "$ddpsim" genmodel mlstm --hidden 64 -o f
"$ddpsim" trace --format chrome -o ref.json
fifo "trace -o" ref.json "$ddpsim" trace --format chrome -o f
fifo "ddpcalib merge -o" profile "$ddpcalib" merge "$src/profiles/v100-dgx1v.json" "$src/profiles/a100-dgxa100.json" -o f
if [ $have_torch -eq 1 ]; then
  python3 -m ddpsim_export "${export_args[@]}" -o ref2.model >/dev/null 2>&1
  fifo "exporter -o" ref2.model python3 -m ddpsim_export "${export_args[@]}" -o f
fi

# ---- a small full file system (tmpfs): a cut -o file is an error and leaves nothing ----
mkdir small
if mount -t tmpfs -o size=4k tmpfs small 2>/dev/null; then # one page: less than either output
  "$ddpsim" trace --format chrome --nodes 4 -o small/t.json >/dev/null 2>"$tmp/err"
  got=$?
  check "trace -o onto a full tmpfs: exit $got ($(head -c 100 "$tmp/err"))" test $got -eq 1
  check "nothing left on it" test -z "$(ls -A small)"
  "$ddpsim" sweep --nodes 1..40 --no-interval --csv >small/s.csv 2>"$tmp/err"
  got=$?
  check "sweep --csv > a full tmpfs: exit $got, write error" test $got -eq 1 -a -n "$(grep 'write error' "$tmp/err")"
  umount small
else
  echo "note  the tmpfs cases left out: mounting a tmpfs is not permitted here"
fi

# ---- a signal during an atomic write removes the temporary file ----
# A trace of 64 GPUs under jitter is tens of MB: its temporary file is watched for, then SIGTERM.
"$ddpsim" trace --format chrome --nodes 8 --ranks all --jitter-cv 0.1 -o sig.json >/dev/null 2>&1 &
pid=$!
seen=0
for _ in $(seq 1 6000); do
  if compgen -G "sig.json.tmp.*" >/dev/null; then seen=1; kill -TERM $pid; break; fi
  kill -0 $pid 2>/dev/null || break
  sleep 0.01
done
wait $pid
got=$?
if [ $seen -eq 1 ]; then
  check "SIGTERM during the write: died of it (exit $got)" test $got -eq 143
  check "SIGTERM during the write: no temporary file left" test -z "$(compgen -G 'sig.json.tmp.*')"
else
  echo "note  the write was too quick to catch its temporary file; the signal case was not exercised"
fi
# ---- issue 48, "Impossible numbers": what predict reports adds up and lies inside its iteration ----
# The table's parts (its lines indented by two under `iteration`) are the JSON's parts and add up to
# the iteration printed, within the rounding of 6 decimals each; under jitter, host noise included
# (it is part of the host's issuing, not of the iteration; the wait for the slowest rank is).
parts_add_up() { # parts_add_up ARGS...: predict's table and JSON of the same run
  "$ddpsim" predict "$@" --no-interval >pt.txt 2>/dev/null && "$ddpsim" predict "$@" --no-interval --json >pt.json 2>/dev/null
  local got=$?
  check "predict $*: exit $got" test $got -eq 0
  check "predict $*: the table's parts are the JSON's and add up to its iteration" python3 - pt.txt pt.json <<'PY'
import json, sys
lines, d = open(sys.argv[1]).read().splitlines(), json.load(open(sys.argv[2]))
at = next(i for i, l in enumerate(lines) if l.startswith("iteration "))
it = float(lines[at][25:].split()[0])
parts = {}
for l in lines[at + 1:]:
    if l.startswith("#") or l.startswith("    "): continue  # notes; a part's own parts (DataParallel's)
    if not l.startswith("  "): break
    parts[l[:24].strip()] = float(l[25:].split()[0])
half = 0.5e-6 * (1 + 1e-9)
ok = abs(sum(parts.values()) - it) <= half * (len(parts) + 1)
print("iteration", it, "parts", sum(parts.values()), parts)
# each JSON part that prints as non-zero is a line of the table with its value; compute is its four
labels = {"loading_s": "loading (waiting)", "transfer_s": "host-to-device copy", "buffer_broadcast_s": "broadcast buffers",
          "exposed_comm_s": "exposed communication", "straggler_wait_s": "waiting for stragglers"}
for k, lab in labels.items():
    if d.get(k, 0) >= half: ok &= abs(parts.get(lab, float("nan")) - d[k]) <= half  # (FSDP and DP have no buffer broadcast)
comp = sum(parts.get(k, 0) for k in ("forward", "backward", "optimizer", "bucket copies"))
ok &= abs(comp - d["compute_s"]) <= 4 * half and abs(d["iteration_s"] - it) <= half
ok &= "host noise" not in parts and "host-bound" not in parts
sys.exit(0 if ok else 1)
PY
}
parts_add_up --profile h100-measured --topology dgxh100-ib --nodes 2
parts_add_up --nodes 1 --gpus-per-node 1 --host-jitter-us 500
parts_add_up --nodes 2 --host-jitter-us 200 --jitter-cv 0.1 --seed 7
parts_add_up --nodes 2 --jitter-cv 0.2 --num-workers 2 --load-ms 80 --seed 11
parts_add_up --framework fsdp --model bert-base --nodes 2 --host-jitter-us 300
parts_add_up --framework dp --gpus-per-node 4 --num-workers 2 --load-ms 40 # (DataParallel: no jitter, its own parts)

# FSDP's collectives are the last simulated iteration's, from its start, as DDP's buckets: each one's
# start and end lie in [0, buckets_iteration_s], in the JSON and in the table, which says that
# iteration's length where it is not the mean (under jitter; DataLoader's batches arriving unevenly).
colls_inside() { # colls_inside ARGS...
  "$ddpsim" predict "$@" --no-interval >pc.txt 2>/dev/null && "$ddpsim" predict "$@" --no-interval --json >pc.json 2>/dev/null
  local got=$?
  check "predict $*: exit $got" test $got -eq 0
  check "predict $*: every collective within [0, its iteration]" python3 - pc.txt pc.json <<'PY'
import json, re, sys
text, d = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
T, fs = d["buckets_iteration_s"], d["fsdp_collectives"]
ok = len(fs) > 0 and T > 0 and all(0 <= f["start_s"] <= f["end_s"] <= T * (1 + 1e-9) for f in fs)
m = re.search(r"^# collectives of the last simulated iteration \(([0-9.]+) s", text, re.M)
shown = float(m.group(1)) if m else float(re.search(r"^iteration +([0-9.]+) s", text, re.M).group(1))
ok &= abs(shown - T) <= 5e-7 and (m is not None) == (abs(T - d["iteration_s"]) > 1e-9 * T)
rows = re.findall(r"^  \d+ +(?:allgather|reducescatter|allreduce) .* ([0-9.]+) +([0-9.]+)  \S+/\S+$", text, re.M)
ok &= len(rows) == len(fs) and all(0 <= float(a) <= float(b) <= shown + 5e-7 for a, b in rows)
print("iteration", d["iteration_s"], "last", T, "collectives", min(f["start_s"] for f in fs), "..", max(f["end_s"] for f in fs))
sys.exit(0 if ok else 1)
PY
}
colls_inside --framework fsdp --model mlstm-4k --topology h100-roce400x2 --profile h100-measured --gpus-per-node 5 \
  --fsdp-reshard-after-forward false --jitter-cv 0.284 --seed 173148 --precision bf16 --no-h2d
colls_inside --model bert-base --topology dgxh100-ib --profile h100-dgxh100 --nodes 16 --gpus-per-node 2 --framework fsdp \
  --fsdp-replicate 16 --precision bf16 --num-workers 10 --load-ms 207.52
colls_inside --framework fsdp --model bert-base --nodes 2 --num-workers 3 --load-ms 150 --jitter-cv 0.1 --seed 5
colls_inside --framework fsdp --model bert-base --nodes 2
finish
