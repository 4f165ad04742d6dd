/* worker.c: the publisher's thread; see worker.h.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "worker.h"

#include "counter.h"
#include "events/encode.h"
#include "fault.h"

#include <zmq.h>

/* Heartbeats that new subscriptions call for go at most this often: a
 * peer that subscribes and unsubscribes in a loop would otherwise make
 * the thread send one to every subscriber for each subscription.  A new
 * subscriber still learns the sequence within this long. */
#define SUBSCRIBED_BEAT_US (100 * 1000)

struct _KvevWorker
{
  const KvevSettings *settings;
  KvevQueue *queue;
  KvevXpub *xpub;
  KvevReplay *replay; /* or NULL */
  KvevEncoder *encoder;
  GThread *thread;
  guint64 next_sequence;
  gint64 last_message_time; /* monotonic: when the last message went */
  gint64 last_beat_time;    /* monotonic: when the last heartbeat went */
  /* Monotonic: when the heartbeat new subscriptions call for falls due;
   * G_MAXINT64 while none does. */
  gint64 subscribed_beat_time;
  /* Matching subscriptions the xpub took in that heartbeat_due() has not
   * looked at yet. */
  guint new_subscriptions;
  gboolean beat; /* the sleep found a heartbeat due */

  /* Written by the thread for every message, read by anyone. */
  KvevWorkerCounts counts;

  /* Flushes wait on the thread's progress. */
  GMutex progress_lock;
  GCond progress_cond;
  guint64 retired_event_id; /* every id <= this was sent or dropped */
  guint retire_waiters;
};

/* Encodes and sends events[0..n) as one message, consuming one sequence
 * number whether or not it goes out. */
static void
publish_batch (KvevWorker *worker, const KvevEvent *events, guint n)
{
  KvevWorkerCounts *counts = &worker->counts;
  guint64 sequence = worker->next_sequence++;
  KvevSendResult result;
  zmq_msg_t kept;
  gsize payload_len;
  char *payload;

  payload = kvev_encode_batch (worker->encoder, KVEV_NOW_MS (), events, n, &payload_len);
  result = kvev_xpub_send (worker->xpub, sequence, payload, payload_len,
                           worker->replay != NULL ? &kept : NULL);
  /* A message a subscriber lost to a full pipe is replay's to give back
   * too: only one that reached no one is not kept. */
  if (worker->replay != NULL && result != KVEV_SEND_FAILED)
    kvev_replay_keep (worker->replay, sequence, &kept, n == 0);
  /* After the send, which may have waited for a full pipe: the stream
   * was not quiet meanwhile. */
  worker->last_message_time = g_get_monotonic_time ();
  switch (result)
    {
    case KVEV_SEND_REFUSED:
      kvev_counter_set (&counts->hwm_dropped_messages, counts->hwm_dropped_messages + 1);
      kvev_counter_set (&counts->hwm_dropped_events, counts->hwm_dropped_events + n);
      G_GNUC_FALLTHROUGH;
    case KVEV_SEND_DELIVERED:
      if (n == 0)
        kvev_counter_set (&counts->heartbeats, counts->heartbeats + 1);
      kvev_counter_set_release (&counts->published_events, counts->published_events + n);
      kvev_counter_set (&counts->published_batches, counts->published_batches + (n > 0));
      break;
    case KVEV_SEND_FAILED:
      kvev_counter_set (&counts->send_failures, counts->send_failures + 1);
      kvev_counter_set_release (&counts->send_failed_events, counts->send_failed_events + n);
      break;
    }
  kvev_counter_set (&counts->last_sequence, sequence);
}

/* Sends events[0..n) in messages of at most max_batch_events events,
 * each within the message limit: ZeroMQ holds up to send_hwm messages
 * for a subscriber that stops reading, and only their size bounds that
 * memory.  An event over the limit alone still goes, in a message of its
 * own. */
static void
publish_events (KvevWorker *worker, const KvevEvent *events, guint n)
{
  const KvevSettings *settings = worker->settings;
  gsize overhead = kvev_encode_batch_bound (worker->encoder);

  while (n > 0)
    {
      guint batch = 1;
      gsize bytes = overhead + kvev_encode_event_bound (worker->encoder, &events[0]);

      while (batch < n && batch < settings->max_batch_events)
        {
          bytes += kvev_encode_event_bound (worker->encoder, &events[batch]);
          if (bytes > settings->message_limit)
            break;
          batch++;
        }
      publish_batch (worker, events, batch);
      events += batch;
      n -= batch;
    }
}

/* Sends the events of the popped calls in order, keeping every event whose
 * strings are not UTF-8 in a message of its own: strict readers reject a
 * whole payload over one bin string, and should lose only that event.
 * Under kv_events_non_utf8 skip the event calls kept such calls out. */
static void
publish_calls (KvevWorker *worker, KvevCall *const *calls, guint n_calls, KvevEvent *events)
{
  gboolean check = worker->settings->non_utf8 != KVEV_NON_UTF8_SKIP;
  guint n = 0, i, j, m;

  for (i = 0; i < n_calls; i++)
    {
      if (!check || kvev_call_is_utf8 (calls[i]))
        {
          n += kvev_call_events (calls[i], calls[i]->dropped, FALSE, events + n);
          continue;
        }
      publish_events (worker, events, n);
      n = 0;
      m = kvev_call_events (calls[i], calls[i]->dropped, TRUE, events);
      for (j = 0; j < m; j++)
        publish_batch (worker, events + j, 1);
    }
  publish_events (worker, events, n);
}

static void
retire (KvevWorker *worker, guint64 last_event_id)
{
  g_mutex_lock (&worker->progress_lock);
  if (last_event_id > worker->retired_event_id)
    worker->retired_event_id = last_event_id;
  if (worker->retire_waiters > 0)
    g_cond_broadcast (&worker->progress_cond);
  g_mutex_unlock (&worker->progress_lock);
}

/* Everything one pop took: sent, retired for the flushes that wait on
 * it, freed.  Then the peers, without waiting: a worker that never runs
 * out of events never sleeps, where it would otherwise hear of
 * subscriptions. */
static void
publish_popped (KvevWorker *worker, KvevCall **calls, guint n_calls, KvevEvent *events)
{
  const KvevCall *last = calls[n_calls - 1];
  guint i;

  publish_calls (worker, calls, n_calls, events);
  retire (worker, last->first_event_id + last->n_events - 1);
  for (i = 0; i < n_calls; i++)
    g_free (calls[i]);
  worker->new_subscriptions += kvev_xpub_take_in (worker->xpub);
}

/* With heartbeats on, whether one is due: the stream was quiet for the
 * interval, or a subscriber came and should learn the sequence.  That
 * one goes at once, or SUBSCRIBED_BEAT_US after the last heartbeat if
 * that is later, for every subscription taken in until then. */
static gboolean
heartbeat_due (KvevWorker *worker)
{
  gint64 interval_us = (gint64) worker->settings->heartbeat_ms * 1000;
  gint64 now;

  if (interval_us == 0)
    return FALSE;
  now = g_get_monotonic_time ();
  if (worker->new_subscriptions > 0 && worker->subscribed_beat_time == G_MAXINT64)
    worker->subscribed_beat_time = MAX (now, worker->last_beat_time + SUBSCRIBED_BEAT_US);
  worker->new_subscriptions = 0;
  return now >= worker->subscribed_beat_time || now - worker->last_message_time >= interval_us;
}

/* The empty batch of kvevents(7), HEARTBEATS: it tells every subscriber
 * the sequence, those the pending one was for too. */
static void
publish_heartbeat (KvevWorker *worker)
{
  publish_batch (worker, NULL, 0);
  worker->last_beat_time = worker->last_message_time;
  worker->subscribed_beat_time = G_MAXINT64;
}

/* The queue's sleep (KvevQueueSleep): a nap waits on the bell alone, to
 * the microsecond, which zmq_poll() cannot time, and the worker takes
 * subscriptions in between batches anyway; a sleep until the next event
 * also waits on the peers, and with heartbeats on until the next one is
 * due, of the interval or held back for subscriptions, and then leaves
 * the pop to send it. */
static gboolean
worker_sleep (gpointer data, int bell_fd, gint64 end_time)
{
  KvevWorker *worker = data;
  gint64 interval_us = (gint64) worker->settings->heartbeat_ms * 1000;

  if (end_time != 0)
    {
      kvev_queue_wait_fd (bell_fd, end_time);
      return FALSE;
    }
  worker->new_subscriptions += kvev_xpub_wait (
      worker->xpub, bell_fd,
      interval_us > 0 ? MIN (worker->last_message_time + interval_us, worker->subscribed_beat_time)
                      : -1);
  worker->beat = heartbeat_due (worker);
  return worker->beat;
}

static gpointer
worker_main (gpointer data)
{
  KvevWorker *worker = data;
  const KvevSettings *settings = worker->settings;
  g_autofree KvevCall **calls = g_new (KvevCall *, settings->max_batch_events);
  /* A pop stays within max_batch_events events, except for a first call
   * that alone has more. */
  g_autofree KvevEvent *events
      = g_new (KvevEvent, MAX (settings->max_batch_events, KVEV_MAX_EVENTS_PER_CALL));
  guint64 reserved_gaps;
  guint n;

  worker->last_message_time = g_get_monotonic_time ();
  /* The first subscriber's heartbeat goes at once. */
  worker->last_beat_time = worker->last_message_time - SUBSCRIBED_BEAT_US;
  worker->subscribed_beat_time = G_MAXINT64;
  while (kvev_queue_pop (worker->queue, calls, settings->max_batch_events, settings->batch_wait_us,
                         &n, &reserved_gaps))
    {
      /* Events the full queue dropped were older than these: the gap goes
       * right before them, where a subscriber can see it. */
      worker->next_sequence += reserved_gaps;
      if (n > 0)
        publish_popped (worker, calls, n, events);
      if (worker->beat || heartbeat_due (worker))
        publish_heartbeat (worker);
      worker->beat = FALSE;
    }
  return NULL;
}

static void
worker_free (KvevWorker *worker)
{
  kvev_encoder_free (worker->encoder);
  g_mutex_clear (&worker->progress_lock);
  g_cond_clear (&worker->progress_cond);
  g_free (worker);
}

KvevWorker *
kvev_worker_start (const KvevSettings *settings, KvevQueue *queue, KvevXpub *xpub,
                   KvevReplay *replay, GError **error)
{
  KvevWorker *worker = g_new0 (KvevWorker, 1);
  GError *thread_error = NULL;

  worker->settings = settings;
  worker->queue = queue;
  worker->xpub = xpub;
  worker->replay = replay;
  g_mutex_init (&worker->progress_lock);
  g_cond_init (&worker->progress_cond);
  worker->encoder = kvev_encoder_new (settings);
  /* The thread sleeps on the queue's bell and on the socket at once, so
   * that it takes subscriptions in while no event comes. */
  kvev_queue_set_sleep (queue, worker_sleep, worker);
  if (KVEV_FAULT (KVEV_FAULT_THREAD))
    g_set_error_literal (&thread_error, G_THREAD_ERROR, G_THREAD_ERROR_AGAIN,
                         "Resource temporarily unavailable");
  else
    worker->thread = kvev_thread_try_new ("kvev-publisher", worker_main, worker, &thread_error);
  if (worker->thread == NULL)
    {
      g_set_error (error, KVEV_ERROR, KVEV_ERROR_TRANSPORT,
                   _ ("Cannot start the publisher thread: %s"), thread_error->message);
      g_error_free (thread_error);
      kvev_queue_set_sleep (queue, NULL, NULL);
      worker_free (worker);
      return NULL;
    }
  return worker;
}

gboolean
kvev_worker_wait_retired (KvevWorker *worker, guint64 event_id, gint64 deadline)
{
  gboolean done;

  g_mutex_lock (&worker->progress_lock);
  worker->retire_waiters++;
  while (worker->retired_event_id < event_id)
    {
      if (deadline < 0)
        g_cond_wait (&worker->progress_cond, &worker->progress_lock);
      else if (!g_cond_wait_until (&worker->progress_cond, &worker->progress_lock, deadline))
        break;
    }
  done = worker->retired_event_id >= event_id;
  worker->retire_waiters--;
  g_mutex_unlock (&worker->progress_lock);
  return done;
}

void
kvev_worker_counts (const KvevWorker *worker, KvevWorkerCounts *counts)
{
  const KvevWorkerCounts *own = &worker->counts;

  counts->published_events = kvev_counter_get_acquire (&own->published_events);
  counts->send_failed_events = kvev_counter_get_acquire (&own->send_failed_events);
  counts->published_batches = kvev_counter_get (&own->published_batches);
  counts->send_failures = kvev_counter_get (&own->send_failures);
  counts->last_sequence = kvev_counter_get (&own->last_sequence);
  counts->heartbeats = kvev_counter_get (&own->heartbeats);
  counts->hwm_dropped_messages = kvev_counter_get (&own->hwm_dropped_messages);
  counts->hwm_dropped_events = kvev_counter_get (&own->hwm_dropped_events);
}

void
kvev_worker_stop (KvevWorker *worker)
{
  g_thread_join (worker->thread);
  worker_free (worker);
}
