/* bench-sections.h: the sections kvevents-bench and
 * kvevents-bench-internal measure, one file each: each adds its section
 * and figures to the report, and FALSE with error set means the run
 * cannot go on.  Those that hold the worker or time the encoder alone
 * need the testing build's seams, and only kvevents-bench-internal runs
 * them (bench_hot_held (), bench_encode (), bench_memory_queue ()).
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEV_BENCH_SECTIONS_H
#define KVEV_BENCH_SECTIONS_H

#include "bench-report.h"

G_BEGIN_DECLS

/* bench-hot.c: the publish call, worker running, with replay on and off;
 * and held and with the queue full, which needs settings->hold. */
gboolean bench_hot (BenchReport *report, const BenchSettings *settings, GError **error);
gboolean bench_hot_held (BenchReport *report, const BenchSettings *settings, GError **error);
/* bench-encode.c: the library's encoder against msgpack-c key by key. */
gboolean bench_encode (BenchReport *report, const BenchSettings *settings, GError **error);
/* bench-memory.c: a full replay buffer's memory; bytes per queued event,
 * which needs settings->hold; each in child processes. */
gboolean bench_memory (BenchReport *report, const BenchSettings *settings, GError **error);
gboolean bench_memory_queue (BenchReport *report, const BenchSettings *settings, GError **error);
/* bench-net.c: end to end and latency share the subscriber; latency
 * needs the capacity that end to end measures, and measures it itself
 * otherwise. */
gboolean bench_net (BenchReport *report, const BenchSettings *settings, gboolean e2e,
                    gboolean latency, GError **error);
/* bench-loss.c: submitted - received - counted drops, with one fast
 * subscriber, one that stalls, and eight of which one is slow. */
gboolean bench_loss (BenchReport *report, const BenchSettings *settings, GError **error);
/* bench-fanout.c: 1, 8 and 32 subscribers, against raw ZeroMQ with one
 * I/O thread and with two. */
gboolean bench_fanout (BenchReport *report, const BenchSettings *settings, GError **error);
/* bench-scaling.c: keys of 40 B to 64 KiB, messages of 1 to 4096 events,
 * against raw ZeroMQ at the same payload size. */
gboolean bench_scaling (BenchReport *report, const BenchSettings *settings, GError **error);
/* bench-snapshot.c: snapshots of 10^4 to 10^6 objects read by a client,
 * the memory they take, and the publish call while they run. */
gboolean bench_snapshot (BenchReport *report, const BenchSettings *settings, GError **error);
/* The publisher process of its memory figures, --memory-child snapshot
 * (bench-memory-child.h); returns the exit status. */
int bench_snapshot_child_main (guint n_objects, guint key_len, const char *tmp_dir);
/* The publisher of its hostile replay figure, --memory-child
 * replay_hostile, with a replay buffer of buffer_bytes. */
int bench_replay_hostile_child_main (guint buffer_bytes, guint key_len, const char *tmp_dir);

G_END_DECLS

#endif /* KVEV_BENCH_SECTIONS_H */
