/* replay.h: the last messages again, for a subscriber that lost some.
 *
 * The worker hands over every message right after it sent it, and the
 * replay keeps it in a buffer bounded in messages and in bytes
 * (replay-buffer.h), sharing the payload ZeroMQ already holds (no copy);
 * a thread of its own answers requests on the net's replay socket in
 * vLLM's replay protocol (kvevents(7), REPLAY), so a long replay never
 * stalls the live stream, and serves every peer in turn without waiting
 * for any, so a stalled reader never stalls the others.  The net (net.h)
 * hardens the socket as it does the live one, and closes it; the
 * publisher starts and stops the replay and reads its counts.
 * Built only with ZeroMQ: zmq/none.c stands in otherwise.
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEVENTS_REPLAY_H
#define KVEVENTS_REPLAY_H

#include "net.h"

G_BEGIN_DECLS

/* libzmq's message, as xpub.h names it: without zmq.h. */
struct zmq_msg_t;

typedef struct _KvevReplay KvevReplay;

/* What replay did. */
typedef struct
{
  guint64 requests;           /* answered, from the first message asked for */
  guint64 malformed_requests; /* not [identity, "", 8-byte sequence]: counted, unanswered */
  guint64 refused_requests;   /* unanswered: too many queued, or a stalled peer's */
  guint64 abandoned_replies;  /* cut short: the peer read nothing for 5 s */
  guint64 messages;           /* replayed, end markers aside */
  guint64 held_bytes;         /* payloads of replies that libzmq holds now */
  guint64 buffered_messages;  /* in the buffer now, heartbeat runs included */
  guint64 buffered_bytes;     /* their payloads, heartbeat runs aside */
} KvevReplayCounts;

/* Serves net's replay socket from a thread of its own, until
 * kvev_replay_stop(); settings and net must outlive it.  NULL with a
 * KVEV_ERROR_TRANSPORT when the thread cannot start. */
KvevReplay *kvev_replay_start (const KvevSettings *settings, const KvevNet *net, GError **error);

/* Takes message, the copy kvev_xpub_send() made of the message of
 * sequence it just sent, into the buffer; heartbeat says it holds no
 * event.  The worker's thread. */
void kvev_replay_keep (KvevReplay *replay, guint64 sequence, struct zmq_msg_t *message,
                       gboolean heartbeat);

/* Thread-safe; all 0 for no replay (NULL). */
void kvev_replay_counts (const KvevReplay *replay, KvevReplayCounts *counts);

/* Ends the thread and frees the buffer, never waiting for a peer; before
 * the net closes the socket. */
void kvev_replay_stop (KvevReplay *replay);

G_END_DECLS

#endif /* KVEVENTS_REPLAY_H */
