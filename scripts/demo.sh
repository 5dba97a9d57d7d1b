#!/usr/bin/env bash
# Installs what is needed, builds, and runs the demo: how the 4096-unit mLSTM scales from 1 to 128
# V100s (16 DGX-1V nodes) over InfiniBand and over 10 GbE, with DDP's default 25 MB buckets, and
# where the time goes on 16 nodes. Extra arguments go to every `ddpsim sweep` (e.g. --bucket-cap-mb 50).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
# every tool the README names: ddpsim and ddpcalib
cmake --build build -j "$(nproc)" --target ddpsim ddpsim_ratios ddpcalib >/dev/null
ddpsim=build/sim/ddpsim
echo
echo "== mlstm-4k, fp16, batch 256/GPU, 8 V100 per node: throughput from 1 to 128 GPUs"
$ddpsim sweep --topology dgx1v-ib,dgx1v-10gbe --nodes 1,2,4,8,16 "$@"
echo
echo "== one GPU, for reference"
$ddpsim sweep --gpus-per-node 1 --nodes 1 "$@"
echo
echo "== 16 nodes over InfiniBand: the time breakdown and every bucket"
$ddpsim predict --nodes 16
echo
echo "== 16 nodes over 10 GbE"
$ddpsim predict --nodes 16 --topology dgx1v-10gbe
echo
echo "== the scaling plot in the README (docs/scaling.png), from bundled defaults"
$ddpsim sweep --topology dgx1v-ib,dgx1v-10gbe --nodes 1,2,4,8,16 --csv >build/scaling.csv
$ddpsim plot scaling -i build/scaling.csv -o docs/scaling.png
