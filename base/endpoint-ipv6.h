/* endpoint-ipv6.h: whether a tcp:// endpoint names an IPv6 host.  Pure,
 * with no state and no messages, so the tools share it with the library
 * (libkvbase.la); inline, since it is one comparison.
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEVENTS_ENDPOINT_IPV6_H
#define KVEVENTS_ENDPOINT_IPV6_H

#include <glib.h>

G_BEGIN_DECLS

/* Whether a tcp:// endpoint names its host as a bracketed IPv6 address.
 * A ZeroMQ socket binds or connects to it only with ZMQ_IPV6, which is
 * set for such endpoints alone: on other sockets it would bind IPv4
 * addresses as IPv6 ones, and could resolve a host name to an IPv6
 * address an IPv4-only publisher does not serve. */
static inline gboolean
kvev_endpoint_is_ipv6 (const char *endpoint)
{
  return g_str_has_prefix (endpoint, "tcp://[");
}

G_END_DECLS

#endif /* KVEVENTS_ENDPOINT_IPV6_H */
