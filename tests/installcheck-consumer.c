/* installcheck-consumer.c: a program that uses libkvevents the way a
 * store master does, knowing it only through the installed files:
 * <kvevents/kvevents.h> and `pkg-config --cflags --libs kvevents`.  make
 * installcheck and the Debian autopkgtest build-consumer compile and run
 * it against an installed library, and check what it finds; it must not
 * need anything from the source tree.
 *
 *   consumer [DIR]
 *
 * With DIR (a writable directory), it publishes over ipc://DIR/consumer.sock
 * and checks the counters; without, it checks a disabled publisher.
 * Exit status 0 when every check held; each failure is printed.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <kvevents/kvevents.h>

#include <stdio.h>
#include <string.h>

static int failures;

#define CHECK(cond)                                                                                \
  do                                                                                               \
    {                                                                                              \
      if (!(cond))                                                                                 \
        {                                                                                          \
          fprintf (stderr, "consumer: check failed at line %d: %s\n", __LINE__, #cond);            \
          failures++;                                                                              \
        }                                                                                          \
    }                                                                                              \
  while (0)

#define STR_(x) #x
#define STR(x) STR_ (x)

int
main (int argc, char **argv)
{
  const char *dir = argc > 1 ? argv[1] : NULL;
  KvevConfig *config;
  KvevPublisher *publisher;
  KvevClearScope *scope;
  GError *error = NULL;
  char *endpoint = NULL;
  char *json;
  guint64 expected = 0;

  /* The headers and the library that runs belong to the same release. */
  CHECK (strcmp (kvev_version (),
                 STR (KVEV_VERSION_MAJOR) "." STR (KVEV_VERSION_MINOR) "." STR (KVEV_VERSION_MICRO))
         == 0);
  CHECK (KVEV_CHECK_VERSION (1, 0, 0));

  /* Configuration errors are GErrors in the library's domain. */
  config = kvev_config_new ();
  CHECK (!kvev_config_set (config, "kv_events_no_such_flag", "1", &error));
  CHECK (error != NULL && error->domain == KVEV_ERROR && error->code == KVEV_ERROR_UNKNOWN_FLAG);
  g_clear_error (&error);
  CHECK (kvev_config_flags () != NULL && kvev_config_flags ()[0] != NULL);
  CHECK (kvev_media_of_replica (KVEV_REPLICA_MEMORY) == KVEV_MEDIA_CPU);
  CHECK (kvev_media_of_replica (KVEV_REPLICA_DFS) == KVEV_MEDIA_DISK);

  if (dir != NULL && kvev_has_transport ())
    {
      endpoint = g_strdup_printf ("ipc://%s/consumer.sock", dir);
      CHECK (kvev_config_set (config, "enable_kv_events", "true", &error));
      CHECK (kvev_config_set (config, "kv_events_bind_endpoint", endpoint, &error));
      CHECK (kvev_config_set (config, "kv_events_backend_id", "consumer", &error));
      CHECK (error == NULL);
      g_clear_error (&error);
    }

  publisher = kvev_publisher_new (config, &error);
  kvev_config_free (config);
  if (publisher == NULL)
    {
      fprintf (stderr, "consumer: kvev_publisher_new: %s\n", error->message);
      g_error_free (error);
      return 1;
    }
  CHECK (kvev_publisher_is_enabled (publisher) == (endpoint != NULL));

  /* One call per publication point. */
  kvev_publish_stored (publisher, "tenant", "key-1", -1, "group",
                       KVEV_MEDIA_CPU | KVEV_MEDIA_DISK); /* 2 events */
  kvev_publish_delta (publisher, NULL, "key-1", 5, NULL, KVEV_MEDIA_CPU | KVEV_MEDIA_DISK,
                      KVEV_MEDIA_DISK);                                           /* 1 */
  kvev_publish_removed (publisher, "tenant", "key-1", -1, NULL, KVEV_MEDIA_DISK); /* 1 */
  scope = kvev_clear_begin (publisher, "tenant");
  kvev_clear_object_removed (scope, "key-2", -1, NULL, KVEV_MEDIA_CPU); /* 1 */
  CHECK (kvev_clear_end (scope));                                       /* cleared: 1 */
  expected = 6;

  CHECK (kvev_publisher_flush (publisher, 10000));
  if (endpoint != NULL)
    {
      CHECK (kvev_publisher_stat (publisher, KVEV_STAT_ENQUEUED_EVENTS) == expected);
      CHECK (kvev_publisher_stat (publisher, KVEV_STAT_PUBLISHED_EVENTS) == expected);
      CHECK (kvev_publisher_stat (publisher, KVEV_STAT_DROPPED_EVENTS) == 0);
    }
  else
    CHECK (kvev_publisher_stat (publisher, KVEV_STAT_ENQUEUED_EVENTS) == 0);
  json = kvev_publisher_stats_json (publisher);
  CHECK (json != NULL && strstr (json, "\"enqueued_events\"") != NULL);
  g_free (json);
  kvev_publisher_free (publisher);
  kvev_publisher_free (NULL);

  printf ("consumer: libkvevents %s, transport %s, %s publisher: %s\n", kvev_version (),
          kvev_has_transport () ? "yes" : "no", endpoint != NULL ? "enabled" : "disabled",
          failures == 0 ? "ok" : "FAILED");
  g_free (endpoint);
  return failures == 0 ? 0 : 1;
}
