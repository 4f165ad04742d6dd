/* test-queue.c: the drop-oldest queue on its own: calls in, events
 * counted, drops and discards that cut into a call, and the doorbell
 * between producers and the consumer, seen through the test seams
 * kvev_queue_rings () and kvev_queue_consumer_state () of the testing
 * build.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "events/queue.h"

#include <string.h>

#define MAX_CALLS 8

static void
push_stored (KvevQueue *queue, const char *key, KvevMedia media)
{
  kvev_queue_push (
      queue, kvev_call_new_keyed (KVEV_MEDIA_NONE, media, "t", 1, key, strlen (key), NULL, 0));
}

/* Pops once and describes what came out, one "key/medium/event_id" per
 * event. */
static char *
pop_described (KvevQueue *queue, guint max_events, guint64 *gaps)
{
  KvevCall *calls[MAX_CALLS];
  KvevEvent events[KVEV_MAX_EVENTS_PER_CALL];
  g_autoptr (GString) described = g_string_new (NULL);
  guint n, i, j, m;

  kvev_queue_pop (queue, calls, max_events, 0, &n, gaps);
  for (i = 0; i < n; i++)
    {
      m = kvev_call_events (calls[i], calls[i]->dropped, FALSE, events);
      for (j = 0; j < m; j++)
        g_string_append_printf (
            described, "%s%.*s/%s/%" G_GUINT64_FORMAT, described->len > 0 ? " " : "",
            (int) calls[i]->key_len, kvev_call_key (calls[i]),
            events[j].medium == KVEV_MEDIA_CPU ? "cpu" : "disk", events[j].event_id);
      g_free (calls[i]);
    }
  return g_strdup (described->str);
}

static void
assert_counts (KvevQueue *queue, guint64 enqueued, guint64 dropped, guint64 depth)
{
  g_assert_cmpuint (kvev_queue_enqueued (queue), ==, enqueued);
  g_assert_cmpuint (kvev_queue_dropped (queue), ==, dropped);
  g_assert_cmpuint (kvev_queue_depth (queue), ==, depth);
}

/* A two-tier call is one item but two events: capacity, depth and ids
 * count the events, and a full queue drops single events, which can cut
 * the oldest call: its second tier stays and leaves with its own id. */
typedef struct
{
  const char *name;
  guint32 capacity;
  gboolean push_c; /* a, b, and then c */
  guint64 dropped;
  guint64 depth;
  const char *popped;
} PushCase;

static const PushCase push_cases[] = {
  { "counts-events", 0, FALSE, 0, 3, "a/cpu/1 a/disk/2 b/cpu/3" },
  { "drop-cuts-oldest-call", 3, TRUE, 1, 3, "a/disk/2 b/cpu/3 c/cpu/4" },
};

static void
test_push (gconstpointer data)
{
  const PushCase *push = data;
  KvevQueue *queue = kvev_queue_new (push->capacity, NULL);
  guint64 enqueued = push->push_c ? 4 : 3;
  g_autofree char *popped = NULL;
  guint64 gaps = 99;

  push_stored (queue, "a", KVEV_MEDIA_ALL);
  push_stored (queue, "b", KVEV_MEDIA_CPU);
  if (push->push_c)
    push_stored (queue, "c", KVEV_MEDIA_CPU);
  assert_counts (queue, enqueued, push->dropped, push->depth);
  g_assert_cmpuint (kvev_queue_last_event_id (queue), ==, enqueued);
  g_assert_cmpuint (kvev_queue_high_water (queue), ==, push->depth);
  popped = pop_described (queue, 64, &gaps);
  g_assert_cmpstr (popped, ==, push->popped);
  g_assert_cmpuint (gaps, ==, push->dropped);
  assert_counts (queue, enqueued, push->dropped, 0);
  kvev_queue_free (queue);
}

/* Discarding counts every queued event as dropped, also what is left of
 * a call a drop already cut into. */
static void
test_discard_cut_call (void)
{
  KvevQueue *queue = kvev_queue_new (3, NULL);
  g_autofree char *popped = NULL;
  guint64 gaps = 0;

  push_stored (queue, "a", KVEV_MEDIA_ALL);
  push_stored (queue, "b", KVEV_MEDIA_ALL);
  assert_counts (queue, 4, 1, 3);
  g_assert_cmpuint (kvev_queue_discard (queue), ==, 3);
  assert_counts (queue, 4, 4, 0);
  /* The next message skips a number for each of the four. */
  push_stored (queue, "c", KVEV_MEDIA_CPU);
  popped = pop_described (queue, 64, &gaps);
  g_assert_cmpstr (popped, ==, "c/cpu/5");
  g_assert_cmpuint (gaps, ==, 4);
  kvev_queue_free (queue);
}

/* A pop takes whole calls that fit, and a first call even when it alone
 * does not. */
static void
test_pop_whole_calls (void)
{
  KvevQueue *queue = kvev_queue_new (0, NULL);
  g_autofree char *first = NULL;
  g_autofree char *second = NULL;
  g_autofree char *third = NULL;
  guint64 gaps = 0;

  push_stored (queue, "a", KVEV_MEDIA_CPU);
  push_stored (queue, "b", KVEV_MEDIA_ALL);
  first = pop_described (queue, 2, &gaps);
  g_assert_cmpstr (first, ==, "a/cpu/1");
  second = pop_described (queue, 1, &gaps);
  g_assert_cmpstr (second, ==, "b/cpu/2 b/disk/3");
  assert_counts (queue, 3, 0, 0);
  kvev_queue_stop (queue);
  third = pop_described (queue, 64, &gaps);
  g_assert_cmpstr (third, ==, "");
  kvev_queue_free (queue);
}

/* A consumer thread making one kvev_queue_pop (). */
typedef struct
{
  KvevQueue *queue;
  gint64 nap_us;
  KvevCall *calls[MAX_CALLS];
  guint n_calls;
} Consumer;

static gpointer
consumer_main (gpointer data)
{
  Consumer *consumer = data;
  guint64 gaps = 0;

  kvev_queue_pop (consumer->queue, consumer->calls, 64, consumer->nap_us, &consumer->n_calls,
                  &gaps);
  return NULL;
}

static GThread *
consumer_start (Consumer *consumer, KvevQueue *queue, gint64 nap_us)
{
  memset (consumer, 0, sizeof *consumer);
  consumer->queue = queue;
  consumer->nap_us = nap_us;
  return g_thread_new ("test-consumer", consumer_main, consumer);
}

/* Joins the consumer and returns how many calls its pop took. */
static guint
consumer_join (Consumer *consumer, GThread *thread)
{
  guint i;

  g_thread_join (thread);
  for (i = 0; i < consumer->n_calls; i++)
    g_free (consumer->calls[i]);
  return consumer->n_calls;
}

/* Polls until the consumer is in state; FALSE after 10 s. */
static gboolean
wait_for_state (KvevQueue *queue, KvevConsumerState state)
{
  gint64 deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;

  while (kvev_queue_consumer_state (queue) != state)
    {
      if (g_get_monotonic_time () > deadline)
        return FALSE;
      g_usleep (1000);
    }
  return TRUE;
}

/* A consumer that finds the queue empty naps: pushes meanwhile do not
 * wake it (no ring), what they queue waits, and kvev_queue_wake () ends
 * the nap so that one pop takes it all. */
static void
test_nap_gathers_pushes (void)
{
  KvevQueue *queue = kvev_queue_new (0, NULL);
  Consumer consumer;
  GThread *thread;
  guint64 rings;

  /* Far longer than the test, so that only the wake can end it. */
  thread = consumer_start (&consumer, queue, 600 * G_USEC_PER_SEC);
  g_assert_true (wait_for_state (queue, KVEV_CONSUMER_NAPPING));
  rings = kvev_queue_rings (queue);
  push_stored (queue, "a", KVEV_MEDIA_CPU);
  push_stored (queue, "b", KVEV_MEDIA_CPU);
  push_stored (queue, "c", KVEV_MEDIA_CPU);
  g_assert_cmpint (kvev_queue_consumer_state (queue), ==, KVEV_CONSUMER_NAPPING);
  g_assert_cmpuint (kvev_queue_rings (queue), ==, rings);
  kvev_queue_wake (queue);
  g_assert_cmpuint (consumer_join (&consumer, thread), ==, 3);
  g_assert_cmpuint (kvev_queue_rings (queue), ==, rings);
  kvev_queue_free (queue);
}

/* With no nap (0), or once a nap ran out, the consumer sleeps, and the
 * next push rings it awake: once. */
static void
test_sleep_rings (gconstpointer data)
{
  gint64 nap_us = GPOINTER_TO_INT (data);
  KvevQueue *queue = kvev_queue_new (0, NULL);
  Consumer consumer;
  GThread *thread;
  guint64 rings;

  thread = consumer_start (&consumer, queue, nap_us);
  g_assert_true (wait_for_state (queue, KVEV_CONSUMER_SLEEPING));
  rings = kvev_queue_rings (queue);
  push_stored (queue, "a", KVEV_MEDIA_CPU);
  g_assert_cmpuint (consumer_join (&consumer, thread), ==, 1);
  g_assert_cmpuint (kvev_queue_rings (queue), ==, rings + 1);
  kvev_queue_free (queue);
}

int
main (int argc, char **argv)
{
  guint i;

  g_test_init (&argc, &argv, NULL);

  for (i = 0; i < G_N_ELEMENTS (push_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/kvevents/queue/%s", push_cases[i].name);

      g_test_add_data_func (path, &push_cases[i], test_push);
    }
  g_test_add_func ("/kvevents/queue/discard-cut-call", test_discard_cut_call);
  g_test_add_func ("/kvevents/queue/pop-whole-calls", test_pop_whole_calls);
  g_test_add_func ("/kvevents/queue/nap-gathers-pushes", test_nap_gathers_pushes);
  g_test_add_data_func ("/kvevents/queue/sleep-rings", GINT_TO_POINTER (0), test_sleep_rings);
  g_test_add_data_func ("/kvevents/queue/sleep-rings-after-nap", GINT_TO_POINTER (20000),
                        test_sleep_rings);
  return g_test_run ();
}
