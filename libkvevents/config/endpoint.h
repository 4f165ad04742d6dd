/* endpoint.h: bind endpoints.  What kv_events_bind_endpoint,
 * kv_events_replay_endpoint and kv_events_snapshot_endpoint may name,
 * read once, when the settings are made, into what the bind needs: the
 * text for libzmq, whether the socket needs ZMQ_IPV6, whether it listens
 * on every interface, the ipc:// path that is checked just before the
 * bind so that a mistake fails like it does on tcp:// rather than
 * silently.  Transport-free, so an endpoint validates the same in the
 * --without-zmq build.
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEVENTS_ENDPOINT_H
#define KVEVENTS_ENDPOINT_H

#include "internal.h"
#include <base/endpoint-syntax.h>

G_BEGIN_DECLS

typedef enum
{
  KVEV_ENDPOINT_TCP,
  KVEV_ENDPOINT_IPC,
} KvevEndpointScheme;

typedef struct
{
  KvevEndpointScheme scheme;
  /* As configured: what zmq_bind () is handed, and messages quote. */
  char *text;
  /* Whether each socket bound here takes a port or path of its own that
   * libzmq picks, for the port "*" or the ipc:// path "*": two sockets
   * may then share the text. */
  gboolean fresh;

  /* tcp:// (NULL, 0 and FALSE for ipc://) */
  char *host;        /* without brackets and zone; "*" for every interface */
  char *zone;        /* after the last '%' of a bracketed host, or NULL */
  guint port;        /* 1 to 65535; 0 for "*" */
  gboolean ipv6;     /* a bracketed host: the socket needs ZMQ_IPV6 */
  gboolean wildcard; /* binds 0.0.0.0 or ::, however it is spelled */

  /* ipc:// (NULL for tcp://): a file, "*" for a fresh one, or @NAME in
   * Linux's abstract namespace. */
  char *path;
} KvevEndpoint;

/* Reads @text as libzmq binds it: tcp://HOST:PORT, where HOST is "*", a
 * numeric IPv4 address, a numeric IPv6 address in brackets (with an
 * optional %ZONE naming an interface) or the name of a network interface
 * of this machine, and PORT 1 to 65535 or "*"; or ipc://PATH.  Host names
 * are refused: libzmq never resolves them for a bind.  Otherwise NULL
 * with a KVEV_ERROR_INVALID_VALUE whose message says why and what to
 * write instead, without quoting @text (the caller does, naming its
 * flag). */
KvevEndpoint *kvev_endpoint_parse (const char *text, GError **error);
void kvev_endpoint_free (KvevEndpoint *endpoint);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (KvevEndpoint, kvev_endpoint_free)

/* Whether binding @endpoint listens on every interface: its host is "*"
 * or a numeric spelling of 0.0.0.0 or :: ("0", "0.0", "[0::0]"...),
 * read as libzmq reads it. */
gboolean kvev_endpoint_is_wildcard (const KvevEndpoint *endpoint);

/* Checks, right before zmq_bind (), what libzmq would otherwise destroy:
 * it unlinks an ipc:// path before binding it.  A path where a process is
 * listening is KVEV_ERROR_TRANSPORT "in use", as tcp:// would be; a path
 * that exists and is not a socket is refused and left untouched.  A
 * socket nobody listens on (left by a publisher that ended) may be
 * replaced.  Every other endpoint passes.  Errors name flag. */
gboolean kvev_endpoint_prepare_bind (const char *flag, const KvevEndpoint *endpoint,
                                     GError **error);

G_END_DECLS

#endif /* KVEVENTS_ENDPOINT_H */
