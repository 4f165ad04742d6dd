/* replay-client.h: the subscriber's side of vLLM's replay protocol
 * (kvevents(7), REPLAY), on a DEALER socket the caller connects.  Only in
 * a build with the transport.  Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVT_REPLAY_CLIENT_H
#define KVT_REPLAY_CLIENT_H

#include <glib.h>

#include "decode.h"

G_BEGIN_DECLS

/* Asks for every buffered message whose sequence is at least start: ["",
 * start] from a DEALER.  FALSE when ZeroMQ refused the request
 * (zmq_errno () says why). */
gboolean kvt_replay_client_request (void *dealer, guint64 start);

typedef enum
{
  KVT_REPLAY_NOTHING,   /* no reply was waiting */
  KVT_REPLAY_MESSAGE,   /* a buffered message: frames hold it as it went live */
  KVT_REPLAY_END,       /* the end marker of one request */
  KVT_REPLAY_MALFORMED, /* a reply of another shape */
} KvtReplayReply;

/* Takes one whole reply without waiting.  parts is emptied first and keeps
 * the reply's frames; for KVT_REPLAY_MESSAGE, frames[0..2] (topic,
 * sequence, payload) point into them, as kvt_decode_message () takes a
 * live message.  Replies of vLLM before it sent the topic, and of SGLang,
 * have none: frames[0] is then empty. */
KvtReplayReply kvt_replay_client_receive (void *dealer, GArray *parts, KvtFrame frames[3]);

G_END_DECLS

#endif /* KVT_REPLAY_CLIENT_H */
