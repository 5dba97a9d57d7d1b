#!/usr/bin/env bash
# ddpcalib train: usage errors, and correctness of the data-parallel run. After a few SGD steps
# every rank holds the same parameters, equal to a single process trained on the concatenated
# batch, in ddp mode (several bucket caps, construction-time and rebuilt buckets), flat mode, and
# with no_sync gradient accumulation.
# Usage: test_train.sh DDPCALIB PARAMS_CLOSE WORKDIR
set -u
ddpcalib=$1 close=$2 dir=$3
rm -rf "$dir" && mkdir -p "$dir" && cd "$dir" || exit 1
fails=0
check() { # name, then the command; prints one line per check
  local name=$1; shift
  if "$@" >"$name.out" 2>"$name.err"; then echo "ok   $name"; else echo "FAIL $name (exit $?)"; cat "$name.err"; fails=$((fails + 1)); fi
}
expect_exit() { # code name command...
  local want=$1 name=$2; shift 2
  "$@" >"$name.out" 2>"$name.err"; local got=$?
  if [[ $got == "$want" ]]; then echo "ok   $name (exit $got)"; else echo "FAIL $name: exit $got, want $want"; cat "$name.err"; fails=$((fails + 1)); fi
}
mpi=(mpirun -np 2 --oversubscribe)
small=(--hidden 48 --embed 16 --vocab 64 --seq 5 --optimizer sgd --lr 0.05 -w 0)

expect_exit 0 help "$ddpcalib" train --help
expect_exit 2 bad_flag "$ddpcalib" train --bogus
expect_exit 2 bad_mode "$ddpcalib" train --mode ring
expect_exit 2 bad_cap "$ddpcalib" train --bucket-cap-mb -1
expect_exit 2 bad_nosync "$ddpcalib" train --no-sync 0
expect_exit 2 bad_vocab "$ddpcalib" train --vocab 300
expect_exit 2 extra_arg "$ddpcalib" train extra
grep -q "usage: \[mpirun" help.out && echo "ok   help text" || { echo "FAIL help text"; fails=$((fails + 1)); }

# The reference: one process, the whole batch (8 sequences), 3 steps.
check ref1 "$ddpcalib" train "${small[@]}" --batch 8 -n 3 --dump-params ref.bin
# 2 ranks x 4 sequences, DDP buckets of several caps.
check ddp_small "${mpi[@]}" "$ddpcalib" train "${small[@]}" --batch 4 -n 3 --bucket-cap-mb 0.01 --first-bucket-mb 0.01 --dump-params ddp_small.bin
check ddp_rebuilt "${mpi[@]}" "$ddpcalib" train "${small[@]}" --batch 4 -n 3 --bucket-cap-mb 0.02 --rebuilt --dump-params ddp_rebuilt.bin
check ddp_one "${mpi[@]}" "$ddpcalib" train "${small[@]}" --batch 4 -n 3 --dump-params ddp_one.bin
check ddp_nopoll "${mpi[@]}" "$ddpcalib" train "${small[@]}" --batch 4 -n 3 --bucket-cap-mb 0.01 --no-poll --dump-params ddp_nopoll.bin
check flat "${mpi[@]}" "$ddpcalib" train "${small[@]}" --batch 4 -n 3 --mode flat --dump-params flat.bin
# no_sync 2: two iterations of 2 x 2 sequences accumulate, then one step; the gradient is the sum
# over the two iterations, so the reference is a step of twice the learning rate on 8 sequences.
check ref_acc "$ddpcalib" train --hidden 48 --embed 16 --vocab 64 --seq 5 --optimizer sgd --lr 0.1 -w 0 --batch 8 -n 2 --dump-params ref_acc.bin
check nosync "${mpi[@]}" "$ddpcalib" train "${small[@]}" --batch 2 -n 4 --no-sync 2 --bucket-cap-mb 0.01 --dump-params nosync.bin
for f in ddp_small ddp_rebuilt ddp_one ddp_nopoll flat; do
  check "same_as_single_$f" "$close" ref.bin "$f.bin"
  grep -q "max difference between ranks 0$" "$f.out" && echo "ok   ranks_identical_$f" ||
    { echo "FAIL ranks_identical_$f"; fails=$((fails + 1)); }
done
check same_as_single_nosync "$close" ref_acc.bin nosync.bin
# A different batch must not match: the comparison can fail.
"$close" ref.bin ref_acc.bin >/dev/null && { echo "FAIL negative control: different runs compare equal"; fails=$((fails + 1)); } ||
  echo "ok   negative control (different runs differ)"

# JSON report: the fields ddpsim validate reads.
check json "${mpi[@]}" "$ddpcalib" train "${small[@]}" --batch 4 -n 3 --bucket-cap-mb 0.01 --json
for key in '"ranks":	2' '"iteration_s":' '"buckets":' '"ready_s":' '"start_s":' '"end_s":' '"samples_per_s":' '"chars_per_s":' '"param_rank_maxdiff":	0'; do
  grep -qF "$key" json.out && echo "ok   json has $key" || { echo "FAIL json lacks $key"; fails=$((fails + 1)); }
done
echo "$fails failure(s)"
[[ $fails == 0 ]]
