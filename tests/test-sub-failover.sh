#!/bin/sh
# test-sub-failover.sh: two leaders of one backend, and answers that come
# late.  The library's subscriber (tests/sub-state on kvev_subscriber_*)
# follows an old leader A and a new leader B on another endpoint, with
# the same backend_id and states of their own; whatever A still sends
# for requests made before B's snapshot replaced the backend is dropped,
# and the state ends as B's truth (kvevents-subscriber.h, the failover
# rule).
#  - replay: A has a slow replay (kv_events_replay_rate_bytes=200000) and
#    a gap its buffer still holds; B's snapshot is applied while A's
#    replay is still coming;
#  - snapshot: A, without replay, is frozen (SIGSTOP) with a snapshot
#    request of the subscriber pending; B's snapshot is taken meanwhile,
#    and A answers once it thaws.
#
# SPDX-License-Identifier: Apache-2.0

. "${top_srcdir:-.}/tests/oracle-env.sh"
SUBSTATE=${SUBSTATE:-$top_builddir/tests/sub-state}
OPS=4000

dir=$(mktemp -d "${TMPDIR:-/tmp}/test-sub-failover.XXXXXX") || exit 99
sub=
masters=
cleanup () {
  # shellcheck disable=SC2086 # lists of process ids
  kill -CONT $masters 2>/dev/null
  # shellcheck disable=SC2086
  kill $sub $masters 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT

echo "1..7"
. "$top_srcdir/tests/tap.sh"

# master NAME ENDPOINT FLAG...: an oracle-master of backend "oracle" in
# the background on ENDPOINT, its snapshots on ENDPOINT-snapshot; its pid
# is added to $masters and left in $master.
master () {
  m_name=$1 m_endpoint=$2
  shift 2
  "$MASTER" --tenants=4 --quiet --enable-kv-events --kv-events-backend-id=oracle \
    --kv-events-bind-endpoint="$m_endpoint" --kv-events-snapshot-endpoint="$m_endpoint-snapshot" \
    --kv-events-heartbeat-ms=50 --kv-events-send-hwm=0 --kv-events-send-buffer-bytes=0 \
    --kv-events-emit-publisher-id --kv-events-max-batch-events=4 \
    --kv-events-close-timeout-ms=30000 --truth="$dir/$m_name.truth" --stats="$dir/$m_name.stats" \
    --hold-file="$dir/$m_name.hold" "$@" 2>"$dir/$m_name.master-err" &
  master=$!
  masters="$masters $master"
}

# await FILE TEXT: until FILE has a line with TEXT, at most 60 s.
await () {
  tries=0
  while ! grep -q -F "$2" "$1" 2>/dev/null && test $tries -lt 600; do
    sleep 0.1
    tries=$((tries + 1))
  done
  grep -q -F "$2" "$1" 2>/dev/null
}

# stop PID: SIGSTOP, and wait until the process is stopped.
stop () {
  kill -STOP "$1"
  tries=0
  while test "$(sed -n 's/^[0-9]* ([^)]*) \(.\).*/\1/p' "/proc/$1/stat" 2>/dev/null)" != T &&
    test $tries -lt 100; do
    sleep 0.05
    tries=$((tries + 1))
  done
}

# settle NAME TRUTH: ask for the state until it is TRUTH, at most 20 s.
settle () {
  tries=0
  while test $tries -lt 100; do
    kill -USR1 $sub 2>/dev/null || return 1
    sleep 0.2
    same_state "$1" "$2" >/dev/null 2>&1 && return 0
    tries=$((tries + 1))
  done
  return 1
}

# finish NAME TRUTH: the subscriber's final state is TRUTH.
finish () {
  kill -TERM $sub 2>/dev/null
  wait $sub
  sub=
  same_state "$1" "$2" >"$dir/$1.oracle" || {
    comment "$dir/$1.oracle" "$dir/$1.sub-err"
    return 1
  }
  cat "$dir/$1.oracle"
}

# stale NAME: the subscriber counted stale answers.
stale () {
  value=$(field "$dir/$1.stats" stale_answers 2>/dev/null)
  echo "# $1: stale_answers ${value:-none}"
  test "${value:-0}" -ge 1 || { comment "$dir/$1.sub-err"; return 1; }
}

# Replay: A is bootstrapped while paused; then the subscriber loses 600
# of A's messages after the first 100 with events, A's replay of them
# takes seconds, and B, started meanwhile, is bootstrapped before it ends.
a=ipc://$dir/replay-a.sock b=ipc://$dir/replay-b.sock
: >"$dir/replay-a.hold"
: >"$dir/replay-b.hold"
master replay-a "$a" --seed=1 --ops=$((2 * OPS)) --pause-at=$OPS \
  --resume-file="$dir/replay-a.resume" --kv-events-replay-endpoint="$a-replay" \
  --kv-events-replay-rate-bytes=200000
master_a=$master
wait_file "$dir/replay-a.stats"
"$SUBSTATE" --endpoint="$a" --replay-endpoint="$a-replay" --snapshot-endpoint="$a-snapshot" \
  --endpoint="$b" --replay-endpoint= --snapshot-endpoint="$b-snapshot" --test-drop=0:100:600 \
  --drop-on-usr2 --state="$dir/replay.state" --stats="$dir/replay.stats" \
  2>"$dir/replay.sub-err" &
sub=$!
await "$dir/replay.sub-err" "snapshot from $a-snapshot"
kill -USR2 $sub
await "$dir/replay.sub-err" "test drop armed"
: >"$dir/replay-a.resume"
await "$dir/replay.sub-err" "asking $a-replay for a replay"
master replay-b "$b" --seed=2 --silent-ops=$OPS --ops=100 --wait-subscribers=1 \
  --wait-timeout-ms=30000
wait_file "$dir/replay-b.truth"
await "$dir/replay.sub-err" "snapshot from $b-snapshot"
check "replay: the new leader's snapshot came while the old one's replay was running" \
  sh -c "! grep -q -F 'replay of ' '$dir/replay.sub-err'"
await "$dir/replay.sub-err" "replay of "
settle replay replay-b
check "replay: the state after is the new leader's truth" finish replay replay-b
check "replay: the old leader's replay was dropped as stale" stale replay
rm -f "$dir/replay-a.hold" "$dir/replay-b.hold"
wait $master_a $master
masters=

# Snapshot: A is bootstrapped while paused; the subscriber is stopped
# while A publishes the rest, then A is frozen and the subscriber goes on:
# the gap it makes in what A had sent asks A for a snapshot, which waits
# while B is bootstrapped.
a=ipc://$dir/snap-a.sock b=ipc://$dir/snap-b.sock
: >"$dir/snap-a.hold"
: >"$dir/snap-b.hold"
master snap-a "$a" --seed=3 --ops=$((2 * OPS)) --pause-at=$OPS --resume-file="$dir/snap-a.resume"
master_a=$master
wait_file "$dir/snap-a.stats"
"$SUBSTATE" --endpoint="$a" --replay-endpoint= --snapshot-endpoint="$a-snapshot" \
  --endpoint="$b" --replay-endpoint= --snapshot-endpoint="$b-snapshot" --test-drop=0:2:3 \
  --drop-on-usr2 --state="$dir/snap.state" --stats="$dir/snap.stats" 2>"$dir/snap.sub-err" &
sub=$!
await "$dir/snap.sub-err" "snapshot from $a-snapshot"
kill -USR2 $sub
await "$dir/snap.sub-err" "test drop armed"
stop $sub
: >"$dir/snap-a.resume"
wait_file "$dir/snap-a.truth"
stop $master_a
kill -CONT $sub
await "$dir/snap.sub-err" "numbers skipped"
master snap-b "$b" --seed=4 --silent-ops=$OPS --ops=100 --wait-subscribers=1 \
  --wait-timeout-ms=30000
wait_file "$dir/snap-b.truth"
await "$dir/snap.sub-err" "snapshot from $b-snapshot"
settle snap snap-b
# The case needs A's answer to be late: its second snapshot must not have
# come yet.
check "snapshot: the old leader's second snapshot was still pending" \
  test "$(grep -c -F "snapshot from $a-snapshot:" "$dir/snap.sub-err")" = 1
kill -CONT $master_a
check "snapshot: the old leader's late snapshot was dropped" \
  await "$dir/snap.sub-err" "snapshot from $a-snapshot dropped"
settle snap snap-b
check "snapshot: the state after is the new leader's truth" finish snap snap-b
check "snapshot: the late answer was counted as stale" stale snap
rm -f "$dir/snap-a.hold" "$dir/snap-b.hold"
wait $master_a $master
masters=
exit $((failures > 0))
