/* replay-client.c: vLLM's replay protocol from the subscriber's side; see
 * replay-client.h.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "internal.h"

#include "replay-client.h"

#include <string.h>

void
kvev_replay_request_encode (guint64 start, guint8 out[8])
{
  guint64 start_be = GUINT64_TO_BE (start);

  memcpy (out, &start_be, sizeof start_be);
}

KvevReplayReply
kvev_replay_reply_parse (const KvevFrame *parts, guint n_parts, KvevFrame message[3],
                         guint64 *sequence)
{
  static const guint8 end_sequence[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
  guint64 sequence_be;
  guint offset, i;

  if ((n_parts != 4 && n_parts != 3) || parts[0].size != 0)
    return KVEV_REPLAY_MALFORMED;
  /* With the topic, frame i of the message is part i + 1. */
  offset = n_parts - 3;
  message[0].data = "";
  message[0].size = 0;
  for (i = 1 - offset; i < 3; i++)
    message[i] = parts[i + offset];
  if (message[1].size != sizeof sequence_be || message[1].data == NULL)
    return KVEV_REPLAY_MALFORMED;
  if (memcmp (message[1].data, end_sequence, sizeof end_sequence) == 0)
    return message[2].size == 0 && message[0].size == 0 ? KVEV_REPLAY_END : KVEV_REPLAY_MALFORMED;
  memcpy (&sequence_be, message[1].data, sizeof sequence_be);
  *sequence = GUINT64_FROM_BE (sequence_be);
  return KVEV_REPLAY_MESSAGE;
}
