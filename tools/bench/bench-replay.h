/* bench-replay.h: what kvevents-bench's replay figures (hot path, end to
 * end, memory) share: a configuration with replay on, a replay buffer
 * filled before anything is measured, so that every replay a client asks
 * for is a whole buffer (kvevents(7), REPLAY), and how a figure records
 * what the client (bench-replay-client.h) replayed while it was
 * measured.
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEV_BENCH_REPLAY_H
#define KVEV_BENCH_REPLAY_H

#include "bench-replay-client.h"
#include "bench-report.h"

G_BEGIN_DECLS

/* Events a full message of the buffer holds: kv_events_max_batch_events's
 * default, which bench_config_new () keeps. */
#define BENCH_REPLAY_BATCH_EVENTS 64

/* The buffer of a smoke run, in messages: a full replay of the default
 * 10000 would outlast the whole run. */
#define BENCH_REPLAY_SMOKE_MESSAGES 256

/* Turns replay on in config, bound to replay_endpoint; buffer_messages 0
 * keeps the library's kv_events_replay_buffer_messages. */
gboolean bench_config_set_replay (KvevConfig *config, const char *replay_endpoint,
                                  guint buffer_messages, GError **error);

/* The kv_events_replay_buffer_messages of config. */
guint bench_config_replay_messages (const KvevConfig *config);

/* Publishes stored events, distinct keys of key_len bytes, in rounds of
 * at most queue_capacity events published back to back, each round then
 * drained, until the worker sent n_messages messages or a few more, and
 * sets *sent (when not NULL) to how many.  The worker runs all along:
 * holding it, which would make every message hold exactly
 * BENCH_REPLAY_BATCH_EVENTS, takes the testing build's seam.  The
 * producer outpaces it, so most messages are full, but the first of a
 * round and those that catch up with the producer hold fewer (about one
 * in fifteen on two CPUs): the figures give the payload per message the
 * buffer holds, as measured.  FALSE with error set when the publisher
 * dropped an event or did not drain. */
gboolean bench_replay_fill (KvevPublisher *publisher, guint key_len, guint n_messages,
                            guint queue_capacity, guint64 *sent, GError **error);

/* Adds a run's counts to figure's extras: replays, replayed_messages,
 * replayed_bytes_per_s. */
void bench_replay_add_counts (BenchFigure *figure, const BenchReplayCounts *counts);
/* Those extras over the runs, for people. */
char *bench_replay_note (const BenchFigure *figure);

G_END_DECLS

#endif /* KVEV_BENCH_REPLAY_H */
