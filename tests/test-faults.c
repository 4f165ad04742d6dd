/* test-faults.c: the publisher when ZeroMQ or GLib fail under it, through
 * the fault seam of the testing build (libkvevents/fault.h).
 * SPDX-License-Identifier: Apache-2.0
 */
#include "test-util.h"
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
  assert_creation_fails (KVEV_FAULT_SOCKET, "PUB socket");
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
  kvev_queue_hold (publisher->queue, TRUE);
  kvev_publish_stored (publisher, "t", "a", -1, NULL, KVEV_MEDIA_CPU | KVEV_MEDIA_DISK);
  kvev_publish_stored (publisher, "t", "b", -1, NULL, KVEV_MEDIA_CPU | KVEV_MEDIA_DISK);
  kvev_publish_stored (publisher, "t", "c", -1, NULL, KVEV_MEDIA_CPU | KVEV_MEDIA_DISK);
  kvev_queue_hold (publisher->queue, FALSE);
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

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/kvevents/faults/socket-creation", test_socket_fails);
  g_test_add_func ("/kvevents/faults/thread-creation", test_thread_fails);
  g_test_add_func ("/kvevents/faults/send", test_send_fails);

  return g_test_run ();
}
