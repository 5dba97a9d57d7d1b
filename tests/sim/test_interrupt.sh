#!/usr/bin/env bash
# Interrupting ddpsim: SIGINT, SIGTERM or SIGKILL to the front end while the simulation child runs.
# Afterwards no simulation process may survive its parent (sim/events.c: PR_SET_PDEATHSIG), and
# nothing may be left in $TMPDIR (the platform is handed over in memory, never as a file).
set -u
ddpsim=$1
pass=0 fail=0
check() { # check DESCRIPTION CONDITION...
  local what=$1
  shift
  if "$@"; then echo "ok    $what"; pass=$((pass + 1)); else echo "FAIL  $what"; fail=$((fail + 1)); fi
}
export TMPDIR
TMPDIR=$(mktemp -d)
trap 'rm -rf "$TMPDIR"' EXIT

# A simulation that takes minutes: every ring step of 128 GPUs as a message, jitter, 20 iterations.
long=(predict --nodes 16 --jitter-cv 0.1 --fidelity step --iterations 20)

for sig in INT TERM KILL; do
  # A background job of a script starts with SIGINT ignored: env restores the default, as a
  # terminal's Ctrl-C would find it.
  env --default-signal=INT "$ddpsim" "${long[@]}" >/dev/null 2>&1 &
  parent=$!
  child=
  for _ in $(seq 1 100); do # up to 10 s for the child to be forked
    child=$(pgrep -P "$parent" | head -n 1)
    [ -n "$child" ] && break
    sleep 0.1
  done
  check "SIG$sig: the simulation child ($child) of ddpsim ($parent) is running" test -n "$child"
  start=$(date +%s)
  kill -s "$sig" "$parent"
  wait "$parent" 2>/dev/null
  check "SIG$sig: ddpsim ended at once ($(($(date +%s) - start)) s), not when the simulation did" \
    test $(($(date +%s) - start)) -le 3
  gone=0
  for _ in $(seq 1 50); do # up to 5 s for the kernel to deliver the child's SIGKILL
    if [ -z "$child" ] || ! kill -0 "$child" 2>/dev/null; then gone=1; break; fi
    sleep 0.1
  done
  check "SIG$sig: the child does not outlive its parent" test $gone -eq 1
  [ $gone -eq 1 ] || kill -9 "$child" 2>/dev/null
  check "SIG$sig: nothing left in \$TMPDIR" test -z "$(ls -A "$TMPDIR")"
done

# A run that ends normally leaves nothing either.
"$ddpsim" predict --nodes 2 >/dev/null
check "a finished run leaves nothing in \$TMPDIR" test $? -eq 0 -a -z "$(ls -A "$TMPDIR")"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
