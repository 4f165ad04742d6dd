/* sendframes: a test helper that publishes raw multipart messages, so the
 * tests can hand kvevents-sub what no well-behaved publisher sends.
 *
 *   sendframes ENDPOINT MESSAGE...
 *
 * binds ENDPOINT with an XPUB socket, waits for one subscription (so
 * nothing is lost to a subscriber that is still joining), sends every
 * MESSAGE and exits.  A MESSAGE is its frames in hexadecimal separated by
 * ':'; an empty field is an empty frame.  Not installed; its messages are
 * for the test log only and are not translated.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <glib.h>
#include <zmq.h>

static GByteArray *
parse_hex (const char *hex)
{
  GByteArray *bytes = g_byte_array_new ();
  gsize i, len = strlen (hex);

  if (len % 2 != 0)
    {
      g_byte_array_unref (bytes);
      return NULL;
    }
  for (i = 0; i < len; i += 2)
    {
      int high = g_ascii_xdigit_value (hex[i]), low = g_ascii_xdigit_value (hex[i + 1]);
      guint8 byte;

      if (high < 0 || low < 0)
        {
          g_byte_array_unref (bytes);
          return NULL;
        }
      byte = (guint8) (high << 4 | low);
      g_byte_array_append (bytes, &byte, 1);
    }
  return bytes;
}

int
main (int argc, char **argv)
{
  void *context, *socket;
  int verbose = 1, linger = 5000;
  char subscription[256];
  int i;

  if (argc < 3)
    {
      g_printerr ("usage: sendframes ENDPOINT MESSAGE...\n");
      return 2;
    }

  context = zmq_ctx_new ();
  socket = zmq_socket (context, ZMQ_XPUB);
  zmq_setsockopt (socket, ZMQ_XPUB_VERBOSE, &verbose, sizeof verbose);
  zmq_setsockopt (socket, ZMQ_LINGER, &linger, sizeof linger);
  if (zmq_bind (socket, argv[1]) != 0)
    {
      g_printerr ("sendframes: cannot bind %s: %s\n", argv[1], zmq_strerror (zmq_errno ()));
      return 1;
    }
  /* The subscription is registered once the XPUB hands it over. */
  if (zmq_recv (socket, subscription, sizeof subscription, 0) < 0)
    {
      g_printerr ("sendframes: no subscription: %s\n", zmq_strerror (zmq_errno ()));
      return 1;
    }

  for (i = 2; i < argc; i++)
    {
      g_auto (GStrv) frames = g_strsplit (argv[i], ":", -1);
      guint n = g_strv_length (frames), j;

      for (j = 0; j < n; j++)
        {
          g_autoptr (GByteArray) bytes = parse_hex (frames[j]);

          if (bytes == NULL)
            {
              g_printerr ("sendframes: frame \"%s\" is not hexadecimal\n", frames[j]);
              return 2;
            }
          static const guint8 nothing;

          zmq_send (socket, bytes->len > 0 ? bytes->data : &nothing, bytes->len,
                    j + 1 < n ? ZMQ_SNDMORE : 0);
        }
    }

  zmq_close (socket);
  zmq_ctx_term (context);
  return 0;
}
