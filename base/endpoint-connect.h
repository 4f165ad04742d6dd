/* endpoint-connect.h: whether a tcp:// endpoint to connect to ends in a
 * port from 1 to 65535, after a closed bracket if its host is an IPv6
 * address.  zmq_connect () takes some endpoints that can never connect,
 * and retries them for ever, so kvevents-sub and the library's subscriber
 * refuse them first.  Other transports are left to ZeroMQ.
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEVENTS_ENDPOINT_CONNECT_H
#define KVEVENTS_ENDPOINT_CONNECT_H

#include <glib.h>
#include <string.h>

G_BEGIN_DECLS

static inline gboolean
kvev_connect_endpoint_is_valid (const char *endpoint)
{
  const char *address, *colon, *p;
  guint port = 0;

  if (!g_str_has_prefix (endpoint, "tcp://"))
    return TRUE;
  address = endpoint + strlen ("tcp://");
  /* tcp://SOURCE;DESTINATION connects from SOURCE to DESTINATION. */
  if ((p = strchr (address, ';')) != NULL)
    address = p + 1;
  colon = strrchr (address, ':');
  if (colon == NULL || colon == address || colon[1] == '\0')
    return FALSE;
  if (address[0] == '[' && colon[-1] != ']')
    return FALSE;
  for (p = colon + 1; *p != '\0'; p++)
    {
      if (!g_ascii_isdigit (*p))
        return FALSE;
      port = port * 10 + (guint) (*p - '0');
      if (port > 65535)
        return FALSE;
    }
  return port >= 1;
}

G_END_DECLS

#endif /* KVEVENTS_ENDPOINT_CONNECT_H */
