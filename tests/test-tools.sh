#!/bin/sh
# test-tools.sh: kvevents-pub and kvevents-sub.
#
# kvevents-pub's input handling runs in every build (a build without the
# transport still reads and checks its commands).  The rest sends
# kvevents-pub's events to kvevents-sub over ipc:// in a temporary
# directory, and hands kvevents-sub raw frames that no well-behaved
# publisher sends, from tests/sendframes.  Those parts skip in a build
# without ZeroMQ.
#
# SPDX-License-Identifier: Apache-2.0

top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
PYTHON=${PYTHON_INTEROP:-/usr/bin/python3}
PUB=$top_builddir/tools/kvevents-pub
SUB=$top_builddir/tools/kvevents-sub
SENDFRAMES=$top_builddir/tests/sendframes

dir=$(mktemp -d "${TMPDIR:-/tmp}/test-tools.XXXXXX") || exit 99
trap 'rm -rf "$dir"' EXIT

have_python=no
"$PYTHON" -c 'import json' 2>/dev/null && have_python=yes
have_zmq=${KVEV_HAVE_ZMQ:-0}

if test "$have_zmq" = 1; then TOTAL=68; else TOTAL=28; fi
echo "1..$TOTAL"
. "$top_srcdir/tests/tap.sh"
# field FILE NAME: one value of a flat JSON object.
field () {
  "$PYTHON" -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"
}

# ---------------------------------------------------------------------------
# kvevents-pub's input, in every build: events disabled, nothing published.

cat >"$dir/bad.in" <<'EOF'
# a comment, then a blank line

stored - k1 cpu   # a trailing comment
bogus
stored - k1
stored - k1 tape
stored - k%zz cpu
removeall-end
removed t%00 k1 cpu
flush soon
removeall-skip leased
removeall t1
removeall-skip nope
removeall t2
stats
EOF
"$PUB" --input="$dir/bad.in" >"$dir/bad.out" 2>"$dir/bad.err"
check "kvevents-pub skips bad lines and exits 0" test $? = 0
check "an unknown command is reported with its line number" \
  contains "$dir/bad.err" "bad.in:4: unknown command \"bogus\""
check "a wrong argument count is reported with the usage" \
  contains "$dir/bad.err" "bad.in:5: wrong number of arguments; usage: stored TENANT KEY MEDIA [GROUP]"
check "an unknown MEDIA is reported" contains "$dir/bad.err" "bad.in:6: unknown media \"tape\""
check "a bad %XX escape is reported" contains "$dir/bad.err" "bad.in:7: KEY \"k%zz\" has a %"
check "removeall-end outside a removeall is reported" \
  contains "$dir/bad.err" "bad.in:8: removeall-end outside a removeall"
check "a NUL in a tenant is reported" contains "$dir/bad.err" "bad.in:9: TENANT \"t%00\" contains a NUL"
check "flush with a bad timeout is reported" contains "$dir/bad.err" "bad.in:10: \"soon\" is not a number"
check "an unknown skip REASON is reported" contains "$dir/bad.err" "bad.in:13: unknown REASON \"nope\""
check "a nested removeall is reported" \
  contains "$dir/bad.err" "bad.in:14: the removeall of line 12 is not ended yet"
check "a removeall left open at the end of input is reported and ended" \
  contains "$dir/bad.err" "bad.in:15: the input ended inside the removeall of line 12"
check "good lines after bad ones still run (stats printed)" contains "$dir/bad.out" '"enabled": false'
check "good and comment lines are not reported" \
  test "$(grep -c 'bad.in:[1-3]:' "$dir/bad.err")" = 0

# A closed standard output: status 1 once the whole input ran (the second
# stats comes after the reader has gone), not a death by SIGPIPE.
mkfifo "$dir/closed-pub"
head -c 1 <"$dir/closed-pub" >/dev/null &
printf 'stats\nsleep 300\nstats\n' | "$PUB" >"$dir/closed-pub" 2>"$dir/closed-pub.err"
check "a closed standard output is status 1 for kvevents-pub, reported" \
  sh -c "test $? = 1 && grep -q 'cannot write: Broken pipe' '$dir/closed-pub.err'"

# A --kv-events-config-file that cannot be read is status 1, a directory
# too; a pipe is read like a file (its wrong value here is status 2, as
# from a file).
mkdir "$dir/config-dir"
"$PUB" --kv-events-config-file="$dir/config-dir" </dev/null >/dev/null 2>"$dir/config-dir.err"
config_dir=$?
mkfifo "$dir/config-fifo"
printf '[kv_events]\nkv_events_dp_rank=x\n' >"$dir/config-fifo" &
"$PUB" --kv-events-config-file="$dir/config-fifo" </dev/null >/dev/null 2>"$dir/config-fifo.err"
config_fifo=$?
check "--kv-events-config-file: a directory is status 1, a FIFO is read" \
  sh -c "test $config_dir = 1 && grep -q 'config-dir' '$dir/config-dir.err' &&
         test $config_fifo = 2 && grep -q 'kv_events_dp_rank' '$dir/config-fifo.err'"

"$PUB" --strict --input="$dir/bad.in" >"$dir/strict.out" 2>"$dir/strict.err"
check "kvevents-pub --strict fails at a bad line" test $? = 1
check "--strict stops at the first bad line" \
  test "$(grep -c 'bad.in:' "$dir/strict.err")" = 1 -a ! -s "$dir/strict.out"

printf 'stored - k1 cpu\nstats\n' | "$PUB" >"$dir/stdin.out" 2>"$dir/stdin.err"
check "kvevents-pub reads standard input" \
  sh -c "test $? = 0 && grep -q '\"enabled\": false' '$dir/stdin.out'"
"$PUB" --no-such-option </dev/null >/dev/null 2>&1
check "an unknown option is a usage error (status 2)" test $? = 2
"$PUB" --enable-kv-events </dev/null >/dev/null 2>"$dir/incomplete.err"
check "an enabled configuration without an endpoint is a usage error" test $? = 2
printf '[kv_events]\nkv_events_dp_rnak=1\n' >"$dir/bad.conf"
"$PUB" --kv-events-config-file="$dir/bad.conf" </dev/null >/dev/null 2>"$dir/bad-conf.err"
check "--kv-events-config-file reports an unknown key" \
  sh -c "test $? = 2 && grep -q 'kv_events_dp_rnak' '$dir/bad-conf.err'"
"$PUB" --kv-events-config-file="$dir/no-such.conf" </dev/null >/dev/null 2>"$dir/missing-conf.err"
check "a --kv-events-config-file that cannot be read fails (status 1), as --input does" \
  sh -c "test $? = 1 && grep -q -- '--kv-events-config-file: .*no-such.conf' '$dir/missing-conf.err'"
"$PUB" --input="$dir" >/dev/null 2>"$dir/unreadable.err"
check "an input that cannot be read fails (status 1) also without --strict" \
  sh -c "test $? = 1 && grep -q 'cannot read' '$dir/unreadable.err'"
"$PUB" --wait-timeout-ms=-5 </dev/null >/dev/null 2>&1
status_negative=$?
"$PUB" --wait-timeout-ms=9223372036854775807 </dev/null >/dev/null 2>&1
check "--wait-timeout-ms out of 0..2147483647 is a usage error (status 2)" \
  test "$status_negative/$?" = 2/2

# ---------------------------------------------------------------------------
# The man pages.

if command -v groff >/dev/null 2>&1; then
  for page in kvevents-sub kvevents-pub; do
    groff -man -ww -z "$top_srcdir/tools/$page.1" >"$dir/$page.groff" 2>&1
    check "$page.1 formats without a groff warning" test $? = 0 -a ! -s "$dir/$page.groff"
  done
else
  skip "groff is not installed"
  skip "groff is not installed"
fi

# ---------------------------------------------------------------------------
# kvevents-pub into kvevents-sub.

if test "$have_zmq" != 1; then
  "$SUB" --endpoint="ipc://$dir/none.sock" --timeout-ms=1 >/dev/null 2>"$dir/nozmq.err"
  check "kvevents-sub without ZeroMQ says it cannot subscribe (status 1)" \
    sh -c "test $? = 1 && grep -q 'built without ZeroMQ' '$dir/nozmq.err'"
  printf 'stored - k1 cpu\n' | "$PUB" --enable-kv-events --kv-events-bind-endpoint="ipc://$dir/x.sock" \
    --kv-events-backend-id=tools --wait-subscribers=1 >/dev/null 2>"$dir/nozmq-pub.err"
  check "kvevents-pub without ZeroMQ does not wait for subscribers" \
    sh -c "test $? = 0 && grep -q 'does not wait' '$dir/nozmq-pub.err'"
  exit 0
fi
"$SUB" --endpoint=no-transport --timeout-ms=100 >/dev/null 2>"$dir/bad-endpoint.err"
check "kvevents-sub with an endpoint ZeroMQ cannot parse is a usage error (status 2)" \
  sh -c "test $? = 2 && grep -q 'no-transport' '$dir/bad-endpoint.err'"
# zmq_connect() takes these, and would retry them for ever.
"$SUB" --endpoint=tcp://127.0.0.1:99999 --until-disconnect >/dev/null 2>"$dir/bad-port.err"
bad_port=$?
"$SUB" --endpoint='tcp://[::1:5' --until-disconnect >/dev/null 2>"$dir/bad-bracket.err"
check "kvevents-sub refuses a tcp:// port out of range or an open bracket (status 2)" \
  sh -c "test $bad_port = 2 && test $? = 2 && grep -q 'PORT from 1 to 65535' '$dir/bad-port.err' &&
         grep -q 'PORT from 1 to 65535' '$dir/bad-bracket.err'"
if test "$have_python" != yes; then
  while test $n -lt $TOTAL; do skip "needs $PYTHON"; done
  exit 0
fi

# Nothing publishes on these endpoints: kvevents-sub just waits out -T.
echo "{}" >"$dir/target.json"
ln -s "$dir/target.json" "$dir/link.json"
"$SUB" --endpoint="ipc://$dir/quiet.sock" --timeout-ms=100 --quiet --summary-json="$dir/link.json" \
  </dev/null 2>/dev/null
check "--summary-json writes through a symbolic link instead of replacing it" \
  sh -c "test $? = 0 && test -L '$dir/link.json' && grep -q '\"messages\": 0' '$dir/target.json'"
# A busy loop on a closed standard input would spend the whole 1.5 s on
# the CPU; a wait spends next to none.
cpu=$("$PYTHON" -c '
import resource, subprocess, sys
subprocess.run(sys.argv[1:], input=b"", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(int((usage.ru_utime + usage.ru_stime) * 1000))
' "$SUB" --endpoint="ipc://$dir/idle.sock" --timeout-ms=1500 --quiet)
echo "# kvevents-sub used $cpu ms of CPU in 1500 ms with standard input closed"
check "kvevents-sub waits without spinning when standard input is a closed pipe" test "$cpu" -lt 500

# pubsub NAME [SUB-FLAG...]: kvevents-pub reads $dir/NAME.in and publishes
# (plus $PUB_FLAGS) to kvevents-sub, which ends when kvevents-pub has
# closed.  Sets pub_status and sub_status.
pubsub () {
  name=$1
  shift
  endpoint=ipc://$dir/$name.sock
  "$SUB" --endpoint="$endpoint" --until-disconnect --timeout-ms=30000 --summary-json="$dir/$name.summary" \
    "$@" >"$dir/$name.out" 2>"$dir/$name.err" &
  sub=$!
  # shellcheck disable=SC2086 # PUB_FLAGS is a list of words
  "$PUB" --enable-kv-events --kv-events-bind-endpoint="$endpoint" --kv-events-backend-id=tools \
    --wait-subscribers=1 --wait-timeout-ms=30000 $PUB_FLAGS --input="$dir/$name.in" \
    >"$dir/$name.pub-out" 2>"$dir/$name.pub-err"
  pub_status=$?
  test $pub_status = 0 || { kill $sub 2>/dev/null; comment "$dir/$name.pub-err"; }
  wait $sub
  sub_status=$?
}

cat >"$dir/all.in" <<'EOF'
# Every command kind.
stored - k1 cpu,disk g1
removed t1 k%ff%00x disk -
delta t1 k2 cpu disk
delta t1 k2 disk disk           # equal sets: nothing
stored t%20x k%25 cpu           # tenant "t x", key "k%"
stored - - cpu                  # no key: suppressed
cleared t1
removeall t2
removeall-object k3 cpu g3
removeall-object k4 cpu,disk
removeall-end
removeall t3
removeall-object k5 disk
removeall-skip leased
removeall-end
flush
flush 1000
sleep 1
stats
EOF
PUB_FLAGS=--stats pubsub all --strict
check "kvevents-pub publishes every command kind (status 0)" test "$pub_status" = 0
check "kvevents-sub --strict receives them without loss (status 0)" test "$sub_status" = 0

cat >"$dir/expect.py" <<'EOF'
import json, sys
seen = []
for line in open(sys.argv[1]):
    record = json.loads(line)
    event = record["event"]
    key = event.get("object_key")
    if isinstance(key, dict):
        key = "hex:" + key["hex"]
    seen.append((record["kind"], event["tenant_id"], key, event["medium"],
                 event.get("group_id", "absent"), event["backend_id"]))
expected = [
    ("stored", "default", "k1", "cpu", "g1", "tools"),
    ("stored", "default", "k1", "disk", "g1", "tools"),
    ("removed", "t1", "hex:6bff0078", "disk", None, "tools"),
    ("removed", "t1", "k2", "cpu", None, "tools"),
    ("stored", "t1", "k2", "disk", None, "tools"),
    ("stored", "t x", "k%", "cpu", None, "tools"),
    ("cleared", "t1", None, None, "absent", "tools"),
    ("removed", "t2", "k3", "cpu", "g3", "tools"),
    ("removed", "t2", "k4", "cpu", None, "tools"),
    ("removed", "t2", "k4", "disk", None, "tools"),
    ("cleared", "t2", None, None, "absent", "tools"),
    ("removed", "t3", "k5", "disk", None, "tools"),
]
if seen != expected:
    for item in seen:
        print("# got %r" % (item,))
    sys.exit(1)
EOF
check "the events are the ones the commands call for, in order, and no other" \
  "$PYTHON" "$dir/expect.py" "$dir/all.out"
check "stats prints the statistics JSON (a skip, a suppressed cleared, a keyless event)" \
  sh -c "grep -q '\"skipped_leased\": 1, ' '$dir/all.pub-out' &&
         grep -q '\"cleared_suppressed\": 1' '$dir/all.pub-out' &&
         grep -q '\"skipped_keyless_events\": 1' '$dir/all.pub-out'"
check "--stats prints the statistics at the end" \
  test "$(grep -c '"enabled": true' "$dir/all.pub-out")" = 2
check "the sub's summary counts every event by kind" \
  test "$(field "$dir/all.summary" stored)/$(field "$dir/all.summary" removed)/$(field "$dir/all.summary" cleared)" = 4/6/2

# A RemoveAll that the input leaves open, or inside which --strict stops,
# ends without cleared: nothing said that its loop removed everything,
# and cleared would make subscribers drop the tenant's every object.
printf 'removeall t4\nremoveall-object k6 cpu\n' >"$dir/open.in"
PUB_FLAGS=--stats pubsub open
check "a RemoveAll the input leaves open publishes its removed event and no cleared" \
  sh -c "test $pub_status = 0 && test $sub_status = 0 &&
         grep -q '\"object_key\": \"k6\"' '$dir/open.out' &&
         ! grep '\"kind\": \"cleared\"' '$dir/open.out' | grep -q '\"tenant_id\": \"t4\"' &&
         grep -q '\"skipped_other\": 1, \"cleared_suppressed\": 1' '$dir/open.pub-out'"
printf 'removeall t5\nremoveall-object k7 cpu\nremoveall-skip leasd\nremoveall-end\n' >"$dir/stopped.in"
"$PUB" --enable-kv-events --kv-events-bind-endpoint="ipc://$dir/stopped.sock" \
  --kv-events-backend-id=tools --strict --stats --input="$dir/stopped.in" \
  >"$dir/stopped.out" 2>"$dir/stopped.err"
check "a RemoveAll that --strict stops inside ends without cleared (status 1)" \
  sh -c "test $? = 1 &&
         grep -q 'stopped.in:3: stopped inside the removeall of line 1; ending it without cleared' \
           '$dir/stopped.err' &&
         grep -q '\"skipped_other\": 1, \"cleared_suppressed\": 1' '$dir/stopped.out'"

cat >"$dir/text.in" <<'EOF'
stored - k1 cpu g1
removed - k1 cpu g1
EOF
pubsub text --format=text
check "--format=text prints aligned lines with every field" \
  sh -c "grep -E -q '^ +[0-9]+ [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z +dp=0 +stored +event_id=[0-9]+ .*object_key=\"k1\" .*token_ids=null' '$dir/text.out' &&
         grep -E -q ' removed .*group_id=\"g1\"' '$dir/text.out'"

printf 'stored - k1 cpu\nstored - k2 cpu\nstored - k3 cpu\nstored - k4 cpu\n' >"$dir/count.in"
pubsub count --count=3
three_events () {
  test "$(wc -l <"$dir/count.out")" = 3 && test "$sub_status" = 0 && return 0
  echo "# status $sub_status, $(wc -l <"$dir/count.out") lines:"
  comment "$dir/count.out" "$dir/count.err" "$dir/count.pub-err"
  return 1
}
check "--count=3 prints three events" three_events

cp "$dir/count.in" "$dir/quiet.in"
pubsub quiet --quiet
check "--quiet prints only the summary" \
  sh -c "test ! -s '$dir/quiet.out' && grep -q 'events: *4 ' '$dir/quiet.err'"

printf '[kv_events]\nkv_events_backend_id=from-file\nkv_events_model_name=file-model\nkv_events_lora_name=file-lora\n' \
  >"$dir/pub.conf"
printf 'stored - k1 cpu\n' >"$dir/config.in"
PUB_FLAGS="--kv-events-model-name=cli-model --kv-events-config-file=$dir/pub.conf" pubsub config
check "--kv-events-config-file is read, and options before it override it too" \
  sh -c "grep -q '\"model_name\": \"cli-model\"' '$dir/config.out' &&
         grep -q '\"lora_name\": \"file-lora\"' '$dir/config.out' &&
         grep -q '\"backend_id\": \"tools\"' '$dir/config.out' &&
         ! grep -q -e from-file -e file-model '$dir/config.out'"

"$SUB" --endpoint="ipc://$dir/nobody.sock" --timeout-ms=200 >"$dir/timeout.out" 2>"$dir/timeout.err"
check "--timeout-ms ends a quiet subscription with status 0" \
  sh -c "test $? = 0 && grep -q 'messages: *0 ' '$dir/timeout.err'"
"$SUB" --timeout-ms=1 >/dev/null 2>&1
check "kvevents-sub without --endpoint is a usage error" test $? = 2

"$SUB" --endpoint="ipc://$dir/idle.sock" >"$dir/signal.out" 2>"$dir/signal.err" &
sub=$!
wait_for 300 "$dir/signal.err" 'subscribed to'
kill -TERM $sub
wait $sub
check "SIGTERM ends kvevents-sub with its summary and status 0" \
  sh -c "test $? = 0 && grep -q 'kvevents-sub: summary' '$dir/signal.err'"

# A stop signal ends kvevents-sub also while its output is blocked on a
# reader that takes nothing: this shell, holding the FIFO open on fd 3.
# Each signal cuts one blocked write short, so before it gave up writing
# it took one per event.  One signal while it writes, or two when the
# first comes before the write blocks and the second ends the final flush.
i=0
while test $i -lt 2000; do
  echo "stored t k$i cpu"
  i=$((i + 1))
done >"$dir/stuck.in"
mkfifo "$dir/stuck"
exec 3<>"$dir/stuck"
# Only this shell may hold the FIFO's read end: 3<&- keeps it from the children.
"$SUB" --endpoint="ipc://$dir/stuck.sock" >"$dir/stuck" 2>"$dir/stuck.err" 3<&- &
sub=$!
"$PUB" --enable-kv-events --kv-events-bind-endpoint="ipc://$dir/stuck.sock" --kv-events-backend-id=tools \
  --wait-subscribers=1 --wait-timeout-ms=30000 --input="$dir/stuck.in" >/dev/null 2>"$dir/stuck.pub-err" 3<&-
wait_for 50 "/proc/$sub/wchan" pipe_write
signals=0
while ! grep -q 'kvevents-sub: summary' "$dir/stuck.err" && test $signals -lt 10; do
  kill -TERM $sub
  signals=$((signals + 1))
  wait_for 10 "$dir/stuck.err" 'kvevents-sub: summary'
done
# A kvevents-sub still blocked dies of SIGPIPE here rather than hang the test.
exec 3<&-
wait $sub
sub_status=$?
echo "# kvevents-sub ended with status $sub_status after $signals signal(s)"
check "SIGTERM ends kvevents-sub whose output is blocked (status 1, at most two signals)" \
  sh -c "test $sub_status = 1 && test $signals -le 2 && grep -q 'output was blocked' '$dir/stuck.err'"

# A closed standard output (kvevents-sub | head -c 1) ends kvevents-sub
# with its summary, --summary-json and status 1, not a death by SIGPIPE.
mkfifo "$dir/closed"
head -c 1 <"$dir/closed" >/dev/null &
"$SUB" --endpoint="ipc://$dir/closed.sock" --until-disconnect --timeout-ms=30000 \
  --summary-json="$dir/closed.json" >"$dir/closed" 2>"$dir/closed.err" &
sub=$!
"$PUB" --enable-kv-events --kv-events-bind-endpoint="ipc://$dir/closed.sock" --kv-events-backend-id=tools \
  --wait-subscribers=1 --wait-timeout-ms=30000 --input="$dir/stuck.in" >/dev/null 2>"$dir/closed.pub-err"
wait $sub
sub_status=$?
check "a closed standard output ends kvevents-sub with its summary and status 1" \
  sh -c "test $sub_status = 1 && grep -q 'Broken pipe' '$dir/closed.err' &&
         grep -q 'kvevents-sub: summary' '$dir/closed.err' && test -s '$dir/closed.json'"

# wildcard NAME ENDPOINT [PUB-FLAG...]: kvevents-pub binds ENDPOINT, whose
# port is a wildcard, and reads $dir/NAME.in once a subscriber is there;
# kvevents-sub connects to the endpoint it prints and ends when it has
# closed.  Sets pub_status and sub_status.
wildcard () {
  name=$1 wild=$2
  shift 2
  "$PUB" --enable-kv-events --kv-events-bind-endpoint="$wild" --kv-events-backend-id=tools \
    --wait-subscribers=1 --wait-timeout-ms=30000 "$@" --input="$dir/$name.in" \
    >"$dir/$name.pub-out" 2>"$dir/$name.pub-err" &
  pub=$!
  wait_for 300 "$dir/$name.pub-err" 'publishing on'
  endpoint=$(sed -n 's/^kvevents-pub: publishing on //p' "$dir/$name.pub-err")
  "$SUB" --endpoint="$endpoint" --until-disconnect --timeout-ms=30000 \
    --summary-json="$dir/$name.summary" >"$dir/$name.out" 2>"$dir/$name.err"
  sub_status=$?
  wait $pub
  pub_status=$?
  test $pub_status = 0 || comment "$dir/$name.pub-err"
}

# IPv6: kvevents-pub binds tcp://[::1]:* and kvevents-sub connects there.
# Without ZMQ_IPV6 the bind fails and the connect never happens, silently.
if "$PYTHON" -c 'import socket; socket.socket(socket.AF_INET6).bind(("::1", 0))' 2>/dev/null; then
  printf 'stored t k1 cpu\nstored t k2 disk\n' >"$dir/v6.in"
  wildcard v6 'tcp://[::1]:*'
  check "kvevents-pub and kvevents-sub over tcp://[::1]" \
    sh -c "test $pub_status = 0 && test $sub_status = 0 \
           && test \$(grep -c '\"kind\": \"stored\"' '$dir/v6.out') = 2"
else
  skip "this host cannot bind the IPv6 loopback"
fi

# --wait-subscribers waits on the library's own socket, so an address
# allow-list stays in force: the subscriber it admits is waited for and
# gets every event, and nothing else.
printf 'stored t k1 cpu\nstored t k2 disk\ncleared t\n' >"$dir/allow.in"
wildcard allow 'tcp://127.0.0.1:*' --kv-events-allowed-addresses=127.0.0.1
check "--wait-subscribers with kv_events_allowed_addresses: the admitted subscriber gets every event" \
  sh -c "test $pub_status = 0 && test $sub_status = 0 && test \$(wc -l <'$dir/allow.out') = 3 \
         && test \$(grep -c '\"tenant_id\": \"t\", \"backend_id\": \"tools\"' '$dir/allow.out') = 3 \
         && test $(field "$dir/allow.summary" sequence_gaps)/$(field "$dir/allow.summary" lost_events) = 0/0"

# A subscriber the allow-list refuses is no subscription: the wait runs
# out, with status 1 and a message that says so.
"$PUB" --enable-kv-events --kv-events-bind-endpoint='tcp://127.0.0.1:*' --kv-events-backend-id=tools \
  --kv-events-allowed-addresses=192.0.2.1 --wait-subscribers=1 --wait-timeout-ms=2000 \
  </dev/null >/dev/null 2>"$dir/refused.pub-err" &
pub=$!
wait_for 300 "$dir/refused.pub-err" 'publishing on'
endpoint=$(sed -n 's/^kvevents-pub: publishing on //p' "$dir/refused.pub-err")
"$SUB" --endpoint="$endpoint" --timeout-ms=30000 >/dev/null 2>"$dir/refused.err" &
sub=$!
# Not killed before it runs: bash's child would run the EXIT trap first.
wait_for 300 "$dir/refused.err" 'subscribed to'
wait $pub
pub_status=$?
kill $sub 2>/dev/null
wait $sub
check "a subscriber the allow-list refuses is not waited for: status 1 after --wait-timeout-ms" \
  sh -c "test $pub_status = 1 &&
         grep -q 'only 0 of 1 subscription arrived within 2000 ms' '$dir/refused.pub-err'"

# Killed while it waits for subscribers, kvevents-pub dies by the signal
# and leaves nothing behind in $TMPDIR.  A signal it was started ignoring
# stays ignored.
mkdir "$dir/killed"
(trap '' INT; TMPDIR=$dir/killed exec "$PUB" --enable-kv-events --kv-events-backend-id=tools \
  --kv-events-bind-endpoint='tcp://127.0.0.1:*' --wait-subscribers=1 --wait-timeout-ms=30000 \
  </dev/null >/dev/null 2>"$dir/killed.err") &
pub=$!
wait_for 300 "$dir/killed.err" 'publishing on'
kill -INT $pub
sleep 0.3
alive=no
kill -0 $pub 2>/dev/null && alive=yes
kill -TERM $pub
wait $pub
pub_status=$?
check "an ignored SIGINT stays ignored by kvevents-pub --wait-subscribers" test $alive = yes
check "SIGTERM while kvevents-pub waits for subscribers: status 143, nothing left in \$TMPDIR" \
  sh -c "test $pub_status = 143 && test -z \"\$(ls -A '$dir/killed')\""

# ---------------------------------------------------------------------------
# Raw frames: malformed messages, other engines' events, loss.

# Writes msgpack with the standard library only, and runs sendframes.
cat >"$dir/frames.py" <<'EOF'
import struct, subprocess, sys

class RawStr(bytes):
    """A msgpack str holding any bytes, valid UTF-8 or not."""

def pack(value):
    if value is None:
        return b"\xc0"
    if value is True or value is False:
        return b"\xc3" if value else b"\xc2"
    if isinstance(value, int):
        return bytes([value]) if 0 <= value < 128 else b"\xd3" + struct.pack(">q", value)
    if isinstance(value, float):
        return b"\xcb" + struct.pack(">d", value)
    if isinstance(value, RawStr):
        return b"\xdb" + struct.pack(">I", len(value)) + bytes(value)
    if isinstance(value, str):
        return pack(RawStr(value.encode()))
    if isinstance(value, bytes):
        return b"\xc6" + struct.pack(">I", len(value)) + value
    if isinstance(value, (list, tuple)):
        return b"\xdd" + struct.pack(">I", len(value)) + b"".join(map(pack, value))
    if isinstance(value, dict):
        return (b"\xdf" + struct.pack(">I", len(value))
                + b"".join(pack(k) + pack(v) for k, v in value.items()))
    raise TypeError(value)

def message(sequence, payload, topic=b""):
    if not isinstance(payload, bytes):
        payload = pack(payload)
    return ":".join(f.hex() for f in (topic, struct.pack(">Q", sequence), payload))

def rfc(event_id, kind, key="k"):
    return {"event_id": event_id, "timestamp": 1000, "event_type": kind, "tenant_id": "t",
            "backend_id": "b", "medium": "cpu", "object_key": key}

sets = {
    "malformed": [
        ":".join(["", "00" * 8]),                           # 2 frames
        ":".join(["", "00" * 7, pack([1, [], 0]).hex()]),   # short sequence
        message(0, b"\xc1"),                                # not msgpack
        message(1, pack([1, [], 0]) + b"\x00"),             # trailing byte
        message(2, b"\x91" * 200 + b"\xc0"),                # nested too deeply
        message(3, {"not": "a batch"}),
        message(4, [1000, [{"event_type": "evicted"}, 7, ["BlockMoved", 1]], 0]),
        message(5, [1.5, [["BlockStored", [1, 2], None, [10, 11], 16, None, "GPU"],
                          {"type": "BlockRemoved", "block_hashes": [1], "medium": "GPU"},
                          ["AllBlocksCleared"]]], topic=b"kv@vllm"),
        message(6, [1000, [{"event_type": "stored", "object_key": RawStr(b"bad\xff\x01\"")}], 0]),
    ],
    "loss": [
        message(0, [1000, [rfc(1, "stored"), rfc(2, "stored")], 0]),
        message(1, [1000, [rfc(5, "removed")], 0]),          # ids 3, 4 lost
        message(4, [1000, [rfc(6, "stored")], 0]),           # messages 2, 3 lost
        message(0, [1000, [rfc(1, "stored")], 0]),           # a restart
        message(1, [1000, [rfc(1, "stored")], 0]),           # id went back
    ],
    # Event 2 arrives but cannot be shown: it is no hole in the ids.
    "skipped": [
        message(0, [1000, [rfc(1, "stored"), {"event_id": 2, "event_type": "bogus"},
                           rfc(3, "stored")], 0]),
    ],
}
subprocess.run([sys.argv[1], sys.argv[2]] + sets[sys.argv[3]], check=True, timeout=60)
EOF

# frames NAME SET [SUB-FLAG...]: kvevents-sub receives one set of raw
# messages.  Sets sub_status.
frames () {
  name=$1 set=$2
  shift 2
  endpoint=ipc://$dir/$name.sock
  "$SUB" --endpoint="$endpoint" --timeout-ms=30000 --summary-json="$dir/$name.summary" "$@" \
    >"$dir/$name.out" 2>"$dir/$name.err" &
  sub=$!
  "$PYTHON" "$dir/frames.py" "$SENDFRAMES" "$endpoint" "$set" 2>"$dir/$name.send-err" \
    || { kill $sub 2>/dev/null; comment "$dir/$name.send-err"; }
  wait $sub
  sub_status=$?
}

# 6 malformed messages, 3 bad events, 4 good events.
frames malformed malformed --count=13
check "malformed messages are skipped and the status stays 0" test "$sub_status" = 0
check "a wrong frame count is reported" contains "$dir/malformed.err" "message skipped: expected 3 frames, got 2"
check "a short sequence is reported" \
  contains "$dir/malformed.err" "message skipped: the sequence frame has 7 bytes instead of 8"
check "an undecodable payload is reported" \
  sh -c "grep -q 'message 0 skipped: the payload is not msgpack' '$dir/malformed.err' &&
         grep -q 'message 1 skipped: 1 byte follows the payload' '$dir/malformed.err' &&
         grep -q 'message 2 skipped: the payload is not msgpack: it is nested too deeply' '$dir/malformed.err' &&
         grep -q 'message 3 skipped: the payload is not an array' '$dir/malformed.err'"
check "unknown event types are reported and skipped" \
  sh -c "grep -q 'message 4: event 1 has an unknown event type \"evicted\"; skipped' '$dir/malformed.err' &&
         grep -q 'message 4: event 2 is neither a map nor a tagged array; skipped' '$dir/malformed.err' &&
         grep -q 'message 4: event 3 has an unknown event type \"BlockMoved\"; skipped' '$dir/malformed.err'"
check "vLLM tagged arrays decode, with their positions named" \
  contains "$dir/malformed.out" '"topic": "kv@vllm", "sequence": 5, "timestamp": 1.5, "kind": "stored", "event": {"type": "BlockStored", "block_hashes": [1, 2], "parent_block_hash": null, "token_ids": [10, 11], "block_size": 16, "lora_id": null, "medium": "GPU"}}'
check "every kind of vLLM event is recognised" \
  sh -c "grep -q '\"kind\": \"removed\", \"event\": {\"type\": \"BlockRemoved\"' '$dir/malformed.out' &&
         grep -q '\"kind\": \"cleared\", \"event\": {\"type\": \"AllBlocksCleared\"}' '$dir/malformed.out'"
check "a str that is not UTF-8 prints as hex, and every line is valid JSON" \
  sh -c "grep -q '\"object_key\": {\"hex\": \"626164ff0122\", \"invalid_utf8\": true}' '$dir/malformed.out' &&
         '$PYTHON' -c 'import json, sys; [json.loads(l) for l in open(sys.argv[1])]' '$dir/malformed.out'"
check "the summary counts the decode errors" \
  test "$(field "$dir/malformed.summary" malformed_messages)/$(field "$dir/malformed.summary" bad_events)/$(field "$dir/malformed.summary" events)" = 6/3/4

frames malformed-strict malformed --count=13 --strict --quiet
check "--strict fails on malformed messages" test "$sub_status" = 1

frames loss loss --count=6 --format=text
check "a transport sequence jump is reported with the numbers" \
  contains "$dir/loss.err" "sequence jumped from 1 to 4: 2 numbers skipped (lost messages or events the publisher dropped)"
check "an event_id hole is reported with the numbers" \
  contains "$dir/loss.err" "message 1: event_id jumped from 2 to 5: 2 events lost"
check "a sequence going back is reported as a restart, without a false event_id report" \
  sh -c "grep -q 'sequence went back from 4 to 0: the publisher restarted' '$dir/loss.err' &&
         ! grep -q 'event_id went back from 6 to 1' '$dir/loss.err' &&
         grep -q 'message 1: event_id went back from 1 to 1' '$dir/loss.err'"
check "the summary totals the loss" \
  test "$(field "$dir/loss.summary" sequence_gaps)/$(field "$dir/loss.summary" skipped_sequence_numbers)/$(field "$dir/loss.summary" event_id_holes)/$(field "$dir/loss.summary" lost_events)/$(field "$dir/loss.summary" restarts)" = 1/2/1/2/1

frames skipped skipped --count=3
check "a skipped event that carried an event_id is no hole in the ids" \
  test "$(field "$dir/skipped.summary" event_id_holes)/$(field "$dir/skipped.summary" bad_events)/$(field "$dir/skipped.summary" events)" = 0/1/2
frames skipped-count skipped --count=1
check "--count counts in message order, skipped events where they stand" \
  test "$(wc -l <"$dir/skipped-count.out")/$(field "$dir/skipped-count.summary" bad_events)" = 1/0

test $n = $TOTAL || echo "# planned $TOTAL tests, ran $n"
