/* replay-client.h: the subscriber's side of vLLM's replay protocol
 * (kvevents(7), REPLAY) as bytes: the request to send from a DEALER and
 * the parser of one reply.  Transport-free, for the fuzz target; the
 * sockets are source.c's.
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEVENTS_SUB_REPLAY_CLIENT_H
#define KVEVENTS_SUB_REPLAY_CLIENT_H

#include "internal.h"

G_BEGIN_DECLS

typedef enum
{
  KVEV_REPLAY_MESSAGE = 0,   /* a buffered message, as it went live */
  KVEV_REPLAY_END = 1,       /* the end marker of one request */
  KVEV_REPLAY_MALFORMED = 2, /* a reply of another shape */
} KvevReplayReply;

/* The second frame of a request ["", start]: start, big-endian. */
void kvev_replay_request_encode (guint64 start, guint8 out[8]);

/* Parses one whole reply as the DEALER received it, parts[0] being the
 * empty delimiter: ["", topic, sequence, payload], or ["", sequence,
 * payload] from vLLM before it sent the topic and from SGLang.  For
 * KVEV_REPLAY_MESSAGE, message[0..2] (topic, sequence, payload) point
 * into parts (the topic empty when there was none) and *sequence is set.
 * The end marker is ["", "", 0xFFFFFFFFFFFFFFFF, ""], or without the
 * topic. */
KvevReplayReply kvev_replay_reply_parse (const KvevFrame *parts, guint n_parts,
                                         KvevFrame message[3], guint64 *sequence);

G_END_DECLS

#endif /* KVEVENTS_SUB_REPLAY_CLIENT_H */
