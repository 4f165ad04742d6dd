# Interoperability: a Python indexer, reading the stream the way existing
# ones do (pyzmq, msgpack with raw=False), decodes every message of a
# publisher that went through every publication point.  Prints TAP.
import json
import os
import subprocess
import sys
import tempfile

try:
    import msgpack
    import zmq
except ImportError as missing:
    print("1..0 # SKIP %s (Debian: python3-zmq python3-msgpack)" % missing)
    sys.exit(0)

checks = []


def check(ok, what):
    checks.append((bool(ok), what))


def finish():
    print("1..%d" % len(checks))
    for number, (ok, what) in enumerate(checks, 1):
        print("%s %d - %s" % ("ok" if ok else "not ok", number, what))
    sys.exit(0 if all(ok for ok, _ in checks) else 1)


LEGACY_STORED = ["event_id", "timestamp", "event_type", "type", "model_name",
                 "block_size", "additional_salt", "lora_name", "tenant_id",
                 "backend_id", "medium", "dp_rank", "group_id", "object_key",
                 "seq_hashes", "block_hashes", "base_block_idx", "parent_hash",
                 "token_ids", "parent_block_hash"]
LEGACY_REMOVED = LEGACY_STORED[:17]
LEGACY_CLEARED = LEGACY_STORED[:12]

builddir = os.environ.get("top_builddir", ".")
tmp = tempfile.mkdtemp(prefix="kvev-interop-")
endpoint = "ipc://%s/pub.sock" % tmp
master = subprocess.Popen(
    [os.path.join(builddir, "tests", "interop-publisher"),
     "enable_kv_events=true", "kv_events_bind_endpoint=" + endpoint,
     "kv_events_backend_id=backend-py", "kv_events_model_name=model-x",
     "kv_events_block_size=32", "kv_events_dp_rank=3"],
    stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def command(word):
    master.stdin.write(word + "\n")
    master.stdin.flush()
    reply = master.stdout.readline().strip()
    if word == "stats":
        return json.loads(reply) if master.stdout.readline().strip() == "ok" else None
    assert reply == "ok", reply
    return None


bound = master.stdout.readline().strip()
context = zmq.Context()
sub = context.socket(zmq.SUB)
sub.setsockopt(zmq.RCVHWM, 0)
sub.setsockopt(zmq.SUBSCRIBE, b"")
sub.connect(bound)


def receive(timeout_ms):
    if not sub.poll(timeout_ms):
        return None
    return sub.recv_multipart()


# PUB drops what goes before the subscription arrives: probe until a
# probe comes through, then drain the probes.
synced = None
for attempt in range(500):
    command("probe")
    synced = receive(20)
    if synced:
        break
check(synced is not None, "subscriber in sync with the publisher")
if synced is None:
    master.kill()
    finish()
while receive(200):
    pass

command("scenario")
stats = command("stats")
master.stdin.close()
master.wait(timeout=30)
check(master.returncode == 0, "publisher exited cleanly")

messages = []
while True:
    frames = receive(2000)
    if frames is None:
        break
    messages.append(frames)

events = []
decode_errors = 0
sequences = []
bin_alone = False
for frames in messages:
    check(len(frames) == 3, "three frames")
    check(frames[0] == b"", "empty topic")
    check(len(frames[1]) == 8, "8-byte sequence")
    sequences.append(int.from_bytes(frames[1], "big"))
    try:
        payload = msgpack.unpackb(frames[2], raw=False)
    except (ValueError, msgpack.ExtraData) as error:
        decode_errors += 1
        continue
    check(isinstance(payload, list) and len(payload) == 3, "payload is [ts, events, dp_rank]")
    timestamp, batch, dp_rank = payload
    check(dp_rank == 3, "trailer dp_rank")
    for event in batch:
        check(event["timestamp"] == timestamp, "event timestamp equals the batch's")
        if isinstance(event.get("object_key"), bytes):
            bin_alone = len(batch) == 1
        events.append(event)

check(decode_errors == 0, "every payload decodes with raw=False")
check(sequences == list(range(sequences[0], sequences[0] + len(sequences))),
      "sequence numbers run on without gaps")
ids = [event["event_id"] for event in events]
check(ids == list(range(ids[0], ids[0] + len(ids))), "event ids run on without holes")

expected = [
    ("stored", "cpu", "obj-1"), ("stored", "disk", "obj-1"),
    ("stored", "disk", "obj-2"),
    ("removed", "cpu", "obj-3"), ("stored", "disk", "obj-3"),
    ("removed", "cpu", "obj-1"),
    ("stored", "cpu", "nul\0key"), ("stored", "cpu", b"\xff\xfe"),
    ("stored", "cpu", "\u4e2d\u6587"),
    ("removed", "disk", "obj-2"),
    ("removed", "cpu", "obj-b"), ("cleared", None, None),
]
got = [(e["event_type"], e["medium"], e.get("object_key")) for e in events]
check(got == expected, "events in order: %r" % (got,))
check(bin_alone, "a key that is not UTF-8 arrives as bytes in a message of its own")

for event in events:
    layout = {"stored": LEGACY_STORED, "removed": LEGACY_REMOVED,
              "cleared": LEGACY_CLEARED}[event["event_type"]]
    check(list(event.keys()) == layout, "%s keys in wire order" % event["event_type"])
    check(event["backend_id"] == "backend-py" and event["model_name"] == "model-x"
          and event["block_size"] == 32 and event["dp_rank"] == 3
          and event["additional_salt"] is None and event["lora_name"] is None,
          "publisher context")
    if event["event_type"] != "cleared":
        check(event["seq_hashes"] == [] and event["block_hashes"] == []
              and event["base_block_idx"] is None, "key-agnostic fields empty")
check(events[0]["tenant_id"] == "tenant-a" and events[0]["group_id"] == "group-1",
      "tenant and group")
check(events[2]["tenant_id"] == "default" and events[2]["group_id"] is None,
      "tenant default and nil group")
check(events[-1]["tenant_id"] == "tenant-b" and events[-1]["type"] == "AllBlocksCleared",
      "cleared of the RemoveAll tenant")
check(stats is not None and stats["dropped_events"] == 0
      and stats["enqueued_events"] == stats["published_events"],
      "stats account for every event")

sub.close(0)
context.term()
try:
    os.rmdir(tmp)
except OSError:
    pass
finish()
