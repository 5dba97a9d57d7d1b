#!/usr/bin/env bash
# ddpsim plot: each plot from the output of sweep, recommend and predict, as a PNG (its magic bytes)
# and an SVG (parsed as XML, its series counted), the series asked for in the script; an uncertainty
# band where its columns are; new columns ignored; misuse, bad input and a missing gnuplot.
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

# two topologies and the ideal line, in each of two panels
plot scaling "$tmp/s.csv" scaling 6 "title 'dgx1v-ib'" "title 'dgx1v-10gbe'" "title 'ideal'" "Speedup"
plot caps "$tmp/c.csv" caps-sweep 1 "title 'dgx1v-10gbe, 4 nodes'" "samples/s"
plot caps "$tmp/r.json" caps-recommend 2 "title 'dgx1v-10gbe, 4 nodes'" "iteration time"
check "caps-recommend: the recommend's three caps in the data" test "$(awk '/^\$c0/,/^EOD/' "$tmp/caps-recommend.gp" | grep -c '^[0-9]')" -eq 3
# the parts not zero everywhere (a sweep writes all six; loading and stragglers are zero here)
plot breakdown "$tmp/s.csv" breakdown 4 "title 'compute'" "title 'exposed communication'" "title 'buffer broadcast'" \
  "title 'host-to-device copy'" "rowstacked"
check "breakdown: a part zero in every row is left out" bash -c "! grep -q \"title 'waiting for stragglers'\" '$tmp/breakdown.gp'"
check "breakdown: the first topology's three node counts" test "$(awk '/^\$b/,/^EOD/' "$tmp/breakdown.gp" | grep -c '^[0-9]')" -eq 3
plot timeline "$tmp/p.json" timeline 4 "title 'all-reduce'" "title 'bucket ready'" "'bucket 0'" "laid end to end"

# pareto: cost against time to train from a sweep with a job; a misfit apart; bars with --interval.
"$ddpsim" sweep --model bert-large --batch 32,64 --topology dgx1v-ib,dgx1v-10gbe --nodes 1,4 --epochs 3 --dataset-size 1e6 \
  --price 3 --allow-oom --csv >"$tmp/pa.csv" 2>/dev/null
# two topologies, the rows that do not fit (batch 64 on 16 GB), the front and its labels
plot pareto "$tmp/pa.csv" pareto 5 "title 'dgx1v-ib'" "title 'dgx1v-10gbe'" "title 'does not fit the card'" "title 'Pareto front'" \
  'Cost against time to train: bert-large, 2 batches, fp16, v100-dgx1v, PyTorch' "with labels"
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
"$ddpsim" sweep --model resnet50 --nodes 1,2 --samples 1e7 --interval --draws 4 --csv >"$tmp/pi.csv"
plot pareto "$tmp/pi.csv" pareto-interval 3 "xyerrorbars" "bars: the interval" "ylabel 'GPU-hours'" "GPU-hours against time to train"
"$ddpsim" plot pareto -i "$tmp/s.csv" -o "$tmp/x.png" >"$tmp/out" 2>"$tmp/err"
check "pareto from a sweep without a job: exit 1 saying what it needs" \
  test $? -eq 1 -a -n "$(grep -E "row 1: train_s and gpu_hours must be numbers above 0 \(sweep --samples N" "$tmp/err")"

# An uncertainty band where the columns are, and a column the plot does not know is ignored.
# (sweep writes the band's columns, empty without --interval: filled here)
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
