# Shared harness of the CLI test scripts, sourced by each of them with the
# script's own arguments: CLUSTERSIM_BINARY SOURCE_ROOT.
# Sets bin (absolute: some checks change directory), src and tmp (removed on
# exit), and defines:
#   check DESCRIPTION COMMAND...     passes when COMMAND exits 0
#   bad DESCRIPTION MESSAGE ARGS...  clustersim ARGS exits 2, prints MESSAGE on
#                                    stderr and nothing on stdout
#   py EXPR FILE                     a Python condition on the JSON document d of FILE
#   retry_timing WHAT RUN OK         runs the function RUN, three times at most, while it
#                                    exits 0 but the function OK fails (bounds of real time
#                                    a loaded machine can miss); sets rc to RUN's last status
#   finish                           prints "N passed, M failed"; exits 1 on a failure
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
passes=0

check() {
  local what=$1
  shift
  if "$@"; then
    echo "ok - $what"
    passes=$((passes + 1))
  else
    echo "FAIL - $what"
    fails=$((fails + 1))
  fi
}

bad() {
  local what=$1 msg=$2
  shift 2
  "$bin" "$@" >"$tmp/bad.out" 2>"$tmp/bad.err"
  local rc=$?
  check "$what: exit 2" test $rc -eq 2
  check "$what: message" grep -qF -- "$msg" "$tmp/bad.err"
  check "$what: nothing on stdout" test ! -s "$tmp/bad.out"
}

py() {
  python3 -c "import json,sys; d=json.load(open('$2')); sys.exit(0 if ($1) else 1)"
}

retry_timing() {
  local what=$1 run=$2 ok=$3 try
  for try in 1 2 3; do
    "$run"
    rc=$?
    [ $rc -eq 0 ] || return 0
    "$ok" && return 0
    echo "# $what, try $try, missed its bounds of real time (a loaded machine?): running it again"
  done
}

finish() {
  echo "$passes passed, $fails failed"
  [ "$fails" -eq 0 ]
}
