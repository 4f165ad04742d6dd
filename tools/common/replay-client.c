/* replay-client.c: vLLM's replay protocol from the subscriber's side; see
 * replay-client.h.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include "replay-client.h"
#include "socket.h"

#include <string.h>
#include <zmq.h>

gboolean
kvt_replay_client_request (void *dealer, guint64 start)
{
  guint64 start_be = GUINT64_TO_BE (start);

  /* A DEALER adds no delimiter of its own; the publisher's ROUTER then sees
   * [identity, "", start], as from a REQ. */
  return zmq_send (dealer, "", 0, ZMQ_SNDMORE | ZMQ_DONTWAIT) == 0
         && zmq_send (dealer, &start_be, sizeof start_be, ZMQ_DONTWAIT) == sizeof start_be;
}

KvtReplayReply
kvt_replay_client_receive (void *dealer, GArray *parts, KvtFrame frames[3])
{
  static const guint8 end_sequence[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
  guint offset, i;

  kvt_parts_clear (parts);
  if (!kvt_socket_receive_parts (dealer, parts))
    return KVT_REPLAY_NOTHING;
  /* ["", topic, sequence, payload], or ["", sequence, payload] without the
   * topic. */
  if ((parts->len != 4 && parts->len != 3)
      || zmq_msg_size (&g_array_index (parts, zmq_msg_t, 0)) != 0)
    return KVT_REPLAY_MALFORMED;
  /* With the topic, frame i of the message is part i + 1. */
  offset = parts->len - 3;
  frames[0].data = "";
  frames[0].size = 0;
  for (i = 1 - offset; i < 3; i++)
    {
      zmq_msg_t *part = &g_array_index (parts, zmq_msg_t, i + offset);

      frames[i].data = zmq_msg_data (part);
      frames[i].size = zmq_msg_size (part);
    }
  if (frames[1].size != sizeof end_sequence)
    return KVT_REPLAY_MALFORMED;
  if (memcmp (frames[1].data, end_sequence, sizeof end_sequence) == 0)
    return frames[2].size == 0 ? KVT_REPLAY_END : KVT_REPLAY_MALFORMED;
  return KVT_REPLAY_MESSAGE;
}
