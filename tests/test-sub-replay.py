# kvevents-sub as a replay client, from outside: tests/interop-publisher
# publishes, kvevents-sub loses messages on purpose (its hidden
# --test-drop-percent, seeded) and must fill every gap through the
# publisher's replay endpoint (kvevents(7), REPLAY), under CURVE too; it
# must count heartbeats and warn when they stop (HEARTBEATS), and take a
# new publisher_id for a restart (PUBLISHER IDENTITY), from raw frames
# that tests/sendframes sends, and keep a failed-over master's state
# (SNAPSHOTS).  The standard library only; loopback and ipc, every wait
# bounded.  Prints TAP.
import json
import os
import struct
import subprocess
import time

import interop_master
from tap import check, finish, scratch_directory

builddir = os.environ.get("top_builddir", ".")
SUB = os.path.join(builddir, "tools", "kvevents-sub")
KEYGEN = os.path.join(builddir, "tools", "kvevents-keygen")
SENDFRAMES = os.path.join(builddir, "tests", "sendframes")
tmp = scratch_directory("kvev-sub-replay-")


def Master(name, flags):
    return interop_master.Master(tmp, name, flags)


class Sub:
    """kvevents-sub, its events, its standard error and its summary."""

    def __init__(self, name, flags):
        self.name = name
        self.summary_path = os.path.join(tmp, name + ".summary")
        self.out = open(os.path.join(tmp, name + ".out"), "w")
        self.err = open(os.path.join(tmp, name + ".err"), "w")
        self.process = subprocess.Popen(
            [SUB, "--summary-json=" + self.summary_path] + flags,
            stdout=self.out, stderr=self.err)

    def wait(self, timeout=120):
        try:
            self.status = self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.status = self.process.wait()
        self.out.close()
        self.err.close()
        with open(os.path.join(tmp, self.name + ".out")) as out:
            self.events = [json.loads(line) for line in out]
        with open(os.path.join(tmp, self.name + ".err")) as err:
            self.stderr = err.read()
        try:
            with open(self.summary_path) as summary:
                self.summary = json.load(summary)
        except (OSError, ValueError):
            self.summary = {}
        return self

    def field(self, name):
        return self.summary.get(name, -1)


def bulk_keys(events):
    """The numbers interop-publisher's bulk writes at the start of each key."""
    return [int(e["event"]["object_key"].split("\0")[0]) for e in events]


def show(sub):
    for line in sub.stderr.splitlines()[-6:]:
        print("# " + line)


def lossy_run(name, count, master_flags, sub_flags, complete=True):
    """interop-publisher publishes count stored events, at most 4 a message,
    with heartbeats every 100 ms so that a loss at the very end shows too;
    kvevents-sub drops 5% of what it receives.  complete: kvevents-sub
    stops after count events; otherwise once the publisher has closed, a
    second after its last event."""
    master = Master(name, ["kv_events_max_batch_events=4", "kv_events_heartbeat_ms=100"]
                    + master_flags)
    flags = [f.replace("@REPLAY@", master.replay_endpoint or "") for f in sub_flags]
    sub = Sub(name, ["--endpoint=" + master.endpoint, "--timeout-ms=30000",
                     "--test-drop-percent=5", "--test-drop-seed=7"]
              + (["--count=%d" % count] if complete else ["--until-disconnect"]) + flags)
    if master.command("wait 1 20000") == "ok":
        master.command("bulk %d 40" % count)
    if complete:
        sub.wait()
        master.stop()
    else:
        time.sleep(1)
        master.stop()
        sub.wait()
    return sub


def recovered_whole(sub, count, what):
    check(sub.status == 0, "%s: kvevents-sub exits 0 (status %s)" % (what, sub.status))
    check(sub.field("sequence_gaps") > 0,
          "%s: messages were lost on the way (%d gaps, %d numbers)"
          % (what, sub.field("sequence_gaps"), sub.field("skipped_sequence_numbers")))
    check(bulk_keys(sub.events) == list(range(count)),
          "%s: every event published is printed once, in order (%d of %d)"
          % (what, len(sub.events), count))
    check([e["event"]["event_id"] for e in sub.events] == list(range(1, count + 1)),
          "%s: ... with event_id 1 to %d, no hole" % (what, count))
    sequences = [e["sequence"] for e in sub.events]
    check(sequences == sorted(sequences), "%s: ... in sequence order" % what)
    check(sub.field("recovered_messages") == sub.field("skipped_sequence_numbers")
          and sub.field("lost_messages") == 0
          and sub.field("replay_requests") == sub.field("sequence_gaps"),
          "%s: the summary has every missing message recovered by replay, none lost "
          "(%d recovered, %d requests)"
          % (what, sub.field("recovered_messages"), sub.field("replay_requests")))
    if sub.status != 0 or sub.field("lost_messages") != 0:
        show(sub)


# Loss filled through replay, --strict content with it.
COUNT = 2000
sub = lossy_run("ipc", COUNT, ["kv_events_replay_endpoint=ipc://%s/ipc-replay.sock" % tmp],
                ["--replay-endpoint=@REPLAY@", "--strict"])
recovered_whole(sub, COUNT, "ipc")
check("sequence jumped" not in sub.stderr,
      "ipc: no gap is reported: none stayed")

# The same loss without replay is loss: --strict fails, the summary and
# standard error say so.
sub = lossy_run("none", 400, [], ["--strict"], complete=False)
check(sub.status == 1 and len(sub.events) < 400
      and sub.field("lost_messages") == sub.field("skipped_sequence_numbers") > 0
      and sub.field("recovered_messages") == 0
      and ("skipped (a lost message" in sub.stderr or "skipped (lost messages" in sub.stderr),
      "without --replay-endpoint the loss stays: %d of 400 events, %d numbers lost, --strict "
      "status %d" % (len(sub.events), sub.field("lost_messages"), sub.status))

# A replay buffer of one message has lost almost every dropped one by
# the time the next arrives: reported lost, per gap.  Almost: the worker
# buffers a message after it sent it, and a request that comes between
# the two still finds the one before.
sub = lossy_run("small", 400, ["kv_events_replay_endpoint=ipc://%s/small-replay.sock" % tmp,
                               "kv_events_replay_buffer_messages=1"],
                ["--replay-endpoint=@REPLAY@"], complete=False)
check(sub.field("sequence_gaps") > 0 and sub.field("lost_messages") > 0
      and sub.field("lost_messages") + sub.field("recovered_messages")
      == sub.field("skipped_sequence_numbers") and sub.field("replay_failures") == 0,
      "a replay buffer of one message: asked, answered, and what it no longer held lost "
      "(%d numbers, %d recovered)" % (sub.field("lost_messages"), sub.field("recovered_messages")))
check("no longer in the replay buffer" in sub.stderr, "... and reported so on standard error")

# A replay endpoint that never answers: each gap is lost after
# --replay-timeout-ms, and the stream goes on.
sub = lossy_run("silent", 400, [], ["--replay-endpoint=ipc://%s/nobody.sock" % tmp,
                                    "--replay-timeout-ms=300"], complete=False)
check(sub.field("sequence_gaps") > 0
      and sub.field("replay_failures") == sub.field("replay_requests") == sub.field("sequence_gaps")
      and sub.field("lost_messages") == sub.field("skipped_sequence_numbers"),
      "an unanswered replay fails after --replay-timeout-ms and its gap is lost (%d of %d)"
      % (sub.field("replay_failures"), sub.field("replay_requests")))
check("did not answer the replay within 300 ms" in sub.stderr,
      "... and standard error says so")
check(sub.field("events") == len(sub.events) > 300,
      "... while the live events go on printing (%d)" % len(sub.events))

# Under CURVE: the replay socket has the live one's keys.
keys = {}
for who in ("server", "client"):
    prefix = os.path.join(tmp, who)
    subprocess.run([KEYGEN, prefix], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    with open(prefix + ".pub") as public:
        keys[who] = public.read().strip()
with open(os.path.join(tmp, "clients"), "w") as clients:
    clients.write(keys["client"] + "\n")
sub = lossy_run("curve", COUNT,
                ["kv_events_replay_endpoint=tcp://127.0.0.1:*",
                 "kv_events_curve_secret_key_file=" + os.path.join(tmp, "server.key"),
                 "kv_events_curve_allowed_clients_file=" + os.path.join(tmp, "clients")],
                ["--replay-endpoint=@REPLAY@", "--curve-server-key=" + keys["server"],
                 "--curve-secret-key-file=" + os.path.join(tmp, "client.key")])
recovered_whole(sub, COUNT, "CURVE")

# Heartbeats: counted, not events; none missing, no warning.
master = Master("beats", ["kv_events_heartbeat_ms=100"])
sub = Sub("beats", ["--endpoint=" + master.endpoint, "--until-disconnect", "--heartbeat-ms=300",
                    "--timeout-ms=20000"])
master.command("wait 1 20000")
time.sleep(0.8)
master.command("bulk 10 40")
time.sleep(0.3)
master.stop()
sub.wait()
check(sub.field("heartbeats") >= 4 and sub.field("events") == len(sub.events) == 10,
      "heartbeats are counted apart from the 10 events (%d heartbeats)" % sub.field("heartbeats"))
check(sub.field("messages") > sub.field("heartbeats") >= 4,
      "... and are messages (%d)" % sub.field("messages"))
check(sub.field("heartbeat_silences") == 0 and "not even a heartbeat" not in sub.stderr,
      "a publisher that beats every 100 ms is no silence for --heartbeat-ms=300")

# No heartbeat and nothing else for 3 intervals: one warning.
master = Master("quiet", [])
sub = Sub("quiet", ["--endpoint=" + master.endpoint, "--heartbeat-ms=100",
                    "--timeout-ms=1500"]).wait()
master.stop()
check(sub.status == 0 and sub.field("heartbeat_silences") == 1
      and sub.stderr.count("nothing came for 300 ms, 3 intervals of --heartbeat-ms") == 1,
      "a publisher silent for 3 intervals of --heartbeat-ms is warned of, once")


# Raw frames: msgpack written with the standard library.
def pack(value):
    if value is None:
        return b"\xc0"
    if isinstance(value, int):
        return b"\xcf" + struct.pack(">Q", value)
    if isinstance(value, str):
        data = value.encode()
        return b"\xdb" + struct.pack(">I", len(data)) + data
    if isinstance(value, list):
        return b"\xdd" + struct.pack(">I", len(value)) + b"".join(map(pack, value))
    if isinstance(value, dict):
        return (b"\xdf" + struct.pack(">I", len(value))
                + b"".join(pack(k) + pack(v) for k, v in value.items()))
    raise TypeError(value)


def message(sequence, events):
    return ":".join(f.hex() for f in (b"", struct.pack(">Q", sequence),
                                      pack([1000, events, 0])))


def event(event_id, publisher):
    return {"event_id": event_id, "timestamp": 1000, "event_type": "stored", "tenant_id": "t",
            "backend_id": "b", "medium": "cpu", "object_key": "k%d" % event_id,
            "publisher_id": publisher}


A, B = "0123456789abcdef0123456789abcdef", "fedcba9876543210fedcba9876543210"
STREAMS = {
    # A new publisher whose sequence goes on where the old one's stopped,
    # and a heartbeat.
    "on": [message(0, [event(1, A)]), message(1, [event(2, A)]), message(2, [event(1, B)]),
           message(3, [event(2, B)]), message(4, [])],
    # One whose sequence is already further on.
    "ahead": [message(0, [event(1, A)]), message(1, [event(2, A)]), message(7, [event(1, B)])],
}


def frames(name, stream, flags):
    endpoint = "ipc://%s/%s.sock" % (tmp, name)
    sub = Sub(name, ["--endpoint=" + endpoint, "--until-disconnect", "--timeout-ms=30000"]
              + flags)
    sender = subprocess.Popen([SENDFRAMES, endpoint] + STREAMS[stream])
    sub.wait(timeout=60)
    # It waits for a subscription that a kvevents-sub which failed never
    # made.
    if sender.poll() is None:
        sender.kill()
    sender.wait()
    return sub


sub = frames("id-on", "on", ["--publisher-id"])
check(sub.field("restarts") == 1 and sub.field("event_id_backwards") == 0
      and sub.field("sequence_gaps") == 0,
      "--publisher-id: a new publisher_id is one restart though the sequence went on")
check("publisher_id changed from \"%s\" to \"%s\": the publisher restarted" % (A, B) in sub.stderr
      and "sequence went back" not in sub.stderr, "... reported with both ids")
check([e["event"]["publisher_id"] for e in sub.events] == [A, A, B, B],
      "... and every event prints its publisher_id")
check(sub.field("heartbeats") == 1 and sub.field("messages") == 5 and sub.field("events") == 4,
      "a message with an empty event list is a heartbeat, not an event")
sub = frames("id-off", "on", [])
check(sub.field("restarts") == 0 and sub.field("event_id_backwards") == 1,
      "without --publisher-id the same stream is an event_id going back, no restart")
sub = frames("id-ahead", "ahead", ["--publisher-id"])
check(sub.field("restarts") == 1 and sub.field("sequence_gaps") == 0 and len(sub.events) == 3,
      "--publisher-id: a new publisher further on is a restart, not a gap")
sub = frames("id-ahead-off", "ahead", [])
check(sub.field("restarts") == 0 and sub.field("sequence_gaps") == 1,
      "... which without it is a gap")

# A failover to another endpoint whose old master went away before it
# answered a snapshot: the new one's snapshot replaces the backend, and
# the old one's messages held for its own snapshot, which come out when
# that times out, are out of date and stay out of the state.
old = Master("old", [])
new = Master("new", ["kv_events_snapshot_endpoint=ipc://%s/new-snapshot.sock" % tmp])
for word in ("store", "churn 300 7", "join"):
    new.command(word)
state_path = os.path.join(tmp, "failover.state")
sub = Sub("failover", ["--endpoint=" + old.endpoint,
                       "--snapshot-endpoint=ipc://%s/nobody-answers.sock" % tmp,
                       "--endpoint=" + new.endpoint,
                       "--snapshot-endpoint=ipc://%s/new-snapshot.sock" % tmp,
                       "--snapshot-timeout-ms=1500", "--timeout-ms=4000",
                       "--state=" + state_path])
old.command("wait 1 20000")
old.command("bulk 5 40")
time.sleep(0.5)  # held by kvevents-sub while it waits for the old snapshot
new.command("wait 1 20000")
new.command("probe")
sub.wait()
truth = new.truth()
old.stop()
new.stop()
with open(state_path) as lines:
    state = {(e["tenant_id"], e["object_key"], e["medium"]) for e in map(json.loads, lines)}
check("did not answer the snapshot within 1500 ms" in sub.stderr and sub.field("snapshots") == 1,
      "failover: the old master's snapshot timed out, the new one's came")
check(len(truth) > 0 and state == truth,
      "... and the state is the new master's, without the old one's held events (%d entries, "
      "%d missing, %d extra)" % (len(truth), len(truth - state), len(state - truth)))
check(sub.field("superseded_events") >= 5, "... which are counted as superseded (%d)"
      % sub.field("superseded_events"))

# One --replay-endpoint for each --endpoint.
result = subprocess.run([SUB, "--endpoint=ipc://%s/a" % tmp, "--endpoint=ipc://%s/b" % tmp,
                         "--replay-endpoint=ipc://%s/r" % tmp], capture_output=True, text=True,
                        timeout=30)
check(result.returncode == 2 and "--replay-endpoint is given 1 times for 2 --endpoint"
      in result.stderr, "a --replay-endpoint count that is not the --endpoint count is a usage error")

finish()
