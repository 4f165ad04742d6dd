/* endpoint-syntax.c: how a ZeroMQ endpoint is written; see
 * endpoint-syntax.h.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include <base/endpoint-syntax.h>

#include <string.h>

gboolean
kvev_tcp_address_split (const char *address, KvevTcpAddress *parts)
{
  /* The last colon: an IPv6 host has colons of its own, in brackets. */
  const char *colon = strrchr (address, ':');

  memset (parts, 0, sizeof *parts);
  if (colon == NULL || colon[1] == '\0')
    return FALSE;
  if (address[0] == '[')
    {
      if (colon - address < 3 || colon[-1] != ']')
        return FALSE;
      parts->host = address + 1;
      parts->host_len = (gsize) (colon - address - 2);
      parts->bracketed = TRUE;
    }
  else
    {
      if (colon == address)
        return FALSE;
      parts->host = address;
      parts->host_len = (gsize) (colon - address);
    }
  parts->port = colon + 1;
  return TRUE;
}

gboolean
kvev_tcp_port_parse (const char *port, guint *number)
{
  guint value = 0;

  if (port[0] == '\0')
    return FALSE;
  /* strtoul () would take a sign, spaces and "0x". */
  for (const char *p = port; *p != '\0'; p++)
    {
      if (!g_ascii_isdigit (*p))
        return FALSE;
      value = value * 10 + (guint) (*p - '0');
      if (value > 65535)
        return FALSE;
    }
  if (value == 0)
    return FALSE;
  if (number != NULL)
    *number = value;
  return TRUE;
}

gboolean
kvev_endpoint_is_ipv6 (const char *endpoint)
{
  return g_str_has_prefix (endpoint, KVEV_TCP_PREFIX "[");
}

gboolean
kvev_connect_endpoint_is_valid (const char *endpoint)
{
  const char *address, *semicolon;
  KvevTcpAddress parts;

  if (!g_str_has_prefix (endpoint, KVEV_TCP_PREFIX))
    return TRUE;
  address = endpoint + strlen (KVEV_TCP_PREFIX);
  /* tcp://SOURCE;DESTINATION connects from SOURCE to DESTINATION, a form
   * binds do not have: only the destination needs a port. */
  semicolon = strchr (address, ';');
  if (semicolon != NULL)
    address = semicolon + 1;
  /* No port "*" here: a bind takes a fresh one, a connect has none to
   * go to. */
  return kvev_tcp_address_split (address, &parts) && kvev_tcp_port_parse (parts.port, NULL);
}
