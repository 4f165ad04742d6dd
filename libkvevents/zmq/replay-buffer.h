/* replay-buffer.h: the last messages sent, kept for replay.
 *
 * Bounded in messages (kv_events_replay_buffer_messages) and in payload
 * bytes (kv_events_replay_buffer_bytes), the oldest going first; each
 * message shares the payload ZeroMQ already holds (no copy).  Heartbeats
 * take no message of the bound: see replay-buffer.c.  Thread-safe: the
 * worker keeps, the replay thread reads.
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEVENTS_REPLAY_BUFFER_H
#define KVEVENTS_REPLAY_BUFFER_H

#include <glib.h>
#include <zmq.h>

G_BEGIN_DECLS

typedef struct _KvevReplayBuffer KvevReplayBuffer;

/* max_messages and max_bytes are at least 1. */
KvevReplayBuffer *kvev_replay_buffer_new (guint32 max_messages, guint32 max_bytes);
void kvev_replay_buffer_free (KvevReplayBuffer *buffer);

/* Keeps message as the message of sequence, moving it in (message is
 * left empty, for the caller to close); heartbeat says it holds no
 * event.  Sequences only ever grow. */
void kvev_replay_buffer_keep (KvevReplayBuffer *buffer, guint64 sequence, zmq_msg_t *message,
                              gboolean heartbeat);

/* The newest sequence a replay can send; FALSE when there is none. */
gboolean kvev_replay_buffer_newest (KvevReplayBuffer *buffer, guint64 *newest);

/* The first sequence kept from start to until: sets *sequence and
 * initialises message with a copy of its message (sharing its bytes).
 * FALSE, and message untouched, when the buffer holds none of them. */
gboolean kvev_replay_buffer_get (KvevReplayBuffer *buffer, guint64 start, guint64 until,
                                 guint64 *sequence, zmq_msg_t *message);

/* The messages a replay of the whole buffer sends now, and their bytes
 * as the buffer holds them.  Any thread. */
void kvev_replay_buffer_counts (const KvevReplayBuffer *buffer, guint64 *messages, guint64 *bytes);

G_END_DECLS

#endif /* KVEVENTS_REPLAY_BUFFER_H */
