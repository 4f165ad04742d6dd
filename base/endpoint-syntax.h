/* endpoint-syntax.h: how a ZeroMQ endpoint is written, as the library's
 * binds and the tools' connects both read it: the transport prefixes, the
 * HOST:PORT of a tcp:// address, a port number, and whether a host is a
 * bracketed IPv6 address.  What an endpoint may then name differs, and
 * stays with each side: a bind takes the port "*" and only numeric hosts
 * or interfaces (libkvevents/config/endpoint.c), a connect takes host
 * names and a SOURCE; in front (kvev_connect_endpoint_is_valid ()).  Pure, with no
 * state and no messages, so the tools share it (libkvbase.la).
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEVENTS_ENDPOINT_SYNTAX_H
#define KVEVENTS_ENDPOINT_SYNTAX_H

#include <glib.h>

G_BEGIN_DECLS

/* Lowercase only, as libzmq compares them. */
#define KVEV_TCP_PREFIX "tcp://"
#define KVEV_IPC_PREFIX "ipc://"
#define KVEV_INPROC_PREFIX "inproc://"

/* A tcp:// address, as kvev_tcp_address_split () finds its parts in the
 * text it was given: nothing is copied. */
typedef struct
{
  const char *host; /* host_len bytes, without the brackets */
  gsize host_len;
  gboolean bracketed; /* [IPv6]: the socket needs ZMQ_IPV6 */
  const char *port;   /* to the end of the text */
} KvevTcpAddress;

/* Splits @address, the part after tcp://, at its last colon into a host
 * and a port: HOST:PORT, or [HOST]:PORT with the closing bracket right
 * before the colon.  FALSE when there is no colon, or nothing before or
 * after it.  Neither part is checked further. */
gboolean kvev_tcp_address_split (const char *address, KvevTcpAddress *parts);

/* Whether @port is a port number, 1 to 65535 in decimal digits (leading
 * zeros allowed, no sign, no spaces); its value in *number when @number
 * is not NULL. */
gboolean kvev_tcp_port_parse (const char *port, guint *number);

/* Whether a tcp:// endpoint names its host as a bracketed IPv6 address.
 * A ZeroMQ socket binds or connects to it only with ZMQ_IPV6, which is
 * set for such endpoints alone: on other sockets it would bind IPv4
 * addresses as IPv6 ones, and could resolve a host name to an IPv6
 * address an IPv4-only publisher does not serve. */
gboolean kvev_endpoint_is_ipv6 (const char *endpoint);

/* Whether a tcp:// endpoint to connect to names a destination with a
 * port from 1 to 65535 (host names and a SOURCE; in front allowed).
 * zmq_connect () takes some endpoints that can never connect and retries
 * them for ever, so kvevents-sub and the library's subscriber refuse
 * them first.  Other transports are left to ZeroMQ. */
gboolean kvev_connect_endpoint_is_valid (const char *endpoint);

G_END_DECLS

#endif /* KVEVENTS_ENDPOINT_SYNTAX_H */
