#!/bin/sh
# examples/master, the README's tour in C++17, as built by make check
# against the build tree: it publishes an event of each kind and every
# one goes out, and a bad flag is its GError.
set -u
: "${top_builddir:?}"
master=$top_builddir/examples/master
if [ "${KVEV_HAVE_CXX17:-0}" != 1 ]; then
  echo "1..0 # SKIP no C++17 compiler: examples/master is not built"
  exit 0
fi
echo "1..2"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

if [ "${KVEV_HAVE_ZMQ:-0}" = 1 ]; then
  events='"enabled": true, .*"enqueued_events": 4, "published_events": 4,'
else
  events='"enabled": false,'
fi
if "$master" "ipc://$tmp/master.sock" >"$tmp/out" 2>"$tmp/err" && grep -q "$events" "$tmp/out"; then
  echo "ok 1 - stored, removed and cleared, and the statistics say they went out"
else
  echo "not ok 1 - examples/master ipc://$tmp/master.sock, expected $events:"
  sed 's/^/# /' "$tmp/out" "$tmp/err"
fi

if "$master" tcp://localhost:5557 >"$tmp/out" 2>"$tmp/err"; then
  echo "not ok 2 - a host name as the endpoint is accepted"
elif grep -q '^master: kvev_publisher_new: .*kv_events_bind_endpoint' "$tmp/err"; then
  echo "ok 2 - a host name as the endpoint fails kvev_publisher_new with its GError"
else
  echo "not ok 2 - a host name as the endpoint:"; sed 's/^/# /' "$tmp/err"
fi
