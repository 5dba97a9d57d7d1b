#!/usr/bin/env bash
# Benchmark: real PyTorch DDP over gloo on this machine's CPU (2 processes) against ddpsim
# (docs/validation.md, "Real DDP on this CPU"). Calibrates this machine (`ddpcalib machine`: the
# profile and topology ddpsim predicts with), then runs scripts/bench_ddp_cpu.py: each model
# exported with measured op times, trained for real at each bucket cap (interleaved rounds), and
# predicted. Needs torch, torchvision and transformers (scripts/setup_python.sh).
# Usage: scripts/bench_ddp_cpu.sh [BUILD_DIR] [OUT] [bench_ddp_cpu.py options...]
#        (OUT default BUILD/bench_ddp_cpu.txt; the JSON beside it)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=${2:-$build/bench_ddp_cpu.txt}
shift $(($# < 2 ? $# : 2))
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
if [[ ! -x $build/sim/ddpsim || ! -x $build/calib/ddpcalib ]]; then
  cmake -S . -B "$build" >/dev/null
  cmake --build "$build" --target ddpsim ddpcalib -j "$(nproc)" >/dev/null
fi
work=$(mktemp -d /tmp/ddpsim-bench-ddp-cpu.XXXXXX)
mkdir -p "$(dirname "$out")"
# A poor fit (a busy machine) is kept; the report prints the link's warning.
"$build/calib/ddpcalib" machine --procs 2 ${QUICK:+--quick} --accept-poor-fit -o "$work/cpu.json" --topology-out "$work/cpu.topo" >"$work/calib.log"
python3 scripts/bench_ddp_cpu.py --ddpsim "$build/sim/ddpsim" --ddpcalib "$build/calib/ddpcalib" --profile "$work/cpu.json" --topology "$work/cpu.topo" \
  --workdir "$work" --json "${out%.txt}.json" "$@" | tee "$out"
echo "wrote $out (work files in $work)" >&2
