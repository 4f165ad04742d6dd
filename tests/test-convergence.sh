#!/bin/sh
# test-convergence.sh: a subscriber that joins late, loses more than
# replay holds, follows a restarted master or a failover to another one
# ends with the master's exact state, through snapshots (kvevents(7),
# SNAPSHOTS), all from outside through the wire.
#
# tests/oracle-master runs the example master's store (examples/store.c,
# whose store_snapshot walks it under the lock every operation holds) on
# several threads at once; kvevents-sub follows it with
# --snapshot-endpoint and keeps the availability the events describe
# (--state), which tests/oracle-rebuild.py compares with the master's
# truth.  A master stays open (--hold-file) until the subscriber's state
# equals its truth, or 60 s; the subscriber then writes its final state
# once more, and that is what counts.  Scenarios, for several seeds:
#  - late: the subscriber connects after half of the operations;
#  - loss: it drops 1% of the messages and replay holds one message, so
#    most gaps need a new snapshot;
#  - restart: the master stops; a new one on the same endpoint restores
#    the objects (the same seed's operations, not published) and goes on;
#  - failover: the same, with the new master on another endpoint.
#
# SPDX-License-Identifier: Apache-2.0

. "${top_srcdir:-.}/tests/oracle-env.sh"
SEEDS="1 2 3"
OPS=10000

dir=$(mktemp -d "${TMPDIR:-/tmp}/test-convergence.XXXXXX") || exit 99
sub=
masters=
cleanup () {
  # shellcheck disable=SC2086 # lists of process ids
  kill $sub $masters 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT

echo "1..$((4 * 3 * 3 + 2))"
. "$top_srcdir/tests/tap.sh"

# master NAME ENDPOINT FLAG...: an oracle-master in the background
# publishing on ENDPOINT, its snapshots on ENDPOINT-snapshot; its pid is
# added to $masters and left in $master.
master () {
  m_name=$1 m_endpoint=$2
  shift 2
  "$MASTER" --tenants=4 --quiet --enable-kv-events --kv-events-backend-id=oracle \
    --kv-events-bind-endpoint="$m_endpoint" --kv-events-snapshot-endpoint="$m_endpoint-snapshot" \
    --kv-events-heartbeat-ms=50 --kv-events-send-hwm=0 --kv-events-send-buffer-bytes=0 \
    --kv-events-close-timeout-ms=30000 --truth="$dir/$m_name.truth" --stats="$dir/$m_name.stats" \
    "$@" 2>"$dir/$m_name.master-err" &
  master=$!
  masters="$masters $master"
}

# subscriber NAME FLAG...: kvevents-sub in the background, pid in $sub.
subscriber () {
  s_name=$1
  shift
  "$SUB" --rcvhwm=0 --state="$dir/$s_name.state" --summary-json="$dir/$s_name.summary" "$@" \
    >"$dir/$s_name.events" 2>"$dir/$s_name.sub-err" &
  sub=$!
}

# converge NAME TRUTH: while the master holds, ask the subscriber for its
# state until it is the truth (at most 60 s); then let the master close,
# stop the subscriber, and compare its final state.
converge () {
  c_name=$1 truth=$2
  wait_file "$dir/$truth.truth"
  tries=0
  while test $tries -lt 300; do
    kill -USR1 $sub 2>/dev/null || break
    sleep 0.2
    same_state "$c_name" "$truth" >/dev/null 2>&1 && break
    tries=$((tries + 1))
  done
  rm -f "$dir/$truth.hold"
  wait $master
  master_status=$?
  kill -TERM $sub 2>/dev/null
  wait $sub
  sub=
  if test $master_status != 0; then
    comment "$dir/$truth.master-err"
    return 1
  fi
  same_state "$c_name" "$truth" >"$dir/$c_name.oracle" || {
    comment "$dir/$c_name.oracle" "$dir/$c_name.sub-err"
    return 1
  }
  cat "$dir/$c_name.oracle"
}

# at_least NAME COUNTER N: the subscriber's summary says COUNTER >= N.
at_least () {
  value=$(field "$dir/$1.summary" "$2" 2>/dev/null)
  echo "# $1: $2 $value"
  test "${value:-0}" -ge "$3" || { comment "$dir/$1.sub-err"; return 1; }
}

# snapshot_after NAME FIRST THEN: the subscriber's report has a line with
# THEN after one with FIRST.  Whether the old master's own snapshot came
# depends on how soon it set its snapshot function (a refusal is tried
# again a second later, and a short-lived master may be gone by then).
snapshot_after () {
  awk -v first="$2" -v then="$3" '
    index($0, first) { seen = 1 }
    seen && index($0, then) { found = 1 }
    END { exit !found }' "$dir/$1.sub-err" && return 0
  comment "$dir/$1.sub-err"
  return 1
}

# handover KIND SEED FIRST SECOND: master KIND$SEED-a publishes OPS
# operations on FIRST and closes; KIND$SEED-b restores the same objects
# (the same seed's operations, not published) and goes on on SECOND, on
# four threads, held open; the subscriber follows both endpoints (one,
# when they are the same).
handover () {
  h_name=$1$2
  : >"$dir/$h_name-b.hold"
  if test "$3" = "$4"; then
    subscriber "$h_name" --endpoint="$3" --snapshot-endpoint="$3-snapshot"
  else
    subscriber "$h_name" --endpoint="$3" --snapshot-endpoint="$3-snapshot" \
      --endpoint="$4" --snapshot-endpoint="$4-snapshot"
  fi
  master "$h_name-a" "$3" --seed="$2" --ops=$OPS --wait-subscribers=1 --wait-timeout-ms=30000
  wait $master
  master "$h_name-b" "$4" --seed="$2" --silent-ops=$OPS --ops=$OPS --threads=4 \
    --wait-subscribers=1 --wait-timeout-ms=30000 --hold-file="$dir/$h_name-b.hold"
}

for seed in $SEEDS; do
  # Late: the master pauses after half of its operations, and the
  # subscriber connects only then.
  name=late$seed
  endpoint=ipc://$dir/$name.sock
  : >"$dir/$name.hold"
  master "$name" "$endpoint" --seed="$seed" --ops=$((2 * OPS)) --threads=4 --pause-at=$OPS \
    --resume-file="$dir/$name.resume" --hold-file="$dir/$name.hold"
  wait_file "$dir/$name.stats"
  subscriber "$name" --endpoint="$endpoint" --snapshot-endpoint="$endpoint-snapshot"
  sleep 0.2
  : >"$dir/$name.resume"
  check "seed $seed, a subscriber that joins after half: its state is the master's" \
    converge "$name" "$name"
  check "seed $seed, late: it took a snapshot" at_least "$name" snapshots 1
  check "seed $seed, late: the events it printed rebuild the master's state too" \
    "$PYTHON" "$ORACLE" --events="$dir/$name.events" --truth="$dir/$name.truth" --backend=oracle

  # Loss beyond replay.
  name=loss$seed
  endpoint=ipc://$dir/$name.sock
  : >"$dir/$name.hold"
  subscriber "$name" --endpoint="$endpoint" --snapshot-endpoint="$endpoint-snapshot" \
    --replay-endpoint="$endpoint-replay" --test-drop-percent=1 --test-drop-seed="$seed"
  master "$name" "$endpoint" --seed="$seed" --ops=$((2 * OPS)) --threads=4 \
    --wait-subscribers=1 --wait-timeout-ms=30000 --hold-file="$dir/$name.hold" \
    --kv-events-replay-endpoint="$endpoint-replay" --kv-events-replay-buffer-messages=1 \
    --kv-events-max-batch-events=8
  check "seed $seed, a subscriber that loses more than replay holds: its state is the master's" \
    converge "$name" "$name"
  check "seed $seed, loss: messages were lost for good" at_least "$name" lost_messages 1
  check "seed $seed, loss: it took a snapshot again" at_least "$name" snapshots 2

  # A restart on the same endpoint, and a failover to another one.
  handover restart "$seed" "ipc://$dir/restart$seed.sock" "ipc://$dir/restart$seed.sock"
  check "seed $seed, a master restarted with its objects: the subscriber's state is the new one's" \
    converge "restart$seed" "restart$seed-b"
  check "seed $seed, restart: it saw the restart" at_least "restart$seed" restarts 1
  check "seed $seed, restart: it took a snapshot of the restarted master" \
    snapshot_after "restart$seed" "the publisher restarted" "snapshot from ipc://$dir/restart$seed.sock"

  handover failover "$seed" "ipc://$dir/failover$seed-a.sock" "ipc://$dir/failover$seed-b.sock"
  check "seed $seed, a failover to another master: the subscriber's state is the new one's" \
    converge "failover$seed" "failover$seed-b"
  check "seed $seed, failover: it took a snapshot of the new master" \
    snapshot_after "failover$seed" "subscribed to" "snapshot from ipc://$dir/failover$seed-b.sock"
  check "seed $seed, failover: the new master changed the state it took over" \
    sh -c "test -s '$dir/failover$seed-a.truth' &&
           ! cmp -s '$dir/failover$seed-a.truth' '$dir/failover$seed-b.truth'"
  masters=
done

# A publisher without a snapshot function: the refusal is reported and
# counted, the messages held for the snapshot follow, and the snapshot is
# asked for again a second later (a master may set its function only
# once it has started).
endpoint=ipc://$dir/none.sock
(sleep 3) | "$top_builddir/tests/interop-publisher" enable_kv_events=true \
  kv_events_backend_id=none kv_events_bind_endpoint="$endpoint" \
  kv_events_snapshot_endpoint="$endpoint-snapshot" kv_events_heartbeat_ms=50 >/dev/null 2>&1 &
masters=$!
"$SUB" --endpoint="$endpoint" --snapshot-endpoint="$endpoint-snapshot" --timeout-ms=1000 \
  --summary-json="$dir/none.summary" >/dev/null 2>"$dir/none.sub-err"
check "a snapshot refused is reported" contains "$dir/none.sub-err" "has no snapshot function"
refused_and_went_on () {
  test "$(field "$dir/none.summary" snapshot_failures)" -ge 2 &&
    test "$(field "$dir/none.summary" heartbeats)" -gt 0
}
check "... counted, asked again, and the held messages follow" refused_and_went_on
wait
masters=
exit $((failures > 0))
