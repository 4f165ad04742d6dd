/* net.h: all of ZeroMQ a publisher holds: its context, its ZAP handler,
 * and every socket the settings ask for (the live XPUB, replay's ROUTER,
 * the snapshot ROUTER), each hardened and bound.
 *
 * One owner hardens every socket alike, with the same CURVE keys, ZAP
 * domain, accepted-address filter, peer limits and refusal monitor, so
 * that no side socket is an easier way in than the live one, and one
 * owner closes them in the order libzmq needs, before the context.  The
 * xpub (xpub.h) and the services (replay.h, snapshot-server.h) only use
 * the sockets.  A library built --without-zmq has no net: zmq/none.c
 * stands in, and kvev_has_transport() keeps it from ever opening.
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEVENTS_NET_H
#define KVEVENTS_NET_H

#include "config/settings.h"

G_BEGIN_DECLS

typedef struct _KvevNet KvevNet;

/* The sockets of a net; only the live one is always there. */
typedef enum
{
  KVEV_NET_LIVE,      /* XPUB, kv_events_bind_endpoint */
  KVEV_NET_REPLAY,    /* ROUTER, kv_events_replay_endpoint */
  KVEV_NET_SNAPSHOTS, /* ROUTER, kv_events_snapshot_endpoint */
  KVEV_NET_N_SOCKETS,
} KvevNetSocket;

/* Makes the context, starts ZAP when an allow-list is set, and opens,
 * hardens and binds every socket of settings, which must outlive the net.
 * NULL with a KVEV_ERROR_TRANSPORT on failure, with nothing left behind. */
KvevNet *kvev_net_open (const KvevSettings *settings, GError **error);

/* The endpoint which bound, wildcards resolved; NULL when the settings
 * ask for no such socket.  Any thread. */
const char *kvev_net_endpoint (const KvevNet *net, KvevNetSocket which);

/* For the sockets' users: the context, for inproc sockets of their own;
 * the socket which (NULL when there is none), for one thread at a time
 * to use and the net to close; and the PAIR ends of the sockets' refusal
 * monitors (none without an address allow-list), for the one thread that
 * drains them. */
void *kvev_net_context (const KvevNet *net);
void *kvev_net_socket (const KvevNet *net, KvevNetSocket which);
void *const *kvev_net_monitors (const KvevNet *net, guint *n_monitors);

/* The handshakes ZAP refused so far, for their address and for their
 * CURVE client key.  Thread-safe. */
void kvev_net_zap_refusals (const KvevNet *net, guint64 *addresses, guint64 *keys);

/* Closes every socket, the live one letting ZeroMQ deliver what it holds
 * until deadline (a g_get_monotonic_time() value; one past closes at
 * once), then ends ZAP and the context, and frees the net.  Whatever
 * uses a socket must be stopped or freed before. */
void kvev_net_close (KvevNet *net, gint64 deadline);

G_END_DECLS

#endif /* KVEVENTS_NET_H */
