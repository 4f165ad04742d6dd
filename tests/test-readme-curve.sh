#!/bin/sh
# test-readme-curve.sh: README's CURVE walk-through ("Securing the
# stream"), run as written on a fresh machine.
#
# The commands are read out of README, not copied here, so that the test
# follows the text.  /etc/kvevents becomes a directory that does not exist
# yet under a temporary one, as /etc/kvevents does not on a fresh machine;
# the tools are the build tree's, found on PATH under their own names;
# the subscriber's tcp://master:5557 becomes an ipc:// endpoint beside
# them, and it stops after the one event.  Then a publisher started with
# the master's flags that README gives delivers that event to the
# subscriber, which proves the keys and the allowed-clients file right.
# Everything skips in a build without ZeroMQ, which has no
# kvevents-keygen.
#
# SPDX-License-Identifier: Apache-2.0

top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
readme=$top_srcdir/README

TOTAL=6
echo "1..$TOTAL"
. "$top_srcdir/tests/tap.sh"
# shellcheck disable=SC2012 # ls is read for the mode, not for a name
mode () { ls -ld "$1" 2>/dev/null | cut -c1-10; }

if test "${KVEV_HAVE_ZMQ:-0}" != 1; then
  while test $n -lt $TOTAL; do skip "kvevents-keygen needs ZeroMQ"; done
  exit 0
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/test-readme-curve.XXXXXX") || exit 99
cleanup () {
  test -e "$dir/sub.pid" && kill "$(cat "$dir/sub.pid")" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
etc=$dir/etc/kvevents
endpoint=ipc://$dir/master.sock

# The build tree's tools under their installed names.
mkdir "$dir/bin"
tools=$(cd "$top_builddir/tools" && pwd)
for tool in kvevents-keygen kvevents-sub kvevents-pub; do
  printf '#!/bin/sh\nexec "%s/%s" "$@"\n' "$tools" "$tool" >"$dir/bin/$tool"
  chmod +x "$dir/bin/$tool"
done
PATH=$dir/bin:$PATH
export PATH

# The indented block after "The commands an operator needs", and the
# master's flags in backquotes after "and on the master:", with
# /etc/kvevents in the temporary directory.
awk '
  /^The commands an operator needs/ { inside = 1; next }
  inside && /^and on the master:/ { exit }
  inside && /^    / { print substr($0, 5) }
' "$readme" | sed "s|/etc/kvevents|$etc|g" >"$dir/commands"
awk '
  /^and on the master:/ { inside = 1 }
  inside { text = text " " $0 }
  inside && /`\.$/ { exit }
  END { sub(/^[^`]*`/, "", text); sub(/`.*$/, "", text); print text }
' "$readme" | sed "s|/etc/kvevents|$etc|g" >"$dir/master-flags"
# The subscriber's command, from its first line to the end, runs later.
sed -n '/^kvevents-sub /,$p' "$dir/commands" >"$dir/subscriber"
sed '/^kvevents-sub /,$d' "$dir/commands" >"$dir/setup"
check "README gives the commands and the master's flags" \
  sh -c "test -s '$dir/setup' && grep -q '^kvevents-sub ' '$dir/subscriber' &&
         grep -q -e '--kv-events-curve-secret-key-file=' '$dir/master-flags'"

status=1
if test -s "$dir/setup"; then
  sh -e "$dir/setup" >"$dir/setup.out" 2>&1
  status=$?
  comment "$dir/setup.out"
fi
check "the commands before the subscriber's run on a fresh machine" test $status = 0
check "the keys' directory is its owner's alone" test "$(mode "$etc")" = "drwx------"
check "the server's secret key is 0600" test "$(mode "$etc/server.key")" = "-rw-------"

# The subscriber as README runs it, on this master's endpoint, stopping
# after the one event; then the master with README's flags.
sed -e "s|tcp://master:5557|$endpoint|" -e '$ s/$/ --count=1 --timeout-ms=30000/' \
  "$dir/subscriber" >"$dir/subscriber.sh"
sh "$dir/subscriber.sh" >"$dir/sub.out" 2>"$dir/sub.err" &
echo $! >"$dir/sub.pid"
echo "stored tenant readme-key cpu" >"$dir/master.in"
# shellcheck disable=SC2046 # the flags are words
kvevents-pub $(cat "$dir/master-flags") --enable-kv-events --kv-events-bind-endpoint="$endpoint" \
  --kv-events-backend-id=readme --wait-subscribers=1 --wait-timeout-ms=30000 \
  --input="$dir/master.in" >"$dir/pub.out" 2>"$dir/pub.err"
pub_status=$?
comment "$dir/pub.err"
check "a master with README's flags starts and sees the subscriber" test $pub_status = 0
wait "$(cat "$dir/sub.pid")"
sub_status=$?
rm -f "$dir/sub.pid"
comment "$dir/sub.err"
check "the subscriber as README runs it receives the event" \
  sh -c "test $sub_status = 0 && grep -q 'readme-key' '$dir/sub.out'"

test $failures = 0
