# tap.sh: TAP helpers the shell tests source, and a wait they share.  Each
# test prints its plan (echo "1..N") itself, then reports through these.
n=0
failures=0
ok () { n=$((n + 1)); echo "ok $n - $*"; }
not_ok () { n=$((n + 1)); failures=$((failures + 1)); echo "not ok $n - $*"; }
skip () { n=$((n + 1)); echo "ok $n # SKIP $*"; }
check () {
  description=$1
  shift
  if "$@"; then ok "$description"; else not_ok "$description"; fi
}
comment () { sed 's/^/# /' "$@"; }
# contains FILE TEXT: FILE has TEXT, else it is shown.
contains () {
  if grep -F -q -e "$2" "$1"; then return 0; fi
  echo "# \"$2\" not in $1:"
  comment "$1"
  return 1
}
lacks () { ! grep -F -q -e "$2" "$1"; }
# wait_for TENTHS FILE TEXT: until FILE has TEXT, for at most TENTHS
# tenths of a second; FALSE if it never did.
wait_for () {
  tries=0
  while ! grep -q -e "$3" "$2" 2>/dev/null; do
    test $tries -lt "$1" || return 1
    sleep 0.1
    tries=$((tries + 1))
  done
}
