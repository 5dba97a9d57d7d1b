# Shared by the shell tests of tests/sim (sourced after `ddpsim=$1`): the pass/fail counters, a
# temporary directory removed on exit, check and expect, and finish, which prints the counts and
# exits non-zero on a failure.
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

check() { # check DESCRIPTION CONDITION...
  local what=$1
  shift
  if "$@"; then echo "ok    $what"; pass=$((pass + 1)); else echo "FAIL  $what"; fail=$((fail + 1)); fi
}

# expect CODE PATTERN -- ddpsim args...: exit code and a message matching PATTERN on stderr.
expect() {
  local code=$1 pattern=$2
  shift 3
  "$ddpsim" "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  local msg
  msg=$(head -c 300 "$tmp/err" | tr '\n' ' ')
  check "ddpsim $* -> exit $got ($msg)" test "$got" -eq "$code" -a -n "$(grep -E -- "$pattern" "$tmp/err")"
}

finish() {
  echo "$pass passed, $fail failed"
  test "$fail" -eq 0
}
