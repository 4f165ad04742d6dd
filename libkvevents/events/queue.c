/* queue.c: a drop-oldest wrapper around GAsyncQueue.
 *
 * The GAsyncQueue holds calls (one item per publish call, with all of its
 * events); capacity, depth and drops count events.  A full queue drops
 * single events, the oldest first, so the oldest call may be left with
 * only its later events.
 *
 * Every count that must agree with the queue's contents (depth, event ids,
 * drops, reserved sequence numbers) changes under the GAsyncQueue's own
 * lock, so no drop can go unreported and ids leave in the order they were
 * given.  The depth is ours: g_async_queue_length() subtracts waiting
 * threads and counts calls, which makes it useless for a capacity check.
 *
 * SPDX-License-Identifier: Apache-2.0
 */
/* ppoll() */
#define _GNU_SOURCE 1

#include "queue.h"

#include <errno.h>
#include <poll.h>
#include <time.h>
#include <sys/eventfd.h>
#include <unistd.h>

struct _KvevQueue
{
  GAsyncQueue *queue;
  guint32 capacity;
  gboolean stopped;
#ifdef KVEV_TESTING
  /* While held, the consumer takes nothing. */
  gint held;
  GMutex hold_lock;
  GCond hold_cond;
#endif
  /* The consumer never sleeps inside the GAsyncQueue, where every push
   * would signal it (a futex call, under the lock, per event): it sleeps
   * on a doorbell that one producer rings once per sleep, after
   * unlocking.  Before it asks to be rung it naps: see kvev_queue_pop().
   * The bell is a descriptor, so that the consumer can wait for it and
   * for its socket at once. */
  gint locked;                /* a hint for queue_lock(), never a guard */
  KvevConsumerState consumer; /* under the queue lock */
  guint64 rings;              /* under the queue lock */
  int bell_fd;                /* an eventfd */
  KvevQueueSleep sleep;
  gpointer sleep_data;
  /* Written under the lock, read by anyone through kvev_counter_get(). */
  guint64 depth;
  guint64 high_water;
  guint64 last_event_id;
  guint64 enqueued;
  guint64 dropped;
  guint64 reserved_gaps;
};

/* How long queue_lock() waits out a holder before it sleeps: a few
 * microseconds, more than the longest hold (a batch of list operations). */
#define LOCK_SPINS 256

static inline void
spin_pause (void)
{
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause ();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

/* GMutex sleeps in the kernel at the first sign of contention, and the
 * producers and the consumer take this lock for a handful of list
 * operations each: waiting a holder out costs far less than a futex sleep
 * for the waiter plus a futex wake for the holder, and under load that
 * contention was most of a publish call's cost. */
static void
queue_lock (KvevQueue *queue)
{
  guint spins;

  for (spins = 0; spins < LOCK_SPINS && __atomic_load_n (&queue->locked, __ATOMIC_RELAXED); spins++)
    spin_pause ();
  g_async_queue_lock (queue->queue);
  __atomic_store_n (&queue->locked, 1, __ATOMIC_RELAXED);
}

static void
queue_unlock (KvevQueue *queue)
{
  __atomic_store_n (&queue->locked, 0, __ATOMIC_RELAXED);
  g_async_queue_unlock (queue->queue);
}

/* The consumer's wake-up call; never freed, never counted. */
static KvevCall stop_marker;

KvevQueue *
kvev_queue_new (guint32 capacity, GError **error)
{
  KvevQueue *queue;
  int bell_fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);

  if (bell_fd < 0)
    {
      int saved = errno;

      g_set_error (error, KVEV_ERROR, KVEV_ERROR_TRANSPORT,
                   _ ("Cannot make the publisher thread's doorbell: %s"), g_strerror (saved));
      return NULL;
    }
  queue = g_new0 (KvevQueue, 1);
  queue->queue = g_async_queue_new ();
  queue->capacity = capacity;
  queue->bell_fd = bell_fd;
#ifdef KVEV_TESTING
  g_mutex_init (&queue->hold_lock);
  g_cond_init (&queue->hold_cond);
#endif
  return queue;
}

void
kvev_queue_set_sleep (KvevQueue *queue, KvevQueueSleep sleep, gpointer data)
{
  queue->sleep = sleep;
  queue->sleep_data = data;
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
#ifdef KVEV_TESTING
  g_mutex_clear (&queue->hold_lock);
  g_cond_clear (&queue->hold_cond);
#endif
  close (queue->bell_fd);
  g_free (queue);
}

static void
ring_bell (KvevQueue *queue)
{
  guint64 one = 1;

  /* Only a counter about to overflow refuses a write, and a bell rung
   * that often is rung already. */
  while (write (queue->bell_fd, &one, sizeof one) < 0 && errno == EINTR)
    ;
}

void
kvev_queue_wait_fd (int fd, gint64 end_time)
{
  struct pollfd item = { fd, POLLIN, 0 };
  struct timespec timeout;

  if (end_time == 0)
    {
      ppoll (&item, 1, NULL, NULL);
      return;
    }
  end_time -= g_get_monotonic_time ();
  if (end_time <= 0)
    return;
  /* To the microsecond: a nap is tens of them. */
  timeout.tv_sec = (time_t) (end_time / G_USEC_PER_SEC);
  timeout.tv_nsec = (long) (end_time % G_USEC_PER_SEC) * 1000;
  ppoll (&item, 1, &timeout, NULL);
}

/* Until rung, or, when end_time is not 0, until that monotonic time; a
 * sleep function the consumer set may also return early, and TRUE when
 * the consumer has something else to do. */
static gboolean
wait_bell (KvevQueue *queue, gint64 end_time)
{
  gboolean leave = FALSE;
  guint64 count;

  if (queue->sleep != NULL)
    leave = queue->sleep (queue->sleep_data, queue->bell_fd, end_time);
  else
    kvev_queue_wait_fd (queue->bell_fd, end_time);
  /* Silences the bell for the next sleep; a ring that comes after this
   * read wakes that one, which is what it is for. */
  while (read (queue->bell_fd, &count, sizeof count) < 0 && errno == EINTR)
    ;
  return leave;
}

static guint
remaining_events (const KvevCall *call)
{
  return (guint) call->n_events - call->dropped;
}

/* Drops up to max of the oldest queued events, all of them from the oldest
 * call; returns how many.  Caller holds the lock and knows depth > 0. */
static guint
drop_oldest_locked (KvevQueue *queue, guint64 max)
{
  KvevCall *oldest = g_async_queue_try_pop_unlocked (queue->queue);
  guint n;

  /* depth > 0 guarantees an item, and the stop marker is only ever last,
   * after which nothing is pushed. */
  g_assert (oldest != NULL && oldest != &stop_marker);
  n = remaining_events (oldest);
  if (n > max)
    {
      n = (guint) max;
      oldest->dropped += n;
      g_async_queue_push_front_unlocked (queue->queue, oldest);
    }
  else
    {
      g_free (oldest);
    }
  kvev_counter_set (&queue->depth, queue->depth - n);
  kvev_counter_set (&queue->dropped, queue->dropped + n);
  queue->reserved_gaps += n;
  return n;
}

void
kvev_queue_push (KvevQueue *queue, KvevCall *call)
{
  guint n = call->n_events;
  guint64 depth;
  gboolean wake;

  queue_lock (queue);
  if (G_UNLIKELY (queue->stopped))
    {
      /* A publish racing with kvev_publisher_free() is a caller error;
       * the marker must stay last, so the events go nowhere. */
      queue_unlock (queue);
      g_free (call);
      return;
    }
  call->first_event_id = queue->last_event_id + 1;
  kvev_counter_set (&queue->last_event_id, queue->last_event_id + n);
  kvev_counter_set (&queue->enqueued, queue->enqueued + n);
  if (queue->capacity != 0)
    {
      while (queue->depth > 0 && queue->depth + n > queue->capacity)
        drop_oldest_locked (queue, queue->depth + n - queue->capacity);
      /* A queue smaller than the call keeps only its last events. */
      if (n > queue->capacity)
        {
          call->dropped = (guint8) (n - queue->capacity);
          kvev_counter_set (&queue->dropped, queue->dropped + call->dropped);
          queue->reserved_gaps += call->dropped;
        }
    }
  g_async_queue_push_unlocked (queue->queue, call);
  depth = queue->depth + (n - call->dropped);
  kvev_counter_set (&queue->depth, depth);
  if (depth > queue->high_water)
    kvev_counter_set (&queue->high_water, depth);
  wake = queue->consumer == KVEV_CONSUMER_SLEEPING;
  if (wake)
    {
      kvev_counter_set (&queue->consumer, KVEV_CONSUMER_RUNNING);
      kvev_counter_set (&queue->rings, queue->rings + 1);
    }
  queue_unlock (queue);
  if (wake)
    ring_bell (queue);
}

#ifdef KVEV_TESTING
static void
wait_while_held (KvevQueue *queue)
{
  g_mutex_lock (&queue->hold_lock);
  while (g_atomic_int_get (&queue->held))
    g_cond_wait (&queue->hold_cond, &queue->hold_lock);
  g_mutex_unlock (&queue->hold_lock);
}

static gboolean
is_held (KvevQueue *queue)
{
  return g_atomic_int_get (&queue->held);
}
#else
#define wait_while_held(queue) ((void) 0)
#define is_held(queue) FALSE
#endif

gboolean
kvev_queue_pop (KvevQueue *queue, KvevCall **calls, guint max_events, gint64 nap_us, guint *n_calls,
                guint64 *reserved_gaps)
{
  KvevCall *call;
  guint n = 0;
  guint64 events = 0;

  g_return_val_if_fail (max_events > 0, FALSE);

  *n_calls = 0;
  *reserved_gaps = 0;

  for (;;)
    {
      if (G_UNLIKELY (is_held (queue)))
        wait_while_held (queue);
      queue_lock (queue);
      kvev_counter_set (&queue->consumer, KVEV_CONSUMER_RUNNING);
      call = g_async_queue_try_pop_unlocked (queue->queue);
      if (call != NULL && (G_LIKELY (!is_held (queue)) || call == &stop_marker))
        break;
      if (call != NULL)
        {
          g_async_queue_push_front_unlocked (queue->queue, call);
          queue_unlock (queue);
          continue;
        }
      /* Under a steady stream the queue is empty only for a moment: a
       * nap, during which nobody rings, takes what came meanwhile in one
       * batch and saves the callers a futex call per batch.  Only an
       * empty queue after the nap means the stream stopped. */
      if (nap_us > 0 && !queue->stopped)
        {
          kvev_counter_set (&queue->consumer, KVEV_CONSUMER_NAPPING);
          queue_unlock (queue);
          wait_bell (queue, g_get_monotonic_time () + nap_us);
          nap_us = 0;
          continue;
        }
      kvev_counter_set (&queue->consumer, KVEV_CONSUMER_SLEEPING);
      queue_unlock (queue);
      if (wait_bell (queue, 0))
        return TRUE;
    }
  /* The first call goes out even when it alone has more events than
   * max_events: the consumer splits it. */
  while (call != &stop_marker)
    {
      events += remaining_events (call);
      calls[n++] = call;
      if (events >= max_events)
        break;
      call = g_async_queue_try_pop_unlocked (queue->queue);
      if (call == NULL)
        break;
      if (call != &stop_marker && events + remaining_events (call) > max_events)
        {
          g_async_queue_push_front_unlocked (queue->queue, call);
          break;
        }
    }
  /* The marker stays, so every later call returns 0 at once. */
  if (call == &stop_marker)
    g_async_queue_push_front_unlocked (queue->queue, &stop_marker);
  kvev_counter_set (&queue->depth, queue->depth - events);
  *reserved_gaps = queue->reserved_gaps;
  queue->reserved_gaps = 0;
  queue_unlock (queue);
  *n_calls = n;
  return n > 0;
}

#ifdef KVEV_TESTING
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
#endif

void
kvev_queue_wake (KvevQueue *queue)
{
  gboolean napping;

  /* Only a nap can keep queued events waiting: a running consumer takes
   * them next, and a sleeping one was rung by the push.  Ringing anyone
   * else would only cut its next nap short. */
  queue_lock (queue);
  napping = queue->consumer == KVEV_CONSUMER_NAPPING;
  queue_unlock (queue);
  if (napping)
    ring_bell (queue);
}

void
kvev_queue_stop (KvevQueue *queue)
{
#ifdef KVEV_TESTING
  kvev_queue_hold (queue, FALSE);
#endif
  queue_lock (queue);
  if (!queue->stopped)
    {
      queue->stopped = TRUE;
      g_async_queue_push_unlocked (queue->queue, &stop_marker);
    }
  queue_unlock (queue);
  ring_bell (queue);
}

gboolean
kvev_queue_stopped (KvevQueue *queue)
{
  gboolean stopped;

  queue_lock (queue);
  stopped = queue->stopped;
  queue_unlock (queue);
  return stopped;
}

guint64
kvev_queue_discard (KvevQueue *queue)
{
  guint64 discarded = 0;

  queue_lock (queue);
  while (queue->depth > 0)
    discarded += drop_oldest_locked (queue, G_MAXUINT64);
  queue_unlock (queue);
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

#ifdef KVEV_TESTING
KvevConsumerState
kvev_queue_consumer_state (const KvevQueue *queue)
{
  return kvev_counter_get (&queue->consumer);
}

guint64
kvev_queue_rings (const KvevQueue *queue)
{
  return kvev_counter_get (&queue->rings);
}
#endif

void
kvev_queue_counts (const KvevQueue *queue, KvevQueueCounts *counts)
{
  /* The lock is not part of the queue's value: a reader may take it. */
  KvevQueue *locked = (KvevQueue *) queue;

  queue_lock (locked);
  counts->enqueued = queue->enqueued;
  counts->dropped = queue->dropped;
  counts->depth = queue->depth;
  counts->high_water = queue->high_water;
  queue_unlock (locked);
}

guint64
kvev_queue_high_water (const KvevQueue *queue)
{
  return kvev_counter_get (&queue->high_water);
}
