#!/usr/bin/env bash
# Benchmark of ddpsim's many-configuration commands (prints; not a test), with the targets of the
# decisions issue, tightened by issue 50: a 1000-configuration ResNet-50 sweep (nodes x caps x
# fabrics x batch, every row with its interval) with -j 2 in under 5 s (was 20); recommend with
# uncertainty (32 draws, advice included) for ResNet-50 on 8 nodes in under 1 s (was 10); and mpirun -np 2 giving the same rows as a local run. Wall times of the whole command.
# Then what the interval costs (issue 50's target: the default predict at most 1.5 times
# --no-interval): predict with and without it, in turn, REPS times each (default 9), the medians and
# the median of the pairs' ratios, symmetric and with every GPU simulated.
# scripts/bench_sim.sh runs this at its end.
# usage: scripts/bench_decisions.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${DDPSIM:-build/sim/ddpsim}
[[ -x $bin ]] || { echo "build first: cmake -S . -B build && cmake --build build" >&2; exit 1; }
export DDPSIM_DATA_DIR=$PWD
# OpenMPI refuses to run as root unless told (as scripts/test.sh does).
[[ $(id -u) != 0 ]] || export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
now() { date +%s.%N; }
# 10 node counts x 5 caps x 2 fabrics x 10 batches = 1000 configurations
grid=(--model resnet50 --nodes 1..512x2 --bucket-cap-mb 1,5,10,25,50 --topology dgx1v-ib,dgx1v-10gbe --batch 16..160+16 --csv)
printf '# %-52s %8s %8s %s\n' what wall_s target note
echo "# load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores (other work slows every number here)"
bench() { # bench NAME TARGET_S OUT -- command...
  local name=$1 target=$2 out=$3
  shift 4
  local t0 t1
  t0=$(now)
  "$@" >"$out" 2>/dev/null || { printf '  %-52s %8s\n' "$name" failed; return; }
  t1=$(now)
  local rows=""
  [[ $out == *.csv ]] && rows="$(($(wc -l <"$out") - 1)) rows"
  awk -v n="$name" -v a="$t0" -v b="$t1" -v t="$target" -v rows="$rows" \
    'BEGIN { w = b - a; printf "  %-52s %8.2f %8s %s\n", n, w, (t == "" ? "" : "<" t "s"), (t == "" ? "" : (w < t ? "met " : "MISSED ")) rows }'
}
bench "sweep, 1000 configurations, -j 1" "" "$tmp/j1.csv" -- "$bin" sweep "${grid[@]}" -j 1
bench "sweep, 1000 configurations, -j 2" 5 "$tmp/j2.csv" -- "$bin" sweep "${grid[@]}" -j 2
cmp -s "$tmp/j1.csv" "$tmp/j2.csv" && echo "#   -j 2 rows identical to -j 1" || echo "#   -j 2 rows DIFFER from -j 1"
if command -v mpirun >/dev/null; then
  bench "sweep, 1000 configurations, mpirun -np 2" "" "$tmp/mpi.csv" -- mpirun -np 2 --oversubscribe "$bin" sweep "${grid[@]}"
  cmp -s "$tmp/j1.csv" "$tmp/mpi.csv" && echo "#   mpirun -np 2 rows identical to -j 1" || echo "#   mpirun -np 2 rows DIFFER from -j 1"
fi
rec=(--model resnet50 --nodes 8 --topology dgx1v-10gbe --json)
bench "recommend resnet50 8 nodes 10GbE, 32 draws, advice" 1 "$tmp/rec.json" -- "$bin" recommend "${rec[@]}"
bench "recommend, the same, -j 1" "" "$tmp/rec1.json" -- "$bin" recommend "${rec[@]}" -j 1
bench "recommend, 128 draws, advice" "" "$tmp/rec128.json" -- "$bin" recommend "${rec[@]}" --samples 128
awk -F'[:,]' '/"simulations"/ { gsub(/[ \t]/, "", $2); printf "#   recommend (32 draws): %s simulations\n", $2 }' "$tmp/rec.json"

# interval_cost NAME ARGS...: predict ARGS with its interval and with --no-interval, alternately.
reps=${REPS:-9}
interval_cost() {
  local name=$1
  shift
  local k a b t0 t1
  for ((k = 0; k < reps; k++)); do
    t0=$(now)
    "$bin" predict "$@" >/dev/null 2>&1 || { printf '  %-52s failed\n' "$name"; return; }
    t1=$(now)
    a=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
    t0=$(now)
    "$bin" predict "$@" --no-interval >/dev/null 2>&1 || { printf '  %-52s failed\n' "$name"; return; }
    t1=$(now)
    b=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
    echo "$a $b"
  done | awk -v n="$name" '
    { x[NR] = $1; y[NR] = $2; r[NR] = $1 / $2 }
    function median(v, m,   i, j, t) { for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
                                       return m % 2 ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2 }
    END { rr = median(r, NR); printf "  %-52s %8.3f %8.3f %7.2fx %s\n", n, median(x, NR), median(y, NR), rr, (rr <= 1.5 ? "met" : "MISSED") }'
}
printf '# %-52s %8s %8s %8s (target: <= 1.5x; %d pairs, medians)\n' "predict: interval's cost" with_s without ratio "$reps"
interval_cost "mlstm-4k, 16 DGX-1V nodes (symmetric)" --nodes 16
interval_cost "resnet50, 64 DGX A100 nodes (symmetric)" --model resnet50 --nodes 64 --topology dgxa100-ib --profile a100-dgxa100
interval_cost "resnet50, 16 DGX-1V nodes, every GPU" --model resnet50 --nodes 16 --no-symmetry
interval_cost "bert-large, 128 DGX-1V nodes, every GPU" --model bert-large --nodes 128 --no-symmetry
interval_cost "bert-large FSDP, 4 DGX A100 nodes (events)" --model bert-large --framework fsdp --nodes 4 --topology dgxa100-ib --profile a100-dgxa100
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
