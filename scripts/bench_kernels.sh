#!/usr/bin/env bash
# Runs the mLSTM kernel benchmark (kernels/bench_mlstm.c) over a few shapes: the CPU reference with
# one BLAS thread, and the CUDA backend in fp32, fp16 and bf16 (Ampere on) when a GPU answers. Prints, never fails a
# build: it is a measurement, not a test.
# Usage: scripts/bench_kernels.sh [build-dir]     (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build}/kernels/bench_mlstm
[[ -x $bin ]] || { echo "bench_kernels.sh: $bin not built (cmake --build ${1:-build} --target bench_mlstm)" >&2; exit 2; }

echo "## CPU, single-threaded OpenBLAS"
OPENBLAS_NUM_THREADS=1 "$bin" -d cpu -H 1024 -B 32 -T 32 -n 5 -w 1
if "$bin" -d cuda -H 64 -B 4 -T 2 -n 1 -w 0 >/dev/null 2>&1; then
  for prec in fp32 fp16 bf16; do
    if ! "$bin" -d cuda -p "$prec" -H 64 -B 4 -T 2 -n 1 -w 0 >/dev/null 2>&1; then
      echo "# CUDA $prec: not run on this GPU (bf16 needs compute capability 8.0)"
      continue
    fi
    for h in 4096 8192; do
      echo "## CUDA $prec H=$h"
      "$bin" -d cuda -p "$prec" -H "$h" -B 32 -T 256 -n 3 -w 1
    done
  done
else
  echo "# no GPU: CUDA rows skipped"
fi
