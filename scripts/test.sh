#!/usr/bin/env bash
# Installs what is needed, builds with warnings as errors, and runs the fast tier of the suite (every
# test but those labelled `slow`); then builds again with AddressSanitizer + UndefinedBehaviorSanitizer
# and runs the fast tier's C-facing kinds (unit, cli, golden; not `nosan`) once more. The tiers and
# kinds: tests/CMakeLists.txt, docs/testing.md.
# Usage: scripts/test.sh            the fast tier, both builds (what .ci/run runs)
#        scripts/test.sh --slow     the slow tier only, in build/ (no sanitizer pass)
#        scripts/test.sh --all      both tiers in build/, then the sanitizer pass
set -euo pipefail
cd "$(dirname "$0")/.."
tier=fast
case ${1:-} in
  "") ;;
  --slow) tier=slow ;;
  --all) tier=all ;;
  -h | --help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "scripts/test.sh: unknown argument '$1' (--slow, --all or none)" >&2; exit 2 ;;
esac
bash scripts/setup.sh
bash scripts/setup_python.sh   # PyTorch for tests/torch (not needed by scripts/demo.sh)

jobs=$(nproc)
# OpenMPI refuses to run as root unless told; CI runs as root. One BLAS thread per process.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1

# run_ctest DIR ARGS...: ctest in DIR; on a failure, each failing test's FAIL lines (or its last lines)
# again at the end, where the tail of a long log shows them.
run_ctest() {
  local dir=$1 rc=0
  shift
  ctest --test-dir "$dir" --output-on-failure -j "$jobs" "$@" || rc=$?
  if ((rc != 0)); then
    echo "== what failed ($dir/Testing/Temporary/LastTest.log)"
    awk '/^[0-9]+\/[0-9]+ Testing: / { name = $3; n = 0; f = 0; next }
         /^Test Failed\./ { print "-- " name; if (f) for (i = 0; i < f && i < 20; i++) print fl[i];
                            else for (i = (n > 15 ? n - 15 : 0); i < n; i++) print tl[i % 15]; next }
         /^Test Passed\./ { next }
         /^FAIL/ { fl[f++] = $0 }
         { tl[n % 15] = $0; n++ }' "$dir/Testing/Temporary/LastTest.log"
  fi
  return "$rc"
}

echo "== build (warnings as errors)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDDPSIM_WERROR=ON >/dev/null
cmake --build build -j "$jobs"
case $tier in
  fast) echo "== tests (fast tier)"; run_ctest build -LE slow ;;
  slow) echo "== tests (slow tier)"; run_ctest build -L slow; exit 0 ;;
  all) echo "== tests (both tiers)"; run_ctest build ;;
esac

if [[ ${DDPSIM_SKIP_ASAN:-0} != 1 ]]; then
  echo "== build with AddressSanitizer + UndefinedBehaviorSanitizer (CPU paths)"
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DDDPSIM_WERROR=ON -DDDPSIM_SANITIZE=ON \
        -DDDPSIM_CUDA=OFF >/dev/null
  cmake --build build-asan -j "$jobs"
  echo "== tests under sanitizers"
  # MPI's own allocations are not ours to fix; leaks inside libmpi are suppressed, ours are not.
  ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    run_ctest build-asan -L '^(unit|cli|golden)$' -LE 'nosan|slow'
fi
