#!/usr/bin/env bash
# Full simulations (every GPU: --no-symmetry, and compute jitter) against golden numbers recorded
# from the engine as it was before issue 28 (commit 09d49ad: the platform written as XML and parsed
# by SimGrid, links looked up by name), so that the platform built through SimGrid's API is shown to
# give the same results: the iteration and every bucket's ready, start and end within 0.1%.
# The cases cover the platform shapes sim/platform.c builds for the bundled topologies: node zones
# behind routers over a non-blocking switch and over a shared backbone (an oversubscribed copy of
# dgx1v-ib), one zone (a single node), several fabrics, both fidelities, 1,024 and 4,096 GPUs.
# usage: test_full_golden.sh DDPSIM SOURCE_DIR [--record]  (--record rewrites full_golden.tsv with
# DDPSIM's numbers: only ever from the engine the file's header names)
set -u
ddpsim=$1 src=$2 record=${3:-}
. "$(dirname "$0")/lib.sh"
export DDPSIM_DATA_DIR=$src
golden=$src/tests/sim/full_golden.tsv
sed 's/^switch nonblocking/switch bw=200Gbps/' "$src/topologies/dgx1v-ib.topo" >"$tmp/oversub.topo"

# name: args (--iterations 2 each)
cases=(
  "mlstm-1024-all:--model mlstm-4k --nodes 128 --no-symmetry"
  "mlstm-1024-jitter:--model mlstm-4k --nodes 128 --jitter-cv 0.05"
  "resnet50-1024-all:--model resnet50 --nodes 128 --no-symmetry"
  "resnet50-1024-jitter:--model resnet50 --nodes 128 --jitter-cv 0.05"
  "bert-large-1024-all:--model bert-large --nodes 128 --no-symmetry"
  "mlstm-4096-all:--model mlstm-4k --nodes 512 --no-symmetry"
  "mlstm-4096-jitter:--model mlstm-4k --nodes 512 --jitter-cv 0.05"
  "oversub-64-jitter:--model resnet50 --topology $tmp/oversub.topo --nodes 8 --jitter-cv 0.05"
  "10gbe-64-jitter:--model resnet50 --topology dgx1v-10gbe --nodes 8 --jitter-cv 0.05"
  "a100roce-64-all:--model bert-large --topology a100-roce100 --profile a100-dgxa100 --nodes 8 --no-symmetry"
  "edr1-64-jitter:--model resnet50 --topology v100x8-edr1 --nodes 8 --jitter-cv 0.05"
  "step-64-jitter:--model resnet50 --fidelity step --nodes 8 --jitter-cv 0.05"
  "node-8-jitter:--model resnet50 --nodes 1 --jitter-cv 0.05"
)

# One line per case: its name, the iteration, then every bucket's ready, start and end (17 digits).
numbers() {
  jq -r '[.iteration_s] + ([.buckets[] | .ready_s, .comm_start_s, .comm_end_s]) | map(tostring) | join(" ")' "$1"
}

if [[ $record == --record ]]; then
  {
    echo "# Recorded with ddpsim at commit 09d49ad (the XML platform), by tests/sim/test_full_golden.sh --record:"
    echo "# case iteration_s, then ready_s comm_start_s comm_end_s of every bucket (the last iteration's)."
    for c in "${cases[@]}"; do
      name=${c%%:*}
      # shellcheck disable=SC2086
      "$ddpsim" predict ${c#*:} --iterations 2 --json >"$tmp/out.json" || { echo "$name failed" >&2; exit 1; }
      echo "$name $(numbers "$tmp/out.json")"
    done
  } >"$golden.new" && mv "$golden.new" "$golden"
  exit 0
fi

for c in "${cases[@]}"; do
  name=${c%%:*}
  # shellcheck disable=SC2086
  "$ddpsim" predict ${c#*:} --iterations 2 --json >"$tmp/out.json" 2>"$tmp/err"
  check "$name: predict runs ($(head -c 200 "$tmp/err"))" test $? -eq 0
  want=$(awk -v n="$name" '$1 == n { $1 = ""; print }' "$golden")
  got=$(numbers "$tmp/out.json")
  worst=$(awk -v a="$want" -v b="$got" 'BEGIN {
      n = split(a, x, " "); m = split(b, y, " ");
      if (n != m || n == 0) { print "count " n " vs " m; exit }
      w = 0; for (i = 1; i <= n; i++) { d = x[i] - y[i]; d = d < 0 ? -d : d; s = (x[i] < 0 ? -x[i] : x[i]);
        r = s > 0 ? d / s : d; if (r > w) w = r }
      printf "%.3g", w }')
  check "$name: iteration and every bucket's times within 0.1% of the golden ones (worst relative difference $worst)" \
    awk -v w="$worst" 'BEGIN { exit !(w ~ /^[0-9.e+-]+$/ && w + 0 <= 1e-3) }'
done
finish
