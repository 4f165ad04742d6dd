/* replay.h: the last messages again, for a subscriber that lost some.
 *
 * The worker keeps every message it sent in a buffer bounded in messages
 * and in bytes (replay-buffer.h), sharing the payload ZeroMQ already
 * holds (no copy); a thread of its own answers requests on a ROUTER
 * socket in vLLM's replay protocol (kvevents(7), REPLAY), so a long
 * replay never stalls the live stream, and serves every peer in turn
 * without waiting for any, so a stalled reader never stalls the others.
 * Built only with the transport, which makes the socket with its own
 * keys and policy and owns the replay.
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEVENTS_REPLAY_H
#define KVEVENTS_REPLAY_H

#include "xpub.h"

#include <zmq.h>

G_BEGIN_DECLS

typedef struct _KvevReplay KvevReplay;

/* Serves socket (a bound ROUTER of context) from a thread of its own,
 * until kvev_replay_stop().  NULL with a KVEV_ERROR_TRANSPORT when the
 * thread cannot start; socket is then the caller's to close. */
KvevReplay *kvev_replay_start (const KvevSettings *settings, void *context, void *socket,
                               GError **error);

/* Keeps message, a copy of one just sent as the message of sequence,
 * moving it into the buffer (message is left empty, for the caller to
 * close); heartbeat says it holds no event.  The worker's thread. */
void kvev_replay_keep (KvevReplay *replay, guint64 sequence, zmq_msg_t *message,
                       gboolean heartbeat);

/* Thread-safe. */
void kvev_replay_counts (const KvevReplay *replay, KvevReplayCounts *counts);

/* Ends the thread, which closes its socket, and frees the buffer, never
 * waiting for a peer.  Before the context is terminated. */
void kvev_replay_stop (KvevReplay *replay);

G_END_DECLS

#endif /* KVEVENTS_REPLAY_H */
