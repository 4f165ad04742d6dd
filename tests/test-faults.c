/* test-faults.c: the publisher when ZeroMQ or GLib fail under it, through
 * the fault seam of the testing build (libkvevents/fault.h).
 * SPDX-License-Identifier: Apache-2.0
 */
#include "test-util.h"
#include "publisher.h"
#include "fault.h"

#include <string.h>

static void
assert_creation_fails (KvevFaultPoint point, const char *expected)
{
  g_autofree char *endpoint = test_ipc_endpoint ("fault-create");
  g_autoptr (KvevConfig) config = test_config_new (endpoint);
  g_autoptr (GError) error = NULL;
  KvevPublisher *publisher;

  kvev_fault_arm (point, 1);
  publisher = kvev_publisher_new (config, &error);
  kvev_fault_arm (point, 0);
  g_assert_null (publisher);
  g_assert_error (error, KVEV_ERROR, KVEV_ERROR_TRANSPORT);
  g_assert_nonnull (strstr (error->message, expected));

  /* Nothing was left behind: the endpoint binds again at once. */
  g_clear_error (&error);
  publisher = kvev_publisher_new (config, &error);
  g_assert_no_error (error);
  kvev_publisher_free (publisher);
}

static void
test_socket_fails (void)
{
  assert_creation_fails (KVEV_FAULT_SOCKET, "ZeroMQ socket");
}

static void
test_thread_fails (void)
{
  assert_creation_fails (KVEV_FAULT_THREAD, "publisher thread");
}

/* A failed send loses its batch, counts it, leaves a sequence gap, and
 * the next batch goes out. */
static void
test_send_fails (void)
{
  g_autofree char *endpoint = test_ipc_endpoint ("fault-send");
  g_autoptr (KvevConfig) config = test_config_new (endpoint);
  g_autoptr (GError) error = NULL;
  g_autoptr (KvevPublisher) publisher = NULL;
  g_autoptr (TestMessage) first = NULL;
  g_autoptr (TestMessage) a = NULL;
  g_autoptr (TestMessage) c = NULL;
  g_autoptr (TestMessage) none = NULL;
  TestSub *sub;
  guint64 id_a;

  test_config_set (config, "kv_events_max_batch_events", "2");
  publisher = kvev_publisher_new (config, &error);
  g_assert_no_error (error);
  sub = test_sub_new (kvev_publisher_get_endpoint (publisher));
  first = test_sync (publisher, sub);

  kvev_fault_arm (KVEV_FAULT_SEND, 2);
  kvev_queue_hold (kvev_publisher_get_queue (publisher), TRUE);
  kvev_publish_stored (publisher, "t", "a", -1, NULL, KVEV_MEDIA_CPU | KVEV_MEDIA_DISK);
  kvev_publish_stored (publisher, "t", "b", -1, NULL, KVEV_MEDIA_CPU | KVEV_MEDIA_DISK);
  kvev_publish_stored (publisher, "t", "c", -1, NULL, KVEV_MEDIA_CPU | KVEV_MEDIA_DISK);
  kvev_queue_hold (kvev_publisher_get_queue (publisher), FALSE);
  g_assert_true (kvev_publisher_flush (publisher, 10000));
  kvev_fault_arm (KVEV_FAULT_SEND, 0);

  a = test_sub_recv (sub, 10000);
  c = test_sub_recv (sub, 10000);
  none = test_sub_recv (sub, 100);
  g_assert_nonnull (a);
  g_assert_nonnull (c);
  g_assert_null (none);
  g_assert_cmpuint (a->n_events, ==, 2);
  g_assert_cmpuint (c->n_events, ==, 2);
  g_assert_cmpuint (c->sequence, ==, a->sequence + 2);
  id_a = test_map_uint (&a->events[0], "event_id");
  g_assert_cmpuint (test_map_uint (&c->events[0], "event_id"), ==, id_a + 4);

  g_assert_cmpuint (kvev_publisher_stat (publisher, KVEV_STAT_SEND_FAILURES), ==, 1);
  g_assert_cmpuint (kvev_publisher_stat (publisher, KVEV_STAT_DROPPED_EVENTS), ==, 2);
  g_assert_cmpuint (kvev_publisher_stat (publisher, KVEV_STAT_LAST_SEQUENCE), ==, c->sequence);
  g_assert_cmpuint (kvev_publisher_stat (publisher, KVEV_STAT_ENQUEUED_EVENTS), ==,
                    kvev_publisher_stat (publisher, KVEV_STAT_PUBLISHED_EVENTS)
                        + kvev_publisher_stat (publisher, KVEV_STAT_DROPPED_EVENTS));
  test_sub_free (sub);
}

/* The ZAP handler's warnings, counted instead of aborting the test.  Any
 * other warning is still fatal. */
static gint zap_warnings;

static void
count_zap_warning (const char *domain G_GNUC_UNUSED, GLogLevelFlags level G_GNUC_UNUSED,
                   const char *message, gpointer data G_GNUC_UNUSED)
{
  if (strstr (message, "authentication handler") == NULL)
    g_error ("Unexpected warning: %s", message);
  g_atomic_int_inc (&zap_warnings);
}

static void
wait_for_zap_warning (void)
{
  guint i;

  for (i = 0; i < 1000 && g_atomic_int_get (&zap_warnings) == 0; i++)
    g_usleep (10000);
  g_assert_cmpint (g_atomic_int_get (&zap_warnings), ==, 1);
}

static KvevPublisher *
new_local_only_publisher (void)
{
  return test_publisher_new_allowing ("tcp://127.0.0.1:*", "127.0.0.1");
}

/* With no ZAP handler bound, libzmq admits every peer: a failed receive
 * must not end the handler.  It warns once, tries again, and answers as
 * before. */
static void
test_zap_receive_fails (void)
{
  g_autoptr (KvevPublisher) publisher = NULL;

  g_atomic_int_set (&zap_warnings, 0);
  kvev_fault_arm (KVEV_FAULT_ZAP_RECEIVE, 1);
  publisher = new_local_only_publisher ();
  wait_for_zap_warning ();
  test_assert_only_local_admitted (publisher);
  kvev_fault_arm (KVEV_FAULT_ZAP_RECEIVE, 0);
  g_assert_cmpint (g_atomic_int_get (&zap_warnings), ==, 1);
}

typedef struct
{
  KvevPublisher *publisher;
  GMutex lock;
  GCond cond;
  gboolean freed;
} Teardown;

static gpointer
free_publisher (gpointer data)
{
  Teardown *teardown = data;

  kvev_publisher_free (teardown->publisher);
  g_mutex_lock (&teardown->lock);
  teardown->freed = TRUE;
  g_cond_signal (&teardown->cond);
  g_mutex_unlock (&teardown->lock);
  return NULL;
}

/* While the handler cannot receive, nobody gets in, even from an allowed
 * address; freeing the publisher does not wait for it to recover. */
static void
test_zap_receive_keeps_failing (void)
{
  Teardown teardown = { 0 };
  gint64 deadline;
  GThread *thread;
  TestSub *local;
  guint i;

  g_atomic_int_set (&zap_warnings, 0);
  kvev_fault_arm_from (KVEV_FAULT_ZAP_RECEIVE, 1);
  teardown.publisher = new_local_only_publisher ();
  wait_for_zap_warning ();
  local = test_sub_new (kvev_publisher_get_endpoint (teardown.publisher));
  for (i = 0; i < 5; i++)
    {
      test_publish_some (teardown.publisher);
      g_assert_false (test_sub_receives_anything (local));
    }
  g_assert_cmpint (g_atomic_int_get (&zap_warnings), ==, 1);

  g_mutex_init (&teardown.lock);
  g_cond_init (&teardown.cond);
  thread = g_thread_new ("teardown", free_publisher, &teardown);
  deadline = g_get_monotonic_time () + 10 * G_TIME_SPAN_SECOND;
  g_mutex_lock (&teardown.lock);
  while (!teardown.freed && g_cond_wait_until (&teardown.cond, &teardown.lock, deadline))
    ;
  if (!teardown.freed)
    g_error ("kvev_publisher_free() waits for a ZAP handler that cannot receive");
  g_mutex_unlock (&teardown.lock);
  g_thread_join (thread);
  g_mutex_clear (&teardown.lock);
  g_cond_clear (&teardown.cond);
  kvev_fault_arm (KVEV_FAULT_ZAP_RECEIVE, 0);
  test_sub_free (local);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  /* g_test_init() made warnings fatal; count_zap_warning() decides. */
  g_log_set_always_fatal (G_LOG_FATAL_MASK | G_LOG_LEVEL_CRITICAL);
  g_log_set_handler ("kvevents", G_LOG_LEVEL_WARNING, count_zap_warning, NULL);

  g_test_add_func ("/kvevents/faults/socket-creation", test_socket_fails);
  g_test_add_func ("/kvevents/faults/thread-creation", test_thread_fails);
  g_test_add_func ("/kvevents/faults/send", test_send_fails);
  g_test_add_func ("/kvevents/faults/zap-receive", test_zap_receive_fails);
  g_test_add_func ("/kvevents/faults/zap-receive-keeps-failing", test_zap_receive_keeps_failing);

  return g_test_run ();
}
