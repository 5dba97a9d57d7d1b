#!/usr/bin/env bash
# Benchmark of full simulations (prints; not a test): `ddpsim predict` simulating every GPU
# (--no-symmetry, and with compute jitter) on this build's engine and on a base engine, side by side
# in one run, on the same work (the same models, topology and compute costs). Wall time and peak
# memory are the whole predict process's (GNU time: every simulation it ran, the iteration-1 and
# 1-GPU ones included); `uptime`'s 1-minute load stands beside each row (the machine is shared).
# Results: iteration_s, and the largest relative difference of the iteration and of every bucket's
# ready/start/end (the last iteration's, from the JSON) between the two engines.
#
# Targets (issue 28): 16,384 GPUs with jitter in at most 3 s and 500 MB; 131,072 GPUs with jitter
# in at most 60 s and 4 GB; the same results as the base engine (within 0.1%) at 1,024-4,096 GPUs.
# usage: scripts/bench_scale.sh [-m "MODELS"] [-g "GPUS"] [-k "all jitter"] [-e "base events new sharing"]
#                                [-t "TOPOLOGY[:PROFILE] ..."]
#   Topologies (-t): each a bundled topology, with the profile its GPUs need after a colon (default
#   dgx1v-ib with the default profile, and DGX A100's switched nodes, dgxa100-ib:a100-dgxa100;
#   dgxh100-ib:h100-dgxh100 is the other switched one).
#   Engines: base, BASE=<git ref> (default 09d49ad, the engine before issue 28) built into
#   build-base/, run with BASE_FLAGS (default none; --no-gpu-sharing for a base that has it); new,
#   DDPSIM (default build/sim/ddpsim) on the same work (--no-gpu-sharing: the base had no compute
#   sharing the GPU); events, the new one with --events (every event played: the platform's part
#   of the change alone); sharing, the new one with compute sharing each GPU with NCCL's kernels
#   (its default since issue 30: other work, so no diff column). Every run is exactly 2 iterations
#   (--jitter-ci 0). A run longer than TIMEOUT seconds (default 300) is stopped and shown as such;
#   base runs up to MAX_BASE_GPUS GPUs (default 16384), events up to MAX_EVENTS_GPUS (default
#   4096). JSONs stay in $OUTDIR (default bench-scale.out/).
set -euo pipefail
cd "$(dirname "$0")/.."
models="mlstm-4k resnet50 bert-large"
gpus="1024 4096 16384 131072"
kinds="all jitter"
engines="base events new"
topos="dgx1v-ib dgxa100-ib:a100-dgxa100"
limit=${TIMEOUT:-300}
max_base=${MAX_BASE_GPUS:-16384}
max_events=${MAX_EVENTS_GPUS:-4096}
while getopts m:g:k:e:t: o; do
  case $o in
    m) models=$OPTARG ;; g) gpus=$OPTARG ;; k) kinds=$OPTARG ;; e) engines=$OPTARG ;; t) topos=$OPTARG ;;
    *) echo "usage: $0 [-m MODELS] [-g GPUS] [-k KINDS] [-e ENGINES] [-t TOPOLOGIES]" >&2; exit 2 ;;
  esac
done
new=${DDPSIM:-build/sim/ddpsim}
base_ref=${BASE:-09d49ad}
base_flags=${BASE_FLAGS:-} # what base runs with beside the work: --no-gpu-sharing where base has it
base=build-base/sim/ddpsim
out=${OUTDIR:-bench-scale.out}
mkdir -p "$out"
if [[ $engines == *base* && ! -x $base ]]; then
  echo "# building the base engine ($base_ref) into build-base/ ..."
  rm -rf build-base/src && mkdir -p build-base/src
  git archive "$base_ref" | tar -x -C build-base/src
  cmake -S build-base/src -B build-base -DDDPSIM_CUDA=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build build-base -j 2 --target ddpsim >/dev/null
fi
[[ $engines != *new* || -x $new ]] || { echo "build first: cmake -S . -B build && cmake --build build" >&2; exit 1; }
export DDPSIM_DATA_DIR=$PWD

# The largest relative difference between two reports' iteration and bucket times.
diffrel() {
  jq -n --slurpfile a "$1" --slurpfile b "$2" '
    def rel(x; y): if x == 0 and y == 0 then 0 else ((x - y) | fabs) / ([(x | fabs), (y | fabs)] | max) end;
    [rel($a[0].iteration_s; $b[0].iteration_s)] +
    [range(0; $a[0].buckets | length) as $i | ($a[0].buckets[$i]) as $x | ($b[0].buckets[$i]) as $y |
      rel($x.ready_s; $y.ready_s), rel($x.comm_start_s; $y.comm_start_s), rel($x.comm_end_s; $y.comm_end_s)]
    | max * 100'
}

printf '# %-14s %-10s %7s %-6s %-6s %9s %9s %9s %14s %9s %6s %6s\n' topology model gpus kind engine wall_s cpu_s peak_MB iteration_s diff_% closed load
for tp in $topos; do
  topo=${tp%%:*} prof=()
  [[ $tp == *:* ]] && prof=(--profile "${tp#*:}")
for m in $models; do
  for g in $gpus; do
    nodes=$((g / 8))
    for k in $kinds; do
      extra=(--no-symmetry)
      [[ $k == jitter ]] && extra=(--jitter-cv 0.05)
      for e in $engines; do
        bin=$new flags=(--no-gpu-sharing)
        # shellcheck disable=SC2206
        [[ $e == base ]] && bin=$base flags=($base_flags)
        [[ $e == events ]] && flags=(--events --no-gpu-sharing)
        [[ $e == sharing ]] && flags=()
        [[ $e == base ]] && ((g > max_base)) && continue
        [[ $e == events ]] && ((g > max_events)) && continue
        j=$out/$topo-$m-$g-$k-$e.json
        load=$(cut -d' ' -f1 /proc/loadavg)
        if timeout "$limit" /usr/bin/time -f '%e %U %S %M' -o "$out/time" "$bin" predict --model "$m" --nodes "$nodes" \
             --topology "$topo" "${prof[@]}" --iterations 2 --jitter-ci 0 "${extra[@]}" "${flags[@]}" --json >"$j" 2>"$out/err"; then
          read -r w u sy kb <"$out/time"
          d=-
          [[ $e != base && $e != sharing && -s $out/$topo-$m-$g-$k-base.json ]] && d=$(printf '%.1e' "$(diffrel "$j" "$out/$topo-$m-$g-$k-base.json")")
          printf '  %-14s %-10s %7d %-6s %-6s %9.2f %9.2f %9.0f %14.9f %9s %6s %6s\n' "$topo" "$m" "$g" "$k" "$e" "$w" \
            "$(awk -v u="$u" -v s="$sy" 'BEGIN { print u + s }')" "$((kb / 1024))" "$(jq .iteration_s "$j")" "$d" \
            "$(jq .simulation.closed_form "$j")" "$load"
        else
          rm -f "$j"
          printf '  %-14s %-10s %7d %-6s %-6s %9s  (%s)\n' "$topo" "$m" "$g" "$k" "$e" "stopped" "over ${limit} s, or: $(tail -1 "$out/err")"
        fi
      done
    done
  done
done
done
