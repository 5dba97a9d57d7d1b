#!/usr/bin/env bash
# Installing: `cmake --install` into a fresh prefix puts ddpsim and ddpcalib in bin/, the bundled
# models, topologies, profiles and published points (with the cache of the validated error the build
# wrote) in share/ddpsim/, the docs in share/doc/ddpsim/; the installed tools find that data from
# their own place (no DDPSIM_DATA_DIR, run from elsewhere, the source tree out of sight);
# `pip install python/` gives the `ddpsim-export` command.
# Usage: test_install.sh BUILD_DIR SOURCE_DIR
set -u
build=$1 src=$2
. "$src/tests/sim/lib.sh"
prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1
check "cmake --install into a new prefix succeeds" test $? -eq 0
for f in bin/ddpsim bin/ddpcalib share/ddpsim/models/resnet50.model share/ddpsim/topologies/dgx1v-ib.topo \
         share/ddpsim/profiles/v100-dgx1v.json share/ddpsim/validate/published.txt share/ddpsim/validate/validated-ratios.tsv \
         share/ddpsim/calib/host_overhead.py \
         share/doc/ddpsim/README.md share/doc/ddpsim/docs/trace.md; do
  check "installed: $f" test -s "$prefix/$f"
done
cd "$tmp" || exit 1
unset DDPSIM_DATA_DIR
"$prefix/bin/ddpsim" --help >"$tmp/help" 2>&1
check "the installed ddpsim names its installed data" grep -q "Bundled data: $prefix/bin/../share/ddpsim" "$tmp/help"
"$prefix/bin/ddpsim" predict --model resnet50 --nodes 2 --json >"$tmp/p.json" 2>"$tmp/err"
check "installed ddpsim predict resnet50 on 2 nodes, from another directory ($(head -c 200 "$tmp/err"))" \
  python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(not (d["model"] == "resnet50" and d["iteration_s"] > 0))' "$tmp/p.json"
check "... its interval's validated part from the installed cache (the same files, read from their installed place)" \
  python3 -c 'import json, sys; iv = json.load(open(sys.argv[1]))["interval"]; sys.exit(not (iv["validated_cached"] and iv["validated_points"] > 0))' "$tmp/p.json"
# The events engine: its module installed beside the programs' libraries, named by --help, and
# loaded from there for a simulation that plays events (FSDP's two streams of collectives).
module=$(find "$prefix" -name ddpsim-events.so | head -1)
check "installed: the events module ($module)" test -s "$module"
check "the installed ddpsim names its installed events module" grep -q "Events engine .*: $prefix/bin/\.\./.*ddpsim-events.so" "$tmp/help"
"$prefix/bin/ddpsim" predict --model bert-large --framework fsdp --nodes 2 --no-interval --json >"$tmp/f.json" 2>"$tmp/err"
check "installed ddpsim plays FSDP's events with the installed module ($(head -c 200 "$tmp/err"))" \
  python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(not (d["iteration_s"] > 0 and not d["simulation"]["closed_form"]))' "$tmp/f.json"
"$prefix/bin/ddpsim" accuracy >/dev/null 2>"$tmp/err"
check "installed ddpsim accuracy reads the installed published points ($(head -c 200 "$tmp/err"))" test $? -eq 0
"$prefix/bin/ddpcalib" merge "$prefix/share/ddpsim/profiles/v100-dgx1v.json" "$prefix/share/ddpsim/profiles/p100-dgx1.json" \
  -o "$tmp/m.json" >/dev/null 2>&1
check "installed ddpcalib merges installed profiles" test $? -eq 0 -a -s "$tmp/m.json"
want=$("$build/sim/ddpsim" --version)
check "installed ddpsim --version is the build's ($want)" test "$("$prefix/bin/ddpsim" --version)" = "$want"
# DDPSIM_DATA_DIR still wins.
mkdir -p "$tmp/data/models" "$tmp/data/topologies" "$tmp/data/profiles"
cp "$src/models/resnet18.model" "$tmp/data/models/only.model"
cp "$src/topologies/dgx1v-ib.topo" "$tmp/data/topologies/" && cp "$src/profiles/v100-dgx1v.json" "$tmp/data/profiles/"
DDPSIM_DATA_DIR=$tmp/data "$prefix/bin/ddpsim" predict --model only >/dev/null 2>&1
check "DDPSIM_DATA_DIR overrides the installed data" test $? -eq 0

# The exporter as a pip package (a copy of python/, so the source tree stays clean; no network).
cp -r "$src/python" "$tmp/pysrc"
if python3 -c 'import setuptools' 2>/dev/null; then
  python3 -m pip install --quiet --disable-pip-version-check --no-build-isolation --no-deps --target "$tmp/site" "$tmp/pysrc" \
    >"$tmp/pip.log" 2>&1
  check "pip install python/ succeeds ($(grep -v WARNING "$tmp/pip.log" | head -c 200))" test -x "$tmp/site/bin/ddpsim-export"
  out=$(PYTHONPATH=$tmp/site "$tmp/site/bin/ddpsim-export" --version 2>&1)
  check "the ddpsim-export console script says ddpsim's version ($out)" test "$out" = "ddpsim_export ${want#ddpsim }"
else
  echo "skip  pip install python/: setuptools is not installed"
fi
finish
