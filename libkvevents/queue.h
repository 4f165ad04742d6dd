/* queue.h: the bounded drop-oldest event queue.
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEVENTS_QUEUE_H
#define KVEVENTS_QUEUE_H

#include "event.h"

G_BEGIN_DECLS

typedef struct _KvevQueue KvevQueue;

/* What the consumer is doing, for tests. */
typedef enum
{
  KVEV_CONSUMER_RUNNING,
  KVEV_CONSUMER_NAPPING,  /* pushes do not wake it */
  KVEV_CONSUMER_SLEEPING, /* the next push wakes it */
} KvevConsumerState;

/* capacity 0 means unbounded. */
KvevQueue *kvev_queue_new (guint32 capacity);
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
 * the caller's, and so is freeing the calls.  Returns how many calls, at
 * most max_events.
 * Finding the queue empty, it first naps up to nap_us (0: not at all)
 * while producers push without waking it (kvev_queue_wake() ends the nap
 * early), and only then sleeps until a push or kvev_queue_stop() wakes
 * it.
 * *reserved_gaps receives the sequence numbers reserved by drops since the
 * previous pop: the next message must skip that many.  Returns 0 once
 * kvev_queue_stop() was called and every event before it was taken. */
guint kvev_queue_pop (KvevQueue *queue, KvevCall **calls, guint max_events,
                      gint64 nap_us, guint64 *reserved_gaps);

/* Ends the consumer's nap now, for a caller that waits for the queue to
 * drain. */
void kvev_queue_wake (KvevQueue *queue);

/* A seam for tests and the benchmark: while held, kvev_queue_pop() takes
 * nothing, so producers can be measured alone or a batch built up.
 * kvev_queue_stop() releases the hold. */
void kvev_queue_hold (KvevQueue *queue, gboolean hold);

/* Wakes the consumer for good once the events queued so far are taken. */
void kvev_queue_stop (KvevQueue *queue);

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
/* How many pushes had to wake the sleeping consumer. */
guint64 kvev_queue_rings (const KvevQueue *queue);
KvevConsumerState kvev_queue_consumer_state (const KvevQueue *queue);

/* Counters read by statistics while other threads write them: relaxed
 * atomics, so a reader never sees a torn 64-bit value.  Writers that hold
 * a lock use the store form, which costs no locked instruction. */
#define kvev_counter_get(ptr) __atomic_load_n ((ptr), __ATOMIC_RELAXED)
#define kvev_counter_set(ptr, value) __atomic_store_n ((ptr), (value), __ATOMIC_RELAXED)
#define kvev_counter_add(ptr, n) ((void) __atomic_fetch_add ((ptr), (n), __ATOMIC_RELAXED))
/* For a counter that a reader takes before kvev_queue_counts(): the
 * release store and the acquire load keep the snapshot from missing a
 * pop whose events the counter already has. */
#define kvev_counter_set_release(ptr, value) __atomic_store_n ((ptr), (value), __ATOMIC_RELEASE)
#define kvev_counter_get_acquire(ptr) __atomic_load_n ((ptr), __ATOMIC_ACQUIRE)

G_END_DECLS

#endif /* KVEVENTS_QUEUE_H */
