/* endpoint.h: bind endpoints.  What kv_events_bind_endpoint may name,
 * how libzmq reads it when it binds, and what is checked just before the
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

/* Whether libzmq can bind @endpoint: tcp://HOST:PORT, where HOST is "*",
 * a numeric IPv4 address, a numeric IPv6 address in brackets (with an
 * optional %ZONE naming an interface) or the name of a network interface
 * of this machine, and PORT 1 to 65535 or "*"; or ipc://PATH.  Host names
 * are refused: libzmq never resolves them for a bind.  Otherwise FALSE
 * with a KVEV_ERROR_INVALID_VALUE whose message says why and what to
 * write instead, without quoting @endpoint (the caller does, naming its
 * flag). */
gboolean kvev_endpoint_validate (const char *endpoint, GError **error);

/* Whether binding @endpoint listens on every interface: its host is "*"
 * or a numeric spelling of 0.0.0.0 or :: ("0", "0.0", "[0::0]"...),
 * read as libzmq reads it. */
gboolean kvev_endpoint_is_wildcard (const char *endpoint);

/* Checks, right before zmq_bind (), what libzmq would otherwise destroy:
 * it unlinks an ipc:// path before binding it.  A path where a process is
 * listening is KVEV_ERROR_TRANSPORT "in use", as tcp:// would be; a path
 * that exists and is not a socket is refused and left untouched.  A
 * socket nobody listens on (left by a publisher that ended) may be
 * replaced.  Every other endpoint passes.  Errors name flag. */
gboolean kvev_endpoint_prepare_bind (const char *flag, const char *endpoint, GError **error);

G_END_DECLS

#endif /* KVEVENTS_ENDPOINT_H */
