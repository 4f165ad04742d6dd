#!/bin/sh
# test-keygen.sh: kvevents-keygen, and a CURVE stream from kvevents-pub to
# kvevents-sub.
#
# kvevents-keygen writes the secret key with mode 0600 and the public key
# with mode 0644, whatever the umask, and replaces nothing without
# --force.  Then kvevents-pub publishes with CURVE and an allowed-clients
# file over ipc:// in a temporary directory, waiting for its subscriber
# first: the allowed subscriber receives every event and nothing else,
# and a subscriber with another key, one with the wrong server key and
# one without CURVE receive none; with nobody to wait for, the wait ends
# at its timeout.  Everything skips in a build without ZeroMQ, which has
# no kvevents-keygen.
#
# SPDX-License-Identifier: Apache-2.0

top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
KEYGEN=$top_builddir/tools/kvevents-keygen
PUB=$top_builddir/tools/kvevents-pub
SUB=$top_builddir/tools/kvevents-sub

TOTAL=37
echo "1..$TOTAL"
. "$top_srcdir/tests/tap.sh"
# mode FILE: the permissions as ls shows them, such as -rw-------.
# shellcheck disable=SC2012 # ls is read for the mode, not for a name
mode () { ls -ld "$1" | cut -c1-10; }
# no_temporary PREFIX: nothing is left beside PREFIX.key and PREFIX.pub.
no_temporary () {
  for file in "$1".key.* "$1".pub.*; do
    if test -e "$file"; then
      echo "# left behind: $file"
      return 1
    fi
  done
}
# is_key FILE...: each FILE is one line of 40 Z85 characters.
is_key () {
  for file; do
    test "$(wc -c <"$file")" -eq 41 &&
      grep -q -E '^[]0-9a-zA-Z.:+=^!/*?&<>()[{}@%$#-]{40}$' "$file" || return 1
  done
}

if test "${KVEV_HAVE_ZMQ:-0}" != 1; then
  while test $n -lt $TOTAL; do skip "kvevents-keygen needs ZeroMQ"; done
  exit 0
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/test-keygen.XXXXXX") || exit 99
# kill_subs: ends the subscribers still running; they print their summary.
kill_subs () {
  for pidfile in "$dir"/*.pid; do
    test -e "$pidfile" && kill "$(cat "$pidfile")" 2>/dev/null
  done
}
cleanup () {
  kill_subs
  rm -rf "$dir"
}
trap cleanup EXIT

# ---------------------------------------------------------------------------
# kvevents-keygen's files.

# A umask that lets everyone read and write: the secret key is 0600 still.
(umask 000 && "$KEYGEN" "$dir/server") >"$dir/server.out" 2>"$dir/server.err"
check "kvevents-keygen PREFIX succeeds" test $? = 0
check "PREFIX.key has mode 0600 under umask 000" test "$(mode "$dir/server.key")" = "-rw-------"
check "PREFIX.pub has mode 0644 under umask 000" test "$(mode "$dir/server.pub")" = "-rw-r--r--"
check "both files hold one 40-character Z85 key" is_key "$dir/server.key" "$dir/server.pub"
check "the public key is printed, and it is PREFIX.pub" cmp -s "$dir/server.out" "$dir/server.pub"
check "the secret key is not the public key" sh -c "! cmp -s '$dir/server.key' '$dir/server.pub'"

# Standard output that fails once the files are written: status 1, and
# the message says the pair is there, or a retry meets "already exists"
# with no idea why.
if test -w /dev/full; then
  "$KEYGEN" "$dir/full" >/dev/full 2>"$dir/full.err"
  check "a failed standard output after the files is status 1 and says the pair is written" \
    sh -c "test $? = 1 && grep -q 'the key pair is written' '$dir/full.err' &&
           test -s '$dir/full.key' && test -s '$dir/full.pub'"
else
  skip "no /dev/full here"
fi

# A umask that lets no one else read: the public key is 0644 still.
(umask 077 && "$KEYGEN" "$dir/client") >/dev/null 2>&1
check "PREFIX.pub has mode 0644 under umask 077" test "$(mode "$dir/client.pub")" = "-rw-r--r--"
(umask 022 && "$KEYGEN" "$dir/other") >/dev/null 2>&1
check "two runs make two different pairs" sh -c "! cmp -s '$dir/client.pub' '$dir/other.pub'"

cp "$dir/server.key" "$dir/saved-server.key"
cp "$dir/server.pub" "$dir/saved-server.pub"
"$KEYGEN" "$dir/server" >"$dir/again.out" 2>"$dir/again.err"
check "an existing pair is not replaced without --force (status 1)" test $? = 1
check "the refusal says why" contains "$dir/again.err" "server.key already exists; --force replaces it"
check "the old files are untouched" \
  sh -c "cmp -s '$dir/server.key' '$dir/saved-server.key' && cmp -s '$dir/server.pub' '$dir/saved-server.pub'"

: >"$dir/half.pub"
"$KEYGEN" "$dir/half" >/dev/null 2>"$dir/half.err"
check "an existing PREFIX.pub alone is refused too, and no PREFIX.key is left" \
  sh -c "test $? = 1 && test ! -e '$dir/half.key' && test ! -s '$dir/half.pub'"

chmod 644 "$dir/server.key"
(umask 000 && "$KEYGEN" --force "$dir/server") >"$dir/force.out" 2>"$dir/force.err"
check "--force replaces the pair (status 0)" test $? = 0
check "--force writes new keys" \
  sh -c "! cmp -s '$dir/server.key' '$dir/saved-server.key' && cmp -s '$dir/force.out' '$dir/server.pub'"
check "--force makes the secret key 0600 again" test "$(mode "$dir/server.key")" = "-rw-------"
check "--force leaves no temporary file" no_temporary "$dir/server"

# --force that cannot finish leaves the old pair whole: a PREFIX.key that
# cannot be replaced (a directory) fails after PREFIX.pub was renamed
# into place, which is then put back.
cp "$dir/server.pub" "$dir/stuck.pub"
mkdir "$dir/stuck.key"
"$KEYGEN" --force "$dir/stuck" >/dev/null 2>"$dir/stuck.err"
check "--force that cannot replace PREFIX.key fails and puts PREFIX.pub back" \
  sh -c "test $? = 1 && cmp -s '$dir/server.pub' '$dir/stuck.pub' && test -d '$dir/stuck.key' &&
         grep -q 'stuck.key' '$dir/stuck.err'"
mkdir "$dir/blocked.pub"
echo "old secret" >"$dir/blocked.key"
"$KEYGEN" --force "$dir/blocked" >/dev/null 2>&1
check "--force that cannot replace PREFIX.pub keeps the old PREFIX.key" \
  sh -c "test $? = 1 && test \"\$(cat '$dir/blocked.key')\" = 'old secret' &&
         test -d '$dir/blocked.pub' && test -z \"\$(ls '$dir' | grep '^blocked\.\(key\|pub\)\.')\""

echo "precious" >"$dir/precious"
ln -s "$dir/precious" "$dir/link.key"
"$KEYGEN" "$dir/link" >/dev/null 2>&1
check "a symbolic link is not written through" \
  sh -c "test $? = 1 && test \"\$(cat '$dir/precious')\" = precious && test ! -e '$dir/link.pub'"
"$KEYGEN" --force "$dir/link" >/dev/null 2>&1
check "--force replaces a symbolic link, not its target" \
  sh -c "test $? = 0 && test \"\$(cat '$dir/precious')\" = precious && test ! -L '$dir/link.key'"

mkdir "$dir/print"
keygen=$(cd "$(dirname "$KEYGEN")" && pwd)/kvevents-keygen
(cd "$dir/print" && "$keygen" --print) >"$dir/print.out" 2>/dev/null
check "--print prints a public and a secret key and writes no file" \
  sh -c "test $? = 0 && test \"\$(wc -l <'$dir/print.out')\" -eq 2 &&
         test \"\$(awk 'length(\$0) == 40' '$dir/print.out' | wc -l)\" -eq 2 && test -z \"\$(ls '$dir/print')\""

"$KEYGEN" >/dev/null 2>&1
status_none=$?
"$KEYGEN" --print "$dir/x" >/dev/null 2>&1
check "no PREFIX, or --print with one, is a usage error (status 2)" \
  test "$status_none/$?" = 2/2

if command -v groff >/dev/null 2>&1; then
  groff -man -ww -z "$top_srcdir/tools/kvevents-keygen.1" >"$dir/groff" 2>&1
  check "kvevents-keygen.1 formats without a groff warning" test $? = 0 -a ! -s "$dir/groff"
else
  skip "groff is not installed"
fi

# ---------------------------------------------------------------------------
# kvevents-sub's CURVE options.

endpoint=ipc://$dir/curve.sock
server_key=$(cat "$dir/server.pub")

"$SUB" --endpoint="$endpoint" --curve-server-key="$server_key" >/dev/null 2>"$dir/alone.err"
check "--curve-server-key without --curve-secret-key-file is a usage error" \
  sh -c "test $? = 2 && grep -q 'give both or neither' '$dir/alone.err'"
"$SUB" --endpoint="$endpoint" --curve-server-key="${server_key%?}" \
  --curve-secret-key-file="$dir/client.key" >/dev/null 2>"$dir/short.err"
check "a server key of 39 characters is a usage error" \
  sh -c "test $? = 2 && grep -q 'is not a Z85 public key' '$dir/short.err'"
"$SUB" --endpoint="$endpoint" --curve-server-key="$(echo "$server_key" | sed 's/^./~/')" \
  --curve-secret-key-file="$dir/client.key" >/dev/null 2>"$dir/z85.err"
check "a server key with a character outside Z85 is a usage error" \
  sh -c "test $? = 2 && grep -q 'is not a Z85 public key' '$dir/z85.err'"
"$SUB" --endpoint="$endpoint" --curve-server-key="$server_key" \
  --curve-secret-key-file="$dir/missing.key" >/dev/null 2>"$dir/missing.err"
check "a missing secret key file is a usage error" \
  sh -c "test $? = 2 && grep -q 'curve-secret-key-file' '$dir/missing.err'"
"$SUB" --endpoint="$endpoint" --curve-server-key="$server_key" --curve-secret-key-file="$dir/client.key" \
  --curve-public-key="$(cat "$dir/other.pub")" >/dev/null 2>"$dir/mismatch.err"
check "a --curve-public-key of another secret key is a usage error" \
  sh -c "test $? = 2 && grep -q 'is not the public key of the secret key' '$dir/mismatch.err'"

# ---------------------------------------------------------------------------
# A CURVE stream: only the allowed client receives it.
#
# The subscribers start first; ZeroMQ connects them once the publisher has
# bound.  kvevents-pub waits for the allowed subscriber's subscription on
# the library's socket (--wait-subscribers), publishes, and goes on
# publishing until the others have been turned away, so that each of them
# meets it while it runs.

{
  echo "# allowed clients"
  cat "$dir/client.pub"
} >"$dir/allowed"

# sub NAME FLAG...: a subscriber in the background; its process id goes
# to NAME.pid, its exit status to NAME.status once it has ended.
sub () {
  name=$1
  shift
  (
    "$SUB" --endpoint="$endpoint" --summary-json="$dir/$name.summary" "$@" \
      >"$dir/$name.out" 2>"$dir/$name.err" &
    echo $! >"$dir/$name.pid"
    wait $!
    echo $? >"$dir/$name.status"
  ) &
}
sub good --curve-server-key="$server_key" --curve-secret-key-file="$dir/client.key" \
  --until-disconnect --strict --timeout-ms=30000
sub stranger --curve-server-key="$server_key" --curve-secret-key-file="$dir/other.key" --timeout-ms=30000
sub wrong-server --curve-server-key="$(cat "$dir/other.pub")" --curve-secret-key-file="$dir/client.key" \
  --timeout-ms=30000
sub plain --timeout-ms=30000

{
  i=0
  while test $i -lt 10; do
    echo "stored - k$i cpu"
    i=$((i + 1))
  done
  echo "flush"
  wait_for 200 "$dir/stranger.err" "refused this subscriber's CURVE key"
  wait_for 200 "$dir/wrong-server.err" "is --curve-server-key"
  echo "stored - last cpu"
} | "$PUB" --enable-kv-events --kv-events-bind-endpoint="$endpoint" --kv-events-backend-id=keygen \
  --kv-events-curve-secret-key-file="$dir/server.key" \
  --kv-events-curve-allowed-clients-file="$dir/allowed" \
  --wait-subscribers=1 --wait-timeout-ms=30000 >"$dir/pub.out" 2>"$dir/pub.err"
pub_status=$?
test $pub_status = 0 || comment "$dir/pub.err"

# The allowed subscriber ends as the publisher closes; the others, still
# running, end on SIGTERM with their summary.
wait_for 300 "$dir/good.status" .
kill_subs
wait
rm -f "$dir"/*.pid

check "kvevents-pub --wait-subscribers publishes with CURVE and an allowed-clients file (status 0)" \
  test "$pub_status" = 0
keys=$(sed -n 's/.*"tenant_id": "default", "backend_id": "keygen", .*"object_key": "\([^"]*\)".*/\1/p' \
  "$dir/good.out" | tr '\n' ' ')
if test "$(cat "$dir/good.status")" = 0 && test "$keys" = "k0 k1 k2 k3 k4 k5 k6 k7 k8 k9 last " &&
  test "$(wc -l <"$dir/good.out")" -eq 11; then
  ok "the allowed subscriber receives every event, in order, and no other (status 0)"
else
  not_ok "the allowed subscriber receives every event, in order, and no other (status 0)"
  echo "# keys: $keys"
  comment "$dir/good.out" "$dir/good.err"
fi
check "a subscriber whose key is not allowed receives nothing" \
  contains "$dir/stranger.summary" '"events": 0,'
check "... and says the publisher refused its key" \
  contains "$dir/stranger.err" "the publisher refused this subscriber's CURVE key (status 400)"
check "a subscriber with the wrong server key receives nothing" \
  contains "$dir/wrong-server.summary" '"events": 0,'
check "... and says the handshake failed" \
  contains "$dir/wrong-server.err" "is --curve-server-key the publisher's public key?"
check "a subscriber without CURVE receives nothing" contains "$dir/plain.summary" '"events": 0,'

# Nobody subscribing: the wait gives up at --wait-timeout-ms, status 1.
started=$(date +%s%3N)
"$PUB" --enable-kv-events --kv-events-bind-endpoint="ipc://$dir/nobody.sock" --kv-events-backend-id=keygen \
  --kv-events-curve-secret-key-file="$dir/server.key" \
  --kv-events-curve-allowed-clients-file="$dir/allowed" \
  --wait-subscribers=1 --wait-timeout-ms=1000 </dev/null >/dev/null 2>"$dir/nobody.err"
nobody_status=$?
elapsed=$(($(date +%s%3N) - started))
echo "# kvevents-pub gave up waiting after $elapsed ms"
check "with CURVE and nobody subscribing, --wait-subscribers gives up after its timeout (status 1)" \
  sh -c "test $nobody_status = 1 && test $elapsed -ge 1000 && test $elapsed -lt 10000 &&
         grep -q 'only 0 of 1 subscription arrived within 1000 ms' '$dir/nobody.err'"
