#!/bin/sh
# test-oracle.sh: the availability a subscriber rebuilds from the events
# alone must equal the master's own.
#
# tests/oracle-master runs the example master's store under a seeded
# random workload over every operation of the publication-point table
# (kvevents(7), "PUBLICATION POINTS") and writes its ground truth;
# kvevents-sub records the stream, and tests/oracle-rebuild.py replays it.
# The master waits for the subscriber before its first operation
# (--wait-subscribers), so no event is lost to a subscriber still joining.
# Then:
#  - several seeds: the rebuild equals the truth, the stream has no gap;
#  - oracle-master-broken (no delta that only withdraws a tier): the
#    oracle fails;
#  - a tiny queue: the loss the subscriber sees from sequence 0 and
#    event_id 1 on (sequence gaps and event_id holes) adds up to the
#    publisher's dropped_events;
#  - several seeds again, the subscriber dropping 1% of the messages it
#    receives (its --test-drop-percent, seeded): it fills every gap from
#    the master's replay endpoint, and the rebuild still equals the
#    truth.  The master beats (kv_events_heartbeat_ms) through an idle
#    spell at the end, so that a loss among its last messages shows too.
#
# SPDX-License-Identifier: Apache-2.0

. "${top_srcdir:-.}/tests/oracle-env.sh"
BROKEN=$top_builddir/tests/oracle-master-broken
OPS=20000
SEEDS="1 2 3"

dir=$(mktemp -d "${TMPDIR:-/tmp}/test-oracle.XXXXXX") || exit 99
trap 'rm -rf "$dir"' EXIT

echo "1..28"
. "$top_srcdir/tests/tap.sh"

# run NAME MASTER SEED [FLAG...]: MASTER publishes on an endpoint of its
# own while kvevents-sub records the stream into $dir/NAME.events; the
# subscriber ends when the master has closed.  kvevents-sub also takes
# $sub_flags.  The master stays open until the subscriber has printed
# every event it published (or 60 s): a subscriber that lags finds its
# last gaps after the last operation, and only an open master answers
# their replays.
sub_flags=
run () {
  name=$1 master=$2 seed=$3
  shift 3
  endpoint=ipc://$dir/$name.sock
  hold=$dir/$name.hold
  : >"$hold"
  # shellcheck disable=SC2086 # $sub_flags holds several flags, no blanks
  "$SUB" --endpoint="$endpoint" --until-disconnect --timeout-ms=60000 --rcvhwm=0 $sub_flags \
    --summary-json="$dir/$name.summary" >"$dir/$name.events" 2>"$dir/$name.sub-err" &
  sub=$!
  "$master" --ops=$OPS --seed="$seed" --tenants=4 --quiet \
    --enable-kv-events --kv-events-bind-endpoint="$endpoint" \
    --kv-events-backend-id=oracle --kv-events-send-hwm=0 --kv-events-send-buffer-bytes=0 \
    --kv-events-close-timeout-ms=30000 \
    --wait-subscribers=1 --wait-timeout-ms=30000 --hold-file="$hold" \
    --truth="$dir/$name.truth" --stats="$dir/$name.stats" "$@" \
    2>"$dir/$name.master-err" &
  master_pid=$!
  waited=0
  while kill -0 $master_pid 2>/dev/null && test ! -f "$dir/$name.stats" && test $waited -lt 6000; do
    sleep 0.01
    waited=$((waited + 1))
  done
  published=$(field "$dir/$name.stats" published_events 2>/dev/null) || published=0
  waited=0
  while kill -0 $sub 2>/dev/null && test "$(wc -l <"$dir/$name.events")" -lt "$published" &&
      test $waited -lt 6000; do
    sleep 0.01
    waited=$((waited + 1))
  done
  rm -f "$hold"
  if wait $master_pid; then
    wait $sub && return 0
    comment "$dir/$name.sub-err"
    return 1
  fi
  kill $sub 2>/dev/null
  wait $sub
  comment "$dir/$name.master-err"
  return 1
}

# zeros NAME COUNTER...: each of these counters of the subscriber's
# summary is 0.
zeros () {
  run_name=$1
  shift
  for counter in "$@"; do
    if test "$(field "$dir/$run_name.summary" "$counter")" != 0; then
      echo "# $counter is not 0"
      comment "$dir/$run_name.sub-err"
      return 1
    fi
  done
}

# clean NAME: the subscriber saw no gap, no restart, no hole, nothing
# malformed.
clean () {
  zeros "$1" sequence_gaps restarts event_id_holes event_id_backwards decode_errors
}

# recovered NAME: the subscriber lost messages, and replay brought every
# one back: no number stayed missing, no hole, no restart.
recovered () {
  gaps=$(field "$dir/$1.summary" sequence_gaps)
  skipped=$(field "$dir/$1.summary" skipped_sequence_numbers)
  back=$(field "$dir/$1.summary" recovered_messages)
  echo "# $gaps gaps of $skipped numbers, $back messages recovered"
  test "$gaps" -gt 0 && test "$back" = "$skipped" || { comment "$dir/$1.sub-err"; return 1; }
  zeros "$1" lost_messages restarts event_id_holes event_id_backwards decode_errors
}

oracle () {
  "$PYTHON" "$ORACLE" --events="$dir/$1.events" --truth="$dir/$1.truth" --backend=oracle
}

for seed in $SEEDS; do
  if run "seed$seed" "$MASTER" "$seed"; then
    ok "seed $seed: $OPS operations published and received"
    check "seed $seed: the stream has no gap, hole or malformed message" clean "seed$seed"
    check "seed $seed: the availability rebuilt from the events is the master's" \
      oracle "seed$seed"
  else
    not_ok "seed $seed: $OPS operations published and received"
    skip "seed $seed: no stream"
    skip "seed $seed: no stream"
  fi
done

# What the seeds exercised, so that a workload change cannot quietly stop
# testing a path.
cleared=$(cat "$dir"/seed*.events 2>/dev/null | grep -c '"kind": "cleared"')
check "the seeds published cleared for RemoveAlls that emptied a tenant ($cleared)" \
  test "${cleared:-0}" -gt 0
check "the seeds published keys that are not UTF-8, as bin" \
  grep -q '"object_key": {"hex": ' "$dir/seed1.events"
# The wait for the subscriber publishes nothing: the subscriber received
# the master's published_events exactly, all of the workload's tenants.
published=$(field "$dir/seed1.stats" published_events 2>/dev/null)
received=$(field "$dir/seed1.summary" events 2>/dev/null)
echo "# seed 1: the master published ${published:-?} events, the subscriber received ${received:-?}"
check "seed 1: the subscriber received every event the master published, and no other" \
  sh -c "test -n '$published' && test '$published' = '$received' &&
         ! grep -v -E '\"tenant_id\": \"(default|tenant-[1-3])\"' '$dir/seed1.events' | grep -q ."

if run broken "$BROKEN" 1; then
  ok "oracle-master-broken ran"
  oracle broken >"$dir/broken.oracle"
  status=$?
  cat "$dir/broken.oracle"
  check "the oracle notices the publication oracle-master-broken leaves out" test $status = 1
else
  not_ok "oracle-master-broken ran"
  skip "no stream"
fi

if run tiny "$MASTER" 4 --kv-events-queue-capacity=1; then
  ok "a master with a one-event queue ran"
  dropped=$(field "$dir/tiny.stats" dropped_events)
  # The master waited for the subscriber, which so saw the stream from its
  # start: what the queue dropped before the first message is that
  # message's sequence above 0 and its first event_id above 1, which
  # kvevents-sub takes as the start of what it follows.
  first=$("$PYTHON" -c '
import json, sys
record = json.loads(open(sys.argv[1]).readline())
print(record["sequence"], record["event"]["event_id"] - 1)
' "$dir/tiny.events" 2>/dev/null) || first="0 0"
  lost=$(($(field "$dir/tiny.summary" lost_events) + ${first#* }))
  missing=$(($(field "$dir/tiny.summary" skipped_sequence_numbers) + ${first% *}))
  echo "# dropped_events $dropped; from sequence 0 and event_id 1 on, event_id holes $lost events" \
    "and sequence gaps $missing numbers (${first% *} before the first message)"
  if test "$dropped" -gt 0; then
    ok "the tiny queue dropped events"
    check "event_id holes add up to dropped_events" test "$lost" = "$dropped"
    check "sequence gaps add up to dropped_events" test "$missing" = "$dropped"
  else
    skip "the worker kept up with a one-event queue: nothing was dropped"
    skip "nothing dropped"
    skip "nothing dropped"
  fi
else
  not_ok "a master with a one-event queue ran"
  skip "no stream"
  skip "no stream"
  skip "no stream"
fi

# Smaller batches make more messages, so that 1% of them is several.
for seed in $SEEDS; do
  replay=ipc://$dir/drop$seed-replay.sock
  sub_flags="--replay-endpoint=$replay --test-drop-percent=1 --test-drop-seed=$seed"
  if run "drop$seed" "$MASTER" "$seed" --kv-events-replay-endpoint="$replay" \
       --kv-events-max-batch-events=8 --kv-events-heartbeat-ms=50 --idle-ms=500; then
    ok "seed $seed, the subscriber dropping 1%: published and received"
    check "seed $seed, the subscriber dropping 1%: every lost message came back through replay" \
      recovered "drop$seed"
    check "seed $seed, the subscriber dropping 1%: the availability rebuilt is the master's" \
      oracle "drop$seed"
  else
    not_ok "seed $seed, the subscriber dropping 1%: published and received"
    skip "seed $seed: no stream"
    skip "seed $seed: no stream"
  fi
done
sub_flags=

# The summary's "available" count is what subscribers know of: the truth's
# objects.  Seed 1 leaves uncommitted Puts, so "left" is more.
"$MASTER" --ops=2000 --seed=1 --tenants=4 --truth="$dir/count.truth" 2>"$dir/count.err"
available=$(sed -n 's/.* objects left, \([0-9]*\) of them available on a tier$/\1/p' "$dir/count.err")
truth=$("$PYTHON" -c 'import json, sys; print(len(json.load(open(sys.argv[1]))))' "$dir/count.truth")
echo "# $(head -n 1 "$dir/count.err"); the truth lists $truth"
check "oracle-master's summary counts the objects available on a tier, as the truth lists them" \
  test "$available" = "$truth"
