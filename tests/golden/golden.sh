#!/usr/bin/env bash
# Golden files of user-facing output (tests/golden/cases.txt): runs each case's ddpsim command from
# the source folder and compares its exit status, standard output and standard error exactly with
# tests/golden/expected/NAME.txt. Normalised before the comparison, and only these: the version
# ("ddpsim_version" in JSON, "ddpsim X.Y.Z" in text), the source folder's absolute path, and what
# the simulation measured of itself ("wall_s" and "peak_rss_kb" in the JSON's engine object).
# Usage: golden.sh DDPSIM [SOURCE_DIR]            compare (exit 1 on any difference, with its diff)
#        golden.sh --update DDPSIM [SOURCE_DIR]   rewrite the expected files (review `git diff`)
set -uo pipefail
update=0
if [[ ${1:-} == --update ]]; then update=1; shift; fi
if [[ ${1:-} == -h || ${1:-} == --help || $# -lt 1 ]]; then sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 2; fi
ddpsim=$(realpath "$1")
src=$(realpath "${2:-$(dirname "$0")/../..}")
here=$src/tests/golden
cd "$src" || exit 1
version=$("$ddpsim" --version | awk '{print $NF}')
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# normalise FILE: the version, the source path and the run's own wall time and memory, nothing else
normalise() {
  sed -e "s|$src|<src>|g" -e "s|\"ddpsim_version\":\([[:space:]]*\)\"$version\"|\"ddpsim_version\":\1\"<version>\"|g" \
      -e "s|ddpsim $version|ddpsim <version>|g" \
      -e 's/"\(wall_s\|peak_rss_kb\)":\([[:space:]]*\)[0-9.e+-]*/"\1":\2<measured>/g' "$1"
}

pass=0 fail=0 n=0
while IFS= read -r line; do
  [[ -z ${line// /} || $line == \#* ]] && continue
  name=$(sed 's/[[:space:]]*|.*//' <<<"$line")
  args=$(sed 's/^[^|]*|[[:space:]]*//' <<<"$line")
  n=$((n + 1))
  read -ra argv <<<"$args"
  rc=0
  "$ddpsim" "${argv[@]}" >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
  {
    echo "\$ ddpsim $args"
    echo "# exit $rc"
    echo "# stdout"
    normalise "$tmp/out"
    echo "# stderr"
    normalise "$tmp/err"
  } >"$tmp/$name.txt"
  want=$here/expected/$name.txt
  if ((update)); then
    mkdir -p "$here/expected"
    cp "$tmp/$name.txt" "$want"
    echo "wrote tests/golden/expected/$name.txt (exit $rc)"
  elif [[ ! -f $want ]]; then
    echo "FAIL  $name: no tests/golden/expected/$name.txt (run golden.sh --update and review it)"
    fail=$((fail + 1))
  elif cmp -s "$want" "$tmp/$name.txt"; then
    echo "ok    $name"
    pass=$((pass + 1))
  else
    echo "FAIL  $name: ddpsim $args differs from tests/golden/expected/$name.txt:"
    diff -u "$want" "$tmp/$name.txt" | head -40 | sed 's/^/      | /'
    fail=$((fail + 1))
  fi
done <"$here/cases.txt"
if ((update)); then
  # an expected file whose case is gone is stale
  for f in "$here"/expected/*.txt; do
    base=$(basename "$f" .txt)
    grep -q "^$base[[:space:]]*|" "$here/cases.txt" || { rm "$f"; echo "removed tests/golden/expected/$base.txt (no such case)"; }
  done
  exit 0
fi
((n > 0)) || { echo "FAIL  no case in tests/golden/cases.txt"; exit 1; }
echo "$pass of $n golden outputs match"
((fail == 0))
