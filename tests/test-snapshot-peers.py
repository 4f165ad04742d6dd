# Snapshot subscribers that are slow, silent or greedy, against a master
# (tests/interop-publisher's big store, one lock taken per object by the
# walk and by every mutation) whose mutator keeps running meanwhile: none
# of them may keep the mutator waiting for its lock, and back-to-back
# requests get walks paced to kv_events_snapshot_duty_percent
# (kvevents(7), SNAPSHOTS and HOSTILE PEERS).  Every attack is bounded in
# requests and time; ipc only.  Prints TAP.
import threading
import time

import interop_master
from tap import check, finish, require, scratch_directory

msgpack, zmq = require("msgpack", "zmq")

tmp = scratch_directory("kvev-snapshot-peers-")
context = zmq.Context()

# About 12 MB of chunks: more than the kernel's buffers and what one
# snapshot may hold (8 MiB), so a reader that does not keep up makes the
# walk wait in kvev_snapshot_pause().
BIG = 60000
# The longest the mutator may wait for its lock while the walk holds it
# for one object: far less than any wait for a subscriber, which was
# seconds.
LOCK_WAIT_LIMIT_US = 500000


class Master(interop_master.Master):
    def __init__(self, name, flags=()):
        self.snapshot_endpoint = "ipc://%s/%s-snapshot.sock" % (tmp, name)
        super().__init__(tmp, name, ["kv_events_snapshot_endpoint=" + self.snapshot_endpoint]
                         + list(flags), backend="peers", stop_timeout=90)
        self.command("big %d" % BIG)

    def mutate(self, ms):
        """Mutations for ms ms: (how many, the longest wait for the lock in µs)."""
        self.process.stdin.write("mutate %d\n" % ms)
        self.process.stdin.flush()
        words = self.process.stdout.readline().split()
        self.process.stdout.readline()  # "ok"
        return int(words[1]), int(words[3])


def dealer(endpoint, rcvhwm=1000):
    socket = context.socket(zmq.DEALER)
    socket.setsockopt(zmq.LINGER, 0)
    socket.setsockopt(zmq.RCVHWM, rcvhwm)
    socket.connect(endpoint)
    return socket


def ask(socket):
    socket.send_multipart([b"", b"snapshot"])


def read_snapshot(socket, timeout_s=30):
    """The kinds of one whole answer, and its objects: ([kind, ...], n)."""
    kinds, objects = [], None
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not socket.poll(1000):
            continue
        frames = socket.recv_multipart()
        kinds.append(frames[1])
        if frames[1] == b"end":
            objects = msgpack.unpackb(frames[2], raw=False)["objects"]
        if frames[1] in (b"end", b"error"):
            break
    return kinds, objects


def slow_reader(socket, stop):
    """Takes one frame every 80 ms, until stop."""
    while not stop.is_set():
        try:
            socket.recv(zmq.NOBLOCK)
        except zmq.Again:
            pass
        time.sleep(0.08)


# A reader that takes a frame every 80 ms: the walk holds no lock while it
# waits for it, so the mutator goes on.
master = Master("slow-reader")
reader = dealer(master.snapshot_endpoint, rcvhwm=1)
stop = threading.Event()
ask(reader)
thread = threading.Thread(target=slow_reader, args=(reader, stop))
thread.start()
ops, wait = master.mutate(3000)
check(wait < LOCK_WAIT_LIMIT_US,
      "a slow snapshot reader: the mutator waits %d us at most for its lock" % wait)
check(ops > 1000, "a slow snapshot reader: the mutator goes on (%d mutations in 3 s)" % ops)
stop.set()
thread.join()
reader.close()
ops, wait = master.mutate(1000)
check(wait < LOCK_WAIT_LIMIT_US,
      "after the slow reader left: the mutator waits %d us at most" % wait)
check(master.stop() == 0, "the master exits cleanly")

# A reader that asks three times and reads nothing: one walk, which never
# waits, and the other two refused while the first is still unread.
master = Master("three-requests")
silent = dealer(master.snapshot_endpoint, rcvhwm=1)
for _ in range(3):
    ask(silent)
ops, wait = master.mutate(3000)
check(wait < LOCK_WAIT_LIMIT_US,
      "three unread requests: the mutator waits %d us at most for its lock" % wait)
# The first walk waits out its budget of 5 s, with no lock held.
requests = master.stat_becomes("snapshot_requests", 3, seconds=30)
stats = master.stats()
check(requests == 3, "three unread requests: all three counted (%d)" % requests)
check(stats["snapshots_failed"] == 1,
      "three unread requests: the first fails (%d)" % stats["snapshots_failed"])
check(stats["snapshots_refused"] == 2,
      "three unread requests: two refused while the first is unread (%d)"
      % stats["snapshots_refused"])
# The same subscriber, once it has read, is answered again.
kinds, _ = read_snapshot(silent)
refusals = [read_snapshot(silent)[0] for _ in range(2)]
check(refusals == [[b"error"], [b"error"]], "the two refused requests get an error each")
ask(silent)
kinds, objects = read_snapshot(silent)
check(kinds[:1] == [b"header"] and kinds[-1:] == [b"end"] and objects,
      "once it has read, it gets a whole snapshot (%s, %s objects)" % (kinds[-1:], objects))
silent.close()
check(master.stop() == 0, "the master exits cleanly")

# Back-to-back requests: walks take at most kv_events_snapshot_duty_percent
# of the time after a burst of a second; at 100 % they are not paced.
def walks_a_second(flags, burst_s, seconds):
    """Walks a second in the seconds after the first burst_s."""
    master = Master("back-to-back-%d" % len(flags), flags)
    client = dealer(master.snapshot_endpoint)
    start = time.monotonic()
    counted_from, walks, whole = None, 0, True
    while True:
        now = time.monotonic()
        if counted_from is None and now - start >= burst_s:
            counted_from, walks = now, 0
        if now - start >= burst_s + seconds:
            break
        ask(client)
        kinds, objects = read_snapshot(client, timeout_s=60)
        whole = whole and kinds[:1] == [b"header"] and objects == BIG
        walks += 1
    rate = walks / (time.monotonic() - counted_from)
    failed = master.stats()["snapshots_failed"]
    client.close()
    check(master.stop() == 0, "the master exits cleanly")
    check(whole and failed == 0,
          "back-to-back requests (%s): every answer is a whole snapshot" % flags)
    return rate


unpaced = walks_a_second(["kv_events_snapshot_duty_percent=100"], 0, 2)
# The burst of a second of walking goes in about 3 s of walks at once;
# after it, at 10 %, a fifth of the unpaced rate or less (a walk of the
# unpaced loop also waits for its client).
paced = walks_a_second([], 4, 3)
check(paced < 0.6 * unpaced,
      "back-to-back requests are paced: %.1f walks a second, %.1f at 100 %%" % (paced, unpaced))

finish()
