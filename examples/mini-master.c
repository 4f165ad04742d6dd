/* mini-master.c: a store master's start-up and shutdown around
 * libkvevents, and a scripted run of client requests through the store
 * of store.c, one for every publication point.
 *
 * It needs nothing but the installed library, as a master's build does
 * (make installcheck builds it so):
 *
 *   cc -o mini-master mini-master.c store.c $(pkg-config --cflags --libs kvevents)
 *   ./mini-master --enable-kv-events --kv-events-backend-id=master-0 \
 *     --kv-events-bind-endpoint=tcp://127.0.0.1:5557
 *
 * and kvevents-sub --endpoint=tcp://127.0.0.1:5557 prints what it
 * publishes.  PUB sockets drop what they send before a subscription has
 * arrived, so a subscriber that connects while the requests run sees
 * only those after it: a master publishes for as long as it serves, and
 * its subscribers rebuild their state from the events they see from
 * then on (kvevents(7), "SUBSCRIBERS").  It ends by printing the
 * publisher's statistics, the body of a master's GET /kv_events/status.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "store.h"

#include <stdio.h>
#include <string.h>

#define REPLICA(type, client)                                                                      \
  {                                                                                                \
    (type), REPLICA_PROCESSING, (client)                                                           \
  }

/* This store keeps no oplog: every erase may go ahead. */
static OplogResult
oplog_always_ok (gpointer data)
{
  (void) data;
  return OPLOG_OK;
}

/* A Put committed at once, as most are. */
static Object *
put (Store *store, const char *tenant, const char *key, const char *group, const Replica *replicas,
     guint n_replicas)
{
  Object *object
      = store_put_start (store, tenant, key, strlen (key), group, replicas, n_replicas, 4096);

  if (object != NULL)
    store_put_end (store, object); /* stored, for every tier */
  return object;
}

/* The requests a day of clients might send, in an order that reaches
 * every publication point.  The comment on each says what it publishes. */
static void
serve_requests (Store *store)
{
  const Replica memory[] = { REPLICA (KVEV_REPLICA_MEMORY, 1) };
  const Replica memory_and_disk[]
      = { REPLICA (KVEV_REPLICA_MEMORY, 1), REPLICA (KVEV_REPLICA_LOCAL_DISK, 2) };
  const Replica two_memories[]
      = { REPLICA (KVEV_REPLICA_MEMORY, 1), REPLICA (KVEV_REPLICA_MEMORY, 3) };
  const char *const batch[] = { "prefix/0", "prefix/1", "prefix/2" };
  const char *const failing = "model/layer-00/block-9";
  g_autoptr (GError) error = NULL;
  Object *a, *b, *c, *d, *leased;
  guint i;

  /* Put: stored cpu and stored disk.  A Put that fails before its commit
   * was never readable: its revoke publishes nothing. */
  a = put (store, "tenant-a", "model/layer-00/block-0", NULL, memory_and_disk, 2);
  d = store_put_start (store, "tenant-a", failing, strlen (failing), NULL, memory, 1, 4096);
  store_put_revoke (store, d);

  /* BatchPut: stored cpu for each object committed. */
  for (i = 0; i < G_N_ELEMENTS (batch); i++)
    put (store, "tenant-b", batch[i], "group-1", memory, 1);

  /* Offload to disk: stored disk when it completes.  Eviction from
   * memory: removed cpu.  Promotion back: stored cpu. */
  b = put (store, "tenant-a", "model/layer-01/block-0", "group-1", memory, 1);
  store_task_start (store, b, TASK_OFFLOAD, KVEV_REPLICA_DISK, 2);
  store_task_end (store, b);
  store_evict (store, b, KVEV_MEDIA_CPU);
  store_task_start (store, b, TASK_PROMOTE, KVEV_REPLICA_MEMORY, 1);
  store_task_end (store, b);

  /* Copy onto a tier the object has already: nothing.  Move of b's
   * memory replica onto a DFS: removed cpu (it was on disk already). */
  store_task_start (store, a, TASK_COPY, KVEV_REPLICA_MEMORY, 3);
  store_task_end (store, a);
  store_move_replica (store, b, 1, KVEV_REPLICA_DFS, 4);

  /* Upsert: removed cpu for the old value at once, stored cpu and disk
   * for the new one at the commit.  An Upsert that fails after its start
   * publishes nothing more: its removed said it all. */
  c = put (store, "tenant-a", "model/layer-02/block-0", NULL, memory, 1);
  store_upsert_start (store, c, 8192, memory_and_disk, 2);
  store_upsert_end (store, c);
  d = put (store, "tenant-a", "model/layer-03/block-0", NULL, memory, 1);
  store_upsert_start (store, d, 4096, NULL, 0);
  store_upsert_revoke (store, d);

  /* Replica clear of one of two memory replicas: nothing; of the last
   * one: removed cpu, from the erase path that drops the object. */
  d = put (store, "tenant-a", "model/layer-04/block-0", NULL, two_memories, 2);
  store_clear_replica (store, d, 0);
  store_clear_replica (store, d, 0);

  /* Client 2 goes away, and with it the disk replicas of a and c:
   * removed disk for each (b keeps its DFS replica: nothing). */
  store_cleanup_client (store, 2);

  /* Remove, and a regex remove: removed for every tier the objects had. */
  store_remove (store, c);
  if (store_remove_by_regex (store, "tenant-b", "^prefix/[01]$", &error) == 0 && error != NULL)
    g_printerr ("mini-master: regex remove: %s\n", error->message);

  /* RemoveAll: removed for each object it erases, then the tenant's
   * cleared, only when it left none behind.  A leased object stays, so
   * the first one publishes no cleared; once the lease has run out on the
   * store's operation clock, the second one does. */
  leased = put (store, "tenant-c", "model/layer-05/block-0", NULL, memory, 1);
  put (store, "tenant-c", "model/layer-05/block-1", NULL, memory, 1);
  leased->lease_until = store->now + 1;
  store_remove_all (store, "tenant-c", oplog_always_ok, NULL);
  store->now++;
  store_remove_all (store, "tenant-c", oplog_always_ok, NULL);
}

int
main (int argc, char **argv)
{
  g_autoptr (KvevConfig) config = kvev_config_new ();
  g_autoptr (GOptionContext) context = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *close_timeout = NULL;
  g_autofree char *stats = NULL;
  guint64 close_timeout_ms;
  KvevPublisher *publisher;
  Store store;

  context = g_option_context_new (NULL);
  g_option_context_set_summary (context, "A small in-memory store master that publishes its "
                                         "cache availability through libkvevents.");
  /* The library's own flags, exactly as a master exposes them, and a key
   * file of them that the command line overrides. */
  g_option_context_add_group (context, kvev_config_option_group_with_file (config));
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("mini-master: %s\n", error->message);
      return 2;
    }

  /* A master creates its publisher once, at start-up, from its flags. */
  publisher = kvev_publisher_new (config, &error);
  if (publisher == NULL)
    {
      g_printerr ("mini-master: %s\n", error->message);
      return 1;
    }
  store_init (&store, publisher);
  /* A subscriber that starts late asks for the store's state on
   * kv_events_snapshot_endpoint; the library walks it with this. */
  kvev_publisher_set_snapshot_func (publisher, store_snapshot, &store, NULL);

  serve_requests (&store);

  /* At shutdown a master flushes, bounded, before it frees the publisher,
   * so subscribers get the last events. */
  close_timeout = kvev_config_get (config, "kv_events_close_timeout_ms");
  if (!g_ascii_string_to_unsigned (close_timeout, 10, 0, G_MAXUINT32, &close_timeout_ms, NULL))
    close_timeout_ms = 1000;
  if (!kvev_publisher_flush (publisher, (gint64) close_timeout_ms))
    g_printerr ("mini-master: the last events were not all sent within %" G_GUINT64_FORMAT " ms\n",
                close_timeout_ms);
  stats = kvev_publisher_stats_json (publisher);
  g_print ("%s\n", stats);

  /* Before the store goes: this waits for a walk in progress. */
  kvev_publisher_set_snapshot_func (publisher, NULL, NULL, NULL);
  store_clear (&store);
  kvev_publisher_free (publisher);
  return 0;
}
