# What replay may cost the master, from outside (kvevents(7), REPLAY and
# HOSTILE PEERS): heartbeats never push real messages out of the buffer,
# and a message larger than the whole budget costs the buffer nothing.
# pyzmq DEALERs against tests/interop-publisher; ipc only, every wait
# bounded.  Prints TAP.
import struct
import time

import interop_master
from tap import check, finish, require, scratch_directory

msgpack, zmq = require("msgpack", "zmq")

tmp = scratch_directory("kvev-replay-bounds-")
context = zmq.Context()
END = 0xFFFFFFFFFFFFFFFF


def Master(name, flags):
    return interop_master.Master(
        tmp, name, ["kv_events_replay_endpoint=ipc://%s/%s-replay.sock" % (tmp, name)] + flags)


def dealer(endpoint):
    socket = context.socket(zmq.DEALER)
    socket.setsockopt(zmq.LINGER, 0)
    socket.connect(endpoint)
    return socket


def ask(socket, start):
    socket.send_multipart([b"", struct.pack(">Q", start)])


def replies(socket, timeout_ms=5000):
    """The replies until the end marker, as (sequence, payload); None if
    it did not come within timeout_ms of the request."""
    deadline = time.monotonic() + timeout_ms / 1000
    got = []
    while True:
        left = int((deadline - time.monotonic()) * 1000)
        if left <= 0 or not socket.poll(left):
            return None
        frames = socket.recv_multipart()
        sequence = struct.unpack(">Q", frames[2])[0]
        if frames[1] == b"" and sequence == END and frames[3] == b"":
            return got
        got.append((sequence, frames[3]))


def replay(endpoint, start, timeout_ms=5000):
    socket = dealer(endpoint)
    ask(socket, start)
    got = replies(socket, timeout_ms)
    socket.close()
    return got


def events(payload):
    return msgpack.unpackb(payload, raw=False)[1]


# (7) One message larger than the whole byte budget is skipped; the 20
# before it and the one after it stay.
master = Master("oversized", ["kv_events_replay_buffer_bytes=65536"])
for _ in range(20):
    master.command("probe")
master.command("bulk 1 100000")
master.command("probe")
got = replay(master.replay_endpoint, 0)
check(got is not None and [len(events(p)) for _, p in got] == [1] * 21
      and all(len(p) < 1000 for _, p in got),
      "a 100 KB message in a 64 KiB buffer: the 21 small messages around it are kept (%s)"
      % (len(got) if got is not None else "no reply"))
check(got is not None and len(got) == 21 and got[20][0] - got[19][0] == 2,
      "... and only the big one's sequence is missing")
check(master.stop() == 0, "... and the master exits cleanly")

# (6) Heartbeats do not take the slots of real messages: 3 real messages,
# then hundreds of heartbeats, in a buffer of 8 messages.
master = Master("heartbeats", ["kv_events_replay_buffer_messages=8", "kv_events_heartbeat_ms=1"])
for _ in range(3):
    master.command("probe")
time.sleep(0.6)
beats = master.stats()["heartbeats"]
got = replay(master.replay_endpoint, 0)
sequences = [s for s, _ in got] if got is not None else []
real = [p for _, p in got if events(p)] if got is not None else []
check(beats >= 100, "the publisher sent %d heartbeats, at least 100" % beats)
check(len(real) == 3, "a replay from 0 after them holds the 3 real messages (%d)" % len(real))
check(sequences and sequences == list(range(sequences[0], sequences[0] + len(sequences))),
      "... and every sequence from the first returned on (%d of them)" % len(sequences))
check(got is not None and all(events(p) == [] for p in (p for _, p in got) if p not in real),
      "... the rest being heartbeats")
check(master.stop() == 0, "... and the master exits cleanly")

context.term()
finish()
