#!/usr/bin/env bash
# End to end: predictions for 1 to 128 GPUs on both bundled fabrics. InfiniBand is never slower
# than Ethernet; throughput grows with the node count; efficiencies are fractions.
set -u
ddpsim=$1
. "$(dirname "$0")/lib.sh"
for t in dgx1v-ib dgx1v-10gbe; do
  "$ddpsim" sweep --topology "$t" --nodes 1,2,4,8,16 --csv >"$tmp/$t.csv"
  check "sweep over 1..16 nodes (8..128 GPUs) on $t" test $? -eq 0 -a "$(wc -l <"$tmp/$t.csv")" -eq 6
  for g in 1 2 4; do
    "$ddpsim" predict --topology "$t" --gpus-per-node "$g" --json >"$tmp/$t-$g.json"
    check "predict on $g GPU(s) of one node on $t" test $? -eq 0
  done
done
# sweep's CSV names its columns (docs/cli.md): pick them by name.
cols() { # cols FILE NAME...: those columns, space-separated, one line per row
  local f=$1
  shift
  awk -F, -v want="$*" 'NR == 1 { n = split(want, w, " "); for (i = 1; i <= NF; i++) idx[$i] = i; next }
    { line = ""; for (k = 1; k <= n; k++) line = line (k > 1 ? " " : "") $(idx[w[k]]); print line }' "$f"
}
paste -d' ' <(cols "$tmp/dgx1v-ib.csv" gpus iteration_s scaling_efficiency) <(cols "$tmp/dgx1v-10gbe.csv" iteration_s scaling_efficiency) >"$tmp/both"
while read -r g it_ib eff_ib it_e eff_e; do
  check "$g GPUs: InfiniBand ($it_ib s) never slower than 10GbE ($it_e s)" awk -v a="$it_ib" -v b="$it_e" 'BEGIN { exit !(a <= b * (1 + 1e-12)) }'
  check "$g GPUs: efficiencies in (0, 1]: ib $eff_ib, 10gbe $eff_e" awk -v a="$eff_ib" -v b="$eff_e" 'BEGIN { exit !(a > 0 && a <= 1 + 1e-9 && b > 0 && b <= 1 + 1e-9) }'
done <"$tmp/both"
for t in dgx1v-ib dgx1v-10gbe; do
  check "$t: chars/s grows with every doubling of nodes" awk 'NR > 1 && $1 <= prev { bad = 1 } { prev = $1 } END { exit bad }' <(cols "$tmp/$t.csv" tokens_per_s)
done
one=$(cols "$tmp/dgx1v-ib.csv" iteration_s | head -1)
check "one node is the same on both fabrics (no NIC used)" awk -v a="$one" -v b="$(cols "$tmp/dgx1v-10gbe.csv" iteration_s | head -1)" 'BEGIN { exit !(a == b) }'
# Step fidelity simulates ring/Simple: compare with flow fidelity running the same.
"$ddpsim" predict --nodes 16 --fidelity step --json >"$tmp/step.json" &&
  "$ddpsim" predict --nodes 16 --nccl-algo ring --nccl-proto Simple --json >"$tmp/flow.json"
s=$(awk -F'[:,]' '/"iteration_s"/ { gsub(/[ \t]/, "", $2); print $2 }' "$tmp/step.json")
f=$(awk -F'[:,]' '/"iteration_s"/ { gsub(/[ \t]/, "", $2); print $2 }' "$tmp/flow.json")
check "mlstm-4k on 128 GPUs: step ($s s) and flow ($f s) agree within 0.5%" awk -v a="$s" -v b="$f" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 0.005 * b) }'
# ResNet-50 on 4 DGX-1V nodes over 10 GbE: tiny buckets lose to per-message latency, huge ones
# lose the overlap with backward; a middle cap wins.
"$ddpsim" sweep --model resnet50 --nodes 4 --topology dgx1v-10gbe --bucket-cap-mb 0.25,10,200 --csv >"$tmp/r50.csv"
read -r small mid large < <(cols "$tmp/r50.csv" iteration_s | tr '\n' ' ')
check "resnet50, 10GbE: 10 MB ($mid s) beats 0.25 MB ($small s) and 200 MB ($large s)" awk -v s="$small" -v m="$mid" -v l="$large" 'BEGIN { exit !(m < s && m < l) }'
"$ddpsim" predict --nodes 128 --json >"$tmp/1024.json"
check "1024 GPUs (128 nodes) predict in flow fidelity" test $? -eq 0
finish
