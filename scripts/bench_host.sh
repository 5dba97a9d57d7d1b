#!/usr/bin/env bash
# Benchmark: a per-op-overhead-bound ("host-bound") and a compute-bound model, predicted by ddpsim and
# measured with `mpirun ddpcalib train` on this machine (docs/simulation.md, "Host and device").
# Runs `ddpsim validate` twice: a tiny mLSTM (hidden 16, embed 8, seq 8, batch 1: every op is a few
# hundred flops, so each op's fixed cost dominates) and a large one (hidden 512, seq 16, batch 8:
# GEMM-bound), 1 and 2 processes, DDP with one 25 MB bucket, REPEATS real runs each. The CPU backend
# runs ops synchronously in the calling thread, so here the "host" is each op's fixed cost as
# ddpcalib compute measures it (roofline launch_s); the host/stream pipeline is GPU-only.
# Usage: scripts/bench_host.sh [BUILD_DIR] [OUT]   (OUT default BUILD/bench_host.txt)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=${2:-$build/bench_host.txt}
repeats=${REPEATS:-3}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
if [[ ! -x $build/sim/ddpsim || ! -x $build/calib/ddpcalib ]]; then
  cmake -S . -B "$build" >/dev/null
  cmake --build "$build" --target ddpsim ddpcalib -j "$(nproc)" >/dev/null
fi
ddpsim=$build/sim/ddpsim
work=$(mktemp -d /tmp/ddpsim-bench-host.XXXXXX)
mkdir -p "$(dirname "$out")"
{
  echo "# scripts/bench_host.sh: $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
  for size in tiny large; do
    # The tiny model's GEMMs are below ddpcalib compute's grid, so its elementwise ops are priced by the
    # memcpy table (a known error, docs/validation.md); the large one's from the timed mLSTM phases.
    if [[ $size == tiny ]]; then args=(--hidden 16 --embed 8 --seq 8 --batch 1 --ewise memcpy); else args=(--hidden 512 --embed 64 --seq 16 --batch 8); fi
    printf '\n#### %s: %s\n' "$size" "${args[*]}"
    "$ddpsim" validate --workdir "$work/$size" "${args[@]}" --nprocs 1,2 --modes ddp --bucket-cap-mb 25 \
      -n 30 -w 5 --repeats "$repeats" --json-out "$work/$size.json" || echo "# $size: validate failed (exit $?); see $work/$size"
  done
  echo
  echo "# load average at end $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out"
echo "wrote $out" >&2
