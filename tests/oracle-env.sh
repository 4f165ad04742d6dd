# oracle-env.sh: what the tests around tests/oracle-master share, sourced
# before they print their plan: the programs, the Python that runs the
# oracle (tests/oracle-rebuild.py), the skips, field, wait_file and same_state.
# SPDX-License-Identifier: Apache-2.0

top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
PYTHON=${PYTHON_INTEROP:-/usr/bin/python3}

if test "${KVEV_HAVE_ZMQ:-0}" != 1; then
  echo "1..0 # SKIP built without ZeroMQ: nothing is published"
  exit 0
fi
if ! "$PYTHON" -c 'import json' 2>/dev/null; then
  echo "1..0 # SKIP no usable Python at $PYTHON"
  exit 0
fi

SUB=$top_builddir/tools/kvevents-sub
MASTER=$top_builddir/tests/oracle-master
ORACLE=$top_srcdir/tests/oracle-rebuild.py

# field FILE NAME: one number of a flat JSON object.
field () {
  "$PYTHON" -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"
}

# wait_file FILE: until FILE exists, at most 60 s.
wait_file () {
  tries=0
  while test ! -f "$1" && test $tries -lt 600; do
    sleep 0.1
    tries=$((tries + 1))
  done
  test -f "$1"
}

# same_state NAME TRUTH: whether $dir/NAME.state, a subscriber's state,
# is what $dir/TRUTH.truth, the master's, says.
same_state () {
  "$PYTHON" "$ORACLE" --state="$dir/$1.state" --truth="$dir/$2.truth" --backend=oracle
}
