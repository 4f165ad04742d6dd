/* queue.h: the bounded drop-oldest event queue.
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEVENTS_QUEUE_H
#define KVEVENTS_QUEUE_H

#include "call.h"
#include "counter.h"

G_BEGIN_DECLS

typedef struct _KvevQueue KvevQueue;

/* What the consumer is doing: whether a push must ring it. */
typedef enum
{
  KVEV_CONSUMER_RUNNING,
  KVEV_CONSUMER_NAPPING,  /* pushes do not wake it */
  KVEV_CONSUMER_SLEEPING, /* the next push wakes it */
} KvevConsumerState;

/* capacity 0 means unbounded.  NULL with a KVEV_ERROR_TRANSPORT when the
 * consumer's doorbell cannot be made (no descriptor left). */
KvevQueue *kvev_queue_new (guint32 capacity, GError **error);
/* Frees the queue and every event still in it. */
void kvev_queue_free (KvevQueue *queue);

/* Accepts a call's events as one unit: each gets the next event_id, in
 * order, and they are queued without another call's events between them.
 * When the queue is full the oldest events are dropped (freed, counted)
 * and one transport sequence number is reserved per dropped event.  Takes
 * ownership of the call.  Never blocks on anything but the lock. */
void kvev_queue_push (KvevQueue *queue, KvevCall *call);

/* Waits for at least one event, then takes whole calls in queue order
 * while their events still fit in max_events; the first call is taken
 * even when it does not fit.  A call's events from call->dropped on are
 * the caller's, and so is freeing the calls.  *n_calls receives how many
 * calls, at most max_events.
 * Finding the queue empty, it first naps up to nap_us (0: not at all)
 * while producers push without waking it (kvev_queue_wake() ends the nap
 * early), and only then sleeps until a push or kvev_queue_stop() wakes
 * it, or until the sleep function (kvev_queue_set_sleep()) says the
 * consumer has something else to do: then it returns with no call.
 * *reserved_gaps receives the sequence numbers reserved by drops since the
 * previous pop: the next message must skip that many.  Returns FALSE once
 * kvev_queue_stop() was called and every event before it was taken. */
gboolean kvev_queue_pop (KvevQueue *queue, KvevCall **calls, guint max_events, gint64 nap_us,
                         guint *n_calls, guint64 *reserved_gaps);

/* Ends the consumer's nap now, for a caller that waits for the queue to
 * drain. */
void kvev_queue_wake (KvevQueue *queue);

/* How the consumer sleeps in kvev_queue_pop(): until bell_fd is readable,
 * or until end_time (a g_get_monotonic_time() value; 0: no limit, the
 * sleep proper; otherwise a nap).  It may return earlier, for its own
 * reasons: FALSE, and the pop looks again and sleeps again; TRUE, from a
 * sleep proper, and the pop returns with no call.  The default is
 * kvev_queue_wait_fd().  Set before the consumer starts. */
typedef gboolean (*KvevQueueSleep) (gpointer data, int bell_fd, gint64 end_time);
void kvev_queue_set_sleep (KvevQueue *queue, KvevQueueSleep sleep, gpointer data);
void kvev_queue_wait_fd (int fd, gint64 end_time);

/* Wakes the consumer for good once the events queued so far are taken. */
void kvev_queue_stop (KvevQueue *queue);

/* Whether kvev_queue_stop() was called. */
gboolean kvev_queue_stopped (KvevQueue *queue);

/* Drops every queued event, counted as dropped like a full queue's drops
 * (with their reserved sequence numbers).  Returns how many. */
guint64 kvev_queue_discard (KvevQueue *queue);

/* Counters, readable from any thread without the lock. */
guint64 kvev_queue_last_event_id (const KvevQueue *queue);
guint64 kvev_queue_enqueued (const KvevQueue *queue);
guint64 kvev_queue_dropped (const KvevQueue *queue);
guint64 kvev_queue_depth (const KvevQueue *queue);
guint64 kvev_queue_high_water (const KvevQueue *queue);
/* enqueued, dropped, depth and high water at one moment, under the
 * queue's lock: what a push or a pop changes together stays together. */
typedef struct
{
  guint64 enqueued;
  guint64 dropped;
  guint64 depth;
  guint64 high_water;
} KvevQueueCounts;
void kvev_queue_counts (const KvevQueue *queue, KvevQueueCounts *counts);
#ifdef KVEV_TESTING
/* Seams of the testing build, for the tests and the benchmark.  While
 * held, kvev_queue_pop() takes nothing, so producers can be measured
 * alone or a batch built up; kvev_queue_stop() releases the hold. */
void kvev_queue_hold (KvevQueue *queue, gboolean hold);
/* How many pushes had to wake the sleeping consumer. */
guint64 kvev_queue_rings (const KvevQueue *queue);
KvevConsumerState kvev_queue_consumer_state (const KvevQueue *queue);
#endif

G_END_DECLS

#endif /* KVEVENTS_QUEUE_H */
