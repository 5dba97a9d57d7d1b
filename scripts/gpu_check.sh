#!/usr/bin/env bash
# The GPU path run for real, in one command, when a GPU machine is lent (issue 27): builds with CUDA
# for the card found (or takes a build packed by scripts/gpu_bundle.sh), then runs every check in
# order of value, each with its own time limit and all within a budget, writing every log and JSON
# to OUTDIR and never stopping at a failure. OUTDIR/summary.tsv has one row per step: name, status
# (ok, failed rc N, timed out, skipped: why, not available: what is missing), seconds. At the end
# OUTDIR/results.tar.gz holds all of OUTDIR (for a machine that gives back only a few files).
# Without a GPU (here, CI) the CUDA steps say "skipped: no GPU" and the CPU steps run: the dry run.
#
# usage: scripts/gpu_check.sh OUTDIR [--quick] [--bundle DIR]
#   --quick       the dry run's sizes (fewer iterations, smaller grids): for timing the script here.
#   --bundle DIR  a bundle unpacked in DIR (scripts/gpu_bundle.sh BUILD OUT DIR): its build DIR/build-*
#                 is used as is, and its OpenMPI (DIR/ompi) starts validate's ranks.
# Environment: JOBS (build and test parallelism, default nproc), CUDA_ARCH (default: the card's
# compute capability from nvidia-smi, e.g. 90; without a GPU the project's default list); BUILD=DIR
# uses that build instead of building build-gpu; ONLY="step ..." runs those steps only (the others
# are listed as skipped); BUDGET_S (default 480): no step starts after that many seconds, and a
# step's limit is cut to what is left.
set -uo pipefail
cd "$(dirname "$0")/.."
usage() { echo "usage: scripts/gpu_check.sh OUTDIR [--quick] [--bundle DIR]" >&2; exit 2; }
out=${1:-}
[[ -n $out && $out != -* ]] || usage
shift
quick=0 bundle=
while [[ $# -gt 0 ]]; do
  case $1 in
    --quick) quick=1 ;;
    --bundle) [[ $# -ge 2 ]] || usage; bundle=$2; shift ;;
    *) echo "gpu_check.sh: unknown option '$1'" >&2; usage ;;
  esac
  shift
done
mkdir -p "$out" || exit 1
out=$(cd "$out" && pwd)
jobs=${JOBS:-$(nproc)}
budget=${BUDGET_S:-480}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
summary=$out/summary.tsv
printf 'step\tstatus\tseconds\n' >"$summary"
t_start=$(date +%s)

if [[ -n $bundle ]]; then
  [[ -d $bundle/lib ]] || { echo "gpu_check.sh: --bundle $bundle: no lib/ in it (unpack scripts/gpu_bundle.sh's archive there)" >&2; exit 2; }
  bundle=$(cd "$bundle" && pwd)
  BUILD=$(ls -d "$bundle"/build-* | head -1)
  if [[ -d $bundle/ompi/usr/bin ]]; then
    export OPAL_PREFIX=$bundle/ompi/usr PATH=$bundle/ompi/usr/bin:$PATH
    export OMPI_MCA_mca_base_component_show_load_errors=0 OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1
  fi
fi

# The card, if any.
gpu=0 arch=${CUDA_ARCH:-}
if command -v nvidia-smi >/dev/null && nvidia-smi -L >"$out/nvidia-smi.txt" 2>&1 && grep -q '^GPU ' "$out/nvidia-smi.txt"; then
  gpu=1
  nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap,power.limit,clocks.max.sm,clocks.max.mem --format=csv >>"$out/nvidia-smi.txt" 2>&1
  nvidia-smi >>"$out/nvidia-smi.txt" 2>&1
  [[ -z $arch ]] && arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '. ')
fi
b=${BUILD:-build-gpu}

# CUDA's libraries the build links (cuBLAS, NCCL) where the loader does not find them: the toolkit's
# folders and those of the NVIDIA wheels PyTorch brings.
if [[ -x $b/calib/ddpcalib ]] && ldd "$b/calib/ddpcalib" | grep -q 'not found'; then
  for lib in $(ldd "$b/calib/ddpcalib" | awk '/not found/{print $1}'); do
    d=$(find /usr/local /usr/lib /opt $(python3 -c 'import site; print(*site.getsitepackages())' 2>/dev/null) \
          -name "$lib" -print -quit 2>/dev/null)
    [[ -n $d ]] && export LD_LIBRARY_PATH=$(dirname "$d")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  done
fi
{
  echo "date: $(date -u +%FT%TZ)"
  echo "host: $(uname -srm), $(nproc) cores, $(awk '/MemTotal/{print $2/1048576 " GiB"}' /proc/meminfo)"
  echo "cpu: $(awk -F': ' '/model name/{print $2; exit}' /proc/cpuinfo)"
  echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "gpu: $([[ $gpu == 1 ]] && head -1 "$out/nvidia-smi.txt" || echo none)"
  echo "nvcc: $(nvcc --version 2>/dev/null | tail -1 || echo none)"
  echo "python: $(command -v python3) $(python3 --version 2>&1)"
  echo "torch: $(python3 -c 'import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available(), torch.backends.cudnn.version())' 2>/dev/null || echo none)"
  echo "nccl (torch): $(python3 -c 'import torch; print(torch.cuda.nccl.version())' 2>/dev/null || echo none)"
  echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)"
  echo "build: $b${bundle:+ (bundle $bundle)}"
  echo "LD_LIBRARY_PATH: ${LD_LIBRARY_PATH:-}"
  echo "ddpcalib's libraries:"; ldd "$b/calib/ddpcalib" 2>&1 | sed 's/^/  /'
} >"$out/provenance.txt"

# step NAME LIMIT_S COMMAND...: runs it with its output in OUTDIR/NAME.log; records its status.
step() {
  local name=$1 limit=$2 t0 rc status left
  shift 2
  if [[ -n ${ONLY:-} && " $ONLY " != *" $name "* ]]; then
    printf '%s\tskipped: not in ONLY\t0\n' "$name" >>"$summary"
    return
  fi
  left=$((budget - ($(date +%s) - t_start)))
  if ((left < 10)); then
    printf '%s\tskipped: out of time (BUDGET_S=%d)\t0\n' "$name" "$budget" >>"$summary"
    echo "== $name: skipped, out of time"
    return
  fi
  ((limit > left)) && limit=$left
  t0=$(date +%s)
  echo "== $name (at most ${limit} s)"
  timeout -k 5 "$limit" "$@" >"$out/$name.log" 2>&1
  rc=$?
  case $rc in
    0) status=ok ;;
    124|137) status="timed out" ;;
    77) status="skipped: $(tail -1 "$out/$name.log")" ;;
    *) status="failed rc $rc" ;;
  esac
  printf '%s\t%s\t%d\n' "$name" "$status" $(($(date +%s) - t0)) >>"$summary"
  echo "   $status ($(($(date +%s) - t0)) s)"
}
# note NAME STATUS: a step that cannot run here, and why.
note() { printf '%s\t%s\t0\n' "$1" "$2" >>"$summary"; echo "== $1: $2"; }
need_gpu() { [[ $gpu == 1 ]] || { echo "no GPU"; exit 77; }; }
export -f need_gpu
export gpu

# 0. Build with CUDA for the card (the project's default architectures without one).
archflag=()
[[ -n $arch ]] && archflag=(-DCMAKE_CUDA_ARCHITECTURES="$arch")
if [[ -n ${BUILD:-} ]]; then
  note build "skipped: BUILD=$BUILD given"
else
  step build 600 bash -c "cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=RelWithDebInfo ${archflag[*]} && cmake --build build-gpu -j $jobs"
fi
n=$((quick ? 2 : 10))

# 1. The CUDA tests: the mLSTM kernels against the CPU reference; NCCL, h2d, host and compute on CUDA.
step test_mlstm_cuda 90 "$b/tests/kernels/test_mlstm_cuda"
step calib_gpu 150 bash tests/calib/test_gpu.sh "$b/calib/ddpcalib" 1 "$out/calib_gpu"

# 2. Compute on the GPU in fp32: the GEMM grid and the bundled models' shapes (the measured profile).
cuda_compute() {  # PRECISION [NAME-SUFFIX FLAG]
  step "compute_cuda_$1${2:-}" 180 bash -c "need_gpu; $b/calib/ddpcalib compute --backend cuda --precision $1 ${3:-} \
    --hidden 1024,4096 --batch 32,128 -n $n --gemm-max $((quick ? 512 : 8192)) --model models/resnet50.model --model-batch 32 \
    -o '$out/compute_cuda_$1${2:-}.json'"
}
cuda_compute fp32

# 3. Compute beside an NCCL-like kernel: the slowdown of overlapped compute (issue 30, mechanism 1).
ov=(--json "$out/overlap.json")
((quick)) && ov+=(--quick)
step overlap 150 python3 scripts/gpu_overlap.py "${ov[@]}"

# 4. The exporter's measured mode on CUDA: real training steps timed op by op (ResNet-50 first).
export_args=(
  "resnet50|--model torchvision.models.resnet50 --input 3x224x224 --batch 32 --loss cross-entropy"
  "resnet50-amp|--model torchvision.models.resnet50 --input 3x224x224 --batch 32 --loss cross-entropy --amp fp16"
  "gpt2|--model transformers.GPT2LMHeadModel --input input_ids=1024:int64 --input labels=1024:int64 --batch 8"
)
export_time() {  # NAME ARGS
  step "export_time_$1" 150 bash -c "need_gpu; python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 77)' \
      || { echo 'torch sees no CUDA'; exit 77; }
    PYTHONPATH=python python3 -m ddpsim_export $2 --time $((quick ? 2 : 10)) -o '$out/$1-measured.model'"
}
e=${export_args[0]}; export_time "${e%%|*}" "${e#*|}"
# The same training steps timed without the profiler: what a single-GPU prediction is compared with.
st=(--json "$out/steps.json")
((quick)) && st+=(--quick)
step steps 150 env PYTHONPATH=python python3 scripts/gpu_steps.py "${st[@]}"

# 5. Host-to-device copies and host costs on the GPU; compute in fp16.
step h2d 60 bash -c "need_gpu; $b/calib/ddpcalib h2d --backend cuda -o '$out/h2d.json'"
step host_cuda 120 bash -c "need_gpu; $b/calib/ddpcalib host --device cuda -n $n -o '$out/host_cuda.json'"
cuda_compute fp16
cuda_compute fp32 _tf32 --tf32
cuda_compute bf16
for e in "${export_args[@]:1}"; do export_time "${e%%|*}" "${e#*|}"; done

# 6. The CUDA mLSTM steps against the cuBLAS GEMMs they contain.
step bench_kernels 120 scripts/bench_kernels.sh "$b"

# NCCL needs two ranks on two devices: one GPU gives a refusal only (calib_gpu checks it).
note nccl_1gpu "not available: NCCL refuses two ranks on one GPU, and one rank has no link; calib_gpu checks the refusal"
note train_gpu "not available: ddpcalib train runs the CPU mLSTM over MPI only"

# 7. validate with 2, 4 and 8 MPI ranks on the host (quiet on a lent machine), the cap ranking.
nprocs=2,4,8
((quick)) && nprocs=2
step validate 180 "$b/sim/ddpsim" validate --ddpcalib "$b/calib/ddpcalib" --nprocs "$nprocs" -n "$n" --json-out "$out/validate.json"
step host_cpu 60 "$b/calib/ddpcalib" host --device cpu -n "$n" -o "$out/host_cpu.json"

# 8. The whole suite last, with what time is left.
step ctest 300 ctest --test-dir "$b" -j "$jobs" --output-on-failure --timeout 120

echo "== done in $(($(date +%s) - t_start)) s; $summary"
column -t -s $'\t' "$summary" 2>/dev/null || cat "$summary"
archive=$(mktemp)
tar -C "$out" --exclude=results.tar.gz -czf "$archive" . && mv "$archive" "$out/results.tar.gz"
exit 0
