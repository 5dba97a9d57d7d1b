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
full "ddpsim sweep --csv" "$ddpsim" sweep --nodes 1..8 --csv
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
  "$ddpsim" sweep --nodes 1..40 --csv >small/s.csv 2>"$tmp/err"
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
finish
