#!/usr/bin/env bash
# Full simulations (every GPU: --no-symmetry, and compute jitter) against golden numbers recorded
# from the engine as it was before issue 28 (the platform written as XML and parsed by SimGrid,
# links looked up by name, every event played; at commit 8053e4f, which has issue 29's rank-major
# jitter draws), so that the platform built through
# SimGrid's API and the closed form (sim/maxplus.h) are shown to give the same results: the
# iteration and every bucket's ready, start and end within 0.1%. When the costs change (not the
# engine) the goldens are recorded again from the events engine (--events), as the file's first line
# says: per-gradient bucket work (issue 30) moved them by up to 1%, DDP's copy back bucket by bucket
# beside the later all-reduces (issue 47, sim/plan.c) by up to 2.4% (a100roce-64-all). Each case says whether the closed
# form applies (the report's simulation.closed_form); where it does, the case runs again with
# --events, and the two runs must agree within 0.1% too.
# The cases cover the platform shapes sim/platform.c builds for the bundled topologies: node zones
# behind routers over a non-blocking switch and over a shared backbone (an oversubscribed copy of
# dgx1v-ib), one zone (a single node), switched nodes (NVSwitch), several fabrics, both fidelities,
# 1,024 and 4,096 GPUs; switched nodes (DGX A100, whose GPU switch links and merged NICs are shared
# by several pairs: the closed form plays those groups max-min; the golden numbers of the cases
# added with it were recorded from the events engine of commit e2e8065, the last before it); and
# what the closed form models: prefetch, no_sync, host noise, a communication hook, DataLoader workers (events). The golden runs leave out compute sharing the
# GPU with NCCL's kernels (--no-gpu-sharing: the recorded engine had none); a second set of cases
# runs with it, closed form against events (every number of the report within 0.1%).
set -u
ddpsim=$1 src=$2 record=${3:-}
. "$(dirname "$0")/lib.sh"
export DDPSIM_DATA_DIR=$src
golden=$src/tests/sim/full_golden.tsv
sed 's/^switch nonblocking/switch bw=200Gbps/' "$src/topologies/dgx1v-ib.topo" >"$tmp/oversub.topo"

# name:closed|events:args, each run for exactly 2 iterations ($fixed: --jitter-ci 0 keeps predict
# from simulating a jittered mean longer; --no-interval leaves out the uncertainty's draws, which
# change no number compared here; GOLDEN_FIXED replaces it when recording with a build that lacks a
# flag).
fixed=${GOLDEN_FIXED:---iterations 2 --jitter-ci 0 --no-gpu-sharing --no-interval}
cases=(
  "mlstm-1024-all:closed:--model mlstm-4k --nodes 128 --no-symmetry"
  "mlstm-1024-jitter:closed:--model mlstm-4k --nodes 128 --jitter-cv 0.05"
  "resnet50-1024-all:closed:--model resnet50 --nodes 128 --no-symmetry"
  "resnet50-1024-jitter:closed:--model resnet50 --nodes 128 --jitter-cv 0.05"
  "bert-large-1024-all:closed:--model bert-large --nodes 128 --no-symmetry"
  "mlstm-4096-all:closed:--model mlstm-4k --nodes 512 --no-symmetry"
  "mlstm-4096-jitter:closed:--model mlstm-4k --nodes 512 --jitter-cv 0.05"
  "oversub-64-jitter:events:--model resnet50 --topology $tmp/oversub.topo --nodes 8 --jitter-cv 0.05"
  "10gbe-64-jitter:closed:--model resnet50 --topology dgx1v-10gbe --nodes 8 --jitter-cv 0.05"
  "a100roce-64-all:closed:--model bert-large --topology a100-roce100 --profile a100-dgxa100 --nodes 8 --no-symmetry"
  "dgxa100-64-jitter:closed:--model resnet50 --topology dgxa100-ib --profile a100-dgxa100 --nodes 8 --jitter-cv 0.05"
  "dgxa100-1024-jitter:closed:--model resnet50 --topology dgxa100-ib --profile a100-dgxa100 --nodes 128 --jitter-cv 0.05"
  "dgxa100-1024-all:closed:--model bert-large --topology dgxa100-ib --profile a100-dgxa100 --nodes 128 --no-symmetry"
  "dgxa100-4096-jitter:closed:--model mlstm-4k --topology dgxa100-ib --profile a100-dgxa100 --nodes 512 --jitter-cv 0.05"
  "dgxa100-128-host:closed:--model mlstm-4k --topology dgxa100-ib --profile a100-dgxa100 --nodes 16 --host-jitter-us 200 --jitter-cv 0"
  "h100-128-jitter:closed:--model bert-large --topology dgxh100-ib --profile h100-dgxh100 --nodes 16 --jitter-cv 0.05"
  "h100-128-host:closed:--model resnet50 --topology dgxh100-ib --profile h100-dgxh100 --nodes 16 --host-jitter-us 200 --jitter-cv 0"
  "edr1-64-jitter:closed:--model resnet50 --topology v100x8-edr1 --nodes 8 --jitter-cv 0.05"
  "step-64-jitter:events:--model resnet50 --fidelity step --nodes 8 --jitter-cv 0.05"
  "node-8-jitter:closed:--model resnet50 --nodes 1 --jitter-cv 0.05"
  "prefetch-128-jitter:closed:--model resnet50 --nodes 16 --jitter-cv 0.05 --prefetch"
  "nosync-128-jitter:closed:--model mlstm-4k --nodes 16 --jitter-cv 0.05 --no-sync 2"
  "host-128:closed:--model resnet50 --nodes 16 --host-jitter-us 200 --jitter-cv 0"
  "fp16-128-jitter:closed:--model bert-large --nodes 16 --jitter-cv 0.05 --comm-hook fp16"
  "workers-128-jitter:events:--model resnet50 --nodes 16 --jitter-cv 0.05 --num-workers 2 --load-ms 20"
)

# With compute sharing each GPU with NCCL's kernels (the bundled cards' SMs and bandwidth): the
# closed form against the events.
sharing_cases=(
  "resnet50-1024-jitter --model resnet50 --nodes 128 --jitter-cv 0.05"
  "bert-large-1024-all --model bert-large --nodes 128 --no-symmetry"
  "prefetch-128-jitter --model resnet50 --nodes 16 --jitter-cv 0.05 --prefetch"
  "nosync-128-jitter --model mlstm-4k --nodes 16 --jitter-cv 0.05 --no-sync 2"
  "fp16-128-jitter --model bert-large --nodes 16 --jitter-cv 0.05 --comm-hook fp16"
  "dgxa100-1024-jitter --model resnet50 --topology dgxa100-ib --profile a100-dgxa100 --nodes 128 --jitter-cv 0.05"
  "dgxa100-128-host --model bert-large --topology dgxa100-ib --profile a100-dgxa100 --nodes 16 --host-jitter-us 200 --jitter-cv 0"
  "h100-128-jitter --model bert-large --topology dgxh100-ib --profile h100-dgxh100 --nodes 16 --jitter-cv 0.05"
)

# One line per case: its name, the iteration, then every bucket's ready, start and end (17 digits).
numbers() {
  jq -r '[.iteration_s] + ([.buckets[] | .ready_s, .comm_start_s, .comm_end_s]) | map(tostring) | join(" ")' "$1"
}

if [[ $record == --record ]]; then
  {
    echo "# Recorded with ${GOLDEN_SOURCE:-ddpsim}, by tests/sim/test_full_golden.sh --record:"
    echo "# case iteration_s, then ready_s comm_start_s comm_end_s of every bucket (the last iteration's)."
    for c in "${cases[@]}"; do
      name=${c%%:*} args=${c#*:*:}
      # shellcheck disable=SC2086
      "$ddpsim" predict $args $fixed --json >"$tmp/out.json" || { echo "$name failed" >&2; exit 1; }
      echo "$name $(numbers "$tmp/out.json")"
    done
  } >"$golden.new" && mv "$golden.new" "$golden"
  exit 0
fi

# worst A B: the largest relative difference between two lines of numbers ("count" if they differ in length).
worst() {
  awk -v a="$1" -v b="$2" 'BEGIN {
      n = split(a, x, " "); m = split(b, y, " ");
      if (n != m || n == 0) { print "count " n " vs " m; exit }
      w = 0; for (i = 1; i <= n; i++) { d = x[i] - y[i]; d = d < 0 ? -d : d; s = (x[i] < 0 ? -x[i] : x[i]);
        r = s > 0 ? d / s : d; if (r > w) w = r }
      printf "%.3g", w }'
}
within() { awk -v w="$1" 'BEGIN { exit !(w ~ /^[0-9.e+-]+$/ && w + 0 <= 1e-3) }'; }

# report_agrees NAME: every number of $tmp/out.json's report within 0.1% of $tmp/ev.json's (the breakdown,
# host and device, stragglers), but the simulation's own (wall time, memory, which engine).
report_agrees() {
  local off
  off=$(jq -n --slurpfile a "$tmp/out.json" --slurpfile b "$tmp/ev.json" '($a[0] | del(.simulation)) as $x |
    ($b[0] | del(.simulation)) as $y | [$x | paths(numbers)] | map(. as $q | ($x | getpath($q)) as $u |
    ($y | getpath($q)) as $v | select($v == null or (($u - $v) | fabs) > 1e-3 * ([($u | fabs), ($v | fabs)] | max) + 1e-12) |
    map(tostring) | join(".")) | join(" ")' -r)
  check "$1: every number of the report within 0.1% of the events' (off: ${off:-none})" test -z "$off"
}

# Which runs of the events engine at 1,024 GPUs and more (the closed form's cross-check there: most
# of this script's time) this run makes, GOLDEN_BIG_EVENTS (tests/sim/CMakeLists.txt, docs/testing.md):
#   all   (the default, by hand): every case, every replay;
#   skip  (the fast tier, sim_full_golden; and under the sanitizers, GOLDEN_SANITIZED=1): every case
#         against its golden numbers, the events replayed at 64 and 128 GPUs only;
#   only  (the slow tier, sim_full_golden_big): the replays at 1,024 GPUs and more, nothing else.
# Together the two tiers make exactly the runs of `all`.
big_events=${GOLDEN_BIG_EVENTS:-all}
[[ ${GOLDEN_SANITIZED:-} == 1 ]] && big_events=skip
case $big_events in all | skip | only) ;; *) echo "GOLDEN_BIG_EVENTS=$big_events: all, skip or only" >&2; exit 2 ;; esac
is_big() { [[ $1 == *-1024-* || $1 == *-4096-* ]]; }
big_under_sanitizers() { # NAME: true (and says so) when this run leaves NAME's events replay out
  is_big "$1" && [[ $big_events == skip ]] || return 1
  echo "skip  $1 --events: left to the slow tier (1,024 GPUs or more: sim_full_golden_big)"
}

for c in "${cases[@]}"; do
  name=${c%%:*} args=${c#*:*:} rest=${c#*:}
  expect=${rest%%:*}
  if [[ $big_events == only ]] && ! { is_big "$name" && [[ $expect == closed ]]; }; then continue; fi
  want=$(awk -v n="$name" '$1 == n { $1 = ""; print }' "$golden")
  # shellcheck disable=SC2086
  "$ddpsim" predict $args $fixed --json >"$tmp/out.json" 2>"$tmp/err"
  check "$name: predict runs ($(head -c 200 "$tmp/err"))" test $? -eq 0
  closed=$(jq -r .simulation.closed_form "$tmp/out.json")
  check "$name: closed form $closed, expected $expect" test "$closed" = "$([[ $expect == closed ]] && echo true || echo false)"
  got=$(numbers "$tmp/out.json")
  w=$(worst "$want" "$got")
  check "$name: iteration and every bucket's times within 0.1% of the golden ones (worst relative difference $w)" within "$w"
  [[ $closed == true ]] || continue
  if big_under_sanitizers "$name"; then continue; fi
  # shellcheck disable=SC2086
  "$ddpsim" predict $args $fixed --events --json >"$tmp/ev.json" 2>"$tmp/err"
  check "$name --events: predict runs ($(head -c 200 "$tmp/err")), every event played" \
    test $? -eq 0 -a "$(jq -r .simulation.closed_form "$tmp/ev.json")" = false
  ev=$(numbers "$tmp/ev.json")
  w=$(worst "$want" "$ev")
  check "$name --events: within 0.1% of the golden ones (worst $w)" within "$w"
  w=$(worst "$ev" "$got")
  check "$name: closed form within 0.1% of the events (worst $w)" within "$w"
  report_agrees "$name"
done

sfixed=${fixed/ --no-gpu-sharing/}
for c in "${sharing_cases[@]}"; do
  name="${c%% *} sharing the GPU" args=${c#* }
  if big_under_sanitizers "$name"; then continue; fi
  if [[ $big_events == only ]] && ! is_big "$name"; then continue; fi
  # shellcheck disable=SC2086
  "$ddpsim" predict $args $sfixed --json >"$tmp/out.json" 2>"$tmp/err" &&
    "$ddpsim" predict $args $sfixed --events --json >"$tmp/ev.json" 2>>"$tmp/err"
  check "$name: both run ($(head -c 200 "$tmp/err"))" test $? -eq 0
  check "$name: the closed form ran, then the events" \
    test "$(jq -r .simulation.closed_form "$tmp/out.json") $(jq -r .simulation.closed_form "$tmp/ev.json")" = "true false"
  w=$(worst "$(numbers "$tmp/ev.json")" "$(numbers "$tmp/out.json")")
  check "$name: closed form within 0.1% of the events (worst $w)" within "$w"
  report_agrees "$name"
done
finish
