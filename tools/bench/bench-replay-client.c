/* bench-replay-client.c: the looping replay client of kvevents-bench;
 * see bench-replay-client.h.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include "bench-replay-client.h"
#include "bench-util.h"

#include <errno.h>
#include <string.h>
#include <glib/gi18n.h>
#include <zmq.h>

/* How often a client that waits for a reply looks whether it should
 * stop. */
#define POLL_MS 10
/* A replay with no reply for this long has stalled: the publisher's
 * replay thread gives up on a slow peer after 5 s. */
#define STALL_S 10
#define FIRST_REPLY_S 20
#define REPLY_FRAMES 4
/* The publisher lets replies run an eighth of a second of its rate
 * ahead (kvevents(7), kv_events_replay_rate_bytes): under 2 % of a whole
 * replay of the default buffer, which lasts about 14 s, but over half of
 * what a figure of 100 ms would see.  The client counts, and a resume
 * returns, only once that burst is spent, so that what is measured
 * alongside is the live stream while a replay goes on at its rate. */
#define SETTLE_MS 250

struct _BenchReplayClient
{
  char *endpoint;
  void *context;
  GThread *thread;

  GMutex lock;
  GCond cond;
  gint run;          /* asked to run: set under lock, read atomically by the thread */
  gboolean running;  /* the thread is in its loop, or reading a replay to its end */
  gboolean answered; /* a reply arrived since the resume */
  gboolean quit;
  gint64 counted_ns; /* replies count from then on: SETTLE_MS after the loop began */

  /* The thread's while it runs, the caller's once it stopped. */
  BenchReplayCounts counts;
  char *loop_error;
  /* Under lock: what stopped the loop. */
  char *error;
};

static void
signal_answered (BenchReplayClient *client)
{
  g_mutex_lock (&client->lock);
  client->answered = TRUE;
  g_cond_broadcast (&client->cond);
  g_mutex_unlock (&client->lock);
}

guint
bench_receive_frames (void *socket, zmq_msg_t *frames, guint n_frames)
{
  guint n = 0;
  gboolean more = TRUE;

  while (more)
    {
      zmq_msg_t extra;
      zmq_msg_t *frame = n < n_frames ? &frames[n] : &extra;

      zmq_msg_init (frame);
      if (zmq_msg_recv (frame, socket, 0) < 0)
        {
          zmq_msg_close (frame);
          break;
        }
      more = zmq_msg_more (frame);
      if (frame == &extra)
        zmq_msg_close (&extra);
      n++;
    }
  return n;
}

/* Reads one replay to its end marker, even once told to stop (what it
 * reads then is not counted): TRUE there, FALSE on an error
 * (client->loop_error set). */
static gboolean
read_replay (BenchReplayClient *client, void *socket, gboolean *answered)
{
  gint64 last = g_get_monotonic_time ();

  for (;;)
    {
      zmq_pollitem_t item = { socket, 0, ZMQ_POLLIN, 0 };
      zmq_msg_t frames[REPLY_FRAMES];
      guint64 sequence_be = 0;
      gboolean end;
      guint n, i;
      int rc = zmq_poll (&item, 1, POLL_MS);

      if (rc < 0 && zmq_errno () == EINTR)
        continue;
      if (rc < 0)
        {
          client->loop_error = g_strdup_printf ("zmq_poll: %s", zmq_strerror (zmq_errno ()));
          return FALSE;
        }
      if (rc == 0)
        {
          if (g_get_monotonic_time () - last <= STALL_S * G_USEC_PER_SEC)
            continue;
          client->loop_error = g_strdup_printf (_ ("A replay from %s stalled: no reply in %u s"),
                                                client->endpoint, STALL_S);
          return FALSE;
        }
      last = g_get_monotonic_time ();
      n = bench_receive_frames (socket, frames, REPLY_FRAMES);
      if (n != REPLY_FRAMES || zmq_msg_size (&frames[0]) != 0
          || zmq_msg_size (&frames[2]) != sizeof sequence_be)
        {
          for (i = 0; i < MIN (n, REPLY_FRAMES); i++)
            zmq_msg_close (&frames[i]);
          client->loop_error = g_strdup_printf (
              _ ("%s sent a reply that is not [\"\", topic, sequence, payload] (%u frames)"),
              client->endpoint, n);
          return FALSE;
        }
      if (!*answered)
        {
          *answered = TRUE;
          signal_answered (client);
        }
      memcpy (&sequence_be, zmq_msg_data (&frames[2]), sizeof sequence_be);
      end = GUINT64_FROM_BE (sequence_be) == G_MAXUINT64 && zmq_msg_size (&frames[1]) == 0
            && zmq_msg_size (&frames[3]) == 0;
      if (!end && g_atomic_int_get (&client->run) && bench_now_ns () >= client->counted_ns)
        {
          client->counts.messages++;
          client->counts.bytes += zmq_msg_size (&frames[3]);
        }
      for (i = 0; i < REPLY_FRAMES; i++)
        zmq_msg_close (&frames[i]);
      if (end)
        return TRUE;
    }
}

/* Replays from 0, one after the other, until told to stop; the last one
 * is read to its end all the same.  Leaving a replay unfinished would
 * leave the publisher's replay thread sending to a peer that is gone,
 * which holds it (for its send timeout, or longer when another client
 * connects meanwhile) and would fall on the next figure. */
static void
replay_loop (BenchReplayClient *client, void *socket)
{
  const guint64 start_be = GUINT64_TO_BE (0);
  gboolean answered = FALSE;
  gboolean counting = TRUE;

  while (counting)
    {
      if (zmq_send (socket, "", 0, ZMQ_SNDMORE) < 0
          || zmq_send (socket, &start_be, sizeof start_be, 0) < 0)
        {
          client->loop_error = g_strdup_printf (_ ("The replay client cannot send to %s: %s"),
                                                client->endpoint, zmq_strerror (zmq_errno ()));
          break;
        }
      if (!read_replay (client, socket, &answered))
        break;
      counting = g_atomic_int_get (&client->run);
      if (counting && bench_now_ns () >= client->counted_ns)
        client->counts.replays++;
    }
}

static gpointer
client_main (gpointer data)
{
  BenchReplayClient *client = data;
  void *socket = zmq_socket (client->context, ZMQ_DEALER);
  char *connect_error = NULL;
  int zero = 0;

  if (socket == NULL || zmq_setsockopt (socket, ZMQ_LINGER, &zero, sizeof zero) != 0
      || zmq_connect (socket, client->endpoint) != 0)
    connect_error = g_strdup_printf (_ ("The replay client cannot connect to %s: %s"),
                                     client->endpoint, zmq_strerror (zmq_errno ()));
  g_mutex_lock (&client->lock);
  while (!client->quit)
    {
      if (!g_atomic_int_get (&client->run))
        {
          g_cond_wait (&client->cond, &client->lock);
          continue;
        }
      client->running = TRUE;
      client->counted_ns = bench_now_ns () + SETTLE_MS * G_GINT64_CONSTANT (1000000);
      g_mutex_unlock (&client->lock);
      if (connect_error != NULL)
        client->loop_error = g_strdup (connect_error);
      else
        replay_loop (client, socket);
      g_mutex_lock (&client->lock);
      client->error = g_steal_pointer (&client->loop_error);
      client->running = FALSE;
      g_cond_broadcast (&client->cond);
      /* Stopped by an error: once, until the next resume. */
      while (g_atomic_int_get (&client->run) && !client->quit)
        g_cond_wait (&client->cond, &client->lock);
    }
  g_mutex_unlock (&client->lock);
  if (socket != NULL)
    zmq_close (socket);
  g_free (connect_error);
  return NULL;
}

BenchReplayClient *
bench_replay_client_new (const char *endpoint)
{
  BenchReplayClient *client = g_new0 (BenchReplayClient, 1);

  client->endpoint = g_strdup (endpoint);
  client->context = zmq_ctx_new ();
  g_mutex_init (&client->lock);
  g_cond_init (&client->cond);
  client->thread = g_thread_new ("bench-replay", client_main, client);
  return client;
}

static void
stop_locked (BenchReplayClient *client)
{
  g_atomic_int_set (&client->run, FALSE);
  g_cond_broadcast (&client->cond);
  while (client->running)
    g_cond_wait (&client->cond, &client->lock);
}

gboolean
bench_replay_client_resume (BenchReplayClient *client, GError **error)
{
  gint64 deadline = g_get_monotonic_time () + FIRST_REPLY_S * G_USEC_PER_SEC;
  gboolean ok;

  g_mutex_lock (&client->lock);
  memset (&client->counts, 0, sizeof client->counts);
  g_clear_pointer (&client->error, g_free);
  client->answered = FALSE;
  g_atomic_int_set (&client->run, TRUE);
  g_cond_broadcast (&client->cond);
  while (!client->answered && client->error == NULL
         && g_cond_wait_until (&client->cond, &client->lock, deadline))
    ;
  ok = client->answered;
  if (ok)
    {
      gint64 wait_ns = client->counted_ns - bench_now_ns ();

      /* The thread goes on replaying meanwhile, the lock free. */
      g_mutex_unlock (&client->lock);
      if (wait_ns > 0)
        g_usleep ((gulong) (wait_ns / 1000));
      g_mutex_lock (&client->lock);
      ok = client->error == NULL;
      if (!ok)
        {
          stop_locked (client);
          bench_fail (error, "%s", client->error);
        }
    }
  else
    {
      stop_locked (client);
      if (client->error != NULL)
        bench_fail (error, "%s", client->error);
      else
        bench_fail (error, _ ("The replay endpoint %s never answered"), client->endpoint);
    }
  g_mutex_unlock (&client->lock);
  return ok;
}

gboolean
bench_replay_client_pause (BenchReplayClient *client, BenchReplayCounts *counts, GError **error)
{
  gboolean ok;
  gint64 stopped_ns;

  g_mutex_lock (&client->lock);
  stopped_ns = bench_now_ns ();
  stop_locked (client);
  counts->replays += client->counts.replays;
  counts->messages += client->counts.messages;
  counts->bytes += client->counts.bytes;
  counts->ns += MAX (stopped_ns - client->counted_ns, 0);
  ok = client->error == NULL;
  if (!ok)
    bench_fail (error, "%s", client->error);
  g_mutex_unlock (&client->lock);
  return ok;
}

void
bench_replay_client_free (BenchReplayClient *client)
{
  if (client == NULL)
    return;
  g_mutex_lock (&client->lock);
  client->quit = TRUE;
  stop_locked (client);
  g_mutex_unlock (&client->lock);
  g_thread_join (client->thread);
  zmq_ctx_term (client->context);
  g_mutex_clear (&client->lock);
  g_cond_clear (&client->cond);
  g_free (client->error);
  g_free (client->endpoint);
  g_free (client);
}
