/* queue.c: a drop-oldest wrapper around GAsyncQueue.
 *
 * Every count that must agree with the queue's contents (depth, event ids,
 * drops, reserved sequence numbers) changes under the GAsyncQueue's own
 * lock, so no drop can go unreported and ids leave in the order they were
 * given.  The depth is ours: g_async_queue_length() subtracts waiting
 * threads, which makes it useless for a capacity check.
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#include "queue.h"

struct _KvevQueue
{
  GAsyncQueue *queue;
  guint32 capacity;
  gboolean stopped;
  /* A test seam: while held, the consumer takes nothing. */
  gint held;
  GMutex hold_lock;
  GCond hold_cond;
  /* The consumer never sleeps inside the GAsyncQueue, where every push
   * would signal it (a futex call, under the lock, per event): it sleeps
   * on a doorbell that one producer rings once per sleep, after
   * unlocking. */
  gboolean consumer_sleeping; /* under the queue lock */
  GMutex bell_lock;
  GCond bell_cond;
  gboolean rung;              /* under bell_lock */
  /* Written under the lock, read by anyone through kvev_counter_get(). */
  guint64 depth;
  guint64 high_water;
  guint64 last_event_id;
  guint64 enqueued;
  guint64 dropped;
  guint64 reserved_gaps;
};

/* The consumer's wake-up call; never freed, never counted. */
static KvevEvent stop_marker;

KvevQueue *
kvev_queue_new (guint32 capacity)
{
  KvevQueue *queue = g_new0 (KvevQueue, 1);

  queue->queue = g_async_queue_new ();
  queue->capacity = capacity;
  g_mutex_init (&queue->hold_lock);
  g_cond_init (&queue->hold_cond);
  g_mutex_init (&queue->bell_lock);
  g_cond_init (&queue->bell_cond);
  return queue;
}

void
kvev_queue_free (KvevQueue *queue)
{
  gpointer item;

  if (queue == NULL)
    return;
  while ((item = g_async_queue_try_pop (queue->queue)) != NULL)
    if (item != &stop_marker)
      g_free (item);
  g_async_queue_unref (queue->queue);
  g_mutex_clear (&queue->hold_lock);
  g_cond_clear (&queue->hold_cond);
  g_mutex_clear (&queue->bell_lock);
  g_cond_clear (&queue->bell_cond);
  g_free (queue);
}

static void
ring_bell (KvevQueue *queue)
{
  g_mutex_lock (&queue->bell_lock);
  queue->rung = TRUE;
  g_cond_signal (&queue->bell_cond);
  g_mutex_unlock (&queue->bell_lock);
}

static void
wait_bell (KvevQueue *queue)
{
  g_mutex_lock (&queue->bell_lock);
  while (!queue->rung)
    g_cond_wait (&queue->bell_cond, &queue->bell_lock);
  queue->rung = FALSE;
  g_mutex_unlock (&queue->bell_lock);
}

/* Caller holds the lock. */
static void
drop_oldest_locked (KvevQueue *queue)
{
  KvevEvent *oldest = g_async_queue_try_pop_unlocked (queue->queue);

  /* depth > 0 guarantees an item, and the stop marker is only ever last,
   * after which nothing is pushed. */
  g_assert (oldest != NULL && oldest != &stop_marker);
  g_free (oldest);
  kvev_counter_set (&queue->depth, queue->depth - 1);
  kvev_counter_set (&queue->dropped, queue->dropped + 1);
  queue->reserved_gaps++;
}

void
kvev_queue_push (KvevQueue *queue, KvevEvent **events, guint n)
{
  guint64 id, depth;
  gboolean wake;
  guint i;

  g_async_queue_lock (queue->queue);
  if (G_UNLIKELY (queue->stopped))
    {
      /* A publish racing with kvev_publisher_free() is a caller error;
       * the marker must stay last, so the events go nowhere. */
      g_async_queue_unlock (queue->queue);
      for (i = 0; i < n; i++)
        g_free (events[i]);
      return;
    }
  id = queue->last_event_id;
  depth = queue->depth;
  for (i = 0; i < n; i++)
    {
      if (queue->capacity != 0 && depth >= queue->capacity)
        {
          drop_oldest_locked (queue);
          depth--;
        }
      events[i]->event_id = ++id;
      g_async_queue_push_unlocked (queue->queue, events[i]);
      depth++;
    }
  kvev_counter_set (&queue->last_event_id, id);
  kvev_counter_set (&queue->enqueued, queue->enqueued + n);
  kvev_counter_set (&queue->depth, depth);
  if (depth > queue->high_water)
    kvev_counter_set (&queue->high_water, depth);
  wake = queue->consumer_sleeping;
  queue->consumer_sleeping = FALSE;
  g_async_queue_unlock (queue->queue);
  if (wake)
    ring_bell (queue);
}

static void
wait_while_held (KvevQueue *queue)
{
  g_mutex_lock (&queue->hold_lock);
  while (g_atomic_int_get (&queue->held))
    g_cond_wait (&queue->hold_cond, &queue->hold_lock);
  g_mutex_unlock (&queue->hold_lock);
}

guint
kvev_queue_pop (KvevQueue *queue, KvevEvent **events, guint max,
                guint64 *reserved_gaps)
{
  KvevEvent *event;
  guint n = 0;

  g_return_val_if_fail (max > 0, 0);

  for (;;)
    {
      if (G_UNLIKELY (g_atomic_int_get (&queue->held)))
        wait_while_held (queue);
      g_async_queue_lock (queue->queue);
      event = g_async_queue_try_pop_unlocked (queue->queue);
      if (event != NULL
          && (G_LIKELY (!g_atomic_int_get (&queue->held)) || event == &stop_marker))
        break;
      if (event != NULL)
        {
          g_async_queue_push_front_unlocked (queue->queue, event);
          g_async_queue_unlock (queue->queue);
          continue;
        }
      queue->consumer_sleeping = TRUE;
      g_async_queue_unlock (queue->queue);
      wait_bell (queue);
    }
  while (event != &stop_marker)
    {
      events[n++] = event;
      if (n == max)
        break;
      event = g_async_queue_try_pop_unlocked (queue->queue);
      if (event == NULL)
        break;
    }
  /* The marker stays, so every later call returns 0 at once. */
  if (event == &stop_marker)
    g_async_queue_push_front_unlocked (queue->queue, &stop_marker);
  kvev_counter_set (&queue->depth, queue->depth - n);
  *reserved_gaps = queue->reserved_gaps;
  queue->reserved_gaps = 0;
  g_async_queue_unlock (queue->queue);
  return n;
}

void
kvev_queue_hold (KvevQueue *queue, gboolean hold)
{
  g_mutex_lock (&queue->hold_lock);
  g_atomic_int_set (&queue->held, hold ? 1 : 0);
  g_cond_broadcast (&queue->hold_cond);
  g_mutex_unlock (&queue->hold_lock);
  if (!hold)
    ring_bell (queue);
}

void
kvev_queue_stop (KvevQueue *queue)
{
  kvev_queue_hold (queue, FALSE);
  g_async_queue_lock (queue->queue);
  if (!queue->stopped)
    {
      queue->stopped = TRUE;
      g_async_queue_push_unlocked (queue->queue, &stop_marker);
    }
  g_async_queue_unlock (queue->queue);
  ring_bell (queue);
}

guint64
kvev_queue_discard (KvevQueue *queue)
{
  guint64 discarded = 0;

  g_async_queue_lock (queue->queue);
  while (queue->depth > 0)
    {
      drop_oldest_locked (queue);
      discarded++;
    }
  g_async_queue_unlock (queue->queue);
  return discarded;
}

guint64
kvev_queue_last_event_id (const KvevQueue *queue)
{
  return kvev_counter_get (&queue->last_event_id);
}

guint64
kvev_queue_enqueued (const KvevQueue *queue)
{
  return kvev_counter_get (&queue->enqueued);
}

guint64
kvev_queue_dropped (const KvevQueue *queue)
{
  return kvev_counter_get (&queue->dropped);
}

guint64
kvev_queue_depth (const KvevQueue *queue)
{
  return kvev_counter_get (&queue->depth);
}

guint64
kvev_queue_high_water (const KvevQueue *queue)
{
  return kvev_counter_get (&queue->high_water);
}
