#!/usr/bin/env bash
# The CUDA and NCCL paths at run time. Skipped (exit 77) where ddpcalib was built without CUDA or
# where CUDA finds no GPU; where a GPU is, runs a small NCCL sweep and checks the profile.
# Usage: test_gpu.sh DDPCALIB HAVE_CUDA WORKDIR
set -u
calib=$1
have_cuda=$2
work=$3
if [[ $have_cuda != 1 ]]; then
  echo "skip: ddpcalib built without CUDA"
  exit 77
fi
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
"$calib" comm --backend nccl -g 1 -b 8 -e 64K -f 4 -n 2 -w 1 >probe.txt 2>&1
rc=$?
if [[ $rc -ne 0 ]] && grep -q "no CUDA device" probe.txt; then
  echo "skip: $(grep -o 'no CUDA device.*' probe.txt)"
  exit 77
fi
passed=0 failed=0
ok() { echo "ok   $1"; passed=$((passed + 1)); }
bad() { echo "FAIL $1"; failed=$((failed + 1)); }
# One GPU alone is no ring: the probe must fail cleanly with exit 1.
[[ $rc -eq 1 ]] && ok "nccl -g 1: refused (one participant), exit 1" || bad "nccl -g 1: exit $rc"
ngpu=$(nvidia-smi -L 2>/dev/null | wc -l)
if [[ $ngpu -ge 2 ]]; then
  if "$calib" comm --backend nccl -g 2 -b 8 -e 4M -f 4 -n 5 -w 2 -c -o nccl.json >nccl.txt 2>&1 &&
     grep -q "Out of bounds values : 0 OK" nccl.txt; then
    ok "nccl -g 2: sweep with -c, no wrong element"
  else
    bad "nccl -g 2"; sed 's/^/     | /' nccl.txt | head -20
  fi
  "$calib" validate --part nccl.json && ok "nccl: profile validates (a part: comm only)" || bad "nccl: profile invalid"
  # Every NCCL_ALGO x NCCL_PROTO: six combinations, each swept or reported refused; comm.nccl written.
  if "$calib" comm --backend nccl --nccl-tuning -g 2 -b 8 -e 4M -f 4 -n 5 -w 2 -c -o tuning.json >tuning.txt 2>&1; then
    ok "nccl --nccl-tuning -g 2"
  else
    bad "nccl --nccl-tuning -g 2"; sed 's/^/     | /' tuning.txt | head -20
  fi
  n=$(grep -c '^# NCCL_ALGO=' tuning.txt)
  [[ $n -eq 6 ]] && ok "nccl --nccl-tuning: six combinations swept or refused" || bad "nccl --nccl-tuning: $n combinations"
  "$calib" validate --part tuning.json && grep -q '"nccl":' tuning.json && grep -q '"hop_lat_s":' tuning.json &&
    ok "nccl --nccl-tuning: profile with comm.nccl and hop_lat_s validates" || bad "nccl --nccl-tuning: profile"
fi
"$calib" h2d --backend cuda -o h2d.json >h2d.txt 2>&1 && ok "h2d runs" || { bad "h2d"; head h2d.txt; }
# The raw launch (an empty kernel) and PyTorch's per-op cost on the GPU, where PyTorch has CUDA.
if python3 -c 'import torch, sys; sys.exit(not torch.cuda.is_available())' 2>/dev/null; then
  if "$calib" host --device cuda -n 5 --ops 500 -o host.json >host.txt 2>&1 &&
     python3 -c 'import json,sys; h=json.load(open("host.json"))["compute"]["host"]; sys.exit(not (0 < h["launch_s"] < 1e-3 and 0 < h["dispatch_s"] < 1e-3))'; then
    ok "host --device cuda: launch_s and dispatch_s measured, each between 0 and 1 ms"
  else bad "host --device cuda"; head host.txt; fi
else
  echo "skip: PyTorch without CUDA: host --device cuda not run"
fi
# Device 0 in nvidia-smi's order (PCI bus), so that its figures can be compared below.
CUDA_DEVICE_ORDER=PCI_BUS_ID "$calib" compute --backend cuda --hidden 64 --batch 2 --seq 2 -n 3 -w 1 -o gpu.json >gpu.txt 2>&1 &&
  ok "compute --backend cuda runs" || { bad "compute --backend cuda"; head gpu.txt; }
# The card's figures as the device reports them (calib/devinfo.h): name and memory as nvidia-smi
# says (totalGlobalMem leaves out what the driver reserves: within 3% of memory.total), SMs and a
# nominal bandwidth in the loader's ranges, the bandwidth marked nominal; the profile validates.
smi=$(nvidia-smi -i 0 --query-gpu=name,memory.total --format=csv,noheader,nounits 2>/dev/null)
if python3 - gpu.json "$smi" "${CUDA_VISIBLE_DEVICES-}" <<'EOP'
import json, sys
d = json.load(open(sys.argv[1]))["device"]
print("     device:", {k: v for k, v in d.items() if k != "source"}, "| nvidia-smi:", sys.argv[2])
ok = d["memory_bytes"] > 0 and d["sm_count"] >= 1 and d["sm_count"] == int(d["sm_count"]) and 1e9 <= d["hbm_Bps"] <= 1e14
ok = ok and "NOMINAL" in d["source"] and "cuda_context_bytes" not in d and "tdp_W" not in d
if sys.argv[2] and not sys.argv[3]:  # nvidia-smi's device 0 is CUDA's only when nothing is hidden
    name, mib = [x.strip() for x in sys.argv[2].rsplit(",", 1)]
    ok = ok and d["name"] == name and 0.97 * float(mib) * 2**20 <= d["memory_bytes"] <= float(mib) * 2**20
sys.exit(not ok)
EOP
then ok "compute --backend cuda: device name, memory_bytes, sm_count, nominal hbm_Bps"
else bad "compute --backend cuda: device figures"; fi
"$calib" validate --part gpu.json && ok "compute --backend cuda: the profile validates (a part)" || bad "compute --backend cuda: profile invalid"
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
