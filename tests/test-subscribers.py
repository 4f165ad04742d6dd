# What a master knows of its subscribers, seen from outside: pyzmq
# subscribers connect to tests/interop-publisher and the statistics it
# prints move with them; kvev_publisher_wait_subscribers() returns once
# they are there, and the next message reaches them; refused CURVE keys
# and refused addresses are counted.  Loopback and ipc only, every wait
# bounded.  Prints TAP.
import os
import time

import interop_master
from tap import check, finish, require, scratch_directory

(zmq,) = require("zmq")

tmp = scratch_directory("kvev-subscribers-")
context = zmq.Context()


def Master(name, flags):
    return interop_master.Master(tmp, name, flags, backend="subscribers")


def subscriber(endpoint, prefix=b"", **options):
    return interop_master.subscriber(context, endpoint, prefix, **options)


# A subscriber that comes and goes moves the subscription count up and
# down; one to a prefix that matches no message is seen but not counted.
master = Master("stats", [])
stats = master.command("stats")
check(stats["subscriptions"] == 0 and stats["subscribe_messages"] == 0,
      "no subscription before anyone connects")
sub = subscriber(master.endpoint)
check(master.stat_becomes("subscriptions", 1) == 1, "a subscriber connects: subscriptions 1")
other = subscriber(master.endpoint, b"another-topic")
check(master.stat_becomes("subscribe_messages", 2) == 2,
      "a subscription to another topic is a subscribe message")
check(master.command("stats")["subscriptions"] == 1, "... but no subscription that can match")
sub.setsockopt(zmq.UNSUBSCRIBE, b"")
check(master.stat_becomes("subscriptions", 0) == 0, "it unsubscribes: subscriptions 0")
sub.setsockopt(zmq.SUBSCRIBE, b"")
check(master.stat_becomes("subscriptions", 1) == 1, "it subscribes again: subscriptions 1")
sub.close()
check(master.stat_becomes("subscriptions", 0) == 0, "it disconnects: subscriptions 0")
other.close()
check(master.stat_becomes("unsubscribe_messages", 3) == 3,
      "three unsubscriptions: one asked for, two by leaving")
master.stop()

# kvev_publisher_wait_subscribers(): no probes, and the first message
# after it returns arrives.
master = Master("wait", [])
check(master.command("wait 1 100") == "timeout", "waiting for a subscriber nobody sends times out")
sub = subscriber(master.endpoint)
started = time.monotonic()
check(master.command("wait 1 10000") == "ok", "it returns once a subscriber is there")
check(time.monotonic() - started < 10, "... without waiting out its timeout")
check(master.command("probe") == "ok" and sub.poll(5000) != 0,
      "the first message after the wait reaches the subscriber")
sub.close()
master.stop()

# Refusals: a CURVE client whose key is not allowed, and an address that
# is not allowed, each move their own counter.
server_public, server_secret = zmq.curve_keypair()
client_public, client_secret = zmq.curve_keypair()
stranger_public, stranger_secret = zmq.curve_keypair()
key_file = os.path.join(tmp, "server.key")
with open(key_file, "wb") as out:
    out.write(server_secret + b"\n")
os.chmod(key_file, 0o600)
clients_file = os.path.join(tmp, "allowed-clients")
with open(clients_file, "wb") as out:
    out.write(client_public + b"\n")
master = Master("curve", ["kv_events_bind_endpoint=tcp://127.0.0.1:*",
                          "kv_events_curve_secret_key_file=" + key_file,
                          "kv_events_curve_allowed_clients_file=" + clients_file])
stranger = subscriber(master.endpoint, CURVE_SERVERKEY=server_public,
                      CURVE_PUBLICKEY=stranger_public, CURVE_SECRETKEY=stranger_secret)
check(master.stat_becomes("refused_keys", 1) >= 1, "a CURVE client with another key is refused, counted")
friend = subscriber(master.endpoint, CURVE_SERVERKEY=server_public,
                    CURVE_PUBLICKEY=client_public, CURVE_SECRETKEY=client_secret)
check(master.command("wait 1 10000") == "ok", "an allowed CURVE client is waited for")
stats = master.command("stats")
check(stats["subscriptions"] == 1 and stats["refused_addresses"] == 0,
      "... and counted as the one subscription")
stranger.close()
friend.close()
master.stop()

master = Master("addresses", ["kv_events_bind_endpoint=tcp://127.0.0.1:*",
                              "kv_events_allowed_addresses=127.0.0.2"])
port = int(master.endpoint.rsplit(":", 1)[1])
refused = subscriber("tcp://127.0.0.1:%d" % port)
check(master.stat_becomes("refused_addresses", 1) >= 1,
      "a subscriber from an address not allowed is refused, counted")
allowed = subscriber("tcp://127.0.0.2:0;127.0.0.1:%d" % port)
check(master.command("wait 1 10000") == "ok", "one from an allowed address is waited for")
check(master.command("stats")["refused_keys"] == 0, "... and no key was refused")
refused.close()
allowed.close()
master.stop()

context.term()
finish()
