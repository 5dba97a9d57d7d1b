#!/usr/bin/env bash
# Builds the loaders' libFuzzer targets with clang (AddressSanitizer + UndefinedBehaviorSanitizer,
# every UB report fatal) and runs each for SECONDS on a corpus seeded from the bundled models,
# topologies and profiles. A crash, a sanitizer report or a broken invariant (the targets trap)
# fails the run and leaves the input in WORK/crashes/. docs/testing.md, "Fuzzing".
# Usage: run.sh SRC WORK SECONDS [model|topo|profile|merge|ncclog|ktrace ...]   (default: all six)
# Exits 77 (skipped) where clang or its fuzzer runtime (Debian: libclang-rt-14-dev) is absent.
set -u
src=$(cd "$1" && pwd)
work=$2
seconds=$3
shift 3
targets=("$@")
((${#targets[@]})) || targets=(model topo profile merge ncclog ktrace)

cc=${FUZZ_CC:-}
if [[ -z $cc ]]; then
  for c in clang clang-14 clang-15 clang-16; do command -v "$c" >/dev/null && { cc=$c; break; }; done
fi
[[ -n $cc ]] || { echo "skip: no clang"; exit 77; }
mkdir -p "$work/bin" "$work/crashes" || exit 1
echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; (void)n; return 0; }' >"$work/probe.c"
if ! "$cc" -fsanitize=fuzzer,address,undefined "$work/probe.c" -o "$work/probe" 2>"$work/probe.err"; then
  echo "skip: $cc cannot link libFuzzer with ASan/UBSan (install libclang-rt-14-dev): $(head -1 "$work/probe.err")"
  exit 77
fi

san=(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
flags=(-g -O1 -std=c11 -D_GNU_SOURCE "${san[@]}" -I"$src/common" -I"$src/sim" -I"$src/calib" $(pkg-config --cflags libcjson gsl)
       -DDDPSIM_VERSION="\"$(head -n1 "$src/python/ddpsim_export/VERSION")\"") # common/version.c, as CMake passes it
libs=($(pkg-config --libs libcjson gsl) -lz -lm) # zlib: calib/ktrace.c
# The loaders and what they call, instrumented once for every target.
objs=()
mkdir -p "$work/obj"
for f in common/err.c common/afile.c common/txt.c sim/model.c sim/topo.c sim/coll.c sim/ncclmodel.c sim/gemmcost.c sim/roofline.c sim/profile.c sim/cost.c sim/reducer.c sim/bucket.c sim/uncert.c sim/scenario.c sim/timeline.c common/version.c calib/profilew.c calib/ncclog.c calib/commbench.c calib/ktrace.c; do
  o=$work/obj/$(basename "$f" .c).o
  if ! "$cc" "${flags[@]}" -fsanitize=fuzzer-no-link -c "$src/$f" -o "$o" 2>"$work/build.err"; then
    echo "FAIL $f does not build for fuzzing:"; sed 's/^/     | /' "$work/build.err" | head -20; exit 1
  fi
  objs+=("$o")
done
# Profiles: the bundled references (rooflines, comm.nccl, h2d) and a calibrated CPU profile (tables,
# empirical jitter, shares_compute, a warning: tests/fuzz/seeds/).
declare -A seeds=([model]="$src/models/*.model" [topo]="$src/topologies/*.topo"
                  [profile]="$src/profiles/*.json $src/tests/fuzz/seeds/*.json"
                  [ncclog]="$src/tests/data/nccl-tests/*.log $src/tests/data/nccl-tests/bad/*.log"
                  [ktrace]="$src/tests/data/kineto/odd_fields.json") # the real traces exceed -max_len
dict_of() { case $1 in model|topo) echo "$src/tests/fuzz/text.dict" ;; ncclog) echo "$src/tests/fuzz/ncclog.dict" ;; *) echo "$src/tests/fuzz/json.dict" ;; esac; }

failed=0
for t in "${targets[@]}"; do
  [[ -f $src/tests/fuzz/fuzz_$t.c ]] || { echo "FAIL no target '$t' (model, topo, profile, merge, ncclog, ktrace)"; failed=1; continue; }
  bin=$work/bin/fuzz_$t
  if ! "$cc" "${flags[@]}" -fsanitize=fuzzer "$src/tests/fuzz/fuzz_$t.c" "${objs[@]}" "${libs[@]}" -o "$bin" \
       2>"$work/build_$t.err"; then
    echo "FAIL fuzz_$t does not build:"; sed 's/^/     | /' "$work/build_$t.err" | head -20; failed=1; continue
  fi
  corpus=$work/corpus/$t
  mkdir -p "$corpus"
  if [[ $t == merge ]]; then
    # Pairs of bundled profiles, and each with a comm-only half, joined by a NUL byte.
    half='{"format":"ddpsim-profile","version":1,"name":"h","provenance":{},"compute":{"jitter":{"model":"empirical","ratios":[0.9,1.1]}},"comm":{"links":{"shm":{"lat_s":1e-6,"bw_Bps":3e9,"shares_compute":true}}}}'
    i=0
    for a in "$src"/profiles/*.json "$src"/tests/fuzz/seeds/*.json; do
      for b in "$src"/profiles/*.json "$src"/tests/fuzz/seeds/*.json; do { cat "$a"; printf '\0'; cat "$b"; } >"$corpus/seed$((i++))"; done
      { cat "$a"; printf '\0%s' "$half"; } >"$corpus/seed$((i++))"
    done
  else
    # shellcheck disable=SC2086
    cp ${seeds[$t]} "$corpus/"
  fi
  log=$work/fuzz_$t.log
  (cd "$work/crashes" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    "$bin" "$corpus" -max_total_time="$seconds" -dict="$(dict_of "$t")" -timeout=10 -rss_limit_mb=2048 \
      -max_len=65536 -print_final_stats=1 -artifact_prefix="$work/crashes/${t}-") >"$log" 2>&1
  rc=$?
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
  if [[ $rc -ne 0 ]]; then
    echo "FAIL fuzz_$t (exit $rc after ${runs:-?} runs): inputs in $work/crashes/"
    grep -E 'ERROR|SUMMARY|runtime error|deadly signal' "$log" | head -5 | sed 's/^/     | /'
    failed=1
  else
    echo "ok   fuzz_$t: ${runs:-?} inputs in ${seconds} s, no crash, leak, UB or broken invariant"
  fi
done
exit $failed
