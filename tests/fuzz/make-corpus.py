#!/usr/bin/python3
"""Regenerate the seed corpus of fuzz-decode (tests/fuzz/corpus/decode).

    tests/fuzz/make-corpus.py --pub BUILDDIR/tools/kvevents-pub --out DIR

Two kinds of seeds, each one message in fuzz-decode's input layout
(tests/fuzz/fuzz-decode.c: a control byte, a length-prefixed topic, a
length-prefixed sequence frame, the payload):

  lib-*     what libkvevents really sends: kvevents-pub runs a script of
            publication commands under several flag sets, and a SUB socket
            here records every message it receives;
  hand-*    what other engines send (vLLM/SGLang tagged events, float
            timestamps, omitted dp_rank) and broken messages, packed with
            python3-msgpack.

Needs python3-zmq and python3-msgpack.  Not run by make check: the
corpus is checked in, this script is how it was made.
"""

import argparse
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import msgpack
import zmq


def seed(topic, sequence_frame, payload, control=3):
    assert len(topic) < 256 and len(sequence_frame) < 256
    return (bytes([control, len(topic)]) + topic + bytes([len(sequence_frame)])
            + sequence_frame + payload)


def seq(n):
    return struct.pack(">Q", n)


SCRIPT = """\
stored tenant-a obj-1 cpu,disk group-1
stored - obj-2 disk
removed tenant-a obj-1 cpu
delta tenant-a obj-3 cpu disk g
cleared tenant-b
removeall tenant-c
removeall-object obj-9 cpu,disk
removeall-end
removeall tenant-d
removeall-object obj-8 disk
removeall-skip leased
removeall-end
stored tenant-%e2%82%ac k%00ey%ff cpu
stored tenant-a - cpu
flush 2000
"""

FLAG_SETS = {
    "default": [],
    "context": ["--kv-events-model-name=llama-3-8b", "--kv-events-block-size=16",
                "--kv-events-additional-salt=salt", "--kv-events-lora-name=lora-a",
                "--kv-events-dp-rank=3", "--kv-events-topic=kv@backend"],
    "no-legacy": ["--kv-events-emit-legacy-compat=false"],
    "batch1": ["--kv-events-max-batch-events=1"],
}


def capture(pub, workdir, name, flags):
    endpoint = "ipc://" + os.path.join(workdir, name)
    ctx = zmq.Context()
    sub = ctx.socket(zmq.SUB)
    sub.setsockopt(zmq.SUBSCRIBE, b"")
    sub.setsockopt(zmq.RCVTIMEO, 3000)
    proc = subprocess.Popen(
        [pub, "--enable-kv-events", "--kv-events-bind-endpoint=" + endpoint,
         "--kv-events-backend-id=backend-" + name, "--wait-subscribers=1",
         "--wait-timeout-ms=20000"] + flags,
        stdin=subprocess.PIPE)
    sub.connect(endpoint)
    proc.stdin.write(SCRIPT.encode())
    proc.stdin.close()
    messages = []
    while True:
        try:
            messages.append(sub.recv_multipart())
        except zmq.Again:
            break
    if proc.wait(timeout=30) != 0:
        sys.exit("kvevents-pub failed")
    sub.close(0)
    ctx.term()
    return messages


def hand_seeds():
    pack = msgpack.packb
    hashes = [0x1234567890abcdef, 42]
    vllm = {
        "vllm-stored": ["BlockStored", hashes, None, [1, 2, 3, 4], 16, None, "GPU"],
        "vllm-stored-parent-lora": ["BlockStored", [7], 6, [9] * 16, 16, 3, "cpu",
                                    "lora-x", [["mm", 1]], 0],
        "vllm-removed": ["BlockRemoved", hashes, "GPU"],
        "vllm-cleared": ["AllBlocksCleared"],
        "vllm-unknown-tag": ["BlockMoved", [1]],
    }
    out = {}
    for name, event in vllm.items():
        out["hand-" + name] = seed(b"kv-events", seq(7),
                                   pack([1718000000.25, [event], 0]))
    out["hand-vllm-no-dp-rank"] = seed(b"", seq(8), pack([1718000000.5, [vllm["vllm-removed"]]]))
    out["hand-vllm-nil-dp-rank"] = seed(b"", seq(9), pack([1.5, [vllm["vllm-cleared"]], None]))
    out["hand-vllm-type-map"] = seed(b"", seq(10), pack(
        [1718000000.0, [{"type": "BlockStored", "block_hashes": [1], "parent_block_hash": None,
                         "token_ids": [1, 2], "block_size": 2, "lora_id": None}], 1]))
    out["hand-rfc-map"] = seed(b"", seq(11), pack(
        [1718000000123, [{"event_type": "stored", "event_id": 5, "tenant_id": "t",
                          "object_key": b"\x00bin", "medium": "cpu", 7: "int key",
                          "nested": {"a": [1, -1, 1.5, True, None]}}], 2]))
    out["hand-rfc-unknown-type"] = seed(b"", seq(12), pack([1, [{"event_type": "moved"}], 0]))
    out["hand-rfc-no-type"] = seed(b"", seq(13), pack([1, [{"event_id": 1}, 5, [], [3]], 0]))
    out["hand-bad-timestamp"] = seed(b"", seq(14), pack(["now", [], 0]))
    out["hand-bad-dp-rank"] = seed(b"", seq(15), pack([1, [], "zero"]))
    out["hand-events-not-array"] = seed(b"", seq(16), pack([1, {}, 0]))
    out["hand-huge-timestamp"] = seed(b"", seq(17), pack([2**64 - 1, [], -1]))
    out["hand-nan-timestamp"] = seed(b"", seq(18), pack([float("nan"), [], 0]))
    out["hand-trailing-bytes"] = seed(b"", seq(19), pack([1, [], 0]) + b"\xc0")
    out["hand-truncated"] = seed(b"", seq(20), pack([1, [["BlockStored", [1, 2, 3]]], 0])[:-2])
    out["hand-reserved-c1"] = seed(b"", seq(21), b"\x93\x01\x91\xc1\x00")
    out["hand-deep"] = seed(b"", seq(22), b"\x93\x01\x91" + b"\x91" * 80 + b"\xc0\x00")
    out["hand-ext-bin-float32"] = seed(b"", seq(23), b"\x93\xca\x3f\x80\x00\x00\x91\x82"
                                       b"\xa4type\xacBlockRemoved\xd4\x05\x01\xc4\x02\xff\xfe\x00")
    out["hand-big-count"] = seed(b"", seq(24), b"\x93\x01\xdd\xff\xff\xff\xff\x00")
    # msgpack str with bytes that are not UTF-8: a key, a value, a tag.
    out["hand-invalid-utf8"] = seed(b"\xff\xfe", seq(25), b"\x93\x01\x93"
                                    b"\x82\xaaevent_type\xa7cleared\xa2\xc3\x28\xa1\xff"
                                    b"\x92\xb0AllBlocksCleared\xa1\xfe"
                                    b"\x91\xab\xffBlockStore\x00")
    out["hand-short-sequence"] = seed(b"", b"\x00\x01", pack([1, [], 0]))
    out["hand-two-frames"] = seed(b"t", seq(1), pack([1, [], 0]), control=2)
    out["hand-four-frames"] = seed(b"t", seq(1), pack([1, [], 0]), control=4)
    out["hand-no-frames"] = bytes([0x30])
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pub", required=True, help="a built tools/kvevents-pub")
    parser.add_argument("--out", required=True, help="the corpus directory to write")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)

    seeds = hand_seeds()
    workdir = tempfile.mkdtemp(prefix="kvev-corpus-")
    try:
        for name, flags in FLAG_SETS.items():
            for i, frames in enumerate(capture(args.pub, workdir, name, flags)):
                if len(frames) != 3:
                    sys.exit("expected 3 frames, got %d" % len(frames))
                seeds["lib-%s-%02d" % (name, i)] = seed(frames[0], frames[1], frames[2])
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    for name, data in sorted(seeds.items()):
        with open(os.path.join(args.out, name), "wb") as f:
            f.write(data)
    print("%d seeds in %s" % (len(seeds), args.out))


if __name__ == "__main__":
    main()
