#!/usr/bin/env bash
# ddpcalib import nccl-tests on one log per nccl-tests release layout (tests/data/nccl-tests/,
# MANIFEST; written by gen.py with each release's own format strings, README.md names them) and on
# the bad logs it must refuse (bad/MANIFEST: exit code and message), plus the command-line cases
# (a directory, -o naming a log, more than 64 logs). Each good log must be read as its collective
# and release layout, with as many ranks and hosts as its rank lines list, and its ring's latency
# and bandwidth fitted within 5% of the ring it was written from, either way.
# Usage: test_ncclog_fixtures.sh DDPCALIB SOURCE_DIR WORK
set -u
calib=$1
data=$2/tests/data/nccl-tests
work=$3
rm -rf "$work" && mkdir -p "$work" || exit 1
fails=0
ok() { echo "ok    $1"; }
bad() { echo "FAIL  $1"; fails=$((fails + 1)); }

while IFS=$'\t' read -r file coll label nranks nhosts lat bw flags; do
  [[ $file == \#* || -z $file ]] && continue
  [[ $flags == - ]] && flags=
  out=$work/${file%.log}.json
  # shellcheck disable=SC2086
  "$calib" import nccl-tests $flags -o "$out" "$data/$file" >"$work/out" 2>"$work/err"
  rc=$?
  if [[ $rc -ne 0 ]]; then bad "$file: exit $rc: $(head -c 300 "$work/err")"; continue; fi
  grep -qF "${coll}_perf (nccl-tests $label layout)" "$work/out" && ok "$file: read as ${coll}_perf, layout $label" ||
    bad "$file: not read as ${coll}_perf, layout $label: $(grep '^# ' "$work/out" | head -1)"
  # what the file's own rank lines list, counted here
  ranks=$(grep -cE '#  +Rank +[0-9]+ .*on +[^ ]+ device' "$data/$file")
  hosts=$(grep -oE 'Rank +[0-9]+ .*on +[^ ]+ device' "$data/$file" | sed -E 's/.* on +([^ ]+) device/\1/' | sort -u | wc -l)
  [[ $ranks -eq $nranks && $hosts -eq $nhosts ]] || bad "$file: the manifest's $nranks ranks on $nhosts hosts are not the file's $ranks on $hosts"
  python3 - "$out" "$ranks" "$hosts" "$lat" "$bw" "$file" <<'PY' || fails=$((fails + 1))
import json, sys
out, ranks, hosts, lat, bw, name = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), sys.argv[6]
links = json.load(open(out))["comm"]["links"]
(cls, l), = links.items()
ring = l.get("ring_bw_Bps", l.get("bw_Bps", 0))
good = l.get("nranks") == ranks and l.get("nhosts") == hosts and abs(l["lat_s"] - lat) <= 0.05 * lat and abs(ring - bw) <= 0.05 * bw
print("%s  %s: %s, %d ranks on %d hosts, lat_s %.4g (truth %.4g), ring bandwidth %.4g (truth %.4g), within 5%%" %
      ("ok  " if good else "FAIL", name, cls, l.get("nranks", 0), l.get("nhosts", 0), l["lat_s"], lat, ring, bw))
sys.exit(0 if good else 1)
PY
done <"$data/MANIFEST"

while IFS=$'\t' read -r file flags code want; do
  [[ $file == \#* || -z $file ]] && continue
  [[ $flags == - ]] && flags=
  rm -f "$work/bad.json"
  # shellcheck disable=SC2086
  "$calib" import nccl-tests $flags -o "$work/bad.json" "$data/bad/$file" >/dev/null 2>"$work/err"
  rc=$?
  if [[ $rc -eq $code ]] && grep -qF -- "$want" "$work/err" && grep -qF "bad/$file" "$work/err" && [[ ! -e $work/bad.json ]]; then
    ok "bad/$file: exit $rc, '$want'"
  else
    bad "bad/$file: exit $rc (want $code), stderr: $(head -c 300 "$work/err") (want '$want')"
  fi
done <"$data/bad/MANIFEST"

one=$data/v2.0-v2.11_all_reduce.log
mkdir -p "$work/logs.d"
"$calib" import nccl-tests -o "$work/d.json" "$work/logs.d" >/dev/null 2>"$work/err"
rc=$?
[[ $rc -eq 1 ]] && grep -qF "logs.d: a directory, not an nccl-tests log" "$work/err" && ok "a directory as a log: exit 1, said so" ||
  bad "a directory as a log: exit $rc: $(cat "$work/err")"

cp "$one" "$work/x.log"
sum=$(cksum <"$work/x.log")
"$calib" import nccl-tests -o "$work/x.log" "$work/x.log" >/dev/null 2>"$work/err"
rc=$?
[[ $rc -eq 1 && $(cksum <"$work/x.log") == "$sum" ]] && grep -qF -- "-o $work/x.log is the same file as LOG $work/x.log" "$work/err" &&
  ok "-o naming its input: exit 1 naming both, the log untouched" || bad "-o naming its input: exit $rc: $(cat "$work/err")"
ln -sf x.log "$work/link.log"
"$calib" import nccl-tests -o "$work/link.log" "$one" "$work/x.log" >/dev/null 2>"$work/err"
rc=$?
[[ $rc -eq 1 && $(cksum <"$work/x.log") == "$sum" ]] && grep -qF "same file as LOG $work/x.log" "$work/err" &&
  ok "-o a link to the second log: exit 1, the log untouched" || bad "-o a link to the second log: exit $rc: $(cat "$work/err")"

# 70 logs (the old limit was 64): each is read; all of one class, the last written
logs=()
for i in $(seq 1 70); do logs+=("$one"); done
"$calib" import nccl-tests -o "$work/many.json" "${logs[@]}" >"$work/out" 2>"$work/err"
rc=$?
n=$(grep -c '^# .*all_reduce_perf' "$work/out")
[[ $rc -eq 0 && $n -eq 70 ]] && ok "70 logs: exit 0, all 70 read" || bad "70 logs: exit $rc, $n read: $(head -c 300 "$work/err")"

echo "$fails failure(s)"
[[ $fails -eq 0 ]]
