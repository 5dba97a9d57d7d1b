#!/usr/bin/env bash
# The GPU path run for real, in one command, when a GPU machine is lent (issue 27): builds with CUDA
# for the card found, then runs every check in order, each with its own time limit, writing every
# log and JSON to OUTDIR and never stopping at a failure. OUTDIR/summary.tsv has one row per step:
# name, status (ok, failed rc N, timed out, skipped: why, not available: what is missing), seconds.
# Without a GPU (here, CI) the CUDA steps say "skipped: no GPU" and the CPU steps run: the dry run.
#
# usage: scripts/gpu_check.sh OUTDIR [--quick]
#   --quick  the dry run's sizes (fewer iterations, smaller grids): for timing the script here.
# Environment: JOBS (build and test parallelism, default nproc), CUDA_ARCH (default: the card's
# compute capability from nvidia-smi, e.g. 90; without a GPU the project's default list); BUILD=DIR
# uses that build instead of building build-gpu; ONLY="step ..." runs those steps only (the others
# are listed as skipped): both for trying the script out.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-}
[[ -n $out && $out != -* ]] || { echo "usage: scripts/gpu_check.sh OUTDIR [--quick]" >&2; exit 2; }
quick=0
[[ ${2:-} == --quick ]] && quick=1
[[ -z ${2:-} || $quick == 1 ]] || { echo "gpu_check.sh: unknown option '$2' (usage: OUTDIR [--quick])" >&2; exit 2; }
mkdir -p "$out" || exit 1
out=$(cd "$out" && pwd)
jobs=${JOBS:-$(nproc)}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
summary=$out/summary.tsv
printf 'step\tstatus\tseconds\n' >"$summary"
t_start=$(date +%s)

# The card, if any.
gpu=0 arch=${CUDA_ARCH:-}
if command -v nvidia-smi >/dev/null && nvidia-smi -L >"$out/nvidia-smi.txt" 2>&1 && grep -q '^GPU ' "$out/nvidia-smi.txt"; then
  gpu=1
  nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap,power.limit --format=csv >>"$out/nvidia-smi.txt" 2>&1
  [[ -z $arch ]] && arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '. ')
fi
{
  echo "date: $(date -u +%FT%TZ)"
  echo "host: $(uname -srm), $(nproc) cores"
  echo "gpu: $([[ $gpu == 1 ]] && head -1 "$out/nvidia-smi.txt" || echo none)"
  echo "nvcc: $(nvcc --version 2>/dev/null | tail -1 || echo none)"
  echo "torch: $(python3 -c 'import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available())' 2>/dev/null || echo none)"
  echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)"
} >"$out/provenance.txt"

# step NAME LIMIT_S COMMAND...: runs it with its output in OUTDIR/NAME.log; records its status.
step() {
  local name=$1 limit=$2 t0 rc status
  shift 2
  if [[ -n ${ONLY:-} && " $ONLY " != *" $name "* ]]; then
    printf '%s\tskipped: not in ONLY\t0\n' "$name" >>"$summary"
    return
  fi
  t0=$(date +%s)
  echo "== $name (at most ${limit} s)"
  timeout "$limit" "$@" >"$out/$name.log" 2>&1
  rc=$?
  case $rc in
    0) status=ok ;;
    124) status="timed out" ;;
    77) status="skipped: $(tail -1 "$out/$name.log")" ;;
    *) status="failed rc $rc" ;;
  esac
  printf '%s\t%s\t%d\n' "$name" "$status" $(($(date +%s) - t0)) >>"$summary"
  echo "   $status"
}
# note NAME STATUS: a step that cannot run here, and why.
note() { printf '%s\t%s\t0\n' "$1" "$2" >>"$summary"; echo "== $1: $2"; }
need_gpu() { [[ $gpu == 1 ]] || { echo "no GPU"; exit 77; }; }
export -f need_gpu
export gpu

# 0. Build with CUDA for the card (the project's default architectures without one).
archflag=()
[[ -n $arch ]] && archflag=(-DCMAKE_CUDA_ARCHITECTURES="$arch")
b=${BUILD:-build-gpu}
if [[ -n ${BUILD:-} ]]; then
  note build "skipped: BUILD=$BUILD given"
else
  step build 600 bash -c "cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=RelWithDebInfo ${archflag[*]} && cmake --build build-gpu -j $jobs"
fi
n=$((quick ? 2 : 10))

# 1. The whole suite, the CUDA tests included (they skip with 77 without a GPU).
step ctest 900 ctest --test-dir "$b" -j "$jobs" --output-on-failure --timeout 300

# 2. The CUDA mLSTM steps against the cuBLAS GEMMs they contain.
step bench_kernels 300 scripts/bench_kernels.sh "$b"

# 3. Compute on the GPU, fp32 and fp16, the GEMM grid and the bundled models' shapes; h2d; host.
for prec in fp32 fp16; do
  step "compute_cuda_$prec" 600 bash -c "need_gpu; $b/calib/ddpcalib compute --backend cuda --precision $prec \
    --hidden 1024,4096 --batch 32,128 -n $n --gemm-max $((quick ? 512 : 8192)) --model models/resnet50.model \
    -o '$out/compute_cuda_$prec.json'"
done
note compute_cuda_tf32_strict "not available: ddpcalib compute has no TF32 / strict-fp32 switch (cublasSetMathMode)"
note compute_cuda_bf16 "not available: ddpcalib compute --precision takes fp32 and fp16 only"
step h2d 300 bash -c "need_gpu; $b/calib/ddpcalib h2d -o '$out/h2d.json'"
step host_cuda 300 bash -c "need_gpu; $b/calib/ddpcalib host --device cuda -n $n -o '$out/host_cuda.json'"
step host_cpu 300 "$b/calib/ddpcalib" host --device cpu -n "$n" -o "$out/host_cpu.json"

# 4. NCCL on one GPU: latency only (one rank has no link to measure).
step nccl_1gpu 300 bash -c "need_gpu; mpirun -np 1 $b/calib/ddpcalib comm --backend nccl -b 8 -e 1M -n $n -o '$out/nccl_1gpu.json'"
note overlap_slowdown "not available: no benchmark yet of a GEMM and a memory-bound kernel beside a kernel taking NCCL's CTAs and memory traffic (docs/simulation.md, 'Work sharing the GPU', predicts it)"

# 5. The exporter's measured mode against the profile just measured (CUDA where torch sees it).
# (--time: issue 31's measured mode; each model is also predicted from the profile just measured.)
export_args=(
  "resnet50|--model torchvision.models.resnet50 --input 3x224x224 --batch 32 --loss cross-entropy"
  "gpt2|--model transformers.GPT2LMHeadModel --input input_ids=1024:int64 --input labels=1024:int64 --batch 8"
)
for e in "${export_args[@]}"; do
  m=${e%%|*} args=${e#*|}
  step "export_time_$m" 900 bash -c "need_gpu; python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 77)' \
      || { echo 'torch sees no CUDA'; exit 77; }
    PYTHONPATH=python python3 -m ddpsim_export $args --time 5 -o '$out/$m-measured.model' &&
    $b/sim/ddpsim predict --model '$out/$m-measured.model' --profile '$out/compute_cuda_fp32.json' --nodes 1 --gpus-per-node 1 --json"
done

# 6. A single-GPU training run against its prediction.
note train_gpu "not available: ddpcalib train runs the CPU mLSTM over MPI only"

# 7. validate with 2, 4 and 8 MPI ranks on the host (quiet on a lent machine), the cap ranking.
nprocs=2,4,8
((quick)) && nprocs=2
step validate 900 "$b/sim/ddpsim" validate --ddpcalib "$b/calib/ddpcalib" --nprocs "$nprocs" -n "$n" --json-out "$out/validate.json"

echo "== done in $(($(date +%s) - t_start)) s; $summary"
column -t -s $'\t' "$summary"
exit 0
