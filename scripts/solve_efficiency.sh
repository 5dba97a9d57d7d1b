#!/usr/bin/env bash
# Solves a reference profile's GEMM efficiency so that ddpsim reproduces one published throughput.
# Bisection on the efficiency; every other number in the profile stays as it is.
# usage: scripts/solve_efficiency.sh PROFILE PRECISION TARGET_TOKENS_PER_S [ddpsim predict flags...]
# e.g.   scripts/solve_efficiency.sh profiles/v100-dgx1v.json fp32 76000 --nodes 1 --batch 128
# Prints the efficiency; does not modify the profile.
set -euo pipefail
[[ $# -ge 3 ]] || { sed -n '2,6p' "$0"; exit 2; }
profile=$1 prec=$2 target=$3
shift 3
here=$(cd "$(dirname "$0")/.." && pwd)
ddpsim=${DDPSIM:-$here/build/sim/ddpsim}
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
lo=0.001 hi=1.0
for _ in $(seq 40); do
  mid=$(awk -v a="$lo" -v b="$hi" 'BEGIN { printf "%.6f", (a + b) / 2 }')
  # Replace the efficiency of compute.<prec>.gemm only.
  awk -v prec="\"$prec\"" -v eff="$mid" '
    index($0, prec ":") { inprec = 1 }
    inprec && /"gemm"/ { ingemm = 1 }
    ingemm && /"efficiency"/ { sub(/"efficiency": *[0-9.eE+-]+/, "\"efficiency\": " eff); ingemm = 0; inprec = 0 }
    { print }' "$profile" > "$tmp"
  got=$("$ddpsim" predict --profile "$tmp" --precision "$prec" --json "$@" | awk -F':' '/"tokens_per_s"/ { gsub(/[ \t,]/, "", $2); print $2 }')
  if awk -v g="$got" -v t="$target" 'BEGIN { exit !(g > t) }'; then hi=$mid; else lo=$mid; fi
done
echo "$mid"
