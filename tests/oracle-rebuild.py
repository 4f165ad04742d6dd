#!/usr/bin/python3
# oracle-rebuild.py: rebuild cache availability from events alone and
# compare it with the master's own.
#
#   oracle-rebuild.py --events FILE --truth FILE --backend ID
#   oracle-rebuild.py --state FILE --truth FILE --backend ID
#
# FILE of events is kvevents-sub's JSON output (one object a line); a
# state FILE is what kvevents-sub --state wrote, the availability it
# rebuilt itself (snapshots included), which is then compared as it is; the
# truth is tests/oracle-master's --truth.  The availability is a set of
# (backend, tenant, key, medium): stored adds, removed discards (removed is
# idempotent: a removed for something never stored is fine), cleared drops
# every entry of its backend and tenant.  Exit 0 when the rebuilt set is the
# truth exactly, 1 when it is not, 2 when the input is unusable; every
# line printed is a TAP comment.  Only the standard library is used.
#
# SPDX-License-Identifier: Apache-2.0

import argparse
import json
import sys


def as_bytes(value):
    """A tenant or key as kvevents-sub prints it: a JSON string for text,
    {"hex": ...} for bytes that are not text."""
    if isinstance(value, str):
        # A NUL or any other character is valid text; surrogatepass keeps
        # the rebuild lossless even for a string no encoder would make.
        return value.encode("utf-8", "surrogatepass")
    if isinstance(value, dict) and isinstance(value.get("hex"), str):
        return bytes.fromhex(value["hex"])
    raise ValueError("not a string or {\"hex\": ...}: %r" % (value,))


def show(entry):
    backend, tenant, key, medium = entry
    return "%s/%r/%r/%s" % (backend, tenant, key, medium)


def rebuild(path, backend, counts):
    available = set()
    with open(path, "rb") as events:
        for number, line in enumerate(events, 1):
            try:
                record = json.loads(line)
                event = record["event"]
                kind = record["kind"]
                if event.get("backend_id") != backend:
                    raise ValueError("backend_id %r" % (event.get("backend_id"),))
                tenant = as_bytes(event["tenant_id"])
                if kind == "cleared":
                    if "object_key" in event or event.get("medium") is not None:
                        raise ValueError("cleared with an object_key or a medium")
                    available = {entry for entry in available
                                 if entry[:2] != (backend, tenant)}
                else:
                    key = as_bytes(event["object_key"])
                    medium = event["medium"]
                    if medium not in ("cpu", "disk"):
                        raise ValueError("medium %r" % (medium,))
                    entry = (backend, tenant, key, medium)
                    if kind == "stored":
                        available.add(entry)
                    elif kind == "removed":
                        available.discard(entry)
                    else:
                        raise ValueError("kind %r" % (kind,))
                    if isinstance(event["object_key"], dict):
                        counts["bin keys"] += 1
                    elif "\0" in event["object_key"]:
                        counts["keys with NUL"] += 1
                counts[kind] += 1
            except (ValueError, KeyError, TypeError) as error:
                print("# %s:%d: unusable event: %s" % (path, number, error))
                sys.exit(2)
    return available


def load_state(path):
    state = set()
    with open(path, "rb") as entries:
        for number, line in enumerate(entries, 1):
            try:
                entry = json.loads(line)
                state.add((entry["backend_id"], as_bytes(entry["tenant_id"]),
                           as_bytes(entry["object_key"]), entry["medium"]))
            except (ValueError, KeyError, TypeError) as error:
                print("# %s:%d: unusable entry: %s" % (path, number, error))
                sys.exit(2)
    return state


def load_truth(path, backend):
    truth = set()
    with open(path, "rb") as source:
        for entry in json.load(source):
            tenant = as_bytes(entry["tenant_id"])
            key = as_bytes(entry["object_key"])
            for medium in entry["media"]:
                truth.add((backend, tenant, key, medium))
    return truth


def main():
    parser = argparse.ArgumentParser()
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--events")
    source.add_argument("--state")
    parser.add_argument("--truth", required=True)
    parser.add_argument("--backend", required=True)
    args = parser.parse_args()

    counts = {"stored": 0, "removed": 0, "cleared": 0, "bin keys": 0,
              "keys with NUL": 0}
    if args.state is not None:
        available = load_state(args.state)
    else:
        available = rebuild(args.events, args.backend, counts)
        print("# events: " + ", ".join("%s %d" % item for item in counts.items()))
    truth = load_truth(args.truth, args.backend)
    print("# rebuilt %d entries, truth %d" % (len(available), len(truth)))
    missing = sorted(truth - available)
    extra = sorted(available - truth)
    for entry in missing[:10]:
        print("# missing from the rebuild: " + show(entry))
    for entry in extra[:10]:
        print("# in the rebuild only:      " + show(entry))
    if missing or extra:
        print("# %d missing, %d extra" % (len(missing), len(extra)))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
