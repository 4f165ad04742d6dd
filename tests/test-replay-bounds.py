# What replay may cost the master, from outside (kvevents(7), REPLAY and
# HOSTILE PEERS): readers that ask again and again and never read hold
# a bounded number of bytes, stalled readers do not delay honest ones,
# heartbeats never push real messages out of the buffer, and a message
# larger than the whole budget costs the buffer nothing.  pyzmq DEALERs
# against tests/interop-publisher; ipc only, every wait bounded.  Prints
# TAP.
import struct
import time

import interop_master
from tap import check, finish, require, scratch_directory, skip

msgpack, zmq = require("msgpack", "zmq")

tmp = scratch_directory("kvev-replay-bounds-")
context = zmq.Context()
END = 0xFFFFFFFFFFFFFFFF
MIB = 1024 * 1024


def Master(name, flags):
    return interop_master.Master(
        tmp, name, ["kv_events_replay_endpoint=ipc://%s/%s-replay.sock" % (tmp, name)] + flags)


def dealer(endpoint, stalled=False):
    socket = context.socket(zmq.DEALER)
    socket.setsockopt(zmq.LINGER, 0)
    if stalled:
        # It never reads: what it takes in its own process is as little
        # as its options allow, the rest waits in the master's pipe.
        socket.setsockopt(zmq.RCVHWM, 1)
        socket.setsockopt(zmq.RCVBUF, 4096)
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

# (5) Stalled readers do not delay an honest one: 4 DEALERs ask three
# times each for a whole replay of 8000 messages and never read; then a
# fifth asks for the last 5 messages.
master = Master("stalled", ["kv_events_max_batch_events=1"])
master.command("bulk 8000 40")
last = master.stats()["last_sequence"]
stalled = [dealer(master.replay_endpoint, stalled=True) for _ in range(4)]
asked = time.monotonic()
for socket in stalled:
    for _ in range(3):
        ask(socket, 0)
# Until their pipes are full: no replay message goes out for 300 ms.
sent, still, deadline = -1, 0, time.monotonic() + 4
while still < 3 and time.monotonic() < deadline:
    time.sleep(0.1)
    now = master.stats()["replay_messages"]
    still = still + 1 if now == sent else 0
    sent = now
honest = dealer(master.replay_endpoint)
started = time.monotonic()
ask(honest, last - 4)
got = replies(honest, timeout_ms=2000)
took = time.monotonic() - started
check(got is not None and [s for s, _ in got] == list(range(last - 4, last + 1)),
      "behind 4 stalled readers, an honest one's 5 messages and end marker came in %.2f s, "
      "under 2 s" % took)
honest.close()
before = interop_master.cpu_seconds(master.process.pid)
time.sleep(1)
busy = interop_master.cpu_seconds(master.process.pid) - before
check(busy < 0.25, "while they stay stalled the master used %.2f s of CPU in 1 s" % busy)
# 5 s without reading: a stalled reader loses the rest of its reply and
# the requests it queued; once it has read what its pipe held, it is
# answered again.
time.sleep(max(0, asked + 5.5 - time.monotonic()))
held = []
while stalled[0].poll(500):
    held.append(stalled[0].recv_multipart())
check(0 < len(held) < 8000 and all(frames[2] != struct.pack(">Q", END) for frames in held),
      "a reader stalled for 5 s got %d messages of its reply and no end marker" % len(held))
ask(stalled[0], last - 1)
got = replies(stalled[0], timeout_ms=2000)
check(got is not None and [s for s, _ in got] == [last - 1, last],
      "... and, once it has read them, its next request is answered")
started = time.monotonic()
check(master.stop() == 0 and time.monotonic() - started < 3,
      "the master stops in %.2f s while the stalled readers are connected"
      % (time.monotonic() - started))
for socket in stalled:
    socket.close()

# (4) Two readers that ask for a whole replay every 100 ms and never read,
# while the buffer of 1 MiB turns over some hundred times: the master
# holds for them a bounded number of bytes (the buffer's budget), not
# every payload the buffer let go of.
master = Master("greedy", ["kv_events_replay_buffer_bytes=%d" % MIB])
master.command("bulk 2000 1000")
greedy = [dealer(master.replay_endpoint, stalled=True) for _ in range(2)]
time.sleep(0.2)
before = interop_master.rss(master.process.pid)
deadline = time.monotonic() + 6
while time.monotonic() < deadline:
    for socket in greedy:
        ask(socket, 0)
    master.command("burst 2000 1000")
    time.sleep(0.1)
grown = interop_master.rss(master.process.pid) - before
check(master.stats()["replay_buffer_bytes"] <= MIB, "the buffer holds at most its budget")
if interop_master.sanitized(master.process.pid):
    skip("two greedy readers: the master's RSS, under a sanitizer")
else:
    check(grown < 24 * MIB, "two readers that ask every 100 ms and never read: the master's "
          "RSS grew by %d MiB in 6 s, under 24 MiB" % (grown // MIB))
got = replay(master.replay_endpoint, 0)
check(got is not None and len(got) == master.stats()["replay_buffer_messages"],
      "meanwhile an honest reader's replay is whole")
started = time.monotonic()
check(master.stop() == 0 and time.monotonic() - started < 3,
      "the master stops in %.2f s while they are connected" % (time.monotonic() - started))
for socket in greedy:
    socket.close()

context.term()
finish()
