# Subscribers that do not keep up (kvevents(7), SLOW SUBSCRIBERS), from
# outside: pyzmq subscribers against tests/interop-publisher with a tiny
# high-water mark and queue.  A sole subscriber that stalls is waited
# for, so that all it misses is what the full queue dropped, counted; of
# two, the one that stalls holds the other back for at most
# kv_events_send_wait_ms a second.  ipc only, every wait bounded.
# Prints TAP.
import glob
import threading
import time

import interop_master
from tap import check, finish, require, scratch_directory

msgpack, zmq = require("msgpack", "zmq")

tmp = scratch_directory("kvev-slow-")
context = zmq.Context()
BURST = 20000
TINY = ["kv_events_send_hwm=4", "kv_events_queue_capacity=2000",
        "kv_events_max_batch_events=16"]


def subscriber(endpoint, rcvhwm=4):
    return interop_master.subscriber(context, endpoint, RCVHWM=rcvhwm)


class Reader:
    """Reads a subscriber until it is quiet for quiet_ms: the events and
    the sequences of the messages it got."""

    def __init__(self, sub):
        self.sub = sub
        self.events = 0
        self.sequences = []

    def read(self, quiet_ms=1500):
        while self.sub.poll(quiet_ms):
            topic, sequence, payload = self.sub.recv_multipart()
            self.sequences.append(int.from_bytes(sequence, "big"))
            self.events += len(msgpack.unpackb(payload, raw=False)[1])
        return self

    def missing(self, before, after):
        """Sequences skipped after the before stats, to the after ones."""
        return after["last_sequence"] - before["last_sequence"] - len(self.sequences)


def start(master, subs):
    """Every subscriber connected and through: a probe each has read."""
    check(master.command("wait %d 5000" % len(subs)) == "ok",
          "%d subscriber(s) connected" % len(subs))
    master.command("probe")
    for sub in subs:
        sub.poll(5000) and sub.recv_multipart()


def io_threads(master, expected):
    """How many I/O threads the publisher's ZeroMQ context runs, once
    there are expected or 5 s passed: each names itself once it runs."""
    deadline = time.monotonic() + 5
    while True:
        names = []
        for comm in glob.glob("/proc/%d/task/*/comm" % master.process.pid):
            try:
                with open(comm) as f:
                    names.append(f.read().strip())
            except OSError:
                pass
        n = sum(name.startswith("ZMQbg/IO/") for name in names)
        if n == expected or time.monotonic() > deadline:
            return n
        time.sleep(0.05)


def burst(master, n=BURST):
    """Starts a burst the subscribers must take; its "ok" is read later."""
    master.process.stdin.write("burst %d 40\n" % n)
    master.process.stdin.flush()


# A sole subscriber stalls for 1.5 s in a burst: the stream waits for it
# and the queue drops the oldest.
master = interop_master.Master(tmp, "sole", TINY)
n = io_threads(master, 2)
check(n == 2, "two I/O threads by default (%d)" % n)
sole = subscriber(master.endpoint)
start(master, [sole])
before = master.stats()
burst(master)
time.sleep(1.5)
reader = Reader(sole).read()
check(master.process.stdout.readline().strip() == "ok", "the burst ended")
stats = master.stats()
enqueued = stats["enqueued_events"] - before["enqueued_events"]
dropped = stats["dropped_events"] - before["dropped_events"]
check(dropped > 0, "the stalled sole subscriber made the queue drop (%d)" % dropped)
check(reader.events + dropped == enqueued,
      "received %d + dropped %d == enqueued %d: every loss counted"
      % (reader.events, dropped, enqueued))
check(stats["hwm_dropped_messages"] == 0, "ZeroMQ dropped nothing for it")
check(reader.missing(before, stats) == dropped,
      "its sequence gaps (%d) are the queue's drops" % reader.missing(before, stats))
check(master.stop() == 0, "the publisher closed cleanly")

# Of two subscribers, one stalls for good: the other gets every event,
# held back at most 100 ms a second.  Python reads far slower than the
# publisher sends: the fast one's own queue takes all it is sent.  One
# I/O thread for both.
master = interop_master.Master(tmp, "pair", ["kv_events_send_hwm=1000",
                                             "kv_events_send_wait_ms=100",
                                             "kv_events_queue_capacity=1000000",
                                             "kv_events_io_threads=1"])
n = io_threads(master, 1)
check(n == 1, "kv_events_io_threads=1 runs 1 I/O thread (%d)" % n)
fast, stalled = subscriber(master.endpoint, 0), subscriber(master.endpoint)
start(master, [fast, stalled])
before = master.stats()
fast_reader = Reader(fast)
thread = threading.Thread(target=fast_reader.read)
started = time.monotonic()
thread.start()
burst(master, 5 * BURST)
ok = master.process.stdout.readline().strip() == "ok"
took = time.monotonic() - started
thread.join(30)
stats = master.stats()
enqueued = stats["enqueued_events"] - before["enqueued_events"]
check(ok, "the burst ended, in %.2f s" % took)
check(fast_reader.events == enqueued and stats["dropped_events"] == 0,
      "the fast subscriber got all %d events (%d)" % (enqueued, fast_reader.events))
check(stats["hwm_dropped_messages"] > 0,
      "the stalled one's refusals are counted (%d messages, %d events)"
      % (stats["hwm_dropped_messages"], stats["hwm_dropped_events"]))
check(took < 5, "the stalled one held the stream back for less than 5 s")
# ZeroMQ skips a pipe it dropped for until its reader has caught up half
# way, without a word: the stalled one's gaps say what it lost.
stalled_reader = Reader(stalled).read(500)
check(stalled_reader.events < enqueued and stalled_reader.sequences == sorted(stalled_reader.sequences),
      "the stalled one got %d events, in order" % stalled_reader.events)
check(master.stop() == 0, "the publisher closed cleanly")

# kv_events_send_wait_ms=0 never waits, even for a sole subscriber.
master = interop_master.Master(tmp, "never", TINY + ["kv_events_send_wait_ms=0"])
sole = subscriber(master.endpoint)
start(master, [sole])
burst(master)
time.sleep(1)
Reader(sole).read(500)
check(master.process.stdout.readline().strip() == "ok", "the burst ended")
stats = master.stats()
check(stats["hwm_dropped_messages"] > 0,
      "with 0 the full pipe refuses at once (%d messages)" % stats["hwm_dropped_messages"])
check(master.stop() == 0, "the publisher closed cleanly")
finish()
