/* xpub.h: the live stream's end of the net's XPUB socket: each message
 * out, waiting for a full pipe as long as kv_events_send_wait_ms allows
 * (send-budget.h), and what comes back: the subscriptions, and the
 * refusals the net's monitors report, which are drained with them.
 *
 * The net (net.h) opens, hardens and closes the socket; this only uses
 * it.  One thread, the worker, sends, waits and takes in, from creation
 * to free; the counts and kvev_xpub_wait_subscriptions() are for any
 * thread.
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEVENTS_XPUB_H
#define KVEVENTS_XPUB_H

#include "net.h"

G_BEGIN_DECLS

/* libzmq's message (zmq.h), named without its header, which a library
 * built --without-zmq does not have and whose front door still includes
 * this one. */
struct zmq_msg_t;

typedef struct _KvevXpub KvevXpub;

/* What the xpub knows of its peers. */
typedef struct
{
  /* Subscriptions that can match a message (prefixes of the topic),
   * present now: subscribe messages less unsubscribe messages, a peer
   * that leaves counting as unsubscribing. */
  guint64 subscriptions;
  /* Every subscribe and unsubscribe message seen, matching or not. */
  guint64 subscribe_messages;
  guint64 unsubscribe_messages;
  /* Connections refused for their address, on any of the sockets:
   * closed at accept, or refused by the ZAP handler. */
  guint64 refused_addresses;
  /* CURVE handshakes refused for a client key not allowed. */
  guint64 refused_keys;
} KvevPeerCounts;

/* Whether the stream is stopping: a send waiting for room then gives up.
 * Asked on the worker's thread, only while it waits. */
typedef gboolean (*KvevXpubStopping) (gpointer data);

/* Sends on net's live socket, with the topic and wait budget of
 * settings; settings, net and stopping_data must outlive it. */
KvevXpub *kvev_xpub_new (const KvevSettings *settings, const KvevNet *net,
                         KvevXpubStopping stopping, gpointer stopping_data);

typedef enum
{
  KVEV_SEND_DELIVERED, /* into every subscriber's pipe */
  /* A full pipe refused it past kv_events_send_wait_ms: ZeroMQ dropped
   * it for that subscriber, the others have it. */
  KVEV_SEND_REFUSED,
  /* Lost: only a socket or context that is gone does this. */
  KVEV_SEND_FAILED,
} KvevSendResult;

/* Sends one message: the topic, the big-endian sequence, then payload,
 * which it takes (a malloc() buffer, freed with free()).  While a
 * subscriber's pipe is full it waits for room as send-budget.h says, and
 * gives up once stopping says so.  Unless the message was lost
 * (KVEV_SEND_FAILED), a kept that is not NULL then holds a copy of it
 * that shares its payload, for replay to keep (replay.h); a lost one
 * leaves kept with nothing to close. */
KvevSendResult kvev_xpub_send (KvevXpub *xpub, guint64 sequence, char *payload, gsize payload_len,
                               struct zmq_msg_t *kept);

/* Sleeps until bell_fd is readable, a peer sent something, or end_time
 * (a g_get_monotonic_time() value; -1: no limit), and takes in what the
 * peers sent.  Returns how many subscriptions that can match were taken
 * in since the last kvev_xpub_wait() or kvev_xpub_take_in(), a waiting
 * send's among them: a heartbeat tells their subscribers the current
 * sequence. */
guint kvev_xpub_wait (KvevXpub *xpub, int bell_fd, gint64 end_time);

/* Takes in what the peers sent without waiting, for a worker too busy to
 * sleep: at most once a millisecond does anything.  Returns as
 * kvev_xpub_wait() does. */
guint kvev_xpub_take_in (KvevXpub *xpub);

/* Thread-safe. */
void kvev_xpub_counts (const KvevXpub *xpub, KvevPeerCounts *counts);

/* Waits until at least n subscriptions are present, or until deadline (a
 * g_get_monotonic_time() value; -1: no limit).  Thread-safe; the worker
 * takes the subscriptions in, so this never waits on an event call. */
gboolean kvev_xpub_wait_subscriptions (KvevXpub *xpub, guint64 n, gint64 deadline);

/* Once the worker is done with it; the socket stays the net's. */
void kvev_xpub_free (KvevXpub *xpub);

G_END_DECLS

#endif /* KVEVENTS_XPUB_H */
