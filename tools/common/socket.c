/* socket.c: ZeroMQ socket helpers of the tools; see socket.h.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include "socket.h"
#include "kvtool.h"

#include <glib/gi18n.h>
#include <zmq.h>

gboolean
kvt_socket_set_int (void *socket, int option, const char *name, int value, GError **error)
{
  if (zmq_setsockopt (socket, option, &value, sizeof value) == 0)
    return TRUE;
  g_set_error (error, KVT_ERROR, KVT_ERROR_FAILED, _ ("Cannot set %s: %s"), name,
               zmq_strerror (zmq_errno ()));
  return FALSE;
}

GArray *
kvt_parts_new (void)
{
  return g_array_new (FALSE, FALSE, sizeof (zmq_msg_t));
}

gboolean
kvt_socket_receive_parts (void *socket, GArray *parts)
{
  guint first = parts->len;
  gboolean more = TRUE;

  while (more)
    {
      zmq_msg_t part;

      zmq_msg_init (&part);
      if (zmq_msg_recv (&part, socket, parts->len == first ? ZMQ_DONTWAIT : 0) < 0)
        {
          zmq_msg_close (&part);
          return parts->len > first;
        }
      more = zmq_msg_more (&part);
      /* Copying a zmq_msg_t's bytes moves it (libzmq's own zmq_msg_move ()
       * does no more), so the array holds the parts themselves. */
      g_array_append_val (parts, part);
    }
  return TRUE;
}

void
kvt_parts_clear (GArray *parts)
{
  guint i;

  for (i = 0; i < parts->len; i++)
    zmq_msg_close (&g_array_index (parts, zmq_msg_t, i));
  g_array_set_size (parts, 0);
}
