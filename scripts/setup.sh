#!/usr/bin/env bash
# Installs the Debian packages ddpsim builds and runs with. Idempotent: packages already present are
# skipped, and apt-get runs only when something is missing. Needs root (or sudo) for the install.
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  libsimgrid-dev        # simulation engine (sim/)
  libgsl-dev            # fitting and interpolation (calib/, sim/)
  libopenmpi-dev openmpi-bin  # CPU all-reduce backend and multi-process runs (calib/)
  libopenblas-dev       # CBLAS for the CPU reference kernels (kernels/)
  libcjson-dev          # profiles and reports
  zlib1g-dev            # gzip-compressed profiler traces (ddpcalib import kineto)
  gnuplot-nox           # plots
  jq                    # tests: JSON fields in shell tests (tests/sim/test_full_golden.sh, scripts/bench_scale.sh)
  clang libclang-rt-dev # the loaders' fuzz targets: libFuzzer with ASan/UBSan (tests/fuzz/, docs/testing.md)
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "setup: all packages present"
  exit 0
fi

sudo=""
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "setup: need root to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
