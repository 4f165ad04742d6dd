/* service.h: a ROUTER socket answered by a thread of its own, one request
 * at a time, and between requests what a pump does: what the replay and
 * snapshot sockets have in common.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEVENTS_SERVICE_H
#define KVEVENTS_SERVICE_H

#include "internal.h"

#include <zmq.h>

G_BEGIN_DECLS

typedef struct _KvevService KvevService;

/* Answers one request on the service's thread.  frames holds its first
 * min (n_frames, max_frames) frames, [identity, ...]; n_frames counts
 * them all, so that a request with too many is seen.  The frames are
 * closed after it returns. */
typedef void (*KvevServeFunc) (KvevService *service, zmq_msg_t *frames, guint n_frames,
                               gpointer data);

/* Work a service does on its thread between requests, which must never
 * wait for a peer: called after each batch of requests read and once the
 * time it last asked for has passed.  Returns how long the thread may
 * then wait for a request before it calls it again, in ms: -1 until a
 * request comes, 0 for at once. */
typedef long (*KvevPumpFunc) (KvevService *service, gpointer data);

/* Starts a thread called name serving socket, which stays the caller's
 * (the net's, net.h) to close once kvev_service_stop() returned: one
 * owner closes every socket of a publisher, in libzmq's order.
 * max_frames is at least 1.  *service is set before the thread starts,
 * so that serve and what it calls may read it from data.  FALSE,
 * *service NULL and error set when the thread or its stop pair cannot be
 * made. */
gboolean kvev_service_start (KvevService **service, const char *name, void *context, void *socket,
                             guint max_frames, KvevServeFunc serve, gpointer data, GError **error);

/* The same, with pump run between requests (see KvevPumpFunc). */
gboolean kvev_service_start_pumped (KvevService **service, const char *name, void *context,
                                    void *socket, guint max_frames, KvevServeFunc serve,
                                    KvevPumpFunc pump, gpointer data, GError **error);

/* Ends the thread, after the request it serves, and frees the service. */
void kvev_service_stop (KvevService *service);

void *kvev_service_socket (KvevService *service);

/* Sends the first frame of an answer, the peer's identity, without
 * waiting: the service's thread never waits for a peer.  Once it went,
 * the frames after it always go.  0; EAGAIN when the peer's pipe is full
 * (ZMQ_ROUTER_MANDATORY says so instead of dropping); another errno when
 * the peer is gone. */
int kvev_service_offer_identity (KvevService *service, const void *identity, gsize len);

/* Waits up to ms milliseconds; FALSE when the service is stopping. */
gboolean kvev_service_wait (KvevService *service, long ms);

G_END_DECLS

#endif /* KVEVENTS_SERVICE_H */
