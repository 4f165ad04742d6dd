/* interop-publisher.c: a master stand-in for test-interop.py.  It binds,
 * then obeys one command a line on stdin, answering "ok" on stdout after
 * each, so the subscriber in another language decides when it is in sync:
 *   probe      publish one cleared for tenant "sync" and flush
 *   scenario   publish every publication point of kvevents(7) and flush
 *   stats      print the statistics as JSON
 *   bulk N LEN publish N stored events with keys of LEN bytes, flushing
 *              every 64, so the queue itself never holds much
 *   burst N LEN  the same without flushing, so a full queue drops
 *   wait N MS  wait up to MS ms for N subscriptions; "timeout" if not
 *   store      answer snapshot requests from a small store of objects
 *   store-failing  answer them with a walk that fails after 10 objects
 *   churn N S  start N random mutations of the store (seed S) on a thread
 *              of its own, each published under the store's lock
 *   join       wait for the churn to end
 *   truth      print the store, one "tenant key media" a line, then "."
 *   metrics    print the statistics as OpenMetrics text (ending "# EOF")
 *   big N      answer snapshot requests from a store of N objects of its
 *              own, one lock for all taken per object, kvev_snapshot_pause()
 *              every 256 objects
 *   mutate MS  mutate the big store for MS ms, each mutation published
 *              under its lock, and print "ops N max_wait_us W": how many,
 *              and the longest wait for the lock
 * SPDX-License-Identifier: Apache-2.0
 */
#include <kvevents/kvevents.h>
#include <stdio.h>
#include <string.h>

static void
scenario (KvevPublisher *publisher)
{
  static const char nul_key[] = "nul\0key";
  KvevClearScope *scope;

  /* Put commit on both tiers, then an offload-only object. */
  kvev_publish_stored (publisher, "tenant-a", "obj-1", -1, "group-1",
                       KVEV_MEDIA_CPU | KVEV_MEDIA_DISK);
  kvev_publish_stored (publisher, NULL, "obj-2", -1, NULL, KVEV_MEDIA_DISK);
  /* Move from cpu to disk; eviction of the memory tier. */
  kvev_publish_delta (publisher, "tenant-a", "obj-3", -1, NULL, KVEV_MEDIA_CPU, KVEV_MEDIA_DISK);
  kvev_publish_delta (publisher, "tenant-a", "obj-1", -1, "group-1",
                      KVEV_MEDIA_CPU | KVEV_MEDIA_DISK, KVEV_MEDIA_DISK);
  /* Keys a strict reader must survive: UTF-8 with NUL, then not UTF-8. */
  kvev_publish_stored (publisher, "tenant-a", nul_key, sizeof nul_key - 1, NULL, KVEV_MEDIA_CPU);
  kvev_publish_stored (publisher, "tenant-a", "\xff\xfe", 2, NULL, KVEV_MEDIA_CPU);
  kvev_publish_stored (publisher, "tenant-a", "\xe4\xb8\xad\xe6\x96\x87", -1, NULL, KVEV_MEDIA_CPU);
  /* Remove, then RemoveAll of tenant-b. */
  kvev_publish_removed (publisher, NULL, "obj-2", -1, NULL, KVEV_MEDIA_DISK);
  scope = kvev_clear_begin (publisher, "tenant-b");
  kvev_clear_object_removed (scope, "obj-b", -1, NULL, KVEV_MEDIA_CPU);
  kvev_clear_end (scope);
}

static void
bulk (KvevPublisher *publisher, unsigned count, unsigned key_len, gboolean flush)
{
  g_autofree char *key = g_malloc (key_len);
  unsigned i;

  for (i = 0; i < count; i++)
    {
      memset (key, 'a' + (int) (i % 26), key_len);
      g_snprintf (key, key_len, "%u", i);
      kvev_publish_stored (publisher, "bulk", key, key_len, NULL, KVEV_MEDIA_CPU);
      if (flush && i % 64 == 63)
        kvev_publisher_flush (publisher, 10000);
    }
}

/* The store: STORE_TENANTS x STORE_KEYS objects and their tiers, under
 * one lock that each mutation holds while it publishes, as a master's
 * lock of an object; the snapshot function takes it per object. */
#define STORE_TENANTS 3
#define STORE_KEYS 200

static GMutex store_lock;
static guint store[STORE_TENANTS][STORE_KEYS];
static GThread *churner;

typedef struct
{
  KvevPublisher *publisher;
  guint n;
  guint32 seed;
} Churn;

static void
store_name (guint t, guint k, char tenant[16], char key[16])
{
  g_snprintf (tenant, 16, "tenant-%u", t);
  g_snprintf (key, 16, "object-%u", k);
}

static gpointer
churn_main (gpointer data)
{
  g_autofree Churn *churn = data;
  g_autoptr (GRand) rand = g_rand_new_with_seed (churn->seed);
  guint i;

  for (i = 0; i < churn->n; i++)
    {
      guint t = g_rand_int_range (rand, 0, STORE_TENANTS);
      guint k = g_rand_int_range (rand, 0, STORE_KEYS);
      guint media = g_rand_int_range (rand, 0, 4);
      char tenant[16], key[16];

      store_name (t, k, tenant, key);
      g_mutex_lock (&store_lock);
      kvev_publish_delta (churn->publisher, tenant, key, -1, NULL, store[t][k], media);
      store[t][k] = media;
      g_mutex_unlock (&store_lock);
      /* Spread over tens of milliseconds, as long as a walk takes. */
      if (i % 64 == 63)
        g_usleep (100);
    }
  return NULL;
}

static gboolean
walk_store (KvevSnapshot *snapshot, gpointer user_data, GError **error)
{
  guint t, k;

  for (t = 0; t < STORE_TENANTS; t++)
    for (k = 0; k < STORE_KEYS; k++)
      {
        char tenant[16], key[16];

        gboolean going;

        store_name (t, k, tenant, key);
        g_mutex_lock (&store_lock);
        going = kvev_snapshot_add (snapshot, tenant, key, -1, NULL, store[t][k]);
        g_mutex_unlock (&store_lock);
        if (!going || (k % 64 == 63 && !kvev_snapshot_pause (snapshot)))
          return TRUE;
        /* A walk slow enough that the churn mutates what it visits
         * before and after the visit. */
        g_usleep (50);
      }
  return TRUE;
}

/* The big store: objects "big-K" of tenant "big", their tiers. */
static GMutex big_lock;
static guint8 *big_store;
static guint big_size;

static void
big_name (guint k, char key[24])
{
  g_snprintf (key, 24, "big-%u", k);
}

static gboolean
walk_big (KvevSnapshot *snapshot, gpointer user_data, GError **error)
{
  guint k;

  for (k = 0; k < big_size; k++)
    {
      char key[24];
      gboolean going;

      big_name (k, key);
      g_mutex_lock (&big_lock);
      going = kvev_snapshot_add (snapshot, "big", key, -1, NULL, big_store[k]);
      g_mutex_unlock (&big_lock);
      if (!going || (k % 256 == 255 && !kvev_snapshot_pause (snapshot)))
        break;
    }
  return TRUE;
}

static void
mutate_big (KvevPublisher *publisher, guint ms)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (ms);
  gint64 end = g_get_monotonic_time () + (gint64) ms * 1000;
  gint64 max_wait = 0;
  guint64 ops = 0;

  while (big_size > 0 && g_get_monotonic_time () < end)
    {
      guint k = g_rand_int_range (rand, 0, (gint32) big_size);
      guint media = g_rand_int_range (rand, 0, 4);
      gint64 start = g_get_monotonic_time ();
      char key[24];

      big_name (k, key);
      g_mutex_lock (&big_lock);
      max_wait = MAX (max_wait, g_get_monotonic_time () - start);
      kvev_publish_delta (publisher, "big", key, -1, NULL, big_store[k], media);
      big_store[k] = media;
      g_mutex_unlock (&big_lock);
      /* A master's rate, not a flood that only fills the queue. */
      if (++ops % 8 == 0)
        g_usleep (100);
    }
  printf ("ops %" G_GUINT64_FORMAT " max_wait_us %" G_GINT64_FORMAT "\n", ops, max_wait);
}

static gboolean
walk_and_fail (KvevSnapshot *snapshot, gpointer user_data, GError **error)
{
  guint k;

  for (k = 0; k < 10; k++)
    {
      char tenant[16], key[16];

      store_name (0, k, tenant, key);
      kvev_snapshot_add (snapshot, tenant, key, -1, NULL, KVEV_MEDIA_CPU);
    }
  g_set_error_literal (error, g_quark_from_static_string ("interop-publisher"), 1,
                       "the walk broke off");
  return FALSE;
}

static void
print_truth (void)
{
  guint t, k;

  g_mutex_lock (&store_lock);
  for (t = 0; t < STORE_TENANTS; t++)
    for (k = 0; k < STORE_KEYS; k++)
      if (store[t][k] != 0)
        printf ("tenant-%u object-%u %u\n", t, k, store[t][k]);
  g_mutex_unlock (&store_lock);
  printf (".\n");
}

int
main (int argc, char **argv)
{
  g_autoptr (KvevConfig) config = kvev_config_new ();
  g_autoptr (KvevPublisher) publisher = NULL;
  g_autoptr (GError) error = NULL;
  char line[256];
  unsigned count, key_len; /* or, for wait, the timeout */
  int i;

  for (i = 1; i < argc; i++)
    {
      g_auto (GStrv) pair = g_strsplit (argv[i], "=", 2);

      if (pair[1] == NULL || !kvev_config_set (config, pair[0], pair[1], &error))
        {
          fprintf (stderr, "%s: %s\n", argv[i], error ? error->message : "expected FLAG=VALUE");
          return 2;
        }
    }
  publisher = kvev_publisher_new (config, &error);
  if (publisher == NULL)
    {
      fprintf (stderr, "%s\n", error->message);
      return 1;
    }
  printf ("%s\n", kvev_publisher_get_endpoint (publisher));
  fflush (stdout);
  while (fgets (line, sizeof line, stdin) != NULL)
    {
      g_strchomp (line);
      if (strcmp (line, "probe") == 0)
        kvev_publish_cleared (publisher, "sync");
      else if (strcmp (line, "scenario") == 0)
        scenario (publisher);
      else if (sscanf (line, "bulk %u %u", &count, &key_len) == 2 && key_len > 0)
        bulk (publisher, count, key_len, TRUE);
      else if (sscanf (line, "burst %u %u", &count, &key_len) == 2 && key_len > 0)
        bulk (publisher, count, key_len, FALSE);
      else if (sscanf (line, "wait %u %u", &count, &key_len) == 2)
        {
          if (!kvev_publisher_wait_subscribers (publisher, count, key_len))
            {
              printf ("timeout\n");
              fflush (stdout);
              continue;
            }
        }
      else if (strcmp (line, "store") == 0)
        kvev_publisher_set_snapshot_func (publisher, walk_store, NULL, NULL);
      else if (sscanf (line, "big %u", &count) == 1 && big_store == NULL)
        {
          guint k;

          big_store = g_malloc (count);
          for (k = 0; k < count; k++)
            big_store[k] = 1 + k % 3;
          big_size = count;
          kvev_publisher_set_snapshot_func (publisher, walk_big, NULL, NULL);
        }
      else if (sscanf (line, "mutate %u", &count) == 1)
        mutate_big (publisher, count);
      else if (strcmp (line, "store-failing") == 0)
        kvev_publisher_set_snapshot_func (publisher, walk_and_fail, NULL, NULL);
      else if (sscanf (line, "churn %u %u", &count, &key_len) == 2 && churner == NULL)
        {
          Churn *churn = g_new0 (Churn, 1);

          *churn = (Churn){ publisher, count, key_len };
          churner = g_thread_new ("churn", churn_main, churn);
        }
      else if (strcmp (line, "join") == 0 && churner != NULL)
        g_thread_join (g_steal_pointer (&churner));
      else if (strcmp (line, "truth") == 0)
        print_truth ();
      else if (strcmp (line, "metrics") == 0)
        {
          g_autofree char *text = kvev_publisher_stats_openmetrics (publisher);
          fputs (text, stdout);
        }
      else if (strcmp (line, "stats") == 0)
        {
          g_autofree char *json = kvev_publisher_stats_json (publisher);
          const char *replay = kvev_publisher_get_replay_endpoint (publisher);
          const char *snapshots = kvev_publisher_get_snapshot_endpoint (publisher);

          /* The side endpoints as more members, for the tests. */
          json[strlen (json) - 1] = '\0';
          printf ("%s, \"replay_endpoint\": \"%s\", \"snapshot_endpoint\": \"%s\"}\n", json,
                  replay ? replay : "", snapshots ? snapshots : "");
        }
      else
        {
          fprintf (stderr, "unknown command: %s\n", line);
          return 2;
        }
      if (!kvev_publisher_flush (publisher, 10000))
        return 1;
      printf ("ok\n");
      fflush (stdout);
    }
  return 0;
}
