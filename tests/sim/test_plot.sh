#!/usr/bin/env bash
# ddpsim plot: each plot from the output of sweep, recommend and predict, as a PNG (its magic bytes)
# and an SVG (parsed as XML, its series counted), the series asked for in the script; an uncertainty
# band where its columns are; new columns ignored; misuse, bad input and a missing gnuplot. Every
# title names the scenario read from the input; the caps plot marks DDP's default and the
# recommended cap; the breakdown draws every topology; the timeline's labels keep their spacing
# rule and its legend names each colour.
set -u
ddpsim=$1
. "$(dirname "$0")/lib.sh"
if ! command -v gnuplot >/dev/null; then echo "skipped: no gnuplot (scripts/setup.sh installs it)"; exit 77; fi

is_png() { test "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a; }
svg_series() { # the distinct plot groups gnuplot's SVG terminal writes, one per series
  python3 - "$1" <<'PY'
import sys, xml.etree.ElementTree as ET
ids = {g.get("id") for g in ET.parse(sys.argv[1]).iter("{http://www.w3.org/2000/svg}g") if (g.get("id") or "").startswith("gnuplot_plot_")}
print(len(ids))
PY
}

# plot KIND INPUT NAME SERIES TITLE...: PNG, SVG with SERIES series, and each TITLE in the script.
plot() {
  local kind=$1 in=$2 name=$3 series=$4
  shift 4
  "$ddpsim" plot "$kind" -i "$in" -o "$tmp/$name.png" --script "$tmp/$name.gp" >"$tmp/out" 2>&1
  check "$name: exit 0, a non-empty PNG" test $? -eq 0 -a -s "$tmp/$name.png"
  check "$name: the PNG's magic bytes" is_png "$tmp/$name.png"
  "$ddpsim" plot "$kind" -i "$in" -o "$tmp/$name.svg" >/dev/null 2>&1
  local n
  n=$(svg_series "$tmp/$name.svg" 2>&1)
  check "$name: the SVG parses as XML and has $series series (got $n)" test "$n" = "$series"
  for t in "$@"; do check "$name: the script draws '$t'" grep -qF -- "$t" "$tmp/$name.gp"; done
}

"$ddpsim" sweep --model resnet50 --nodes 1,2,4 --topology dgx1v-ib,dgx1v-10gbe --csv >"$tmp/s.csv"
"$ddpsim" sweep --model resnet50 --nodes 4 --bucket-cap-mb 1,5,25 --topology dgx1v-10gbe --csv >"$tmp/c.csv"
"$ddpsim" recommend --model resnet50 --nodes 4 --topology dgx1v-10gbe --bucket-cap-mb 5,25,100 --json >"$tmp/r.json"
"$ddpsim" predict --model resnet50 --nodes 4 --topology dgx1v-10gbe --json >"$tmp/p.json"

# The scenario, as the input states it: model, batch, precision, profile, release.
col() { # col FILE NAME: the first row's value of column NAME of a CSV
  awk -F, -v n="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == n) c = i; next } NR == 2 { print $c; exit }' "$1"
}
jstr() { python3 -c 'import json, sys; v = json.load(open(sys.argv[1]))[sys.argv[2]]; print(v if isinstance(v, str) else "%g" % v)' "$1" "$2"; }
# scenario_ok NAME MODEL BATCH PRECISION PROFILE PYTORCH: the script's title line names each.
scenario_ok() {
  local line
  line=$(grep -E "^set title|^set multiplot" "$tmp/$1.gp" | head -1)
  check "$1: the title names the scenario ($2, batch $3, $4, $5, PyTorch $6)" \
    bash -c '[[ "$1" == *"$2, batch $3 per GPU, $4, profile $5, PyTorch $6"* ]]' _ "$line" "$2" "$3" "$4" "$5" "$6"
}
csv_scenario() { echo "$(col "$1" model) $(col "$1" batch_per_gpu) $(col "$1" precision) $(col "$1" profile) $(col "$1" pytorch)"; }
json_scenario() { echo "$(jstr "$1" model) $(jstr "$1" batch_per_gpu) $(jstr "$1" precision) $(jstr "$1" profile) $(jstr "$1" pytorch)"; }

# two topologies and the ideal line, in each of two panels
plot scaling "$tmp/s.csv" scaling 6 "title 'dgx1v-ib'" "title 'dgx1v-10gbe'" "title 'ideal'" "Speedup"
# ---- issue 48: a sweep of two profiles draws a line per (topology, profile), each with its own rows
# (the slower profile's were dropped for the faster's), and each profile's ideal line ----
"$ddpsim" sweep --model resnet50 --nodes 1,2 --topology dgx1v-ib --profile v100-dgx1v,p100-dgx1 --no-interval --csv >"$tmp/s2.csv"
plot scaling "$tmp/s2.csv" scaling-profiles 7 "title 'dgx1v-ib, v100-dgx1v'" "title 'dgx1v-ib, p100-dgx1'" \
  "title 'ideal, v100-dgx1v'" "title 'ideal, p100-dgx1'" "title 'ideal'"
check "scaling-profiles: each line holds its own profile's rows (samples/s as the sweep wrote them)" python3 - "$tmp/s2.csv" "$tmp/scaling-profiles.gp" <<'PY'
import csv, re, sys
rows = list(csv.DictReader(open(sys.argv[1])))
text = open(sys.argv[2]).read()
titles = re.findall(r"\$t(\d+) using 1:2 with linespoints lw 2 lc \d+ title '([^']*)'", text)
ok = len(titles) == 2
for i, title in titles:
    topo, prof = title.split(", ")
    block = re.search(r"\$t%s << EOD\n(.*?)EOD" % i, text, re.S).group(1).split("\n")[:-1]
    got = sorted((float(l.split()[0]), float(l.split()[1])) for l in block)
    want = sorted((float(r["gpus"]), float(r["samples_per_s"])) for r in rows if r["topology"] == topo and r["profile"] == prof)
    ok &= len(got) == 2 and all(g[0] == w[0] and abs(g[1] - w[1]) <= 1e-9 * w[1] for g, w in zip(got, want)) and len(got) == len(want)
sys.exit(0 if ok else 1)
PY
# (a sweep gives every row its interval by default: the caps plot draws its band under the line)
plot caps "$tmp/c.csv" caps-sweep 2 "title 'dgx1v-10gbe, 4 nodes'" "samples/s" "with filledcurves"
plot caps "$tmp/r.json" caps-recommend 2 "title 'dgx1v-10gbe, 4 nodes'" "iteration time"
check "caps-recommend: the recommend's three caps in the data" test "$(awk '/^\$c0/,/^EOD/' "$tmp/caps-recommend.gp" | grep -c '^[0-9]')" -eq 3
# the parts not zero everywhere (a sweep writes all six; loading and stragglers are zero here), for
# each of the two topologies: four parts twice
plot breakdown "$tmp/s.csv" breakdown 8 "title 'compute'" "title 'exposed communication'" "title 'buffer broadcast'" \
  "title 'host-to-device copy'" "rowstacked" "newhistogram 'dgx1v-ib'" "newhistogram 'dgx1v-10gbe'"
check "breakdown: a part zero in every row is left out" bash -c "! grep -q \"title 'waiting for stragglers'\" '$tmp/breakdown.gp'"
for b in 0 1; do
  check "breakdown: topology $b's three node counts" test "$(awk "/^\\\$b$b /,/^EOD/" "$tmp/breakdown.gp" | grep -c '^[0-9]')" -eq 3
done
check "breakdown: a part's colour is the same in both groups" test "$(grep -o 'using 4 lc [0-9]*' "$tmp/breakdown.gp" | sort -u | wc -l)" -eq 1
# seven topologies' groups: six drawn, the seventh named in the title as dropped
for t in dgx1v-ib dgx1v-10gbe a b c d e; do awk -F, -v OFS=, -v t="$t" 'NR > 1 && $2 == "dgx1v-ib" { $2 = t; print }' "$tmp/s.csv"; done >"$tmp/seven.body"
{ head -1 "$tmp/s.csv"; cat "$tmp/seven.body"; } >"$tmp/seven.csv"
"$ddpsim" plot breakdown -i "$tmp/seven.csv" -o "$tmp/seven.png" --script "$tmp/seven.gp" >/dev/null 2>&1
check "breakdown of seven topologies: six groups drawn" test "$(grep -o "newhistogram '[^']*'" "$tmp/seven.gp" | wc -l)" -eq 6
check "breakdown of seven topologies: the title says which it dropped" grep -q "not drawn (only 6 groups fit): e'" "$tmp/seven.gp"

# the timeline: a series per compute phase drawn (its legend entry in its own colour), the labels,
# the all-reduces and the ready points; and a many-bucket iteration (cap 0.5 MB)
phases=$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(sum(d.get(k, 0) > 0 for k in ("loading_s", "transfer_s", "buffer_broadcast_s", "forward_s", "backward_s", "bucket_copy_s", "optimizer_s")))' "$tmp/p.json")
plot timeline "$tmp/p.json" timeline $((phases + 3)) "title 'all-reduce'" "title 'bucket ready'" "'bucket 0'" "laid end to end" \
  "title 'forward'" "title 'backward'"
# FSDP (HSDP here: all three kinds): a row per kind of collective, no bucket rows or ready points
"$ddpsim" predict --framework fsdp --model bert-base --nodes 2 --fsdp-replicate 2 --json >"$tmp/pf.json"
fphases=$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(sum(d.get(k, 0) > 0 for k in ("loading_s", "transfer_s", "buffer_broadcast_s", "forward_s", "backward_s", "bucket_copy_s", "optimizer_s")))' "$tmp/pf.json")
plot timeline "$tmp/pf.json" timeline-fsdp $((fphases + 2)) "FSDP''s collectives as simulated" '"all-\ngathers" 1' \
  '"reduce-\nscatters" 2' '"all-\nreduces" 3' "title 'collective'" "title 'FSDP copies'"
check "timeline-fsdp: no bucket rows, no ready points" bash -c "! grep -q -e \"'bucket 0'\" -e \"bucket ready\" '$tmp/timeline-fsdp.gp'"
"$ddpsim" predict --model resnet50 --nodes 4 --topology dgx1v-10gbe --bucket-cap-mb 0.5 --json >"$tmp/p2.json"
"$ddpsim" plot timeline -i "$tmp/p2.json" -o "$tmp/timeline2.png" --script "$tmp/timeline2.gp" >/dev/null 2>&1
check "timeline, many buckets: drawn" test $? -eq 0 -a -s "$tmp/timeline2.png"
for gp in timeline timeline2; do
  check "$gp: every phase's colour is its own and titled (no 'lc variable')" bash -c "
    ! grep -q 'lc variable' '$tmp/$gp.gp' &&
    test \$(grep -o \"every ::[0-9]*::[0-9]* using [^ ]* with boxxyerror lc rgb '[^']*' title '[^']*'\" '$tmp/$gp.gp' | sed \"s/.*lc rgb '\\([^']*\\)'.*/\\1/\" | sort -u | wc -l) -eq \$(grep -c 'every ::' '$tmp/$gp.gp')"
  # The spacing rule (docs/plots.md): a label of n characters is (6n + 8) px wide of the plot's
  # 0.87 * 960 px; two labels on one level never overlap, and each lies inside the axis.
  check "$gp: no two phase labels on one level overlap, each inside [0, xmax]" python3 - "$tmp/$gp.gp" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
xmax = float(re.search(r"set xrange \[0:([^\]]+)\]", text).group(1))
rows = re.search(r"\$labels << EOD\n(.*?)EOD", text, re.S).group(1).splitlines()
spans = {}
for r in rows:
    x, lv, name = r.split(" ", 2)
    w = (len(name.strip('"')) * 6 + 8) / (0.87 * 960) * xmax
    spans.setdefault(lv, []).append((float(x) - w / 2, float(x) + w / 2))
ok, tol = bool(rows), 1e-6 * xmax  # the script's numbers have 9 digits
for lv, s in spans.items():
    s.sort()
    ok &= all(a[1] <= b[0] + tol for a, b in zip(s, s[1:])) and s[0][0] >= -tol and s[-1][1] <= xmax + tol
sys.exit(0 if ok else 1)
PY
done
check "timeline2: one bucket name in every two rows of 35 or more" bash -c "n=\$(grep -o \"'bucket [0-9]*'\" '$tmp/timeline2.gp' | wc -l); test \$n -le 30 -a \$n -ge 15"

# Every title names the scenario, read from the plot's input.
scenario_ok scaling $(csv_scenario "$tmp/s.csv")
scenario_ok caps-sweep $(csv_scenario "$tmp/c.csv")
scenario_ok caps-recommend $(json_scenario "$tmp/r.json")
scenario_ok breakdown $(csv_scenario "$tmp/s.csv")
scenario_ok timeline $(json_scenario "$tmp/p.json")
# a column with two values lists both
awk -F, -v OFS=, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "batch_per_gpu") c = i } NR == 3 { $c = 32 } { print }' "$tmp/c.csv" >"$tmp/mixed.csv"
"$ddpsim" plot caps -i "$tmp/mixed.csv" -o "$tmp/mixed.png" --script "$tmp/mixed.gp" >/dev/null 2>&1
check "a column with two values: the title lists both" grep -q "batch 64/32 per GPU" "$tmp/mixed.gp"

# The caps plot marks DDP's default (sim/reducer.h's REDUCER_DEFAULT_CAP, in MB) and the recommended cap:
# recommend's, or the sweep's best row's.
def=$(awk '$1 == "#define" && $2 == "REDUCER_DEFAULT_CAP" { print $3 + 0 }' "$(dirname "$0")/../../sim/reducer.h")
rec=$(jstr "$tmp/r.json" recommended_bucket_cap_mb)
best=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) { if ($i == "samples_per_s") y = i; if ($i == "bucket_cap_mb") c = i }; next }
  $y > b { b = $y; cap = $c } END { print cap + 0 }' "$tmp/c.csv")
# (the sweep gave 25: the mark says it is DDP's default cap given, which cuts no 1 MiB first bucket)
check "caps-sweep: DDP's default cap ($def MB) marked and labelled as given" bash -c "grep -q 'set arrow from $def, graph 0' '$tmp/caps-sweep.gp' && grep -q \"set label 'DDP''s default cap, given (without its 1 MiB first bucket): $def MB'\" '$tmp/caps-sweep.gp'"
check "caps-sweep: the sweep's best cap ($best MB) marked as recommended" bash -c "grep -q 'set arrow from $best, graph 0' '$tmp/caps-sweep.gp' && grep -q \"set label 'recommended: $best MB (the sweep''s best)'\" '$tmp/caps-sweep.gp'"
if [ "$rec" = "$def" ]; then
  check "caps-recommend: the recommended cap ($rec MB) is the default: one mark saying both" bash -c "grep -q 'set arrow from $def, graph 0' '$tmp/caps-recommend.gp' && grep -q \"set label 'DDP default = recommended: $rec MB\" '$tmp/caps-recommend.gp'"
else
  check "caps-recommend: the default and the recommended cap ($rec MB) marked" bash -c "grep -q 'set arrow from $def, graph 0' '$tmp/caps-recommend.gp' && grep -q \"set label 'recommended: $rec MB\" '$tmp/caps-recommend.gp'"
fi
# a sweep of caps far from the default: the axis still holds the default's mark
"$ddpsim" sweep --model resnet50 --nodes 2 --bucket-cap-mb 1,2 --topology dgx1v-10gbe --csv >"$tmp/small.csv"
"$ddpsim" plot caps -i "$tmp/small.csv" -o "$tmp/small.png" --script "$tmp/small.gp" >/dev/null 2>&1
xhi=$(sed -n 's/^set xrange \[.*:\(.*\)\]$/\1/p' "$tmp/small.gp")
check "caps of 1 and 2 MB: the x axis (to $xhi) reaches the default's mark" awk -v d="$def" -v x="$xhi" 'BEGIN { exit !(x + 0 > d + 0) }'

# pareto: cost against time to train from a sweep with a job; a misfit apart; bars from the interval
# (--no-interval here: points without bars).
"$ddpsim" sweep --model bert-large --batch 32,64 --topology dgx1v-ib,dgx1v-10gbe --nodes 1,4 --epochs 3 --dataset-size 1e6 \
  --price 3 --allow-oom --no-interval --csv >"$tmp/pa.csv" 2>/dev/null
# two topologies, the rows that do not fit (batch 64 on 16 GB), the front and its labels
plot pareto "$tmp/pa.csv" pareto 5 "title 'dgx1v-ib'" "title 'dgx1v-10gbe'" "title 'does not fit the card'" "title 'Pareto front'" \
  "'Cost against time to train (numbers: GPUs)' . \"\\n\" . 'bert-large, batch 32/64 per GPU, fp16, profile v100-dgx1v, PyTorch" \
  "with labels" "ylabel 'cost (GPU-hours x the price per GPU-hour given)'"
check "pareto: every fitting row labelled with its GPUs" python3 -c '
import csv, sys
want = sorted((round(float(r["train_s"]) / 3600, 9), r["gpus"]) for r in csv.DictReader(open(sys.argv[1])) if r["fits"] == "1")
got, on = [], False
for l in open(sys.argv[2]):
    if l.startswith("$gpus"): on = True; continue
    if on and l.startswith("EOD"): break
    if on: x, y, lab = l.split(" ", 2); got.append((round(float(x), 9), lab.strip().strip("\"")))
assert sorted(got) == want and len(want) >= 4, (got, want)' "$tmp/pa.csv" "$tmp/pareto.gp"
# --price auto: the price table's currency, in the CSV and on the cost axis; two currencies refused
"$ddpsim" sweep --model resnet50 --profile a100-dgxa100 --topology dgxa100-ib --nodes 1,2 --samples 1e7 --price auto \
  --no-interval --csv >"$tmp/pu.csv" 2>/dev/null
check "sweep --price auto: the currency column says USD on every row" \
  test "$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "currency") c = i; next } { print $c }' "$tmp/pu.csv" | sort -u)" = USD
plot pareto "$tmp/pu.csv" pareto-usd 3 "ylabel 'cost (USD)'"
awk -F, -v OFS=, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "currency") c = i } NR == 3 { $c = "EUR" } { print }' \
  "$tmp/pu.csv" >"$tmp/pe.csv"
"$ddpsim" plot pareto -i "$tmp/pe.csv" -o "$tmp/pe.png" >"$tmp/out" 2>"$tmp/err"
check "pareto: costs in two currencies: exit 1 naming both, no picture" \
  test $? -eq 1 -a ! -e "$tmp/pe.png" -a -n "$(grep -F "row 2: a cost in EUR beside one in USD" "$tmp/err")"
check "pareto: the front by hand: the fitting rows no other fitting row beats on both, in order of time" python3 -c '
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["fits"] == "1"]
pts = [(float(r["train_s"]) / 3600, float(r["cost"]), r["gpus"]) for r in rows]
front = sorted({p for p in pts if not any(q[0] <= p[0] and q[1] <= p[1] and q[:2] != p[:2] for q in pts)})
got, on = [], False
for l in open(sys.argv[2]):
    if l.startswith("$front"): on = True; continue
    if on and l.startswith("EOD"): break
    if on: x, y, lab = l.split(" ", 2); got.append((float(x), float(y), lab.strip().strip("\"").split()[0]))
assert [(round(a, 9), round(b, 9), c) for a, b, c in got] == [(round(a, 9), round(b, 9), c) for a, b, c in front], (got, front)
assert len(got) >= 2, got' "$tmp/pa.csv" "$tmp/pareto.gp"
"$ddpsim" sweep --model resnet50 --nodes 1,2 --samples 1e7 --draws 4 --csv >"$tmp/pi.csv"
plot pareto "$tmp/pi.csv" pareto-interval 3 "xyerrorbars" "bars: the interval" "ylabel 'GPU-hours'" "GPU-hours against time to train"
"$ddpsim" plot pareto -i "$tmp/s.csv" -o "$tmp/x.png" >"$tmp/out" 2>"$tmp/err"
check "pareto from a sweep without a job: exit 1 saying what it needs" \
  test $? -eq 1 -a -n "$(grep -E "row 1: train_s and gpu_hours must be numbers above 0 \(sweep --samples N" "$tmp/err")"

# An uncertainty band where the columns are, and a column the plot does not know is ignored.
# (sweep writes the band's columns, empty with --no-interval: filled here)
band() { # band LO_FACTOR HI_FACTOR EXTRA_HEADER EXTRA_FIELD < sweep.csv
  awk -F, -v OFS=, -v lo="$1" -v hi="$2" -v xh="$3" -v xf="$4" '
    NR == 1 { for (i = 1; i <= NF; i++) { if ($i == "samples_per_s") c = i; if ($i == "samples_per_s_lo") l = i; if ($i == "samples_per_s_hi") h = i }
              print $0 xh; next }
    { $l = $c * lo; $h = $c * hi; print $0 xf }'
}
band 0.97 1.02 ",unknown_column" ",x" <"$tmp/c.csv" >"$tmp/band.csv"
plot caps "$tmp/band.csv" caps-band 2 "filledcurves" "using 1:3:4"
band 1.2 1.1 "" "" <"$tmp/c.csv" >"$tmp/badband.csv"
"$ddpsim" plot caps -i "$tmp/badband.csv" -o "$tmp/x.png" >/dev/null 2>"$tmp/err"
check "a band whose low end is above its high end: exit 1, naming it" test $? -eq 1 -a -n "$(grep 'samples_per_s_lo <= samples_per_s_hi' "$tmp/err")"

awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "samples_per_s") c = i }
  { out = ""; for (i = 1; i <= NF; i++) if (i != c) out = out (out == "" ? "" : ",") $i; print out }' "$tmp/s.csv" >"$tmp/narrow.csv"
"$ddpsim" plot scaling -i "$tmp/narrow.csv" -o "$tmp/x.png" >/dev/null 2>"$tmp/err"
check "a missing column: exit 1, naming it" test $? -eq 1 -a -n "$(grep "no 'samples_per_s' column" "$tmp/err")" -a ! -e "$tmp/x.png"
"$ddpsim" plot scaling -i "$tmp/s.csv" -o "$tmp/x.jpg" >/dev/null 2>"$tmp/err"
check "an output neither .png nor .svg: exit 2" test $? -eq 2
"$ddpsim" plot pie -i "$tmp/s.csv" -o "$tmp/x.png" >/dev/null 2>"$tmp/err"
check "an unknown plot: exit 2" test $? -eq 2
"$ddpsim" plot timeline -i "$tmp/s.csv" -o "$tmp/x.png" >/dev/null 2>"$tmp/err"
check "a timeline from a CSV: exit 1" test $? -eq 1
DDPSIM_GNUPLOT=/nonexistent/gnuplot "$ddpsim" plot scaling -i "$tmp/s.csv" -o "$tmp/x.png" >/dev/null 2>"$tmp/err"
check "no gnuplot: exit 1, saying so, and no picture" test $? -eq 1 -a -n "$(grep 'is gnuplot installed' "$tmp/err")" -a ! -e "$tmp/x.png"
"$ddpsim" plot --help >"$tmp/out" 2>&1
check "plot --help exits 0 and prints usage" test $? -eq 0 -a -n "$(grep usage "$tmp/out")"

finish
