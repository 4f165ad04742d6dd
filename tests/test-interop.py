# Interoperability: a Python indexer, reading the stream the way existing
# ones do (pyzmq, msgpack with raw=False), decodes every message of a
# publisher that went through every publication point.  Prints TAP.
import json
import os
import subprocess

from tap import check, finish, require, scratch_directory

msgpack, zmq = require("msgpack", "zmq")

LEGACY_STORED = ["event_id", "timestamp", "event_type", "type", "model_name",
                 "block_size", "additional_salt", "lora_name", "tenant_id",
                 "backend_id", "medium", "dp_rank", "group_id", "object_key",
                 "seq_hashes", "block_hashes", "base_block_idx", "parent_hash",
                 "token_ids", "parent_block_hash"]
LEGACY_REMOVED = LEGACY_STORED[:17]
LEGACY_CLEARED = LEGACY_STORED[:12]

builddir = os.environ.get("top_builddir", ".")
tmp = scratch_directory("kvev-interop-")
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

# One check per property, not per message or event: how the publisher
# batches varies from run to run, and the plan must not.
def bad(indexes):
    return " (failing at %r)" % indexes if indexes else ""


events = []
decode_errors = 0
sequences = []
bin_alone = False
bad_frames = []
bad_payloads = []
bad_timestamps = []
for index, frames in enumerate(messages):
    if len(frames) != 3 or frames[0] != b"" or len(frames[1]) != 8:
        bad_frames.append(index)
        continue
    sequences.append(int.from_bytes(frames[1], "big"))
    try:
        payload = msgpack.unpackb(frames[2], raw=False)
    except (ValueError, msgpack.ExtraData):
        decode_errors += 1
        continue
    if not (isinstance(payload, list) and len(payload) == 3 and payload[2] == 3):
        bad_payloads.append(index)
        continue
    timestamp, batch, dp_rank = payload
    for event in batch:
        if event.get("timestamp") != timestamp:
            bad_timestamps.append(index)
        if isinstance(event.get("object_key"), bytes):
            bin_alone = len(batch) == 1
        events.append(event)

check(messages and not bad_frames,
      "every message: empty topic, 8-byte sequence, payload%s" % bad(bad_frames))
check(not bad_payloads, "every payload is [ts, events, dp_rank 3]%s" % bad(bad_payloads))
check(not bad_timestamps, "every event's timestamp equals its batch's%s" % bad(bad_timestamps))
check(decode_errors == 0, "every payload decodes with raw=False")
check(sequences and sequences == list(range(sequences[0], sequences[0] + len(sequences))),
      "sequence numbers run on without gaps")
ids = [event.get("event_id") for event in events]
check(ids and all(isinstance(i, int) for i in ids)
      and ids == list(range(ids[0], ids[0] + len(ids))), "event ids run on without holes")

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
got = [(e.get("event_type"), e.get("medium"), e.get("object_key")) for e in events]
check(got == expected, "events in order: %r" % (got,))
check(bin_alone, "a key that is not UTF-8 arrives as bytes in a message of its own")

bad_layouts = []
bad_context = []
bad_key_agnostic = []
for index, event in enumerate(events):
    layout = {"stored": LEGACY_STORED, "removed": LEGACY_REMOVED,
              "cleared": LEGACY_CLEARED}.get(event.get("event_type"))
    if list(event.keys()) != layout:
        bad_layouts.append(index)
    if not (event.get("backend_id") == "backend-py" and event.get("model_name") == "model-x"
            and event.get("block_size") == 32 and event.get("dp_rank") == 3
            and "additional_salt" in event and event["additional_salt"] is None
            and "lora_name" in event and event["lora_name"] is None):
        bad_context.append(index)
    if event.get("event_type") != "cleared" and not (
            event.get("seq_hashes") == [] and event.get("block_hashes") == []
            and "base_block_idx" in event and event["base_block_idx"] is None):
        bad_key_agnostic.append(index)
check(not bad_layouts, "every event's keys in wire order%s" % bad(bad_layouts))
check(not bad_context, "every event's publisher context%s" % bad(bad_context))
check(not bad_key_agnostic, "every keyed event's key-agnostic fields empty%s" % bad(bad_key_agnostic))
first, third, last = (events[0], events[2], events[-1]) if len(events) >= 3 else ({}, {}, {})
check(first.get("tenant_id") == "tenant-a" and first.get("group_id") == "group-1",
      "tenant and group")
check(third.get("tenant_id") == "default" and "group_id" in third and third["group_id"] is None,
      "tenant default and nil group")
check(last.get("tenant_id") == "tenant-b" and last.get("type") == "AllBlocksCleared",
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
