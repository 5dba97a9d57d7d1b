#!/usr/bin/env bash
# One version everywhere: every tool's --version (each command's too) prints the project's version
# (python/ddpsim_export/VERSION, CMake's project version), and every JSON output carries it as
# "ddpsim_version". Usage: test_version.sh DDPSIM DDPCALIB SOURCE_DIR
set -u
ddpsim=$1 ddpcalib=$2 src=$3
. "$src/tests/sim/lib.sh"
want=$(head -n1 "$src/python/ddpsim_export/VERSION")
check "the version file holds a version ($want)" grep -Eq '^[0-9]+\.[0-9]+\.[0-9]+$' <<<"$want"

for c in "" predict sweep recommend trace plan buckets plot genmodel validate accuracy; do
  out=$("$ddpsim" $c --version 2>&1)
  check "ddpsim $c --version exits 0 and prints 'ddpsim $want' ($out)" test $? -eq 0 -a "$out" = "ddpsim $want"
done
for c in "" comm compute h2d host machine cluster merge validate train import; do
  out=$("$ddpcalib" $c --version 2>&1)
  check "ddpcalib $c --version exits 0 and prints 'ddpcalib $want' ($out)" test $? -eq 0 -a "$out" = "ddpcalib $want"
done
out=$(PYTHONPATH="$src/python" python3 -m ddpsim_export --version 2>&1)
check "python3 -m ddpsim_export --version prints 'ddpsim_export $want' ($out)" test $? -eq 0 -a "$out" = "ddpsim_export $want"

# Every JSON output: the top-level object's "ddpsim_version".
has_version() { python3 -c 'import json, sys; sys.exit(json.load(open(sys.argv[1])).get("ddpsim_version") != sys.argv[2])' "$1" "$want"; }
run_json() { # NAME ARGS...: ddpsim ARGS > $tmp/NAME.json, then the check
  local name=$1
  shift
  "$ddpsim" "$@" >"$tmp/$name.json" 2>"$tmp/err"
  check "ddpsim $* exits 0 and its JSON says ddpsim_version $want" test $? -eq 0
  check "... ($name)" has_version "$tmp/$name.json"
}
run_json predict predict --json
run_json sweep sweep --nodes 1,2 --json
run_json recommend recommend --bucket-cap-mb 5,25 --samples 2 --no-advice --json
run_json buckets buckets --json
run_json accuracy accuracy --json
"$ddpsim" trace --format chrome --nodes 2 -o "$tmp/trace.json" >/dev/null 2>&1
check "ddpsim trace --format chrome writes its version" has_version "$tmp/trace.json"
"$ddpsim" trace --nodes 2 -o "$tmp/kineto" >/dev/null 2>&1
check "ddpsim trace --format kineto writes its version in every rank's file" has_version "$tmp/kineto/rank15.pt.trace.json"
"$ddpcalib" merge "$src/profiles/v100-dgx1v.json" "$src/profiles/p100-dgx1.json" -o "$tmp/merged.json" 2>"$tmp/err"
check "ddpcalib merge writes a profile that says ddpsim_version $want" has_version "$tmp/merged.json"
finish
