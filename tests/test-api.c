/* test-api.c: the public API as a master sees it, through the installed
 * library's ABI (linked to libkvevents.la, not the internals).  Runs in
 * both the transport and the --without-zmq build.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include <kvevents/kvevents.h>
#include <glib/gstdio.h>
#include <string.h>

/* A private directory for the socket, removed at the end of main (). */
static char *socket_dir;
static char *endpoint;

static KvevConfig *
enabled_config (void)
{
  KvevConfig *config = kvev_config_new ();

  g_assert_true (kvev_config_set (config, "enable_kv_events", "true", NULL));
  g_assert_true (kvev_config_set (config, "kv_events_bind_endpoint", endpoint, NULL));
  g_assert_true (kvev_config_set (config, "kv_events_backend_id", "b", NULL));
  return config;
}

/* A RemoveAll of tenant that removes one object and skips none. */
static gboolean
remove_all_of_one (KvevPublisher *publisher, const char *tenant)
{
  KvevClearScope *scope = kvev_clear_begin (publisher, tenant);

  kvev_clear_object_removed (scope, "k", -1, NULL, KVEV_MEDIA_CPU);
  return kvev_clear_end (scope);
}

/* Every call on a disabled publisher is accepted and does nothing. */
static void
exercise_disabled (KvevPublisher *publisher)
{
  g_autofree char *json = NULL;
  KvevClearScope *scope;
  guint stat;

  g_assert_false (kvev_publisher_is_enabled (publisher));
  g_assert_null (kvev_publisher_get_endpoint (publisher));
  kvev_publish_stored (publisher, "t", "k", -1, "g", KVEV_MEDIA_CPU | KVEV_MEDIA_DISK);
  kvev_publish_removed (publisher, NULL, "k", 1, NULL, KVEV_MEDIA_DISK);
  kvev_publish_delta (publisher, "t", "k", -1, NULL, KVEV_MEDIA_CPU, KVEV_MEDIA_DISK);
  kvev_publish_cleared (publisher, "t");

  /* The RemoveAll decision is the same as with a transport. */
  scope = kvev_clear_begin (publisher, "t");
  g_assert_false (kvev_clear_end (scope));
  g_assert_true (remove_all_of_one (publisher, "t"));
  scope = kvev_clear_begin (publisher, "t");
  kvev_clear_object_removed (scope, "k", -1, NULL, KVEV_MEDIA_CPU);
  kvev_clear_skipped (scope, KVEV_SKIP_LEASED);
  g_assert_false (kvev_clear_end (scope));

  g_assert_true (kvev_publisher_flush (publisher, 0));
  for (stat = KVEV_STAT_ENQUEUED_EVENTS; stat <= KVEV_STAT_SKIPPED_NON_UTF8_EVENTS; stat++)
    g_assert_cmpuint (kvev_publisher_stat (publisher, (KvevStat) stat), ==, 0);
  json = kvev_publisher_stats_json (publisher);
  g_assert_true (g_str_has_prefix (json, "{\"enabled\": false, "));
}

static void
test_disabled_by_config (void)
{
  g_autoptr (KvevConfig) config = kvev_config_new ();
  g_autoptr (GError) error = NULL;
  KvevPublisher *publisher;

  publisher = kvev_publisher_new (config, &error);
  g_assert_no_error (error);
  g_assert_nonnull (publisher);
  exercise_disabled (publisher);
  kvev_publisher_free (publisher);
  kvev_publisher_free (NULL);
}

static void
test_enabled (void)
{
  g_autoptr (KvevConfig) config = enabled_config ();
  g_autoptr (GError) error = NULL;
  KvevPublisher *publisher;

  g_assert_cmpint (kvev_has_transport (), ==, KVEV_TEST_HAVE_ZMQ);
  if (!kvev_has_transport ())
    {
      /* Without a transport the master's code still runs: a disabled
       * publisher, and one message saying why nothing is published. */
      g_test_expect_message ("kvevents", G_LOG_LEVEL_MESSAGE, "*without a transport*");
      publisher = kvev_publisher_new (config, &error);
      g_test_assert_expected_messages ();
      g_assert_no_error (error);
      g_assert_nonnull (publisher);
      exercise_disabled (publisher);
      kvev_publisher_free (publisher);
      return;
    }
  publisher = kvev_publisher_new (config, &error);
  g_assert_no_error (error);
  g_assert_true (kvev_publisher_is_enabled (publisher));
  g_assert_cmpstr (kvev_publisher_get_endpoint (publisher), ==, endpoint);
  kvev_publish_stored (publisher, "t", "k", -1, NULL, KVEV_MEDIA_CPU | KVEV_MEDIA_DISK);
  g_assert_true (kvev_publisher_flush (publisher, 10000));
  g_assert_cmpuint (kvev_publisher_stat (publisher, KVEV_STAT_ENQUEUED_EVENTS), ==, 2);
  g_assert_cmpuint (kvev_publisher_stat (publisher, KVEV_STAT_PUBLISHED_EVENTS), ==, 2);
  g_assert_cmpuint (kvev_publisher_stat (publisher, KVEV_STAT_PUBLISHED_BATCHES), >=, 1);
  g_assert_cmpuint (kvev_publisher_stat (publisher, (KvevStat) 9999), ==, 0);
  kvev_publisher_free (publisher);
}

/* A bad configuration is reported the same way in both builds. */
static void
test_invalid_config (void)
{
  g_autoptr (KvevConfig) config = enabled_config ();
  g_autoptr (GError) error = NULL;

  g_assert_true (kvev_config_set (config, "kv_events_backend_id", "", NULL));
  g_assert_null (kvev_publisher_new (config, &error));
  g_assert_error (error, KVEV_ERROR, KVEV_ERROR_INCOMPLETE);
  g_assert_nonnull (strstr (error->message, "kv_events_backend_id"));
}

static void
test_version (void)
{
  g_autofree char *expected
      = g_strdup_printf ("%d.%d.%d", KVEV_VERSION_MAJOR, KVEV_VERSION_MINOR, KVEV_VERSION_MICRO);

  g_assert_nonnull (kvev_version ());
  g_assert_cmpstr (kvev_version (), ==, expected);
  /* The package version configure knows is the same three numbers. */
  g_assert_cmpstr (kvev_version (), ==, PACKAGE_VERSION);
  g_assert_true (KVEV_CHECK_VERSION (1, 0, 0));
  g_assert_true (KVEV_CHECK_VERSION (KVEV_VERSION_MAJOR, KVEV_VERSION_MINOR, KVEV_VERSION_MICRO));
  g_assert_false (
      KVEV_CHECK_VERSION (KVEV_VERSION_MAJOR, KVEV_VERSION_MINOR, KVEV_VERSION_MICRO + 1));
  g_assert_false (KVEV_CHECK_VERSION (KVEV_VERSION_MAJOR + 1, 0, 0));
}

/* The build says whether it has a transport, and the library agrees. */
static void
test_has_transport (void)
{
  g_assert_cmpint (kvev_has_transport (), ==, KVEV_TEST_HAVE_ZMQ);
}

/* The error domain and its codes are ABI. */
static void
test_error_quark (void)
{
  g_assert_cmpstr (g_quark_to_string (KVEV_ERROR), ==, "kvev-error-quark");
  g_assert_cmpuint (KVEV_ERROR, ==, kvev_error_quark ());
  g_assert_cmpint (KVEV_ERROR_UNKNOWN_FLAG, ==, 0);
  g_assert_cmpint (KVEV_ERROR_INVALID_VALUE, ==, 1);
  g_assert_cmpint (KVEV_ERROR_INCOMPLETE, ==, 2);
  g_assert_cmpint (KVEV_ERROR_TRANSPORT, ==, 3);
}

static void
test_null_preconditions (void)
{
  g_test_expect_message ("kvevents", G_LOG_LEVEL_CRITICAL, "*publisher != NULL*");
  g_assert_false (kvev_publisher_is_enabled (NULL));
  g_test_assert_expected_messages ();
  g_test_expect_message ("kvevents", G_LOG_LEVEL_CRITICAL, "*publisher != NULL*");
  kvev_publish_cleared (NULL, "t");
  g_test_assert_expected_messages ();
  g_test_expect_message ("kvevents", G_LOG_LEVEL_CRITICAL, "*publisher != NULL*");
  g_assert_null (kvev_clear_begin (NULL, "t"));
  g_test_assert_expected_messages ();
  g_test_expect_message ("kvevents", G_LOG_LEVEL_CRITICAL, "*scope != NULL*");
  g_assert_false (kvev_clear_end (NULL));
  g_test_assert_expected_messages ();
  g_test_expect_message ("kvevents", G_LOG_LEVEL_CRITICAL, "*config != NULL*");
  g_assert_null (kvev_publisher_new (NULL, NULL));
  g_test_assert_expected_messages ();
}

/* A disabled publisher under skip answers kvev_clear_end () as an enabled
 * one would, and counts nothing. */
static void
test_non_utf8_skip_disabled (void)
{
  g_autoptr (KvevConfig) config = kvev_config_new ();
  g_autoptr (KvevPublisher) publisher = NULL;
  g_autoptr (GError) error = NULL;

  g_assert_true (kvev_config_set (config, "kv_events_non_utf8", "skip", NULL));
  publisher = kvev_publisher_new (config, &error);
  g_assert_no_error (error);
  g_assert_false (kvev_publisher_is_enabled (publisher));
  g_assert_false (remove_all_of_one (publisher, "\xfe"));
  g_assert_true (remove_all_of_one (publisher, "t"));
  g_assert_cmpuint (kvev_publisher_stat (publisher, KVEV_STAT_SKIPPED_NON_UTF8_EVENTS), ==, 0);
}

/* The subscriber in both builds: without the transport it is made, and
 * what would touch the network fails with a GError that says so. */
static void
test_subscriber (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (KvevSubscriber) subscriber = kvev_subscriber_new (&error);
  g_autofree char *json = NULL;
  g_autofree char *metrics = NULL;

  g_assert_no_error (error);
  g_assert_nonnull (subscriber);
  g_assert_false (kvev_subscriber_set_option (subscriber, (KvevSubscriberOption) 99, 1, &error));
  g_assert_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE);
  g_clear_error (&error);
  g_assert_false (
      kvev_subscriber_set_option (subscriber, KVEV_SUBSCRIBER_OPTION_HEARTBEAT_MS, -1, &error));
  g_assert_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE);
  g_clear_error (&error);
  g_assert_cmpstr (kvev_event_kind_name (KVEV_KIND_REMOVED), ==, "removed");
#if KVEV_TEST_HAVE_ZMQ
  g_assert_cmpint (
      kvev_subscriber_add_publisher (subscriber, "bogus://x", NULL, NULL, NULL, &error), ==, -1);
  g_assert_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE);
  g_clear_error (&error);
  /* ZeroMQ would retry this one for ever. */
  g_assert_cmpint (
      kvev_subscriber_add_publisher (subscriber, "tcp://127.0.0.1", NULL, NULL, NULL, &error), ==,
      -1);
  g_assert_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE);
  g_clear_error (&error);
  g_assert_true (kvev_subscriber_dispatch (subscriber, 0, &error));
  g_assert_no_error (error);
  g_assert_cmpint (kvev_subscriber_get_fd (subscriber), >=, 0);
#else
  g_assert_cmpint (
      kvev_subscriber_add_publisher (subscriber, "ipc:///nowhere", NULL, NULL, NULL, &error), ==,
      -1);
  g_assert_error (error, KVEV_ERROR, KVEV_ERROR_TRANSPORT);
  g_clear_error (&error);
  g_assert_false (kvev_subscriber_dispatch (subscriber, 0, &error));
  g_assert_error (error, KVEV_ERROR, KVEV_ERROR_TRANSPORT);
  g_clear_error (&error);
  g_assert_cmpint (kvev_subscriber_get_fd (subscriber), ==, -1);
#endif
  g_assert_cmpuint (kvev_subscriber_get_n_publishers (subscriber), ==, 0);
  g_assert_cmpuint (kvev_subscriber_stat (subscriber, -1, KVEV_SUBSCRIBER_STAT_EVENTS), ==, 0);
  json = kvev_subscriber_stats_json (subscriber);
  g_assert_true (g_str_has_suffix (json, "\"publishers\": []}"));
  metrics = kvev_subscriber_stats_openmetrics (subscriber);
  g_assert_true (g_str_has_suffix (metrics, "# EOF\n"));
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *socket_path = NULL;
  int status;

  g_test_init (&argc, &argv, NULL);
  socket_dir = g_dir_make_tmp ("kvev-test-api-XXXXXX", &error);
  g_assert_no_error (error);
  socket_path = g_build_filename (socket_dir, "kv-events", NULL);
  endpoint = g_strconcat ("ipc://", socket_path, NULL);

  g_test_add_func ("/kvevents/api/version", test_version);
  g_test_add_func ("/kvevents/api/has-transport", test_has_transport);
  g_test_add_func ("/kvevents/api/error-quark", test_error_quark);
  g_test_add_func ("/kvevents/api/disabled-by-config", test_disabled_by_config);
  g_test_add_func ("/kvevents/api/enabled", test_enabled);
  g_test_add_func ("/kvevents/api/invalid-config", test_invalid_config);
  g_test_add_func ("/kvevents/api/null-preconditions", test_null_preconditions);
  g_test_add_func ("/kvevents/api/non-utf8-skip-disabled", test_non_utf8_skip_disabled);
  g_test_add_func ("/kvevents/api/subscriber", test_subscriber);

  status = g_test_run ();
  /* libzmq leaves the socket file when the publisher closes. */
  g_unlink (socket_path);
  g_rmdir (socket_dir);
  g_free (endpoint);
  g_free (socket_dir);
  return status;
}
