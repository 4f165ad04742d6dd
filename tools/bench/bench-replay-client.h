/* bench-replay-client.h: the replay client of kvevents-bench's replay
 * figures: a thread with a ZeroMQ context of its own, as another
 * process's would be, that asks a publisher's replay endpoint for
 * everything from sequence 0 as vLLM's client does (a DEALER sending
 * ["", start], kvevents(7), REPLAY), reads every reply to the end
 * marker, and asks again, for as long as it runs.
 *
 * It runs only between bench_replay_client_resume () and
 * bench_replay_client_pause (), so that one publisher can be measured
 * with replay on and no client, and with a client, in turns.  A pause
 * reads the replay under way to its end marker before it returns (the
 * publisher's replay thread must never be left sending to a peer that
 * went away), without counting it: what a figure measured alongside the
 * client ran is what the counts say.
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEV_BENCH_REPLAY_CLIENT_H
#define KVEV_BENCH_REPLAY_CLIENT_H

#include <glib.h>
#include <zmq.h>

G_BEGIN_DECLS

typedef struct _BenchReplayClient BenchReplayClient;

/* What the client received between a resume and the pause. */
typedef struct
{
  guint64 replays;  /* replays read to their end marker while it ran */
  guint64 messages; /* replies that carried a message, while it ran */
  guint64 bytes;    /* their payload bytes */
  gint64 ns;        /* how long it ran counting, until the pause */
} BenchReplayCounts;

/* A paused client of endpoint (a replay endpoint as bound). */
BenchReplayClient *bench_replay_client_new (const char *endpoint);

/* Starts the loop and returns once the first reply arrived and the
 * publisher's burst is spent, so that replay traffic flows at the
 * publisher's rate from the start of what is measured next; what the
 * client received until then is not counted.  FALSE with error set when
 * no reply came in 20 s. */
gboolean bench_replay_client_resume (BenchReplayClient *client, GError **error);

/* Stops the loop, reading the replay under way to its end, adds what it
 * received since the resume to *counts, and returns FALSE with error set
 * when a reply was not of the protocol's shape or a replay stalled. */
gboolean bench_replay_client_pause (BenchReplayClient *client, BenchReplayCounts *counts,
                                    GError **error);

void bench_replay_client_free (BenchReplayClient *client);

/* Receives one multipart message, every frame of it, into frames (the
 * first n_frames; the rest are received and closed); returns how many
 * it had. */
guint bench_receive_frames (void *socket, zmq_msg_t *frames, guint n_frames);

G_END_DECLS

#endif /* KVEV_BENCH_REPLAY_CLIENT_H */
