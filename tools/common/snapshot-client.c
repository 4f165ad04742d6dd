/* snapshot-client.c: the snapshot protocol from the subscriber's side;
 * see snapshot-client.h.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include "snapshot-client.h"
#include "socket.h"

#include <string.h>
#include <zmq.h>

#define REQUEST "snapshot"

gboolean
kvt_snapshot_client_request (void *dealer)
{
  /* A DEALER adds no delimiter of its own; the publisher's ROUTER then sees
   * [identity, "", "snapshot"], as from a REQ. */
  return zmq_send (dealer, "", 0, ZMQ_SNDMORE | ZMQ_DONTWAIT) == 0
         && zmq_send (dealer, REQUEST, strlen (REQUEST), ZMQ_DONTWAIT) == (int) strlen (REQUEST);
}

static gboolean
frame_is (const zmq_msg_t *part, const char *text)
{
  gsize len = strlen (text);

  return zmq_msg_size ((zmq_msg_t *) part) == len
         && memcmp (zmq_msg_data ((zmq_msg_t *) part), text, len) == 0;
}

KvtSnapshotReply
kvt_snapshot_client_receive (void *dealer, GArray *parts, KvtFrame *body)
{
  static const struct
  {
    const char *kind;
    KvtSnapshotReply reply;
  } kinds[] = {
    { "header", KVT_SNAPSHOT_HEADER },
    { "chunk", KVT_SNAPSHOT_CHUNK },
    { "end", KVT_SNAPSHOT_END },
    { "error", KVT_SNAPSHOT_ERROR },
  };
  zmq_msg_t *part;
  guint i;

  kvt_parts_clear (parts);
  if (!kvt_socket_receive_parts (dealer, parts))
    return KVT_SNAPSHOT_NOTHING;
  /* ["", kind, body] */
  if (parts->len != 3 || zmq_msg_size (&g_array_index (parts, zmq_msg_t, 0)) != 0)
    return KVT_SNAPSHOT_MALFORMED;
  part = &g_array_index (parts, zmq_msg_t, 2);
  body->data = zmq_msg_data (part);
  body->size = zmq_msg_size (part);
  for (i = 0; i < G_N_ELEMENTS (kinds); i++)
    if (frame_is (&g_array_index (parts, zmq_msg_t, 1), kinds[i].kind))
      return kinds[i].reply;
  return KVT_SNAPSHOT_MALFORMED;
}
