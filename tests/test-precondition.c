/* test-precondition.c: a master that calls with bad arguments in a loop
 * gets the first criticals of each call site, then one count of the
 * rest when the next window begins, and the calls return what GLib's
 * checks return.  The testing build's clock ends a window at once.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "precondition.h"

#include <string.h>

#define FLOOD 2001
#define WINDOW_US ((gint64) KVEV_LOG_LIMIT_SECONDS * G_USEC_PER_SEC)

/* The library's criticals, as a master's writer sees them. */
static GMutex messages_lock;
static GPtrArray *messages;

static GLogWriterOutput
record_writer (GLogLevelFlags level, const GLogField *fields, gsize n_fields, gpointer user_data)
{
  const char *domain = NULL, *message = NULL;

  for (gsize i = 0; i < n_fields; i++)
    if (strcmp (fields[i].key, "GLIB_DOMAIN") == 0)
      domain = fields[i].value;
    else if (strcmp (fields[i].key, "MESSAGE") == 0)
      message = fields[i].value;
  if (g_strcmp0 (domain, "kvevents") != 0 || (level & G_LOG_LEVEL_CRITICAL) == 0)
    return g_log_writer_default (level, fields, n_fields, user_data);
  g_mutex_lock (&messages_lock);
  g_ptr_array_add (messages, g_strdup (message));
  g_mutex_unlock (&messages_lock);
  return G_LOG_WRITER_HANDLED;
}

/* The count a "more like this" message tells, or 0 for any other. */
static guint64
untold_in (const char *message)
{
  const char *end = strstr (message, " more like this in the last ");
  const char *start;

  if (end == NULL)
    return 0;
  start = end;
  while (start > message && g_ascii_isdigit (start[-1]))
    start--;
  g_assert_true (start < end);
  return g_ascii_strtoull (start, NULL, 10);
}

/* The limits' clock, which only this test moves. */
static gint64 now = 1;

static void
advance (gint64 microseconds)
{
  now += microseconds;
  kvev_log_limit_set_clock (now);
}

typedef struct
{
  guint shown;    /* criticals, one a call */
  guint counts;   /* "more like this" messages */
  guint64 untold; /* what they add up to */
} Tally;

/* What was logged since the last tally, every message naming function. */
static Tally
tally (const char *function)
{
  Tally t = { 0 };

  g_mutex_lock (&messages_lock);
  for (guint i = 0; i < messages->len; i++)
    {
      const char *message = messages->pdata[i];
      guint64 untold = untold_in (message);

      g_assert_true (g_str_has_prefix (message, function));
      if (untold > 0)
        {
          t.counts++;
          t.untold += untold;
        }
      else
        t.shown++;
    }
  g_ptr_array_set_size (messages, 0);
  g_mutex_unlock (&messages_lock);
  return t;
}

static void
test_flood (void)
{
  Tally t;

  tally ("");
  for (guint i = 0; i < FLOOD; i++)
    g_assert_cmpuint (kvev_publisher_stat (NULL, KVEV_STAT_ENQUEUED_EVENTS), ==, 0);
  t = tally ("kvev_publisher_stat: assertion 'publisher != NULL' failed");
  g_assert_cmpuint (t.shown, ==, KVEV_LOG_LIMIT_BURST);
  g_assert_cmpuint (t.counts, ==, 0);

  /* The next call after the window tells the rest, then is shown. */
  advance (WINDOW_US);
  g_assert_cmpuint (kvev_publisher_stat (NULL, KVEV_STAT_ENQUEUED_EVENTS), ==, 0);
  t = tally ("kvev_publisher_stat: assertion 'publisher != NULL' failed");
  g_assert_cmpuint (t.counts, ==, 1);
  g_assert_cmpuint (t.shown, ==, 1);
  g_assert_cmpuint (t.untold, ==, FLOOD - KVEV_LOG_LIMIT_BURST);

  /* A window's count starts from nothing, however many were told. */
  for (guint i = 1; i < FLOOD; i++)
    g_assert_cmpuint (kvev_publisher_stat (NULL, KVEV_STAT_ENQUEUED_EVENTS), ==, 0);
  advance (WINDOW_US);
  g_assert_cmpuint (kvev_publisher_stat (NULL, KVEV_STAT_ENQUEUED_EVENTS), ==, 0);
  t = tally ("kvev_publisher_stat");
  g_assert_cmpuint (t.counts, ==, 1);
  g_assert_cmpuint (t.shown + t.untold, ==, FLOOD - 1 + 1);
  g_assert_cmpuint (t.untold, ==, FLOOD - KVEV_LOG_LIMIT_BURST);
}

/* Within a window, a call a little before its end still counts in it;
 * nothing is told while no call comes after it. */
static void
test_window_edge (void)
{
  Tally t;

  advance (WINDOW_US);
  tally ("");
  for (guint i = 0; i < KVEV_LOG_LIMIT_BURST + 5; i++)
    g_assert_null (kvev_publisher_stats_json (NULL));
  advance (WINDOW_US - 1);
  g_assert_null (kvev_publisher_stats_json (NULL));
  t = tally ("kvev_publisher_stats_json");
  g_assert_cmpuint (t.shown, ==, KVEV_LOG_LIMIT_BURST);
  g_assert_cmpuint (t.counts, ==, 0);
  advance (1);
  g_assert_null (kvev_publisher_stats_json (NULL));
  t = tally ("kvev_publisher_stats_json");
  g_assert_cmpuint (t.shown, ==, 1);
  g_assert_cmpuint (t.untold, ==, 6);
}

/* Another call site's first criticals show, whatever floods elsewhere. */
static void
test_per_call_site (void)
{
  Tally t;

  tally ("");
  for (guint i = 0; i < FLOOD; i++)
    g_assert_false (kvev_publisher_flush (NULL, 0));
  tally ("kvev_publisher_flush");
  g_assert_false (kvev_clear_end (NULL));
  g_assert_false (kvev_config_set (NULL, "enable_kv_events", "true", NULL));
  t = tally ("kvev_");
  g_assert_cmpuint (t.shown, ==, 2);
  g_assert_cmpuint (t.counts, ==, 0);
}

#define THREADS 4
#define CALLS_PER_THREAD 500

static gpointer
bad_calls (gpointer data)
{
  for (guint i = 0; i < CALLS_PER_THREAD; i++)
    g_assert_false (kvev_publisher_is_enabled (NULL));
  return NULL;
}

/* Threads failing at once lose no count and show no more than the
 * budget. */
static void
test_threads (void)
{
  GThread *threads[THREADS];
  Tally t;

  advance (WINDOW_US);
  tally ("");
  for (guint i = 0; i < THREADS; i++)
    threads[i] = g_thread_new ("bad-calls", bad_calls, NULL);
  for (guint i = 0; i < THREADS; i++)
    g_thread_join (threads[i]);
  advance (WINDOW_US);
  g_assert_false (kvev_publisher_is_enabled (NULL));
  t = tally ("kvev_publisher_is_enabled");
  g_assert_cmpuint (t.shown, ==, KVEV_LOG_LIMIT_BURST + 1);
  g_assert_cmpuint (t.shown + t.untold, ==, THREADS * CALLS_PER_THREAD + 1);
}

/* Refused event calls of a live publisher: every one counted in
 * rejected_events, a few logged. */
static void
test_rejected_counted (void)
{
  g_autoptr (KvevConfig) config = kvev_config_new ();
  g_autoptr (KvevPublisher) publisher = NULL;
  g_autoptr (GError) error = NULL;
  Tally t;

  if (!kvev_has_transport ())
    {
      g_test_skip ("built without a transport: no publisher counts");
      return;
    }
  g_assert_true (kvev_config_set (config, "enable_kv_events", "true", NULL));
  g_assert_true (kvev_config_set (config, "kv_events_bind_endpoint", "tcp://127.0.0.1:*", NULL));
  g_assert_true (kvev_config_set (config, "kv_events_backend_id", "precondition", NULL));
  publisher = kvev_publisher_new (config, &error);
  g_assert_no_error (error);

  advance (WINDOW_US);
  tally ("");
  for (guint i = 0; i < FLOOD; i++)
    kvev_publish_stored (publisher, NULL, NULL, -1, NULL, KVEV_MEDIA_CPU);
  g_assert_cmpuint (kvev_publisher_stat (publisher, KVEV_STAT_REJECTED_EVENTS), ==, FLOOD);
  for (guint i = 0; i < FLOOD; i++)
    kvev_publish_stored (publisher, NULL, "k", -1, NULL, (KvevMedia) 0x10);
  g_assert_cmpuint (kvev_publisher_stat (publisher, KVEV_STAT_REJECTED_EVENTS), ==, 2 * FLOOD);
  t = tally ("kvev_publish_stored: ");
  g_assert_cmpuint (t.shown, ==, 2 * KVEV_LOG_LIMIT_BURST);
  advance (WINDOW_US);
  kvev_publish_stored (publisher, NULL, NULL, -1, NULL, KVEV_MEDIA_CPU);
  kvev_publish_stored (publisher, NULL, "k", -1, NULL, (KvevMedia) 0x10);
  t = tally ("kvev_publish_stored: ");
  g_assert_cmpuint (t.counts, ==, 2);
  g_assert_cmpuint (t.untold, ==, 2 * (FLOOD - KVEV_LOG_LIMIT_BURST));
  g_assert_cmpuint (kvev_publisher_stat (publisher, KVEV_STAT_ENQUEUED_EVENTS), ==, 0);
}

int
main (int argc, char **argv)
{
  g_log_set_writer_func (record_writer, NULL, NULL);
  g_test_init (&argc, &argv, NULL);
  /* The criticals are what is tested: none may end the test. */
  g_log_set_always_fatal (G_LOG_FATAL_MASK);
  messages = g_ptr_array_new_with_free_func (g_free);
  advance (0);

  g_test_add_func ("/kvevents/precondition/flood", test_flood);
  g_test_add_func ("/kvevents/precondition/window-edge", test_window_edge);
  g_test_add_func ("/kvevents/precondition/per-call-site", test_per_call_site);
  g_test_add_func ("/kvevents/precondition/threads", test_threads);
  g_test_add_func ("/kvevents/precondition/rejected-counted", test_rejected_counted);
  return g_test_run ();
}
