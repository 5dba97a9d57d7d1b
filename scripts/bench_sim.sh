#!/usr/bin/env bash
# Benchmark of ddpsim itself (prints; not a test): wall time and peak memory of `ddpsim predict` for
# mlstm-4k on 16 and 128 DGX-1V nodes (128 and 1024 GPUs) in both fidelities, and network messages
# simulated per second. Wall time and memory are those of the simulation child (the one that runs
# SimGrid). Targets: flow under 0.5 s at 128 GPUs and under 5 s at 1024 GPUs; step at least 300k
# messages/s. Step fidelity at 1024 GPUs simulates about 12M messages: pass --full to include it.
# usage: scripts/bench_sim.sh [--full]
set -euo pipefail
cd "$(dirname "$0")/.."
ddpsim=${DDPSIM:-build/sim/ddpsim}
[[ -x $ddpsim ]] || { echo "build first: cmake -S . -B build && cmake --build build" >&2; exit 1; }
full=0
[[ ${1:-} == --full ]] && full=1
field() { awk -F'[:,]' -v k="\"$1\"" '$1 ~ k { gsub(/[ \t]/, "", $2); print $2; exit }' "$2"; }
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
printf '# %-6s %6s %-5s %10s %12s %12s %14s %12s\n' nodes gpus fid wall_s peak_MiB messages messages/s iteration_s
for nodes in 16 128; do
  for fid in flow step; do
    iters=3
    if [[ $fid == step && $nodes == 128 ]]; then
      ((full)) || { printf '  %-6s %6s %-5s %10s\n' "$nodes" $((nodes * 8)) "$fid" "(--full)"; continue; }
      iters=2
    fi
    "$ddpsim" predict --nodes "$nodes" --fidelity "$fid" --iterations "$iters" --json >"$tmp"
    wall=$(field wall_s "$tmp") rss=$(field peak_rss_kb "$tmp") msgs=$(field messages "$tmp") it=$(field iteration_s "$tmp")
    awk -v n="$nodes" -v f="$fid" -v w="$wall" -v r="$rss" -v m="$msgs" -v it="$it" \
      'BEGIN { printf "  %-6d %6d %-5s %10.3f %12.1f %12d %14.0f %12.6f\n", n, n * 8, f, w, r / 1024, m, m / w, it }'
  done
done
