/* worker.h: the publisher's thread.  It takes calls from the queue,
 * batches their events into messages, numbers the messages and hands
 * them to the transport, which it owns; nothing else touches either.
 * Not installed.  Built only with the transport (worker-none.c stands
 * in otherwise).
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEVENTS_WORKER_H
#define KVEVENTS_WORKER_H

#include "events/queue.h"
#include "config/settings.h"
#include "zmq/xpub.h"

G_BEGIN_DECLS

typedef struct _KvevWorker KvevWorker;

/* What the worker did, for the statistics. */
typedef struct
{
  guint64 published_events;
  guint64 published_batches;
  guint64 send_failures;
  guint64 send_failed_events;
  guint64 last_sequence;
  guint64 heartbeats; /* empty messages, when nothing else went for a while */
  guint64 hwm_dropped_messages; /* KVEV_SEND_REFUSED */
  guint64 hwm_dropped_events;
} KvevWorkerCounts;

/* Binds the transport of settings and starts the thread that drains
 * queue; snapshots answer from the snapshots source.  All three must
 * outlive the worker.  NULL with a KVEV_ERROR_TRANSPORT
 * when the socket cannot be bound or the thread cannot start. */
KvevWorker *kvev_worker_start (const KvevSettings *settings, KvevQueue *queue,
                               KvevSnapshotSource *snapshots, GError **error);

const char *kvev_worker_get_endpoint (const KvevWorker *worker);
const char *kvev_worker_get_replay_endpoint (const KvevWorker *worker);
void kvev_worker_replay_counts (const KvevWorker *worker, KvevReplayCounts *counts);
const char *kvev_worker_get_snapshot_endpoint (const KvevWorker *worker);
void kvev_worker_snapshot_counts (const KvevWorker *worker, KvevSnapshotCounts *counts);

/* Waits until every event up to event_id has left (sent or dropped), or
 * until deadline (a g_get_monotonic_time() value; -1: no limit).
 * Thread-safe. */
gboolean kvev_worker_wait_retired (KvevWorker *worker, guint64 event_id, gint64 deadline);

/* Thread-safe.  published_events and send_failed_events are read with
 * acquire loads: take them before kvev_queue_counts(), and the queue's
 * figures cover every event they count. */
void kvev_worker_counts (const KvevWorker *worker, KvevWorkerCounts *counts);
void kvev_worker_peer_counts (const KvevWorker *worker, KvevPeerCounts *counts);
gboolean kvev_worker_wait_subscriptions (KvevWorker *worker, guint64 n, gint64 deadline);

/* Once kvev_queue_stop() was called: joins the thread, then closes the
 * socket, letting ZeroMQ deliver what it holds until deadline (a
 * g_get_monotonic_time() value), and frees the worker. */
void kvev_worker_stop (KvevWorker *worker, gint64 deadline);

G_END_DECLS

#endif /* KVEVENTS_WORKER_H */
