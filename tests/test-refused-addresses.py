# Refusals on every socket the master binds (kvevents(7), HOSTILE PEERS,
# STATISTICS): with kv_events_allowed_addresses, a connection from an
# address outside the list is closed when it is accepted, on the live
# socket, the replay socket and the snapshot socket alike, and each one
# counts in refused_addresses.  Loopback tcp only, a few connections,
# every wait bounded.  Prints TAP.
import socket
import time

import interop_master
from tap import check, finish, require, scratch_directory

(zmq,) = require("zmq")

tmp = scratch_directory("kvev-refused-")
PROBES = 3

# Only 127.0.0.2 is allowed; the probes come from 127.0.0.1.
master = interop_master.Master(tmp, "refused", [
    "kv_events_bind_endpoint=tcp://127.0.0.1:*",
    "kv_events_replay_endpoint=tcp://127.0.0.1:*",
    "kv_events_snapshot_endpoint=tcp://127.0.0.1:*",
    "kv_events_allowed_addresses=127.0.0.2/32"])
stats = master.stats()
endpoints = (("live", master.endpoint), ("replay", stats["replay_endpoint"]),
             ("snapshot", stats["snapshot_endpoint"]))
for name, endpoint in endpoints:
    if not endpoint.startswith("tcp://"):
        check(False, "the %s socket is bound on tcp (%r)" % (name, endpoint))
        continue
    port = int(endpoint.rsplit(":", 1)[1])
    before = master.stats()["refused_addresses"]
    for _ in range(PROBES):
        probe = socket.create_connection(("127.0.0.1", port), timeout=5)
        probe.settimeout(2)
        try:
            # The accept filter closes it: no greeting, only the end.
            closed = probe.recv(64) == b""
        except ConnectionResetError:
            closed = True
        except socket.timeout:
            closed = False
        probe.close()
        check(closed, "a probe of the %s socket from 127.0.0.1 is closed" % name)
    after = master.stat_becomes("refused_addresses", before + PROBES, seconds=5)
    check(after - before == PROBES, "%d probes of the %s socket raise refused_addresses by %d"
          % (PROBES, name, after - before))
check(master.command("probe") == "ok", "the master still publishes")
check(master.stop() == 0, "the master exits cleanly")
finish()
