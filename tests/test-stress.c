/* test-stress.c: four producers on two cores, a queue that overflows, a
 * steady subscriber, one that keeps reconnecting and flushes in between;
 * afterwards every event is accounted for exactly.  Also many publishers
 * created and freed with events in flight, and a free that must not wait
 * on a subscriber that never reads.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "test-util.h"
#include "publisher.h"

#include <string.h>
#include <zmq.h>

#define N_PRODUCERS 4
#define CALLS_PER_PRODUCER 25000

typedef struct
{
  KvevPublisher *publisher;
  guint seed;
} Producer;

/* Every kind of call, at random, with keys some of which need bin. */
static gpointer
produce (gpointer data)
{
  Producer *producer = data;
  g_autoptr (GRand) rand = g_rand_new_with_seed (producer->seed);
  guint i;

  for (i = 0; i < CALLS_PER_PRODUCER; i++)
    {
      char key[48];
      KvevMedia a = g_rand_int_range (rand, 0, 4), b = g_rand_int_range (rand, 0, 4);
      KvevClearScope *scope;

      g_snprintf (key, sizeof key, "p%u-%u%s", producer->seed, i, i % 97 == 0 ? "\xff" : "");
      switch (g_rand_int_range (rand, 0, 6))
        {
        case 0:
        case 1:
          kvev_publish_stored (producer->publisher, "tenant", key, -1, "g", a);
          break;
        case 2:
          kvev_publish_removed (producer->publisher, NULL, key, -1, NULL, a);
          break;
        case 3:
          kvev_publish_delta (producer->publisher, "tenant", key, -1, NULL, a, b);
          break;
        case 4:
          kvev_publish_cleared (producer->publisher, "other");
          break;
        default:
          scope = kvev_clear_begin (producer->publisher, "scoped");
          kvev_clear_object_removed (scope, key, -1, NULL, a);
          if (g_rand_boolean (rand))
            kvev_clear_skipped (scope, g_rand_int_range (rand, 0, KVEV_SKIP_OTHER + 1));
          kvev_clear_end (scope);
          break;
        }
    }
  return NULL;
}

typedef struct
{
  TestSub *sub;
  guint64 next_sequence;
  guint64 next_event_id;
  gint stop;
  /* Read by the main thread once the reader has stopped. */
  guint64 events;
  guint64 id_holes;
  guint64 sequence_gaps;
  guint64 messages_after_gap;
  guint64 mismatched_gaps;
  guint64 malformed;
  gint64 received; /* atomic, for the main thread's wait */
} Reader;

static gpointer
read_stream (gpointer data)
{
  Reader *reader = data;

  while (!g_atomic_int_get (&reader->stop))
    {
      g_autoptr (TestMessage) message = test_sub_recv (reader->sub, 50);
      guint64 jump, hole, first_id;
      guint i;

      if (message == NULL)
        continue;
      if (message->n_frames != 3 || message->sequence_len != 8 || !message->decoded
          || message->n_events == 0)
        {
          reader->malformed++;
          continue;
        }
      first_id = test_map_uint (&message->events[0], "event_id");
      jump = message->sequence - reader->next_sequence;
      hole = first_id - reader->next_event_id;
      /* A drop reserves one sequence number per event, right before the
       * first message after it: the jump and the hole are the same. */
      if (jump != hole)
        reader->mismatched_gaps++;
      if (jump > 0)
        reader->messages_after_gap++;
      reader->sequence_gaps += jump;
      reader->id_holes += hole;
      reader->next_sequence = message->sequence + 1;
      for (i = 0; i < message->n_events; i++)
        {
          guint64 id = test_map_uint (&message->events[i], "event_id");

          if (i > 0 && id != reader->next_event_id)
            reader->mismatched_gaps++;
          reader->next_event_id = id + 1;
        }
      reader->events += message->n_events;
      g_atomic_pointer_add (&reader->received, message->n_events);
    }
  return NULL;
}

typedef struct
{
  const char *endpoint;
  gint stop;
  guint connections;
} Churner;

/* A subscriber that comes and goes; the publisher must not care. */
static gpointer
churn (gpointer data)
{
  Churner *churner = data;

  while (!g_atomic_int_get (&churner->stop))
    {
      TestSub *sub = test_sub_new (churner->endpoint);

      test_message_free (test_sub_recv (sub, 5));
      test_sub_free (sub);
      churner->connections++;
    }
  return NULL;
}

static guint64
json_uint (const char *json, const char *name)
{
  g_autofree char *needle = g_strdup_printf ("\"%s\": ", name);
  const char *at = strstr (json, needle);

  g_assert_nonnull (at);
  return g_ascii_strtoull (at + strlen (needle), NULL, 10);
}

/* One status snapshot adds up: every event enqueued is published,
 * dropped, still queued or in the worker's hands, never fewer. */
static void
assert_stats_add_up (KvevPublisher *publisher)
{
  g_autofree char *json = kvev_publisher_stats_json (publisher);
  guint64 enqueued = json_uint (json, "enqueued_events");
  guint64 accounted = json_uint (json, "published_events") + json_uint (json, "dropped_events")
                      + json_uint (json, "queue_depth");

  if (enqueued < accounted)
    g_error ("enqueued %" G_GUINT64_FORMAT " < published + dropped + depth %" G_GUINT64_FORMAT
             ": %s",
             enqueued, accounted, json);
}

typedef struct
{
  KvevPublisher *publisher;
  gint stop;
} Flood;

static gpointer
flood_main (gpointer data)
{
  Flood *flood = data;
  guint i = 0;

  while (!g_atomic_int_get (&flood->stop))
    {
      char key[32];

      g_snprintf (key, sizeof key, "flood-%u", i++);
      kvev_publish_stored (flood->publisher, "t", key, -1, NULL,
                           i % 2 ? KVEV_MEDIA_CPU : KVEV_MEDIA_CPU | KVEV_MEDIA_DISK);
    }
  return NULL;
}

/* Status snapshots taken while a producer overflows the queue add up:
 * first with the worker held, so that the queue drops whatever the
 * machine's speed (under valgrind the worker kept up with the producer),
 * then with the worker publishing as well. */
static void
test_stats_snapshots (void)
{
  g_autofree char *endpoint = test_ipc_endpoint ("snapshots");
  g_autoptr (KvevConfig) config = test_config_new (endpoint);
  g_autoptr (GError) error = NULL;
  Flood flood = { 0 };
  GThread *thread;
  gint64 deadline;
  guint i;

  test_config_set (config, "kv_events_queue_capacity", "64");
  flood.publisher = kvev_publisher_new (config, &error);
  g_assert_no_error (error);
  kvev_queue_hold (kvev_publisher_get_queue (flood.publisher), TRUE);
  thread = g_thread_new ("flood", flood_main, &flood);
  deadline = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;
  for (i = 0; i < 500 || kvev_publisher_stat (flood.publisher, KVEV_STAT_DROPPED_EVENTS) == 0; i++)
    {
      assert_stats_add_up (flood.publisher);
      if (g_get_monotonic_time () > deadline)
        g_error ("the held queue of 64 dropped nothing in 60 s");
    }
  kvev_queue_hold (kvev_publisher_get_queue (flood.publisher), FALSE);
  /* Half a second of snapshots: a slow sanitizer build takes fewer. */
  deadline = g_get_monotonic_time () + G_USEC_PER_SEC / 2;
  for (i = 0; i < 1000 || g_get_monotonic_time () < deadline; i++)
    assert_stats_add_up (flood.publisher);
  g_atomic_int_set (&flood.stop, 1);
  g_thread_join (thread);
  g_assert_true (kvev_publisher_flush (flood.publisher, 10000));
  g_assert_cmpuint (kvev_publisher_stat (flood.publisher, KVEV_STAT_PUBLISHED_EVENTS), >, 0);
  kvev_publisher_free (flood.publisher);
}

static void
test_conservation (void)
{
  g_autofree char *endpoint = test_ipc_endpoint ("stress");
  g_autoptr (KvevConfig) config = test_config_new (endpoint);
  g_autoptr (KvevPublisher) publisher = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (TestMessage) first = NULL;
  Producer producers[N_PRODUCERS];
  GThread *threads[N_PRODUCERS], *reader_thread, *churn_thread;
  Reader reader = { 0 };
  Churner churner = { 0 };
  guint64 published, dropped, base_published, base_dropped, base_id;
  gint64 deadline;
  guint i;

  test_config_set (config, "kv_events_queue_capacity", "512");
  test_config_set (config, "kv_events_send_hwm", "0");
  test_config_set (config, "kv_events_send_buffer_bytes", "0");
  publisher = kvev_publisher_new (config, &error);
  g_assert_no_error (error);
  reader.sub = test_sub_new (kvev_publisher_get_endpoint (publisher));
  first = test_sync (publisher, reader.sub);
  base_published = kvev_publisher_stat (publisher, KVEV_STAT_PUBLISHED_EVENTS);
  base_dropped = kvev_publisher_stat (publisher, KVEV_STAT_DROPPED_EVENTS);
  base_id = kvev_queue_last_event_id (kvev_publisher_get_queue (publisher));
  reader.next_sequence = kvev_publisher_stat (publisher, KVEV_STAT_LAST_SEQUENCE) + 1;
  reader.next_event_id = base_id + 1;

  reader_thread = g_thread_new ("reader", read_stream, &reader);
  churner.endpoint = kvev_publisher_get_endpoint (publisher);
  churn_thread = g_thread_new ("churn", churn, &churner);
  /* The queue overflows while the worker is held, whatever the machine's
   * speed: a worker that keeps up (under valgrind) would leave the drop
   * path untested. */
  kvev_queue_hold (kvev_publisher_get_queue (publisher), TRUE);
  for (i = 0; i < N_PRODUCERS; i++)
    {
      producers[i] = (Producer){ publisher, i + 1 };
      threads[i] = g_thread_new ("producer", produce, &producers[i]);
    }
  deadline = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;
  while (kvev_publisher_stat (publisher, KVEV_STAT_DROPPED_EVENTS) == base_dropped)
    {
      if (g_get_monotonic_time () > deadline)
        g_error ("the held queue of 512 dropped nothing in 60 s");
      /* Let go at the first drop, so that most events still race the
       * worker rather than the hold. */
      g_thread_yield ();
    }
  kvev_queue_hold (kvev_publisher_get_queue (publisher), FALSE);
  /* Flushes racing with the producers must neither hang nor lose. */
  for (i = 0; i < 20; i++)
    {
      kvev_publisher_flush (publisher, 5);
      g_usleep (2000);
    }
  for (i = 0; i < N_PRODUCERS; i++)
    g_thread_join (threads[i]);
  g_assert_true (kvev_publisher_flush (publisher, 30000));

  published = kvev_publisher_stat (publisher, KVEV_STAT_PUBLISHED_EVENTS) - base_published;
  dropped = kvev_publisher_stat (publisher, KVEV_STAT_DROPPED_EVENTS) - base_dropped;
  /* The reconnecting subscriber has made its point; under a slow
   * sanitizer it would only delay the reader. */
  g_atomic_int_set (&churner.stop, 1);
  deadline = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;
  while ((guint64) g_atomic_pointer_get (&reader.received) < published
         && g_get_monotonic_time () < deadline)
    g_usleep (10000);
  g_atomic_int_set (&reader.stop, 1);
  g_thread_join (reader_thread);
  g_thread_join (churn_thread);

  g_test_message ("published %" G_GUINT64_FORMAT ", dropped %" G_GUINT64_FORMAT
                  ", gaps before %" G_GUINT64_FORMAT " messages, %u reconnections",
                  published, dropped, reader.messages_after_gap, churner.connections);
  g_assert_cmpuint (kvev_publisher_stat (publisher, KVEV_STAT_QUEUE_DEPTH), ==, 0);
  g_assert_cmpuint (kvev_publisher_stat (publisher, KVEV_STAT_ENQUEUED_EVENTS), ==,
                    kvev_publisher_stat (publisher, KVEV_STAT_PUBLISHED_EVENTS)
                        + kvev_publisher_stat (publisher, KVEV_STAT_DROPPED_EVENTS));
  g_assert_cmpuint (kvev_publisher_stat (publisher, KVEV_STAT_SEND_FAILURES), ==, 0);
  /* No receive or send high-water mark: ZeroMQ dropped nothing for the
   * steady reader, so it saw every published event. */
  g_assert_cmpuint (reader.events, ==, published);
  g_assert_cmpuint (reader.malformed, ==, 0);
  g_assert_cmpuint (reader.mismatched_gaps, ==, 0);
  g_assert_cmpuint (reader.id_holes, ==, dropped);
  g_assert_cmpuint (reader.sequence_gaps, ==, dropped);
  g_assert_cmpuint (reader.next_event_id - 1, ==,
                    kvev_queue_last_event_id (kvev_publisher_get_queue (publisher)));
  /* The held queue overflowed, or the test proves nothing. */
  g_assert_cmpuint (dropped, >, 0);
  test_sub_free (reader.sub);
}

/* Many publishers, each freed with events still in flight. */
static void
test_create_free_cycles (void)
{
  g_autoptr (KvevConfig) config = test_config_new ("tcp://127.0.0.1:*");
  guint cycle, i;

  test_config_set (config, "kv_events_close_timeout_ms", "200");
  for (cycle = 0; cycle < 1000; cycle++)
    {
      g_autoptr (GError) error = NULL;
      KvevPublisher *publisher = kvev_publisher_new (config, &error);
      gint64 start;

      g_assert_no_error (error);
      for (i = 0; i < 50; i++)
        kvev_publish_stored (publisher, "t", "key", -1, NULL, KVEV_MEDIA_CPU | KVEV_MEDIA_DISK);
      start = g_get_monotonic_time ();
      kvev_publisher_free (publisher);
      /* A hang detector, not a speed target: the bound is the close
       * timeout plus a wide margin for a loaded machine. */
      g_assert_cmpint (g_get_monotonic_time () - start, <, (200 + 5000) * 1000);
    }
}

/* Whether it drains in time depends on the machine; dropping the rest at
 * the deadline, with its warning, is the behaviour under test, so only
 * that warning is swallowed (before GLib's default handler could print
 * it as a test failure). */
static void
drop_close_warning (const char *log_domain, GLogLevelFlags log_level, const char *message,
                    gpointer user_data)
{
  if (strstr (message, "Closing the kv_events publisher dropped") != NULL)
    return;
  g_log_default_handler (log_domain, log_level, message, user_data);
}

/* ... and G_DEBUG=fatal-warnings must not abort on it either. */
static gboolean
close_warning_is_not_fatal (const char *log_domain, GLogLevelFlags log_level, const char *message,
                            gpointer user_data)
{
  return strstr (message, "Closing the kv_events publisher dropped") == NULL;
}

/* A subscriber that never reads fills ZeroMQ's queues, and the worker
 * waits for it; the free still returns within its close timeout, because
 * the worker stops waiting once the queue is stopped and the linger is
 * what is left of the timeout. */
static void
test_free_with_stuck_subscriber (void)
{
  g_autofree char *endpoint = test_ipc_endpoint ("stuck");
  g_autoptr (KvevConfig) config = test_config_new (endpoint);
  g_autoptr (GError) error = NULL;
  KvevPublisher *publisher;
  void *context, *socket;
  int hwm = 10;
  guint handler;
  gint64 start;
  guint i;

  test_config_set (config, "kv_events_send_hwm", "10");
  test_config_set (config, "kv_events_close_timeout_ms", "300");
  publisher = kvev_publisher_new (config, &error);
  g_assert_no_error (error);
  context = zmq_ctx_new ();
  socket = zmq_socket (context, ZMQ_SUB);
  zmq_setsockopt (socket, ZMQ_RCVHWM, &hwm, sizeof hwm);
  zmq_setsockopt (socket, ZMQ_SUBSCRIBE, "", 0);
  g_assert_cmpint (zmq_connect (socket, kvev_publisher_get_endpoint (publisher)), ==, 0);
  g_usleep (100000);
  for (i = 0; i < 200000; i++)
    kvev_publish_stored (publisher, "t", "a-key-of-some-length", -1, NULL, KVEV_MEDIA_CPU);
  handler = g_log_set_handler ("kvevents", G_LOG_LEVEL_WARNING | G_LOG_FLAG_FATAL,
                               drop_close_warning, NULL);
  g_test_log_set_fatal_handler (close_warning_is_not_fatal, NULL);
  start = g_get_monotonic_time ();
  kvev_publisher_free (publisher);
  g_assert_cmpint (g_get_monotonic_time () - start, <, (300 + 3000) * 1000);
  g_log_remove_handler ("kvevents", handler);
  g_test_log_set_fatal_handler (NULL, NULL);
  zmq_close (socket);
  zmq_ctx_term (context);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/kvevents/stress/conservation", test_conservation);
  g_test_add_func ("/kvevents/stress/stats-snapshots", test_stats_snapshots);
  g_test_add_func ("/kvevents/stress/create-free-cycles", test_create_free_cycles);
  g_test_add_func ("/kvevents/stress/free-with-stuck-subscriber", test_free_with_stuck_subscriber);

  return g_test_run ();
}
