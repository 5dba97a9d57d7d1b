#!/usr/bin/env bash
# Installs what is needed, builds with warnings as errors, and runs the whole test suite; then builds
# again with AddressSanitizer + UndefinedBehaviorSanitizer and runs the suite once more.
# Usage: scripts/test.sh            (build dirs: build/ and build-asan/)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/setup_python.sh   # PyTorch for tests/torch (not needed by scripts/demo.sh)

jobs=$(nproc)
# OpenMPI refuses to run as root unless told; CI runs as root. One BLAS thread per process.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1

echo "== build (warnings as errors)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDDPSIM_WERROR=ON >/dev/null
cmake --build build -j "$jobs"
echo "== tests"
ctest --test-dir build --output-on-failure -j "$jobs"

if [[ ${DDPSIM_SKIP_ASAN:-0} != 1 ]]; then
  echo "== build with AddressSanitizer + UndefinedBehaviorSanitizer (CPU paths)"
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DDDPSIM_WERROR=ON -DDDPSIM_SANITIZE=ON \
        -DDDPSIM_CUDA=OFF >/dev/null
  cmake --build build-asan -j "$jobs"
  echo "== tests under sanitizers"
  # MPI's own allocations are not ours to fix; leaks inside libmpi are suppressed, ours are not.
  ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan --output-on-failure -j "$jobs" -LE nosan
fi
