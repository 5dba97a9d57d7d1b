#!/usr/bin/env bash
# The bad-input matrix (tests/sim/badinput.txt): each case a command line run by bash in a fresh
# folder, with `ddpsim` and `ddpcalib` the built programs and $DATA the source tree. A case holds
# when the exit code is the one expected (never a crash: >= 128 fails whatever was expected) and
# standard error matches the pattern (an extended regular expression, grep -E).
# usage: test_badinput.sh DDPSIM DDPCALIB SOURCE_DIR [MATRIX]
set -u
ddpsim=$1
ddpcalib=$2
src=$3
matrix=${4:-$src/tests/sim/badinput.txt}
. "$src/tests/sim/lib.sh"

bin=$tmp/bin
mkdir -p "$bin"
ln -s "$(readlink -f "$ddpsim")" "$bin/ddpsim"
ln -s "$(readlink -f "$ddpcalib")" "$bin/ddpcalib"
export PATH="$bin:$PATH" DATA="$src" OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
unset DDPSIM_GNUPLOT

n=0
while IFS= read -r line; do
  case $line in '' | '#'*) continue ;; esac
  code=${line%% | *}
  rest=${line#* | }
  pattern=${rest%% | *}
  cmd=${rest#* | }
  n=$((n + 1))
  dir=$tmp/case$n
  mkdir -p "$dir"
  (cd "$dir" && timeout 120 bash -c "$cmd" >"$dir/.out" 2>"$dir/.err" </dev/null)
  got=$?
  msg=$(head -c 240 "$dir/.err" | tr '\n' ' ')
  ok=1
  [ "$got" -eq "$code" ] || ok=0
  [ "$got" -lt 124 ] || ok=0 # a crash, a signal or the timeout
  grep -qE -- "$pattern" "$dir/.err" || ok=0
  check "[$n] $cmd -> exit $got, want $code /$pattern/ ($msg)" test $ok -eq 1
  rm -rf "$dir"
done <"$matrix"
check "the matrix has cases ($n)" test "$n" -gt 100
finish
