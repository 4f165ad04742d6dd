/* transport.h: what the publisher needs from a transport.  transport-zmq.c
 * is the ZeroMQ one; transport-none.c stands in when the library is built
 * --without-zmq, where kvev_has_transport() keeps it from ever starting.
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEVENTS_TRANSPORT_H
#define KVEVENTS_TRANSPORT_H

#include "kvevents-private.h"

G_BEGIN_DECLS

typedef struct _KvevTransport KvevTransport;

/* Binds the socket and starts the worker that drains publisher->queue.
 * On failure everything is released and a KVEV_ERROR_TRANSPORT set.
 * *endpoint receives the endpoint actually bound (g_free). */
KvevTransport *kvev_transport_start (KvevPublisher *publisher,
                                     char **endpoint, GError **error);

/* Stops the worker once the queue's stop marker is reached, then closes
 * the socket, letting ZeroMQ deliver what it holds until deadline (a
 * g_get_monotonic_time() value), and frees the transport. */
void kvev_transport_stop (KvevTransport *transport, gint64 deadline);

G_END_DECLS

#endif /* KVEVENTS_TRANSPORT_H */
