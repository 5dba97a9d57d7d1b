#!/usr/bin/env bash
# Benchmark: ddpsim's predictions against real data-parallel training runs on this machine
# (docs/validation.md). Writes the validation table, its JSON, and the runs that size the known
# sources of error, to OUT (default BUILD/validation.txt, and OUT.json).
# Usage: scripts/validate.sh [BUILD_DIR] [OUT]      (BUILD_DIR default build/, built if needed)
# REPEATS (default 5) real runs per configuration, each repeat with a fresh calibration.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=${2:-$build/validation.txt}
repeats=${REPEATS:-5}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
if [[ ! -x $build/sim/ddpsim || ! -x $build/calib/ddpcalib ]]; then
  cmake -S . -B "$build" >/dev/null
  cmake --build "$build" --target ddpsim ddpcalib -j "$(nproc)" >/dev/null
fi
ddpsim=$build/sim/ddpsim
ddpcalib=$build/calib/ddpcalib
work=$(mktemp -d /tmp/ddpsim-validate-bench.XXXXXX)
mkdir -p "$(dirname "$out")"
section() { printf '\n#### %s\n' "$*"; }
{
  echo "# scripts/validate.sh: $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')),"
  echo "# load average at start $(cut -d' ' -f1-3 /proc/loadavg); commands' output in $work"

  section "the validation: defaults (Adam, rebuilt buckets, elementwise costs from the timed mLSTM phases), $repeats repeats"
  "$ddpsim" validate --ddpcalib "$ddpcalib" --workdir "$work/main" --repeats "$repeats" -n 40 -w 5 --json-out "$out.json"

  section "the same with plain SGD (streaming ops priced at the mLSTM's compute-bound elementwise rate), 3 repeats"
  "$ddpsim" validate --ddpcalib "$ddpcalib" --workdir "$work/sgd" --repeats 3 -n 40 -w 5 --optimizer sgd

  section "known error: elementwise ops priced by ddpcalib's memcpy table instead (--ewise memcpy), 3 repeats"
  "$ddpsim" validate --ddpcalib "$ddpcalib" --workdir "$work/memcpy" --repeats 3 -n 40 -w 5 --ewise memcpy \
    --nprocs 1,2 --bucket-cap-mb 1,25 --modes ddp,flat

  section "known error: MPI progress. 2 processes, 0.25 MB buckets, with and without MPI_Test polls during backward"
  for poll in "" --no-poll; do
    for i in 1 2 3; do
      echo "# ddpcalib train --bucket-cap-mb 0.25 --first-bucket-mb 0.25 --rebuilt -n 40 -w 5 ${poll:-(polling)} run $i"
      mpirun -np 2 --oversubscribe "$ddpcalib" train --bucket-cap-mb 0.25 --first-bucket-mb 0.25 --rebuilt -n 40 -w 5 $poll |
        grep -E '^#   *bucket|^ +[0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+|^# iteration'
    done
  done
  echo
  echo "# load average at end $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out"
echo "wrote $out and $out.json" >&2
