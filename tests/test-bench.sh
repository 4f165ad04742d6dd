#!/bin/sh
# test-bench.sh: the two benchmark programs run every section they have in
# a smoke mode, exit 0 and print every section's keys, and each refuses,
# with a message, what the other measures.  No timing is asserted: the
# figures of a loaded build machine mean nothing.
#
# make check runs the build tree's kvevents-bench and
# kvevents-bench-internal.  make installcheck runs the installed
# kvevents-bench (KVEV_BENCH) alone, with its checks that need nothing
# but the program and the library: it must run without the build tree.
# A staged installation (DESTDIR) is not found by the program itself, so
# there LD_LIBRARY_PATH points into it.  Exits 1 when a check failed, for
# the installed run; make check reads the TAP.
# SPDX-License-Identifier: Apache-2.0

bench=${KVEV_BENCH:-${top_builddir:-.}/tools/bench/kvevents-bench}
internal=${top_builddir:-.}/tools/bench/kvevents-bench-internal
out=${TMPDIR:-/tmp}/test-bench.$$.json
internal_out=${TMPDIR:-/tmp}/test-bench.$$.internal.json
err=${TMPDIR:-/tmp}/test-bench.$$.err
trap 'rm -f "$out" "$internal_out" "$err"' EXIT

failed=no
i=1
# result STATUS DESCRIPTION: a TAP line for a check whose status is
# STATUS, standard error shown when it failed.
result () {
    if [ "$1" -eq 0 ]; then
        echo "ok $i - $2"
    else
        failed=yes
        echo "not ok $i - $2"
        sed 's/^/# /' "$err"
    fi
    i=$((i + 1))
}
# version PROGRAM NAME: --version prints "NAME (kvevents) VERSION", as
# the other tools say it, and exits 0.
version () {
    "$1" --version >"$out" 2>"$err" && grep -qx "$2 (kvevents) [0-9][0-9.]*" "$out" && [ ! -s "$err" ]
    result $? "$2 --version prints the version and exits 0"
}
# refuses PROGRAM NAME SECTION WHO: --only naming a section of the other
# program exits 2 with a message that says who measures it (WHO), and
# runs nothing.
refuses () {
    "$1" --smoke --quiet --only="$3" >"$out" 2>"$err"
    status=$?
    [ "$status" -eq 2 ] && grep -q -- "$4" "$err" && [ ! -s "$out" ]
    result $? "$2 refuses --only=$3, naming $4 (status $status)"
}
# measures PROGRAM SECTION FIGURE...: a smoke run of SECTION alone exits
# 0 with every FIGURE.
measures () {
    program=$1 section=$2
    shift 2
    "$program" --smoke --json --quiet --only="$section" >"$out" 2>"$err"
    status=$?
    ok_figures=0
    for figure in "$@"; do
        grep -q "\"$figure\":" "$out" || ok_figures=1
    done
    [ "$status" -eq 0 ] && [ "$ok_figures" -eq 0 ]
    result $? "$program measures $section: $* (status $status)"
}

if test -n "${KVEV_BENCH:-}"; then
    test -n "${DESTDIR:-}" && LD_LIBRARY_PATH=$DESTDIR$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} &&
        export LD_LIBRARY_PATH
    echo "1..4"
    version "$bench" kvevents-bench
    measures "$bench" hot stored_cpu.p1.running stored_cpu.p1.running.replay_busy
    measures "$bench" e2e tcp.raw_nodrop tcp.kvev.p1
    refuses "$bench" kvevents-bench encode kvevents-bench-internal
    [ "$failed" = no ]
    exit $?
fi

# kvevents-bench's sections and figures, then kvevents-bench-internal's.
keys='"tool": "version": "settings": "system": "hot": "e2e": "memory": "latency": "snapshot": "loss": "fanout": "scaling": "targets": "process":'
figures='"stored_cpu.p1.running": "stored_both.p1.running": "delta_evict.p1.running": "bare_push_pop.p1": "tcp.raw": "tcp.kvev.p1": "ipc.kvev.p2": "tcp.load50.p99_us": "wake_lateness_p99_us": "cpu_stalls_over_1ms_per_s": "cpu_longest_stall_us": "hot.running.one_medium": "e2e.tcp.p1": "latency.load50.p99": "stored_cpu.p1.running.replay_idle": "stored_cpu.p1.running.replay_busy": "stored_cpu.p2.running.replay_busy": "ipc.kvev.p1.replay_idle": "tcp.kvev.p1.replay_idle": "tcp.kvev.p1.replay_busy": "replay_off.rss_bytes": "replay.payload_bytes": "replay.rss_bytes": "replay.heap_bytes": "replay.rss_bytes_per_message": "replay.heap_bytes_per_message": "hot.replay.idle": "hot.replay.busy": "e2e.tcp.p1.replay": "memory.replay_buffer": "walk10000.ms": "walk10000.objects_per_s": "walk10000.peak_rss_growth_kib": "stored_cpu.p1.locked": "stored_cpu.p1.locked.walk_busy": "thread_cpu_ns_per_call": "lock_waits": "store_locks": "snapshot.hot.walk_busy": "snapshot.walk.1000000": "slow_walk.fast_reader_mb_per_s": "mutator.cpu_ns_per_call": "mutator.cpu_ns_per_call.slow_walk": "slow_walk.waits": "slow_walk.wait_us": "slow10000.peak_rss_growth_kib": "replay_hostile.peak_rss_growth_per_buffer": "paced.events_per_s": "paced.events_per_s.snapshots_busy": "snapshot.slow.waits": "snapshot.slow.mutator_cpu": "snapshot.paced.rate": "snapshot.slow.memory_flat": "snapshot.slow.memory_bound": "snapshot.replay_hostile": "tcp.raw_nodrop": "ipc.raw_nodrop": "fast.uncounted": "stall.uncounted": "sub8.uncounted": "sub8.fast.events_per_s": "sub8_slow.fast.events_per_s": "sub8_slow.slow.events_per_s": "sub8_slow.uncounted": "sub1.raw.events_per_s": "sub8.raw_io2.events_per_s": "sub32.kvev.events_per_s": "sub32.kvev.cpu_ns_per_event": "key40.batch64.kvev.events_per_s": "key1024.batch64.raw.bytes_per_s": "key65536.batch64.kvev.bytes_per_s": "key40.batch1.kvev.events_per_s": "key40.batch4096.kvev.events_per_s": "hot.p2.per_thread": "e2e.tcp.p2": "e2e.loss": "loss.fast": "loss.stall": "loss.slow8": "loss.slow8.others": "fanout.sub1": "fanout.sub8": "fanout.sub32": "latency.load10.p99":'
internal_keys='"tool": "kvevents-bench-internal" "hot": "encode": "memory": "targets":'
internal_figures='"stored_cpu.p2.held": "bare_push.p1": "bare_drop.p1": "stored_cpu.p1.full": "kvev.stored.legacy_on.batch64": "msgpack.stored.legacy_on.batch64": "kvev.rss_bytes_per_event": "kvev.peak_rss_kib": "hot.full.drop": "encode.batch64": "memory.bytes_per_event": "thread_cpu_ns_per_call":'

set -- $keys $figures
n_installed=$#
set -- $internal_keys $internal_figures
n_internal=$#
echo "1..$((2 + n_installed + 1 + 3 + 1 + 1 + 3 + 5 + 1 + 2 + n_internal + 4))"

"$bench" --smoke --json --quiet >"$out" 2>"$err"
status=$?
if [ "$status" -eq 0 ]; then
    echo "ok 1 - kvevents-bench --smoke --json exits 0"
else
    echo "not ok 1 - kvevents-bench --smoke --json exits 0 (status $status)"
    sed 's/^/# /' "$err"
fi

if [ "$(wc -l <"$out")" -eq 1 ] && head -c 1 "$out" | grep -q '{'; then
    echo "ok 2 - one JSON object on one line"
else
    echo "not ok 2 - one JSON object on one line"
fi

i=3
for key in $keys $figures; do
    if grep -q -F -- "$key" "$out"; then
        echo "ok $i - output has $key"
    else
        echo "not ok $i - output has $key"
    fi
    i=$((i + 1))
done

# A real JSON parser, when there is one; the keys above are checked anyway.
if command -v python3 >/dev/null 2>&1; then
    if python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$out" 2>>"$err"; then
        echo "ok $i - output parses as JSON"
    else
        echo "not ok $i - output parses as JSON"
    fi
else
    echo "ok $i - output parses as JSON # SKIP no python3"
fi
i=$((i + 1))

# The replay figures measure what they say: a client replayed while the
# busy ones ran, each is a ratio to the same figure without replay, and
# a full smoke buffer (256 messages) holds its payload in memory.
replay_check() {
    if ! command -v python3 >/dev/null 2>&1; then
        echo "ok $i - $2 # SKIP no python3"
    elif python3 - "$out" "$1" 2>>"$err" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
def figure(section, name):
    return report[section]["figures"][name]
def extra(section, name, key):
    return figure(section, name)["extras"][key]["median"]
check = sys.argv[2]
if check == "busy":
    busy = [("hot", "stored_cpu.p%d.running.replay_busy" % p) for p in (1, 2)] + \
        [("e2e", "%s.kvev.p1.replay_busy" % t) for t in ("ipc", "tcp")]
    ok = all(extra(s, f, "replayed_messages") > 0 and extra(s, f, "replayed_bytes_per_s") > 0
             for s, f in busy)
elif check == "baselines":
    ok = all(figure("hot", "stored_cpu.p%d.running.replay_%s" % (p, v))["baseline"] ==
             "stored_cpu.p%d.running" % p for p in (1, 2) for v in ("idle", "busy")) and \
        all(figure("e2e", "%s.kvev.p1.replay_%s" % (t, v))["baseline"] == "%s.kvev.p1" % t
            for t in ("ipc", "tcp") for v in ("idle", "busy")) and \
        figure("memory", "replay.rss_bytes")["baseline"] == "replay.payload_bytes"
else:
    payload = figure("memory", "replay.payload_bytes")["value"]["median"]
    rss = figure("memory", "replay.rss_bytes")["value"]["median"]
    per_message = figure("memory", "replay.payload_bytes_per_message")["value"]["median"]
    ok = extra("memory", "replay.payload_bytes", "buffered_messages") == 256 and \
        report["memory"]["info"]["replay_buffer_messages"]["median"] == 256 and \
        payload > 256 * 64 * 40 and rss >= payload and abs(per_message * 256 - payload) < 1e-5 * payload
sys.exit(0 if ok else 1)
PY
    then
        echo "ok $i - $2"
    else
        echo "not ok $i - $2"
        sed 's/^/# /' "$err"
    fi
    i=$((i + 1))
}
replay_check busy "the busy replay figures replayed while they were measured"
replay_check baselines "each replay figure is a ratio to the same figure without replay"
replay_check memory "a full replay buffer of 256 messages holds its payload in RSS"

# The snapshot figures measure what they say: the client read chunks to
# the end, snapshots ran while the busy calls did, the peak RSS was
# measured, and the busy calls are a ratio to the same calls without.
if ! command -v python3 >/dev/null 2>&1; then
    echo "ok $i - the snapshot figures read whole snapshots # SKIP no python3"
elif python3 - "$out" 2>>"$err" <<'PY'
import json, sys
figures = json.load(open(sys.argv[1]))["snapshot"]["figures"]
walk = figures["walk10000.ms"]
busy = figures["stored_cpu.p1.locked.walk_busy"]
ok = walk["value"]["median"] > 0 and walk["extras"]["chunks"]["median"] > 0 and \
    walk["extras"]["bytes"]["median"] > 10000 * 40 and \
    figures["walk10000.peak_rss_growth_kib"]["value"]["median"] is not None and \
    busy["baseline"] == "stored_cpu.p1.locked" and busy["extras"]["snapshots"]["median"] >= 1
# The slow reader's walk probed every add, the mutator published beside
# it, and the paced producer ran while snapshots did.
waits = figures["slow_walk.waits"]["extras"]
paced = figures["paced.events_per_s.snapshots_busy"]
ok = ok and waits["walk_calls_probed"]["median"] >= 10000 and \
    waits["mutator_calls_probed"]["median"] > 0 and \
    figures["mutator.cpu_ns_per_call.slow_walk"]["baseline"] == "mutator.cpu_ns_per_call" and \
    figures["slow10000.peak_rss_growth_kib"]["baseline"] == "slow1000.peak_rss_growth_kib" and \
    paced["baseline"] == "paced.events_per_s" and paced["extras"]["snapshots"]["median"] >= 1 and \
    figures["replay_hostile.peak_rss_growth_per_buffer"]["value"]["median"] is not None
sys.exit(0 if ok else 1)
PY
then
    echo "ok $i - the snapshot figures read whole snapshots"
else
    echo "not ok $i - the snapshot figures read whole snapshots"
    sed 's/^/# /' "$err"
fi
i=$((i + 1))

# The loss, fan-out and scaling figures measure what they say: one value
# a run, a number, for every figure; every phase through a publisher did
# its loss accounting; the publisher end to end is a ratio to ZeroMQ with
# XPUB_NODROP; the slow subscriber's loss is on record; fan-out measured
# every kind of sender at every count, and every scaling phase received
# events (by the producers' stop or after it: under a sanitizer a smoke
# phase can end before its first message arrives).
if ! command -v python3 >/dev/null 2>&1; then
    echo "ok $i - the loss, fan-out and scaling figures are complete # SKIP no python3"
elif python3 - "$out" 2>>"$err" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
runs = report["settings"]["runs"]
def measured(figure):
    values = figure["value"]["runs"]
    return len(values) == runs and all(isinstance(v, (int, float)) for v in values)
def has_loss(figure):
    return "uncounted_loss" in figure["extras"] and \
        "hwm_dropped_events" in figure["extras"] and measured(figure)
sections = [report[s]["figures"] for s in ("loss", "fanout", "scaling")]
e2e = report["e2e"]["figures"]
fanout, scaling = sections[1], sections[2]
ok = all(measured(f) for figures in sections for f in figures.values()) and \
    all(has_loss(e2e["%s.kvev.%s" % (t, p)]) for t in ("ipc", "tcp") for p in ("p1", "p2")) and \
    e2e["tcp.kvev.p1"]["baseline"] == "tcp.raw_nodrop" and \
    "slow_uncounted" in sections[0]["sub8_slow.uncounted"]["extras"] and \
    all(fanout["sub%d.%s.%s" % (n, k, m)]["baseline"] == (None if b is None else
                                                          "sub%d.%s.%s" % (n, b, m))
        for n in (1, 8, 32)
        for k, b in (("raw", None), ("raw_io2", "raw"), ("kvev_io1", "raw"), ("kvev", "raw_io2"))
        for m in ("events_per_s", "cpu_ns_per_event")) and \
    all("uncounted_loss" in fanout["sub%d.%s.events_per_s" % (n, k)]["extras"]
        for n in (1, 8, 32) for k in ("kvev", "kvev_io1")) and \
    all(has_loss(f) for i, f in scaling.items() if i.endswith(".kvev.events_per_s")) and \
    all(min(scaling[i.replace("bytes_per_s", "events_per_s")]["extras"]["received"]["runs"]) > 0
        for i in scaling if i.endswith("bytes_per_s"))
sys.exit(0 if ok else 1)
PY
then
    echo "ok $i - the loss, fan-out and scaling figures are complete"
else
    echo "not ok $i - the loss, fan-out and scaling figures are complete"
    sed 's/^/# /' "$err"
fi
i=$((i + 1))

# A rate no machine reaches is refused with a message, not run.
"$bench" --capacity=1e12 --only=latency >"$out" 2>"$err"
status=$?
if [ "$status" -eq 2 ] && grep -q -- "--capacity" "$err"; then
    echo "ok $i - --capacity out of range exits 2 with a message"
else
    echo "not ok $i - --capacity out of range exits 2 with a message (status $status)"
fi
i=$((i + 1))

# A given capacity sets the latency rates.
"$bench" --smoke --json --quiet --only=latency --capacity=20000 >"$out" 2>"$err"
status=$?
if [ "$status" -eq 0 ] && grep -q '"rate_load50": {"median": 10000,' "$out"; then
    echo "ok $i - --capacity=20000 runs the 50% load at 10000 events/s"
else
    echo "not ok $i - --capacity=20000 runs the 50% load at 10000 events/s (status $status)"
    sed 's/^/# /' "$err"
fi
i=$((i + 1))

# Without the end-to-end section the capacity is measured as that section
# measures it, over --runs phases (after a warm-up that is not counted),
# not in one phase: a single first phase measured under half of it.
"$bench" --smoke --json --quiet --only=latency --runs=3 >"$out" 2>"$err"
status=$?
number='[-+.e0-9]*'
if [ "$status" -eq 0 ] && grep -q "\"capacity_events_per_s\": {\"median\": $number, \"min\": $number, \"max\": $number, \"runs\": \[$number, $number, $number\]}" "$out"; then
    echo "ok $i - --only=latency measures the capacity over 3 runs"
else
    echo "not ok $i - --only=latency measures the capacity over 3 runs (status $status)"
    sed 's/^/# /' "$err"
fi
i=$((i + 1))

# A value the options cannot take is refused, never read as "not given".
for bad in "--runs=-1" "--duration-ms=-1" "--capacity=-1" "--only=,"; do
    "$bench" --quiet --smoke "$bad" >"$out" 2>"$err"
    status=$?
    if [ "$status" -eq 2 ] && [ -s "$err" ] && [ ! -s "$out" ]; then
        echo "ok $i - $bad exits 2 with a message"
    else
        echo "not ok $i - $bad exits 2 with a message (status $status)"
    fi
    i=$((i + 1))
done

# The memory targets name the key length they measured.
"$internal" --smoke --quiet --only=memory --key-len=8 >"$out" 2>"$err"
status=$?
if [ "$status" -eq 0 ] && grep -q "Memory per queued event, 8-byte keys" "$out"; then
    echo "ok $i - the memory target is labelled with --key-len"
else
    echo "not ok $i - the memory target is labelled with --key-len (status $status)"
    sed 's/^/# /' "$err"
fi
i=$((i + 1))

# --version, as the other tools say it.
version "$bench" kvevents-bench

# kvevents-bench-internal: the sections that need the testing build.
"$internal" --smoke --json --quiet >"$internal_out" 2>"$err"
status=$?
if [ "$status" -eq 0 ]; then
    echo "ok $i - kvevents-bench-internal --smoke --json exits 0"
else
    echo "not ok $i - kvevents-bench-internal --smoke --json exits 0 (status $status)"
    sed 's/^/# /' "$err"
fi
i=$((i + 1))
if [ "$(wc -l <"$internal_out")" -eq 1 ] && head -c 1 "$internal_out" | grep -q '{'; then
    echo "ok $i - one JSON object on one line"
else
    echo "not ok $i - one JSON object on one line"
fi
i=$((i + 1))
for key in $internal_keys $internal_figures; do
    if grep -q -F -- "$key" "$internal_out"; then
        echo "ok $i - kvevents-bench-internal's output has $key"
    else
        echo "not ok $i - kvevents-bench-internal's output has $key"
    fi
    i=$((i + 1))
done

# Each program measures its part of the hot path, and no other: the
# worker running through the shipped library, held through the seam.
"$bench" --smoke --json --quiet --only=hot >"$out" 2>"$err"
if grep -q '"stored_cpu.p1.running":' "$out" && ! grep -q '"stored_cpu.p1.held":' "$out" &&
    grep -q '"stored_cpu.p1.held":' "$internal_out" &&
    ! grep -q '"stored_cpu.p1.running":' "$internal_out"; then
    echo "ok $i - the running hot path is kvevents-bench's, the held one kvevents-bench-internal's"
else
    echo "not ok $i - the running hot path is kvevents-bench's, the held one kvevents-bench-internal's"
fi
i=$((i + 1))

# A section of the other program is refused with a message saying which
# program measures it, not run and not called unknown.
refuses "$bench" kvevents-bench hot,encode kvevents-bench-internal
refuses "$internal" kvevents-bench-internal e2e "kvevents-bench measures it"
version "$internal" kvevents-bench-internal
