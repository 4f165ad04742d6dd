# Hostile peers against a master (tests/interop-publisher) in another
# process, from outside, on loopback only: frames that declare huge sizes,
# before and after authentication; hundreds of half-open connections from
# a refused address under a small descriptor limit; a handshake that never
# completes; a subscriber that stops reading while big events flow.  Every
# attack is bounded in bytes, connections and time.  Prints TAP.
import os
import resource
import socket
import struct
import subprocess
import time

import interop_master
from tap import check, finish, require, scratch_directory, skip

(zmq,) = require("zmq")

builddir = os.environ.get("top_builddir", ".")
tmp = scratch_directory("kvev-hostile-")
MIB = 1024 * 1024


class Master:
    """interop-publisher with the given flags, optionally under a
    descriptor limit; knows its endpoint, port, RSS and CPU time."""

    def __init__(self, flags, nofile=None):
        def limit():
            if nofile is not None:
                hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
                resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, hard))

        self.process = subprocess.Popen(
            [os.path.join(builddir, "tests", "interop-publisher"),
             "enable_kv_events=true", "kv_events_backend_id=hostile"] + flags,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            preexec_fn=limit)
        self.endpoint = self.process.stdout.readline().strip()
        self.sanitized = interop_master.sanitized(self.process.pid)
        self.port = (int(self.endpoint.rsplit(":", 1)[1])
                     if self.endpoint.startswith("tcp://") else 0)

    def command(self, word):
        self.process.stdin.write(word + "\n")
        self.process.stdin.flush()
        return self.process.stdout.readline().strip() == "ok"

    def rss(self):
        return interop_master.rss(self.process.pid)

    def cpu_seconds(self):
        return interop_master.cpu_seconds(self.process.pid)

    def stop(self):
        self.process.stdin.close()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        return self.process.returncode


def greeting(mechanism):
    return (b"\xff" + b"\x00" * 8 + b"\x7f" + b"\x03\x00"
            + mechanism.ljust(20, b"\x00") + b"\x00" + b"\x00" * 31)


def ready_sub():
    body = b"\x05READY" + b"\x0bSocket-Type" + struct.pack(">I", 3) + b"SUB"
    return b"\x04" + bytes([len(body)]) + body


def connect_raw(port, source=None):
    peer = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    peer.settimeout(5)
    if source is not None:
        peer.bind((source, 0))
    peer.connect(("127.0.0.1", port))
    return peer


def flood(peer, header, total):
    """Sends a frame header declaring a huge size, then up to total bytes
    of its body.  True when the master closed the connection first."""
    chunk = b"\x01" * MIB
    try:
        peer.sendall(header)
        sent = 0
        while sent < total:
            peer.sendall(chunk)
            sent += len(chunk)
        # Everything went: the master kept reading.  Give it a moment to
        # close, which it should have done at the header.
        peer.settimeout(1)
        return peer.recv(1) == b""
    except (BrokenPipeError, ConnectionResetError):
        return True
    except socket.timeout:
        return False


def huge_frame_attack(flags, mechanism, header, what):
    master = Master(["kv_events_bind_endpoint=tcp://127.0.0.1:*"] + flags)
    if not master.endpoint:
        check(False, "%s: the master starts" % what)
        master.stop()
        return
    before = master.rss()
    peer = connect_raw(master.port)
    closed = False
    try:
        peer.sendall(greeting(mechanism))
        reply = peer.recv(64)
        if mechanism == b"NULL":
            peer.sendall(ready_sub())
        closed = flood(peer, header, 64 * MIB) or not reply
    except (BrokenPipeError, ConnectionResetError):
        closed = True
    time.sleep(0.2)
    grown = master.rss() - before
    peer.close()
    check(closed, "%s: the master disconnects the peer" % what)
    check(grown < 16 * MIB, "%s: the master's RSS grew by %d KiB, under 16 MiB"
          % (what, grown // 1024))
    check(master.command("probe"), "%s: the master still publishes" % what)
    check(master.stop() == 0, "%s: the master exits cleanly" % what)


def long_frame(flags, size):
    return bytes([flags]) + struct.pack(">Q", size)


# 1. A plain subscriber that subscribes with one frame of 512 MiB.
huge_frame_attack([], b"NULL", long_frame(0x02, 512 * MIB) + b"\x01",
                  "a 512 MiB subscription on a plain stream")

# 1b. Before authentication: a CURVE handshake command of 512 MiB, from a
# peer the allowed-clients file does not know.
public, secret = zmq.curve_keypair()
key_file = os.path.join(tmp, "server.key")
with open(key_file, "wb") as out:
    out.write(secret + b"\n")
os.chmod(key_file, 0o600)
clients_file = os.path.join(tmp, "allowed-clients")
with open(clients_file, "wb") as out:
    out.write(zmq.curve_keypair()[0] + b"\n")
huge_frame_attack(["kv_events_curve_secret_key_file=" + key_file,
                   "kv_events_curve_allowed_clients_file=" + clients_file],
                  b"CURVE", long_frame(0x06, 512 * MIB),
                  "a 512 MiB CURVE handshake command before authentication")

# 2. A refused address opens more half-open connections than the master
# has descriptors; an allowed subscriber must still be served and the
# master stay idle.
resource.setrlimit(resource.RLIMIT_NOFILE, (resource.getrlimit(resource.RLIMIT_NOFILE)[1],) * 2)
master = Master(["kv_events_bind_endpoint=tcp://127.0.0.1:*",
                 "kv_events_allowed_addresses=127.0.0.2"], nofile=256)
attackers = []
try:
    for _ in range(400):
        try:
            attackers.append(connect_raw(master.port))
        except OSError:
            break
    time.sleep(1)
    cpu_before = master.cpu_seconds()
    time.sleep(1.5)
    busy = master.cpu_seconds() - cpu_before
    check(busy < 0.3, "400 half-open connections from a refused address: the master "
          "used %.2f s of CPU in 1.5 s" % busy)

    context = zmq.Context()
    sub = context.socket(zmq.SUB)
    sub.setsockopt(zmq.LINGER, 0)
    sub.setsockopt(zmq.SUBSCRIBE, b"")
    sub.connect("tcp://127.0.0.2:0;127.0.0.1:%d" % master.port)
    served = False
    deadline = time.monotonic() + 10
    while not served and time.monotonic() < deadline:
        master.command("probe")
        served = sub.poll(200) != 0
    check(served, "meanwhile a subscriber from an allowed address is served")
    sub.close()
    context.term()
finally:
    for attacker in attackers:
        attacker.close()
check(master.stop() == 0, "the attacked master exits cleanly")

# 2a. The same allow-list on IPv6 loopback admits an allowed IPv6 peer
# (the accept filter is given IPv6 ranges on an IPv6 socket).
try:
    probe = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    probe.bind(("::1", 0))
    probe.close()
    have_ipv6 = True
except OSError:
    have_ipv6 = False
if have_ipv6:
    for allowed, admitted in (("::1,127.0.0.1", True), ("::2", False)):
        master = Master(["kv_events_bind_endpoint=tcp://[::1]:*",
                         "kv_events_allowed_addresses=" + allowed])
        context = zmq.Context()
        sub = context.socket(zmq.SUB)
        sub.setsockopt(zmq.IPV6, 1)
        sub.setsockopt(zmq.LINGER, 0)
        sub.setsockopt(zmq.SUBSCRIBE, b"")
        sub.connect(master.endpoint)
        served = False
        deadline = time.monotonic() + (10 if admitted else 1)
        while not served and time.monotonic() < deadline:
            master.command("probe")
            served = sub.poll(200) != 0
        check(served == admitted, "on [::1], allowed addresses %s %s a peer from ::1"
              % (allowed, "admit" if admitted else "refuse"))
        sub.close()
        context.term()
        master.stop()
else:
    skip("no IPv6 loopback")

# 2b. A connection from an allowed address that never sends its greeting
# is closed after the handshake interval, not held for libzmq's 30 s.
master = Master(["kv_events_bind_endpoint=tcp://127.0.0.1:*"])
peer = connect_raw(master.port)
peer.settimeout(15)
started = time.monotonic()
closed = False
try:
    # The master's greeting comes first; then, at the interval, the end.
    while not closed and time.monotonic() - started < 15:
        closed = peer.recv(4096) == b""
except ConnectionResetError:
    closed = True
except socket.timeout:
    pass
held = time.monotonic() - started
check(closed and held < 10, "a silent connection is closed after %.1f s, under 10 s" % held)
peer.close()
master.stop()

# 11. A sole subscriber that stops reading while 20000 events with 4 KiB
# keys go out is waited for (kvevents(7), SLOW SUBSCRIBERS): the master
# holds at most kv_events_send_buffer_bytes (16 MiB here) of messages for
# it and kv_events_queue_capacity events (2048 of 4 KiB) in the queue.
master = Master(["kv_events_bind_endpoint=ipc://%s/stall.sock" % tmp,
                 "kv_events_send_hwm=1000", "kv_events_send_buffer_bytes=%d" % (16 * MIB),
                 "kv_events_queue_capacity=2048"])
context = zmq.Context()
stalled = context.socket(zmq.SUB)
stalled.setsockopt(zmq.RCVHWM, 1)
stalled.setsockopt(zmq.RCVBUF, 4096)
stalled.setsockopt(zmq.LINGER, 0)
stalled.setsockopt(zmq.SUBSCRIBE, b"")
stalled.connect(master.endpoint)
reader = context.socket(zmq.SUB)
reader.setsockopt(zmq.LINGER, 0)
reader.setsockopt(zmq.SUBSCRIBE, b"")
reader.connect(master.endpoint)
synced = False
deadline = time.monotonic() + 10
while not synced and time.monotonic() < deadline:
    master.command("probe")
    synced = reader.poll(200) != 0
reader.close()
time.sleep(0.5)
before = master.rss()
# Without flushes, which would wait for the stalled subscriber; its
# "ok" comes once it has gone.
master.process.stdin.write("burst 20000 4096\n")
master.process.stdin.flush()
time.sleep(1.5)
grown = master.rss() - before
check(synced, "a stalled subscriber: the stream is in sync first")
if master.sanitized:
    skip("a stalled subscriber: the master's RSS, under a sanitizer")
else:
    check(grown < 32 * MIB, "a stalled subscriber: the master's RSS grew by %d MiB over "
          "80 MiB of events, under 32 MiB" % (grown // MIB))
stalled.close()
check(master.process.stdout.readline().strip() == "ok",
      "a stalled subscriber: once it left, the rest went out")
context.term()
master.stop()

finish()
