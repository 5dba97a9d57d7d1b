#!/usr/bin/env bash
# Benchmark of ddpsim itself (prints; not a test): the engine against the previous one, side by side
# in one run, on `ddpsim predict` of mlstm-4k over DGX-1V nodes with InfiniBand. Wall time and peak
# memory are those of the simulation (JSON simulation.wall_s and peak_rss_kb); messages/s is network
# messages simulated per second of it.
#
# Targets (the engine issue): flow fidelity 1,024 GPUs in at most 0.3 s; 16,384 GPUs in at most 3 s
# and 500 MB; 131,072 GPUs in at most 60 s and 4 GB. Step fidelity: at least 1M messages/s, or the
# same results with 10x fewer messages. The previous engine is built from PREV (default: the last
# commit before the plan/engine/readout split) into build-prev/; it refuses more than 65,536 GPUs.
# --full adds the new engine simulating every GPU (--no-symmetry, as with jitter) at 1,024 and
# 16,384 GPUs (about 30 s), and step fidelity at 1,024 GPUs on the previous engine (tens of minutes).
# --scale [...] runs scripts/bench_scale.sh instead: full simulations (every GPU, jitter) of three
# models at 1,024 to 131,072 GPUs, today's engine against the one before issue 28.
# usage: scripts/bench_sim.sh [--full | --scale [bench_scale.sh's options]]
set -euo pipefail
cd "$(dirname "$0")/.."
[[ ${1:-} == --scale ]] && exec scripts/bench_scale.sh "${@:2}"
new=${DDPSIM:-build/sim/ddpsim}
[[ -x $new ]] || { echo "build first: cmake -S . -B build && cmake --build build" >&2; exit 1; }
full=0
[[ ${1:-} == --full ]] && full=1
prev_ref=${PREV:-3700717}
prev=build-prev/sim/ddpsim
if [[ ! -x $prev ]]; then
  echo "# building the previous engine ($prev_ref) into build-prev/ ..."
  rm -rf build-prev/src && mkdir -p build-prev/src
  git archive "$prev_ref" | tar -x -C build-prev/src
  cmake -S build-prev/src -B build-prev -DDDPSIM_CUDA=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build build-prev -j "$(nproc)" --target ddpsim >/dev/null
fi
export DDPSIM_DATA_DIR=$PWD
field() { awk -F'[:,]' -v k="\"$1\"" '$1 ~ k { gsub(/[ \t]/, "", $2); print $2; exit }' "$2"; }
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT

# run ENGINE NODES FIDELITY [extra args]: prints "wall_s peak_MiB messages iteration_s" or "died".
run() {
  local bin=$1 nodes=$2 fid=$3
  shift 3
  if "$bin" predict --nodes "$nodes" --fidelity "$fid" --iterations 2 --json "$@" >"$tmp" 2>/dev/null; then
    awk -v w="$(field wall_s "$tmp")" -v r="$(field peak_rss_kb "$tmp")" -v m="$(field messages "$tmp")" \
      -v it="$(field iteration_s "$tmp")" 'BEGIN { printf "%.3f %.1f %d %.9f\n", w, r / 1024, m, it }'
  else
    echo "died"
  fi
}

printf '# %-7s %-5s %-12s %10s %10s %12s %12s %14s %10s\n' gpus fid engine wall_s peak_MiB messages messages/s iteration_s target
row() { # row GPUS FID ENGINE "RESULT" TARGET
  local g=$1 f=$2 e=$3 res=$4 target=$5
  if [[ $res == died || $res == skipped ]]; then
    printf '  %-7s %-5s %-12s %10s\n' "$g" "$f" "$e" "$([[ $res == died ]] && echo '(refused or died)' || echo '(--full)')"
  else
    read -r w r m it <<<"$res"
    awk -v g="$g" -v f="$f" -v e="$e" -v w="$w" -v r="$r" -v m="$m" -v it="$it" -v t="$target" \
      'BEGIN { printf "  %-7s %-5s %-12s %10.3f %10.1f %12d %12.0f %14.9f %10s\n", g, f, e, w, r, m, (w > 0 ? m / w : 0), it, t }'
  fi
}
ratio() { # ratio NAME "PREV RESULT" "NEW RESULT"
  [[ $2 == skipped ]] && return
  [[ $2 == died || $3 == died ]] && { echo "#   $1: previous engine refused or died"; return; }
  read -r w0 r0 m0 i0 <<<"$2"
  read -r w1 r1 m1 i1 <<<"$3"
  awk -v n="$1" -v w0="$w0" -v w1="$w1" -v r0="$r0" -v r1="$r1" -v m0="$m0" -v m1="$m1" -v i0="$i0" -v i1="$i1" \
    'BEGIN { printf "#   %s: %.1fx faster, %.1fx less memory, %.1fx fewer messages; iteration %+.3f%%\n",
             n, w0 / (w1 > 1e-4 ? w1 : 1e-4), r0 / r1, (m1 > 0 ? m0 / m1 : 0), 100 * (i1 / i0 - 1) }'
}

for nodes in 128 2048 16384; do
  g=$((nodes * 8))
  t="<=0.3s"
  [[ $nodes == 2048 ]] && t="<=3s,500MB"
  [[ $nodes == 16384 ]] && t="<=60s,4GB"
  p=died
  ((nodes <= 8192)) && p=$(run "$prev" "$nodes" flow)
  n=$(run "$new" "$nodes" flow)
  row "$g" flow previous "$p" ""
  row "$g" flow new "$n" "$t"
  ratio "$g GPUs, flow" "$p" "$n"
  if ((full)) && ((nodes <= 2048)); then
    row "$g" flow "new, all" "$(run "$new" "$nodes" flow --no-symmetry)" "(every GPU)"
  fi
done
for nodes in 16 128; do
  g=$((nodes * 8))
  p=skipped
  if ((nodes == 16 || full)); then p=$(run "$prev" "$nodes" step); fi
  n=$(run "$new" "$nodes" step)
  row "$g" step previous "$p" ""
  row "$g" step new "$n" ">=1M msg/s or 10x fewer"
  ratio "$g GPUs, step" "$p" "$n"
done

echo
scripts/bench_decisions.sh
