#!/usr/bin/env bash
# The README's "Calibrate this machine, then predict", run as it stands (its lines between
# <!-- example: machine --> and <!-- /example -->, from the build's parent directory), then what
# it promises checked: one complete profile ddpsim takes as is, a cluster profile with every link
# class named, the refusals, and no measuring before a bad output path is refused.
set -u
src=$1 build=$2 work=$3
pass=0 fail=0
check() { # check DESCRIPTION CONDITION...
  local what=$1
  shift
  if "$@"; then echo "ok    $what"; pass=$((pass + 1)); else echo "FAIL  $what"; fail=$((fail + 1)); fi
}
rm -rf "$work" && mkdir -p "$work"
ln -s "$build" "$work/build"
cd "$work" || exit 1

# The example: continued lines joined, each command run in turn.
sed -n '/<!-- example: machine -->/,/<!-- \/example -->/p' "$src/README.md" | grep -v '<!--' |
  sed -e 's/^    //' -e 's/  *#.*$//' | sed -e ':a' -e '/\\$/N; s/\\\n *//; ta' >example.sh
check "the README's example has 5 commands" test "$(grep -c . example.sh)" -eq 5
n=0
while IFS= read -r cmd; do
  n=$((n + 1))
  bash -c "$cmd" >"step$n.out" 2>&1 </dev/null # mpirun would read the list of commands
  rc=$?
  if [ $rc -ne 0 ] && grep -q 'measure again' "step$n.out"; then
    # A quality gate refused a fit measured on a loaded machine (calib/cli/calcmd.c, calcmd_gate):
    # once more, as the message advises; a second refusal fails.
    echo "note  step $n: $(grep -m1 'measure again' "step$n.out" | cut -c1-200); measuring once more"
    bash -c "$cmd" >"step$n.out" 2>&1 </dev/null
    rc=$?
  fi
  check "step $n exits 0: $cmd" test $rc -eq 0
  [ $rc -eq 0 ] || sed 's/^/  | /' "step$n.out"
done <example.sh

check "machine wrote a profile and a topology naming shm" test -s my.json -a -n "$(grep '^intra shm ' my.topo 2>/dev/null)"
check "the profile has compute.fp32, comm.links.shm and compute.host" \
  test -n "$(grep '"fp32"' my.json)" -a -n "$(grep '"shm"' my.json)" -a -n "$(grep '"host"' my.json)"
check "predict on this machine's pair printed an iteration" test -n "$(grep '^iteration ' step3.out)"
# gloo's own all-reduce (calib/gloo_sweep.py), where python3 has PyTorch's gloo: comm.links.tcp,
# sharing the cores, and --backend gloo prices its ring there (docs/calib.md, "machine").
if python3 -c 'import torch.distributed as d, sys; sys.exit(not d.is_gloo_available())' 2>/dev/null; then
  if grep -q 'comm.links.tcp: poor fit, not written\|comm.links.tcp: not written' step1.out; then
    echo "note  machine measured gloo but did not write it: $(grep -m1 'comm.links.tcp: .*not written' step1.out | cut -c1-200)"
  else
    tcp_ok=$(python3 -c "
import json; l=json.load(open('my.json'))['comm']['links']['tcp']
print('ok' if l['shares_compute'] is True and l['backend'] == 'gloo' and l['nranks'] == 2 and l['bw_Bps'] > 0 else 'bad %r' % l)" 2>&1)
    check "machine: comm.links.tcp is gloo's all-reduce between the 2 processes, sharing the cores ($tcp_ok)" test "$tcp_ok" = ok
    build/sim/ddpsim predict --profile my.json --topology my.topo --model my.model --backend gloo >gloo.out 2>&1
    check "predict --backend gloo on this machine's pair runs over its tcp link" \
      test -n "$(grep '^gloo rings .*(TCP connections between the processes)' gloo.out)"
  fi
else
  check "machine without PyTorch's gloo says comm.links.tcp was not measured" \
    test -n "$(grep 'comm.links.tcp: not measured' step1.out)"
fi
check "predict on this machine's pair speaks of processes, not GPUs (device.kind cpu)" \
  test -n "$(grep '^# .* x 2 processes' step3.out)" -a -z "$(grep -E 'GPU idle|slowest GPU|one-GPU|GPU busy|per GPU|card memory' step3.out)"
check "cluster says where each class comes from" \
  test -n "$(grep 'comm.links.nvlink from my.json, class shm' step4.out)" -a -n "$(grep 'comm.links.ib-edr from v100-dgx1v' step4.out)"
check "predict on 16 nodes of the cluster printed an iteration" test -n "$(grep '^iteration ' step5.out)"

# The card machine wrote (calib/devinfo.h): this host's memory as /proc/meminfo says (within a
# page), no SMs or memory bandwidth (a CPU); cluster carries it with the compute; predict's memory
# fit checks against it.
memtotal=$(awk '/^MemTotal:/ {printf "%.0f", $2 * 1024}' /proc/meminfo)
dev_ok=$(python3 -c "
import json; d=json.load(open('my.json'))['device']; c=json.load(open('cluster.json')).get('device')
print('ok' if abs(d['memory_bytes'] - $memtotal) <= $(getconf PAGESIZE) and 'sm_count' not in d and 'hbm_Bps' not in d
      and c == d else 'bad %r, cluster %r, MemTotal $memtotal' % (d, c))" 2>&1)
check "machine: device.memory_bytes is MemTotal, no sm_count or hbm_Bps; cluster.json has the same device ($dev_ok)" test "$dev_ok" = ok

# The breakdown of both predictions adds up to the iteration (parts >= 0).
for f in my cluster; do
  args="--profile $f.json --model my.model"
  [ $f = my ] && args="$args --topology my.topo" || args="$args --nodes 16"
  build/sim/ddpsim predict $args --json >"$f.pred.json"
  sum=$(python3 -c "
import json,sys; r=json.load(open('$f.pred.json'))
parts=[r[k] for k in ('loading_s','transfer_s','compute_s','exposed_comm_s','straggler_wait_s')]
ok=all(p>=0 for p in parts) and abs(sum(parts)-r['iteration_s'])<=1e-9*r['iteration_s']
print('ok' if ok else 'bad %r %r'%(parts,r['iteration_s']))" 2>&1)
  check "$f: parts >= 0 add up to iteration_s ($sum)" test "$sum" = ok
  fit=$(python3 -c "
import json; m=json.load(open('$f.pred.json'))['memory']; d=json.load(open('$f.json'))['device']['memory_bytes']
print('ok' if m['device_bytes'] == d and m['fits'] is True else 'bad %r %r' % (m['device_bytes'], d))" 2>&1)
  check "$f: predict's memory fit uses the profile's device.memory_bytes ($fit)" test "$fit" = ok
done

# Refusals: every class of the topology named, nothing else; misuse 2, bad input 1.
C=build/calib/ddpcalib
$C cluster --compute my.json --topology dgx1v-ib --link my.json:shm=nvlink -o x.json 2>err
check "a topology class left out: exit 2, named" test $? -eq 2 -a -n "$(grep "names link class 'ib-edr'" err)"
$C cluster --compute my.json --topology dgx1v-ib --link my.json:shm=nvlink,my.json:shm=ib-edr,my.json:shm=pcie -o x.json 2>err
check "a class the topology does not name: exit 2" test $? -eq 2 -a -n "$(grep "names no link class 'pcie'" err)"
$C cluster --compute my.json --topology dgx1v-ib --link my.json:nv=nvlink,v100-dgx1v:ib-edr=ib-edr -o x.json 2>err
check "a class the source lacks: exit 1, named" test $? -eq 1 -a -n "$(grep "no comm.links entry for link class 'nv'" err)"
check "... and nothing written" test ! -e x.json
build/sim/ddpsim predict --profile my.json --model my.model 2>err >/dev/null
check "this machine's profile on a topology naming other classes is refused, not guessed" \
  test $? -eq 1 -a -n "$(grep "no comm.links entry for link class 'nvlink'" err)"

# A bad output path fails at once, before anything is measured (no mpirun started).
start=$(date +%s%N)
$C machine --quick -o "$work/nodir/p.json" 2>err
rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
check "machine -o into a missing directory: exit 1 in ${ms} ms, before measuring" \
  test $rc -eq 1 -a -n "$(grep 'nodir/p.json' err)" -a -z "$(grep -l 'compute.fp32' err)"
$C compute --backend cpu -o "$work/nodir/c.json" >out 2>err
check "compute -o into a missing directory: exit 1, nothing measured" test $? -eq 1 -a -z "$(grep 'mlstm\|fwd_step' out)"
$C machine 2>err
check "machine without -o: exit 2" test $? -eq 2

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
