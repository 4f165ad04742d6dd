/* xpub.h: the socket subscribers connect to, ZeroMQ's XPUB.  A library
 * built --without-zmq has none: worker-none.c stands in for the worker,
 * and kvev_has_transport() keeps it from ever starting.
 *
 * One thread, the worker, uses a transport from creation to free; only
 * the counts and kvev_transport_wait_subscriptions() are for any thread.
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEVENTS_XPUB_H
#define KVEVENTS_XPUB_H

#include "events/queue.h"
#include "config/settings.h"
#include "events/snapshot-source.h"

G_BEGIN_DECLS

typedef struct _KvevTransport KvevTransport;

/* What the transport knows of its peers. */
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

/* What replay did (replay.c). */
typedef struct
{
  guint64 requests;           /* answered, from the first message asked for */
  guint64 malformed_requests; /* not [identity, "", 8-byte sequence]: counted, unanswered */
  guint64 refused_requests;   /* unanswered: too many queued, or a stalled peer's */
  guint64 abandoned_replies;  /* cut short: the peer read nothing for 5 s */
  guint64 messages;           /* replayed, end markers aside */
  guint64 held_bytes;         /* payloads of replies that libzmq holds now */
  guint64 buffered_messages;  /* in the buffer now, heartbeat runs included */
  guint64 buffered_bytes;     /* their payloads, heartbeat runs aside */
} KvevReplayCounts;

/* What the snapshot server did (snapshot-server.c). */
typedef struct
{
  guint64 requests;
  guint64 refused; /* no snapshot function, or a request of another shape */
  guint64 failed;  /* the walk failed, or the subscriber went away */
  guint64 objects; /* sent */
} KvevSnapshotCounts;

/* Opens the socket with the options, CURVE keys and ZAP policy of
 * settings (which must outlive the transport) and binds it, and the
 * replay and snapshot sockets the settings ask for; snapshots take their
 * barrier from queue and walk source (both must outlive it too).  NULL
 * with a KVEV_ERROR_TRANSPORT on failure, with nothing left behind. */
KvevTransport *kvev_transport_new (const KvevSettings *settings, KvevQueue *queue,
                                   KvevSnapshotSource *source, GError **error);

/* The endpoint actually bound, wildcards resolved. */
const char *kvev_transport_get_endpoint (const KvevTransport *transport);

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
 * which the transport takes (a malloc() buffer, freed with free());
 * heartbeat says it holds no event (kvevents(7), HEARTBEATS).
 * While a subscriber's pipe is full it waits for room as send-budget.h says,
 * and gives up once the queue is stopped. */
KvevSendResult kvev_transport_send (KvevTransport *transport, guint64 sequence, char *payload,
                                    gsize payload_len, gboolean heartbeat);

/* Sleeps until bell_fd is readable, a peer sent something, or end_time
 * (a g_get_monotonic_time() value; -1: no limit), and takes in what the
 * peers sent. */
void kvev_transport_wait (KvevTransport *transport, int bell_fd, gint64 end_time);

/* How many subscriptions that can match were taken in since the last
 * call: a heartbeat tells their subscribers the current sequence. */
guint kvev_transport_take_new_subscriptions (KvevTransport *transport);

/* Takes in what the peers sent without waiting, for a worker too busy to
 * sleep: at most once a millisecond does anything. */
void kvev_transport_take_in (KvevTransport *transport);

/* Thread-safe. */
void kvev_transport_counts (const KvevTransport *transport, KvevPeerCounts *counts);

/* The replay socket's endpoint as bound, or NULL without replay. */
const char *kvev_transport_get_replay_endpoint (const KvevTransport *transport);

/* Thread-safe; all 0 without replay. */
void kvev_transport_replay_counts (const KvevTransport *transport, KvevReplayCounts *counts);

/* As for replay. */
const char *kvev_transport_get_snapshot_endpoint (const KvevTransport *transport);
void kvev_transport_snapshot_counts (const KvevTransport *transport, KvevSnapshotCounts *counts);

/* Waits until at least n subscriptions are present, or until deadline (a
 * g_get_monotonic_time() value; -1: no limit).  Thread-safe; the worker
 * takes the subscriptions in, so this never waits on an event call. */
gboolean kvev_transport_wait_subscriptions (KvevTransport *transport, guint64 n,
                                            gint64 deadline);

/* Closes the socket, letting ZeroMQ deliver what it holds for at most
 * linger_ms, and frees the transport. */
void kvev_transport_free (KvevTransport *transport, int linger_ms);

G_END_DECLS

#endif /* KVEVENTS_XPUB_H */
