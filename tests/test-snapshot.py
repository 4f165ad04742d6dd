# Snapshots with a barrier, from outside: a subscriber that starts late
# follows kvevents(7)'s bootstrap (subscribe, buffer the live stream, ask
# for a snapshot, apply it, then every live event past the barrier) while
# tests/interop-publisher's store mutates on a thread of its own, and ends
# equal to the store.  Refusals and malformed requests get an error reply.
# Loopback and ipc only, every wait bounded.  Prints TAP.
import time

import interop_master
from tap import check, finish, require, scratch_directory

msgpack, zmq = require("msgpack", "zmq")

tmp = scratch_directory("kvev-snapshot-")
context = zmq.Context()


class Master(interop_master.Master):
    """The interop-publisher with a snapshot endpoint of its own."""

    def __init__(self, name, flags):
        self.snapshot_endpoint = "ipc://%s/%s-snapshot.sock" % (tmp, name)
        # A generous stop: under TSan, next to another test, the
        # publisher's close took longer than 20 s once.
        super().__init__(tmp, name, ["kv_events_snapshot_endpoint=" + self.snapshot_endpoint]
                         + flags, backend="snapshot", stop_timeout=90)


def request(endpoint, frames=(b"snapshot",)):
    dealer = context.socket(zmq.DEALER)
    dealer.setsockopt(zmq.LINGER, 0)
    dealer.connect(endpoint)
    dealer.send_multipart([b""] + list(frames))
    return dealer


def apply(state, event, barrier=None):
    if barrier is not None and event["event_id"] <= barrier:
        return
    tenant = event["tenant_id"]
    if event["event_type"] == "stored":
        state.add((tenant, event["object_key"], event["medium"]))
    elif event["event_type"] == "removed":
        state.discard((tenant, event["object_key"], event["medium"]))
    elif event["event_type"] == "cleared":
        for item in [i for i in state if i[0] == tenant]:
            state.discard(item)


def bootstrap(master, sub, churn):
    """The algorithm of kvevents(7), SNAPSHOTS; returns (state, header, end)."""
    live = []
    if churn:
        master.command(churn)
    dealer = request(master.snapshot_endpoint)
    poller = zmq.Poller()
    poller.register(sub, zmq.POLLIN)
    poller.register(dealer, zmq.POLLIN)
    header, chunks, end = None, [], None
    deadline = time.monotonic() + 30
    while end is None and time.monotonic() < deadline:
        ready = dict(poller.poll(1000))
        if sub in ready:
            live.append(sub.recv_multipart())
        if dealer in ready:
            frames = dealer.recv_multipart()
            kind, body = frames[1], frames[2]
            if kind == b"header":
                header = msgpack.unpackb(body, raw=False)
            elif kind == b"chunk":
                chunks.append(msgpack.unpackb(body, raw=False))
            else:
                end = (kind, msgpack.unpackb(body, raw=False))
    dealer.close()
    if churn:
        master.command("join")
    master.command("probe")  # flushes what the churn published
    # Up to the probe, which comes after every churned event: a quiet
    # half second under a sanitizer is not the end of the stream.
    deadline = time.monotonic() + 60
    synced = False
    while not synced and time.monotonic() < deadline and sub.poll(1000):
        live.append(sub.recv_multipart())
        synced = any(event.get("tenant_id") == "sync"
                     for event in msgpack.unpackb(live[-1][2], raw=False)[1])
    state = set()
    for payload in chunks:
        for event in payload[1]:
            apply(state, event)
    barrier = header["barrier_event_id"] if header else 0
    for message in live:
        for event in msgpack.unpackb(message[2], raw=False)[1]:
            if event.get("tenant_id") != "sync":
                apply(state, event, barrier)
    return state, header, end, chunks


# Without a function: a clear refusal.
master = Master("none", [])
dealer = request(master.snapshot_endpoint)
answered = dealer.poll(5000) != 0
check(answered, "a request to a master without a snapshot function is answered")
# Never a blocking receive: a publisher that died must fail the test, not hang it.
frames = dealer.recv_multipart() if answered else [b"", b"", msgpack.packb({})]
check(frames[1] == b"error"
      and "no snapshot function" in msgpack.unpackb(frames[2], raw=False).get("message", ""),
      "... with an error that says why")
dealer.close()
bad = request(master.snapshot_endpoint, (b"give me everything",))
check(bad.poll(5000) != 0 and bad.recv_multipart()[1] == b"error", "a malformed request gets an error")
bad.close()
stats = master.command("stats")
check(stats["snapshot_requests"] == 2 and stats["snapshots_refused"] == 2, "both are counted")
master.stop()

# A walk that fails half way: what it sent, then an error reply that
# says why; counted; the live stream carries on.
master = Master("failing", [])
master.command("store-failing")
sub = interop_master.subscriber(context, master.endpoint)
master.command("wait 1 10000")
dealer = request(master.snapshot_endpoint)
kinds = []
frames = [b"", b"", msgpack.packb({})]
while dealer.poll(5000):
    frames = dealer.recv_multipart()
    kinds.append(frames[1])
    if frames[1] in (b"end", b"error"):
        break
check(kinds[:1] == [b"header"] and b"chunk" in kinds and kinds[-1] == b"error"
      and msgpack.unpackb(frames[2], raw=False).get("message") == "the walk broke off",
      "a walk that fails half way ends in an error reply with its message")
master.command("probe")
check(sub.poll(5000) != 0, "the live stream carries on")
check(master.command("stats")["snapshots_failed"] == 1, "the failed snapshot is counted")
dealer.close()
sub.close()
master.stop()

# A subscriber that leaves in the middle, and a flood of requests: each
# is answered or counted, and the live stream carries on.
master = Master("flood", [])
master.command("store")
master.command("churn 3000 7")
master.command("join")
gone = request(master.snapshot_endpoint)
check(gone.poll(5000) != 0 and gone.recv_multipart()[1] == b"header",
      "a subscriber asks, and leaves after the header")
gone.close()
flood = context.socket(zmq.DEALER)
flood.setsockopt(zmq.LINGER, 0)
flood.connect(master.snapshot_endpoint)
for _ in range(20):
    flood.send_multipart([b"", b"snapshot"])
# One walk per subscriber at a time: a request that comes while its last
# snapshot is still in its pipe is refused, with an error.
ends = errors = 0
deadline = time.monotonic() + 60
while ends + errors < 20 and time.monotonic() < deadline:
    if flood.poll(1000):
        kind = flood.recv_multipart()[1]
        ends += kind == b"end"
        errors += kind == b"error"
check(ends >= 1 and ends + errors == 20,
      "twenty requests at once: each gets a snapshot or an error (%d, %d)" % (ends, errors))
stats = master.command("stats")
check(stats["snapshot_requests"] == 21, "every request is counted (%d)" % stats["snapshot_requests"])
check(stats["snapshots_refused"] == errors, "the errors are the refused requests")
check(stats["snapshots_failed"] <= 1, "the one that left may count as failed, and no other")
sub = interop_master.subscriber(context, master.endpoint)
master.command("wait 1 10000")
master.command("probe")
check(sub.poll(5000) != 0, "the live stream carries on")
flood.close()
sub.close()
master.stop()

# A late subscriber converges, whatever the walk and the mutations
# interleave; for several seeds.
for seed in (1, 2, 3):
    master = Master("late-%d" % seed, [])
    master.command("store")
    master.command("churn 3000 %d" % (seed + 100))  # the store fills before anyone listens
    master.command("join")
    sub = interop_master.subscriber(context, master.endpoint, RCVHWM=0)
    master.command("wait 1 10000")
    state, header, end, chunks = bootstrap(master, sub, "churn 20000 %d" % seed)
    truth = master.truth()
    check(header is not None and header["publisher_id"] == master.command("stats")["instance_id"]
          and header.get("backend_id") == "snapshot" and header.get("dp_rank") == 0,
          "seed %d: the header names the barrier, the publisher and its backend" % seed)
    check(end is not None and end[0] == b"end", "seed %d: the snapshot ends" % seed)
    stats = master.command("stats")
    check(stats["enqueued_events"] > 3000 + header["barrier_event_id"] if header else False,
          "seed %d: the store kept changing while the snapshot was made" % seed)
    check(state == truth, "seed %d: snapshot + live events past the barrier = the store (%d entries%s)"
          % (seed, len(truth), "" if state == truth else
             ", %d missing, %d extra" % (len(truth - state), len(state - truth))))
    check(all(e["event_id"] == header["barrier_event_id"] and e["event_type"] == "stored"
              for c in chunks for e in c[1]),
          "seed %d: snapshot events are stored, with the barrier as event_id" % seed)
    sub.close()
    master.stop()

context.term()
finish()
