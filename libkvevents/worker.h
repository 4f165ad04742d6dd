/* worker.h: the publisher's thread.  It takes calls from the queue,
 * batches their events into messages, numbers them, sends them on the
 * xpub and hands each one sent to replay.  The publisher lends it both:
 * while it runs, no other thread sends, waits or takes in on the xpub,
 * or keeps a message for replay.
 * Not installed.  Built only with ZeroMQ (worker-none.c stands in
 * otherwise).
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEVENTS_WORKER_H
#define KVEVENTS_WORKER_H

#include "events/queue.h"
#include "config/settings.h"
#include "zmq/replay.h"
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
  guint64 heartbeats;           /* empty messages, when nothing else went for a while */
  guint64 hwm_dropped_messages; /* KVEV_SEND_REFUSED */
  guint64 hwm_dropped_events;
} KvevWorkerCounts;

/* Starts the thread that drains queue into xpub, keeping every message
 * it sends in replay (NULL: no replay).  All four must outlive the
 * worker.  NULL with a KVEV_ERROR_TRANSPORT when the thread cannot
 * start. */
KvevWorker *kvev_worker_start (const KvevSettings *settings, KvevQueue *queue, KvevXpub *xpub,
                               KvevReplay *replay, GError **error);

/* Waits until every event up to event_id has left (sent or dropped), or
 * until deadline (a g_get_monotonic_time() value; -1: no limit).
 * Thread-safe. */
gboolean kvev_worker_wait_retired (KvevWorker *worker, guint64 event_id, gint64 deadline);

/* Thread-safe.  published_events and send_failed_events are read with
 * acquire loads: take them before kvev_queue_counts(), and the queue's
 * figures cover every event they count. */
void kvev_worker_counts (const KvevWorker *worker, KvevWorkerCounts *counts);

/* Once kvev_queue_stop() was called: joins the thread and frees the
 * worker, giving the xpub and replay back. */
void kvev_worker_stop (KvevWorker *worker);

G_END_DECLS

#endif /* KVEVENTS_WORKER_H */
