# Heartbeats that subscriptions call for (kvevents(7), HEARTBEATS), from
# outside: a peer that subscribes and unsubscribes in a loop must not
# make the master send a heartbeat for each, which once cost it 17 % of
# a core and every subscriber a thousand messages a second; they go at
# most one per 100 ms.  A new subscriber still gets one within 100 ms,
# even right after another did.  ipc only, every loop bounded in time.
# Prints TAP.
import time

import interop_master
from tap import check, finish, require, scratch_directory

msgpack, zmq = require("msgpack", "zmq")

tmp = scratch_directory("kvev-beats-")
context = zmq.Context()
CHURN_SECONDS = 2.0
COALESCE_SECONDS = 0.1
# With an interval of 10 s no heartbeat of the interval falls in the test.
master = interop_master.Master(tmp, "beats", ["kv_events_heartbeat_ms=10000"])


def first_message(sub, seconds):
    """How long sub waited for its first message, or None past seconds."""
    started = time.monotonic()
    if not sub.poll(int(seconds * 1000)):
        return None
    topic, sequence, payload = sub.recv_multipart()
    waited = time.monotonic() - started
    return waited if msgpack.unpackb(payload, raw=False)[1] == [] else None


def fresh(what):
    sub = interop_master.subscriber(context, master.endpoint)
    waited = first_message(sub, 2)
    check(waited is not None and waited < 0.5,
          "%s gets a heartbeat promptly (%s, under 500 ms)"
          % (what, "%.0f ms" % (waited * 1000) if waited is not None else "none in 2 s"))
    return sub


watcher = fresh("a new subscriber")
# Within 100 ms of the first: its heartbeat is held back to the end of
# the 100 ms, and the publisher wakes for it.
second = fresh("a second new subscriber right after it")

before = master.stats()
churner = context.socket(zmq.SUB)
churner.setsockopt(zmq.LINGER, 0)
churner.connect(master.endpoint)
started = time.monotonic()
cycles = 0
late = None
while time.monotonic() - started < CHURN_SECONDS:
    churner.setsockopt(zmq.SUBSCRIBE, b"")
    churner.setsockopt(zmq.UNSUBSCRIBE, b"")
    # A SUB socket learns that its pipe was read only as it processes
    # commands, which a setsockopt() does not: without this it takes its
    # pipe for full after 500 cycles and drops the rest.
    churner.getsockopt(zmq.EVENTS)
    cycles += 1
    # Half way through, one more subscriber must not wait behind the loop.
    if late is None and time.monotonic() - started > CHURN_SECONDS / 2:
        late = fresh("a new subscriber during the loop")
    time.sleep(0.0005)
churned = time.monotonic() - started
churner.close()
time.sleep(0.3)
stats = master.stats()
subscribes = stats["subscribe_messages"] - before["subscribe_messages"]
beats = stats["heartbeats"] - before["heartbeats"]
# One per 100 ms of the loop and of the wait after it, the late
# subscriber's, and slack for the edges.
bound = int((churned + 0.3) / COALESCE_SECONDS) + 1 + 5
check(subscribes > 1000, "the peer subscribed %d times in %.1f s (%d cycles)"
      % (subscribes, churned, cycles))
check(beats <= bound, "they made %d heartbeats, at most %d" % (beats, bound))
received = 0
while watcher.poll(0):
    watcher.recv_multipart()
    received += 1
check(received <= bound, "a subscriber got %d of them, at most %d" % (received, bound))
for sub in (watcher, second, late):
    if sub is not None:
        sub.close()
check(master.stop() == 0, "the publisher closed cleanly")
context.term()
finish()
