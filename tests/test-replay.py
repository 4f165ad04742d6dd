# Replay, heartbeats and the publisher's identity, from outside: pyzmq
# as a vLLM-style replay client (a DEALER sending ["", start]) against
# tests/interop-publisher.  Loopback and ipc only, every wait bounded.
# Prints TAP.
import os
import struct
import time

import interop_master
from tap import check, finish, require, scratch_directory

msgpack, zmq = require("msgpack", "zmq")

tmp = scratch_directory("kvev-replay-")
context = zmq.Context()
END = 0xFFFFFFFFFFFFFFFF


def Master(name, flags):
    return interop_master.Master(tmp, name, flags)


def subscriber(endpoint):
    return interop_master.subscriber(context, endpoint, RCVHWM=0)


def receive_all(sub, timeout_ms=500):
    messages = []
    while sub.poll(timeout_ms):
        messages.append(sub.recv_multipart())
    return messages


def replay(endpoint, start, socket=None, timeout_ms=5000):
    """vLLM's client: ["", start] from a DEALER; the replies until the end
    marker, as (sequence, payload), or None on a timeout."""
    own = socket is None
    if own:
        socket = context.socket(zmq.DEALER)
        socket.setsockopt(zmq.LINGER, 0)
        socket.connect(endpoint)
    socket.send_multipart([b"", struct.pack(">Q", start)])
    replies = []
    while True:
        if not socket.poll(timeout_ms):
            replies = None
            break
        frames = socket.recv_multipart()
        assert frames[0] == b"", frames
        sequence = struct.unpack(">Q", frames[2])[0]
        if frames[1] == b"" and sequence == END and frames[3] == b"":
            break
        replies.append((sequence, frames[3]))
    if own:
        socket.close()
    return replies


def events_of(payloads):
    return [event for payload in payloads
            for event in msgpack.unpackb(payload, raw=False)[1]]


# A late subscriber gets the whole stream back, in order, each message
# exactly as it went live.
master = Master("late", ["kv_events_replay_endpoint=ipc://%s/late-replay.sock" % tmp])
live = subscriber(master.endpoint)
check(master.command("wait 1 10000") == "ok", "a live subscriber is there")
master.command("bulk 300 40")
live_messages = receive_all(live)
replies = replay("ipc://%s/late-replay.sock" % tmp, 0)
check(replies is not None and len(replies) == len(live_messages) > 1,
      "replay from 0 sends every message the live stream had (%d)" % len(live_messages))
check(replies == [(struct.unpack(">Q", m[1])[0], m[2]) for m in live_messages],
      "... with the same sequences and payloads, in order")
check(len(events_of(p for _, p in replies)) == 300, "... which hold the 300 events")
middle = replies[len(replies) // 2][0]
check([s for s, _ in replay("ipc://%s/late-replay.sock" % tmp, middle)] ==
      [s for s, _ in replies if s >= middle],
      "replay from a sequence starts at that very message")
check(replay("ipc://%s/late-replay.sock" % tmp, replies[-1][0] + 1) == [],
      "replay from past the newest is only the end marker")
stats = master.stats()
check(stats["replay_requests"] == 3 and stats["replay_messages"] >= len(replies),
      "replays are counted")

# A malformed request is counted and harmless; the live stream goes on.
bad = context.socket(zmq.DEALER)
bad.setsockopt(zmq.LINGER, 0)
bad.connect("ipc://%s/late-replay.sock" % tmp)
bad.send_multipart([b"", b"not eight bytes"])
bad.send_multipart([b"", struct.pack(">Q", 0), b"extra"])
deadline = time.monotonic() + 10
while master.stats()["replay_malformed_requests"] < 2 and time.monotonic() < deadline:
    time.sleep(0.05)
check(master.stats_json["replay_malformed_requests"] == 2, "two malformed requests are counted")
check(not bad.poll(200), "... and get no answer")
master.command("bulk 10 40")
check(len(events_of(m[2] for m in receive_all(live))) == 10,
      "the live stream carries on after them")
check(replay("ipc://%s/late-replay.sock" % tmp, 0) is not None, "so does replay")
bad.close()
live.close()
master.stop()

# Bounded by bytes: the oldest messages go; a request older than the
# buffer starts at its oldest message.
master = Master("bytes", ["kv_events_replay_endpoint=ipc://%s/bytes-replay.sock" % tmp,
                          "kv_events_replay_buffer_bytes=100000"])
live = subscriber(master.endpoint)
master.command("wait 1 10000")
master.command("bulk 2000 100")
live_messages = receive_all(live)
stats = master.stats()
replies = replay("ipc://%s/bytes-replay.sock" % tmp, 0)
check(0 < stats["replay_buffer_bytes"] <= 100000, "the buffer keeps at most its bytes (%d)"
      % stats["replay_buffer_bytes"])
check(replies and replies[0][0] > 0 and replies[-1][0] == struct.unpack(">Q", live_messages[-1][1])[0],
      "the oldest went: replay from 0 starts at the oldest kept (%d) and ends at the newest"
      % (replies[0][0] if replies else -1))
check(len(replies) == stats["replay_buffer_messages"], "... one reply per message kept")
live.close()
master.stop()

# Paced: replies leave at most kv_events_replay_rate_bytes a second, after
# a burst of an eighth of that.
RATE = 1000000
master = Master("paced", ["kv_events_replay_endpoint=ipc://%s/paced-replay.sock" % tmp,
                          "kv_events_replay_rate_bytes=%d" % RATE])
live = subscriber(master.endpoint)
master.command("wait 1 10000")
master.command("bulk 4000 100")
receive_all(live)
held = master.stats()["replay_buffer_bytes"]
started = time.monotonic()
replies = replay("ipc://%s/paced-replay.sock" % tmp, 0, timeout_ms=10000)
took = time.monotonic() - started
least = (held - RATE / 8) / RATE
check(replies is not None and len(replies) == master.stats()["replay_buffer_messages"]
      and took >= 0.9 * least,
      "a replay of %d bytes at %d bytes/s took %.2f s, at least %.2f s" % (held, RATE, took, least))
live.close()
master.stop()

# Replay under CURVE, with the live socket's keys and allowed clients.
server_public, server_secret = zmq.curve_keypair()
client_public, client_secret = zmq.curve_keypair()
key_file = os.path.join(tmp, "server.key")
with open(key_file, "wb") as out:
    out.write(server_secret + b"\n")
os.chmod(key_file, 0o600)
clients_file = os.path.join(tmp, "clients")
with open(clients_file, "wb") as out:
    out.write(client_public + b"\n")
master = Master("curve", ["kv_events_replay_endpoint=tcp://127.0.0.1:*",
                          "kv_events_curve_secret_key_file=" + key_file,
                          "kv_events_curve_allowed_clients_file=" + clients_file])
master.command("bulk 50 40")
endpoint = master.replay_endpoint
for name, public, secret, admitted in (("an allowed", client_public, client_secret, True),
                                       ("another", *zmq.curve_keypair(), False)):
    dealer = context.socket(zmq.DEALER)
    dealer.setsockopt(zmq.LINGER, 0)
    dealer.setsockopt(zmq.CURVE_SERVERKEY, server_public)
    dealer.setsockopt(zmq.CURVE_PUBLICKEY, public)
    dealer.setsockopt(zmq.CURVE_SECRETKEY, secret)
    dealer.connect(endpoint)
    replies = replay(endpoint, 0, dealer, 2000 if admitted else 500)
    check((replies is not None and len(events_of(p for _, p in replies)) == 50) == admitted,
          "under CURVE, %s client key %s replayed" % (name, "is" if admitted else "is not"))
    dealer.close()
check(master.stats()["refused_keys"] >= 1, "the refused replay client is counted")
master.stop()

# One heartbeat at once for a new subscriber: with an interval of 10 s,
# any message in the first seconds is that one.
master = Master("heartbeat-at-once", ["kv_events_heartbeat_ms=10000"])
sub = subscriber(master.endpoint)
started = time.monotonic()
first = sub.poll(5000)
check(first != 0, "a new subscriber gets a heartbeat at once, in %.0f ms"
      % ((time.monotonic() - started) * 1000))
if first:
    check(msgpack.unpackb(sub.recv_multipart()[2], raw=False)[1] == [],
          "... an empty message")
check(not sub.poll(1000), "... and then nothing until the interval")
sub.close()
master.stop()

# Heartbeats at the interval on an idle publisher.
master = Master("heartbeat", ["kv_events_heartbeat_ms=200"])
sub = subscriber(master.endpoint)
beats = []
deadline = time.monotonic() + 2.0
while time.monotonic() < deadline:
    if sub.poll(300):
        beats.append((time.monotonic(), sub.recv_multipart()))
check(3 <= len(beats) <= 15, "an idle publisher beats every 200 ms (%d in 2 s)" % len(beats))
check(all(msgpack.unpackb(m[2], raw=False)[1] == [] for _, m in beats),
      "a heartbeat is [timestamp_ms, [], dp_rank]")
sequences = [struct.unpack(">Q", m[1])[0] for _, m in beats]
check(sequences == list(range(sequences[0], sequences[0] + len(sequences))),
      "heartbeats take consecutive sequences")
# The worker counts a heartbeat once ZeroMQ took it, which a subscriber
# can beat it to.
deadline = time.monotonic() + 2
while (counted := master.stats()["heartbeats"]) < len(beats) and time.monotonic() < deadline:
    time.sleep(0.05)
check(counted >= len(beats), "heartbeats are counted (%d sent, %d received)" % (counted, len(beats)))
sub.close()
master.stop()

# The instance id: stable within a publisher, new across a restart, and
# on every event with kv_events_emit_publisher_id.
ids = []
for restart in range(2):
    master = Master("identity", ["kv_events_emit_publisher_id=true"])
    sub = subscriber(master.endpoint)
    master.command("wait 1 10000")
    master.command("bulk 5 40")
    events = events_of(m[2] for m in receive_all(sub))
    instance = master.stats()["instance_id"]
    ids.append(instance)
    check(len(instance) == 32 and master.stats()["instance_id"] == instance,
          "instance id %d is 128 bits and stable" % restart)
    check(len(events) == 5 and all(e["publisher_id"] == instance for e in events),
          "every event carries it as publisher_id")
    sub.close()
    master.stop()
check(ids[0] != ids[1], "a restarted publisher has a new instance id")

context.term()
finish()
