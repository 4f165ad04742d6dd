# tap.sh: TAP helpers the shell tests source.  Each test prints its plan
# (echo "1..N") itself, then reports through these.
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
