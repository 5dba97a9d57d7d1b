#!/usr/bin/env bash
# ddpsim accepts a calibrated profile: a CPU calibration (compute at a small size, comm between
# 2 MPI processes written under the link classes the bundled dgx1v-ib topology names) is merged
# and given to `ddpsim predict --profile`. Skipped (77) when ddpsim is not built.
# The numbers are a CPU stand-in for GPU links: the test is that the file is accepted.
# Then the same with comm.nccl and hop_lat_s as `ddpcalib comm --nccl-tuning` writes them: no GPU
# here can run it, so NCCLTUNE (test_calib_nccltune write DIR) writes them through the same
# library calls (nccltune_fit, record_comm, record_nccl) from synthetic sweeps.
# Usage: test_ddpsim.sh DDPCALIB DDPSIM|none WORKDIR NCCLTUNE
set -u
calib=$1
ddpsim=$2
work=$3
nccltune=$4
if [[ $ddpsim == none || ! -x $ddpsim ]]; then
  echo "skip: the ddpsim target is not built"
  exit 77
fi
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
passed=0 failed=0
ok() { echo "ok   $1"; passed=$((passed + 1)); }
bad() { echo "FAIL $1"; failed=$((failed + 1)); }
run() { # DESCRIPTION -- command...
  local what=$1; shift 2
  if "$@" >out.txt 2>&1; then ok "$what"; else bad "$what (exit $?)"; sed 's/^/     | /' out.txt | head -12; fi
}
# Iterations of about a millisecond: a preemption must last some 50 of them to push a ratio below
# the profile's 0.1, when ddpcalib leaves the jitter out (tests/calib/test_record.c).
run "compute --backend cpu" -- "$calib" compute --backend cpu --hidden 128 --batch 8 --seq 8 -n 5 -w 1 \
  --gemm-max 64 --accept-poor-fit -o compute.json
# The test is that ddpsim accepts the file, not the fit's quality: --accept-poor-fit keeps a fit a
# busy machine made noisy (on a loaded CI one of the two sweeps was refused: docs/testing.md).
for cls in nvlink ib-edr; do
  run "comm --link-class $cls" -- mpirun -np 2 --oversubscribe "$calib" comm --backend mpi -b 1K -e 4M -f 4 \
    -n 5 -w 2 --link-class $cls --accept-poor-fit -o $cls.json
done
run "merge" -- "$calib" merge nvlink.json ib-edr.json -o comm.json
run "merge" -- "$calib" merge compute.json comm.json -o calibrated.json
run "ddpsim predict --profile calibrated.json" -- "$ddpsim" predict --profile calibrated.json \
  --topology dgx1v-ib --precision fp32 --batch 2 --nodes 2
# The calibration's whole-iteration times become compute.jitter; ddpsim makes 16 GPUs straggle with it.
if grep -q '"jitter"' calibrated.json; then ok "compute.jitter recorded from the timed iterations"; else bad "no compute.jitter in the profile"; fi
"$ddpsim" predict --profile calibrated.json --topology dgx1v-ib --precision fp32 --batch 2 --nodes 2 --json >p.json 2>&1
s=$(awk -F'[:,]' '/"straggler_s"/ { gsub(/[ \t]/, "", $2); print $2 }' p.json)
j=$(awk -F'[:,]' '/"jitter"/ { gsub(/[ \t"]/, "", $2); print $2 }' p.json)
if [[ $j == empirical ]] && awk -v s="$s" 'BEGIN { exit !(s > 0) }'; then ok "ddpsim draws the measured ratios: $s s of straggling on 16 GPUs"
else bad "ddpsim did not use the measured jitter (jitter '$j', straggler_s '$s')"; fi

# ---- comm.nccl from the NCCL fit: validated, merged, loaded by ddpsim, and used
run "nccltune writes nccl-nvlink.json and nccl-ib-edr.json" -- "$nccltune" write .
run "validate nccl-nvlink.json (a part: comm only)" -- "$calib" validate --part nccl-nvlink.json
run "merge the two NCCL profiles" -- "$calib" merge nccl-nvlink.json nccl-ib-edr.json -o nccl-comm.json
run "merge compute with them" -- "$calib" merge compute.json nccl-comm.json -o nccl.json
if grep -q '"nccl":' nccl.json && grep -q '"hop_lat_s":' nccl.json && grep -q 'measured by ddpcalib comm --nccl-tuning' nccl.json; then
  ok "the merged profile keeps comm.nccl, hop_lat_s and their source"
else
  bad "the merged profile lost comm.nccl or hop_lat_s"
fi
run "ddpsim predict --profile nccl.json (NCCL's choice among the fitted combinations)" -- "$ddpsim" predict \
  --profile nccl.json --topology dgx1v-ib --precision fp32 --batch 2 --nodes 2
# Forcing tree/LL128 works only if ddpsim read comm.nccl (without it only ring/Simple exists).
"$ddpsim" predict --profile nccl.json --topology dgx1v-ib --precision fp32 --batch 2 --nodes 2 \
  --nccl-algo tree --nccl-proto LL128 --json >t.json 2>&1
if grep -q '"algorithm":[[:space:]]*"tree"' t.json && grep -q '"protocol":[[:space:]]*"LL128"' t.json; then
  ok "ddpsim runs the fitted tree/LL128 when forced"
else
  bad "ddpsim did not run tree/LL128 from the fitted comm.nccl"; sed 's/^/     | /' t.json | head -8
fi
# The two-node fit left tree/LL and ring/LL128 out: the later (merged) comm.nccl disables them.
if "$ddpsim" predict --profile nccl.json --topology dgx1v-ib --precision fp32 --batch 2 --nodes 2 \
  --nccl-algo tree --nccl-proto LL >t2.txt 2>&1; then
  bad "ddpsim ran tree/LL, which NCCL refused in the fitted profile"
else
  grep -q "no NCCL algorithm" t2.txt && ok "ddpsim refuses tree/LL, refused at calibration (disabled)" \
    || { bad "tree/LL refused without the expected message"; sed 's/^/     | /' t2.txt | head -4; }
fi
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
