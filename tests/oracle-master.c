/* oracle-master.c: the example master's store (examples/store.c) driven
 * by a seeded random workload, for tests/test-oracle.sh and make demo.
 *
 * The workload runs every operation of the publication-point table many
 * times over, in random order on random objects, and --truth writes the
 * store's own availability at the end: the oracle test compares it with
 * what a subscriber rebuilds from the events alone.  --wait-subscribers
 * waits for the subscriber's subscription on the library's socket, so
 * that it misses nothing.  Built with oracle-broken.c it is
 * oracle-master-broken, a master that leaves out a publication, which the
 * oracle must notice.  Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <glib/gi18n.h>

#include <kvevents/kvevents.h>

#include "kvtool.h"
#include "store.h"
#include <base/utf8.h>

/* The longest --hold-file or --resume-file keeps a master waiting: a test
 * that forgot its file must not leave a master behind. */
#define HOLD_LIMIT_US (G_GINT64_CONSTANT (120) * G_USEC_PER_SEC)

/* ------------------------------------------------------------------------
 * The workload: seeded random operations on the store
 * ------------------------------------------------------------------------ */

#define N_CLIENTS 8
#define N_GROUPS 4

typedef enum
{
  OP_PUT_START,
  OP_PUT_END,
  OP_PUT_REVOKE,
  OP_BATCH_PUT,
  OP_UPSERT_START,
  OP_COPY,
  OP_OFFLOAD,
  OP_PROMOTE,
  OP_TASK_END,
  OP_MOVE,
  OP_EVICT_MEMORY,
  OP_EVICT_DISK,
  OP_CLEAR_REPLICA,
  OP_CLEANUP_CLIENT,
  OP_REMOVE,
  OP_BATCH_REMOVE,
  OP_REMOVE_REGEX,
  OP_REMOVE_ALL,
  OP_LEASE,
  N_OPS
} Op;

typedef struct
{
  Store *store;
  GRand *rand;
  char **tenants;
  guint n_tenants;
  guint key_space;
  guint64 done[N_OPS]; /* per operation, for the summary */
  guint64 cleared;     /* RemoveAlls that published cleared */
} Workload;

static const char *
pick_tenant (Workload *workload)
{
  return workload->tenants[g_rand_int_range (workload->rand, 0, (gint32) workload->n_tenants)];
}

/* Mostly plain ASCII keys; now and then one with an embedded NUL (valid
 * UTF-8, sent as str) or an invalid byte (sent as bin), which subscribers
 * must get byte for byte. */
static GBytes *
pick_key (Workload *workload)
{
  guint n = (guint) g_rand_int_range (workload->rand, 0, (gint32) workload->key_space);
  guint flavour = (guint) g_rand_int_range (workload->rand, 0, 64);
  g_autofree char *text = g_strdup_printf ("key-%u", n);
  GByteArray *key = g_byte_array_new ();

  g_byte_array_append (key, (const guint8 *) text, (guint) strlen (text));
  if (flavour == 0)
    g_byte_array_append (key, (const guint8 *) "\0nul", 4);
  else if (flavour == 1)
    g_byte_array_append (key, (const guint8 *) "\xff", 1);
  return g_byte_array_free_to_bytes (key);
}

static KvevReplicaType
pick_type (Workload *workload)
{
  return (KvevReplicaType) g_rand_int_range (workload->rand, KVEV_REPLICA_MEMORY,
                                             KVEV_REPLICA_DFS + 1);
}

static KvevReplicaType
pick_disk_type (Workload *workload)
{
  return (KvevReplicaType) g_rand_int_range (workload->rand, KVEV_REPLICA_DISK,
                                             KVEV_REPLICA_DFS + 1);
}

static guint
pick_client (Workload *workload)
{
  return (guint) g_rand_int_range (workload->rand, 0, N_CLIENTS);
}

static guint
pick_replicas (Workload *workload, Replica *replicas)
{
  guint n = (guint) g_rand_int_range (workload->rand, 1, 4), i;

  for (i = 0; i < n; i++)
    {
      replicas[i].type = pick_type (workload);
      replicas[i].state = REPLICA_PROCESSING;
      replicas[i].client = pick_client (workload);
    }
  return n;
}

static Object *
pick_from (Workload *workload, GPtrArray *objects)
{
  if (objects->len == 0)
    return NULL;
  return g_ptr_array_index (objects, g_rand_int_range (workload->rand, 0, (gint32) objects->len));
}

/* PutStart of a random key, or NULL when the key exists. */
static Object *
start_random_put (Workload *workload)
{
  g_autoptr (GBytes) key = pick_key (workload);
  g_autofree char *group = NULL;
  Replica replicas[3];
  guint n = pick_replicas (workload, replicas);
  gsize key_len;
  const char *key_data = g_bytes_get_data (key, &key_len);
  gint group_number = g_rand_int_range (workload->rand, -1, N_GROUPS);

  if (group_number >= 0)
    group = g_strdup_printf ("group-%d", group_number);
  return store_put_start (workload->store, pick_tenant (workload), key_data, key_len, group,
                          replicas, n, (gsize) g_rand_int_range (workload->rand, 1, 4) * 4096);
}

static gboolean
do_put_start (Workload *workload)
{
  return start_random_put (workload) != NULL;
}

static gboolean
do_put_finish (Workload *workload, gboolean commit)
{
  Object *object = pick_from (workload, workload->store->pending);

  if (object == NULL)
    return FALSE;
  if (object->phase == PHASE_PUTTING)
    {
      if (commit)
        store_put_end (workload->store, object);
      else
        store_put_revoke (workload->store, object);
    }
  else if (commit)
    store_upsert_end (workload->store, object);
  else
    store_upsert_revoke (workload->store, object);
  return TRUE;
}

static gboolean
do_batch_put (Workload *workload)
{
  guint n = (guint) g_rand_int_range (workload->rand, 2, 9), i;
  g_autoptr (GPtrArray) started = g_ptr_array_new ();

  /* BatchPutStart for every key, then BatchPutEnd or BatchPutRevoke for
   * each: a failed write revokes its object and publishes nothing. */
  for (i = 0; i < n; i++)
    {
      Object *object = start_random_put (workload);

      if (object != NULL)
        g_ptr_array_add (started, object);
    }
  for (i = 0; i < started->len; i++)
    {
      Object *object = g_ptr_array_index (started, i);

      if (g_rand_int_range (workload->rand, 0, 8) == 0)
        store_put_revoke (workload->store, object);
      else
        store_put_end (workload->store, object);
    }
  return started->len > 0;
}

static gboolean
do_upsert_start (Workload *workload)
{
  Object *object = pick_from (workload, workload->store->objects);
  Replica replicas[3];
  guint n = pick_replicas (workload, replicas);
  gsize size;

  if (object == NULL)
    return FALSE;
  /* Half the time the same size (rewritten in place), half a new one. */
  size = g_rand_boolean (workload->rand) ? object->size : object->size + 4096;
  return store_upsert_start (workload->store, object, size, replicas, n);
}

static gboolean
do_task_start (Workload *workload, Task task)
{
  Object *object = pick_from (workload, workload->store->objects);
  KvevReplicaType type;

  if (object == NULL)
    return FALSE;
  switch (task)
    {
    case TASK_OFFLOAD:
      type = pick_disk_type (workload);
      break;
    case TASK_PROMOTE:
      type = KVEV_REPLICA_MEMORY;
      break;
    case TASK_COPY:
    case TASK_NONE:
    default:
      type = pick_type (workload);
      break;
    }
  return store_task_start (workload->store, object, task, type, pick_client (workload));
}

static gboolean
do_task_end (Workload *workload)
{
  Object *object = pick_from (workload, workload->store->tasks);

  if (object == NULL)
    return FALSE;
  store_task_end (workload->store, object);
  return TRUE;
}

static gboolean
do_move (Workload *workload)
{
  Object *object = pick_from (workload, workload->store->objects);

  if (object == NULL || object->replicas->len == 0)
    return FALSE;
  return store_move_replica (
      workload->store, object,
      (guint) g_rand_int_range (workload->rand, 0, (gint32) object->replicas->len),
      pick_type (workload), pick_client (workload));
}

static gboolean
do_evict (Workload *workload, KvevMedia tier)
{
  Object *object = pick_from (workload, workload->store->objects);

  return object != NULL && store_evict (workload->store, object, tier);
}

static gboolean
do_clear_replica (Workload *workload)
{
  Object *object = pick_from (workload, workload->store->objects);

  if (object == NULL || object->replicas->len == 0)
    return FALSE;
  return store_clear_replica (
      workload->store, object,
      (guint) g_rand_int_range (workload->rand, 0, (gint32) object->replicas->len));
}

static gboolean
do_cleanup_client (Workload *workload)
{
  store_cleanup_client (workload->store, pick_client (workload));
  return TRUE;
}

static gboolean
do_remove (Workload *workload)
{
  Object *object = pick_from (workload, workload->store->objects);

  return object != NULL && store_remove (workload->store, object);
}

static gboolean
do_batch_remove (Workload *workload)
{
  guint n = (guint) g_rand_int_range (workload->rand, 2, 9), i, removed = 0;

  for (i = 0; i < n; i++)
    removed += do_remove (workload);
  return removed > 0;
}

static gboolean
do_remove_regex (Workload *workload)
{
  /* key-1, key-12, key-123...: every key whose number starts with a digit. */
  g_autofree char *pattern = g_strdup_printf ("^key-%d", g_rand_int_range (workload->rand, 1, 10));

  g_autoptr (GError) error = NULL;
  guint removed = store_remove_by_regex (workload->store, pick_tenant (workload), pattern, &error);

  /* The workload's patterns are its own: a bad one is a bug here. */
  g_assert_no_error (error);
  return removed > 0;
}

static OplogResult
random_oplog (gpointer data)
{
  Workload *workload = data;
  gint32 roll = g_rand_int_range (workload->rand, 0, 1000);

  return roll == 0 ? OPLOG_RESERVE_FAILED : roll == 1 ? OPLOG_APPEND_FAILED : OPLOG_OK;
}

/* An operator empties a tenant only after its writers stopped: half the
 * RemoveAlls first let the tenant's Puts, Upserts and replica tasks finish
 * and its leases run out, through the same operations as ever.  The other
 * half meet the tenant busy, and skip what they must. */
static void
quiesce_tenant (Workload *workload, const char *tenant)
{
  g_autoptr (GPtrArray) objects = g_ptr_array_copy (workload->store->objects, NULL, NULL);
  guint i;

  for (i = 0; i < objects->len; i++)
    {
      Object *object = g_ptr_array_index (objects, i);

      if (strcmp (object->tenant, tenant) != 0)
        continue;
      if (object->phase == PHASE_PUTTING)
        store_put_end (workload->store, object);
      else if (object->phase == PHASE_UPSERTING)
        store_upsert_end (workload->store, object);
      else if (object->task != TASK_NONE)
        store_task_end (workload->store, object);
      object->lease_until = 0;
    }
}

static gboolean
do_remove_all (Workload *workload)
{
  const char *tenant = pick_tenant (workload);

  if (g_rand_boolean (workload->rand))
    quiesce_tenant (workload, tenant);
  if (store_remove_all (workload->store, tenant, random_oplog, workload))
    workload->cleared++;
  return TRUE;
}

static gboolean
do_lease (Workload *workload)
{
  Object *object = pick_from (workload, workload->store->objects);

  /* A Get grants a lease; leases end by the operation clock. */
  if (object == NULL || object->phase != PHASE_READY)
    return FALSE;
  object->lease_until = workload->store->now + (guint64) g_rand_int_range (workload->rand, 1, 40);
  return TRUE;
}

static const struct
{
  const char *name;
  guint weight; /* in thousandths */
} ops[N_OPS] = {
  [OP_PUT_START] = { "put", 150 },
  [OP_PUT_END] = { "put-or-upsert-end", 190 },
  [OP_PUT_REVOKE] = { "put-or-upsert-revoke", 20 },
  [OP_BATCH_PUT] = { "batch-put", 30 },
  [OP_UPSERT_START] = { "upsert", 50 },
  [OP_COPY] = { "copy", 40 },
  [OP_OFFLOAD] = { "offload", 50 },
  [OP_PROMOTE] = { "promote", 30 },
  [OP_TASK_END] = { "task-end", 150 },
  [OP_MOVE] = { "move", 40 },
  [OP_EVICT_MEMORY] = { "evict-memory", 60 },
  [OP_EVICT_DISK] = { "evict-disk", 30 },
  [OP_CLEAR_REPLICA] = { "replica-clear", 30 },
  [OP_CLEANUP_CLIENT] = { "stale-client-cleanup", 3 },
  [OP_REMOVE] = { "remove", 50 },
  [OP_BATCH_REMOVE] = { "batch-remove", 20 },
  [OP_REMOVE_REGEX] = { "regex-remove", 7 },
  [OP_REMOVE_ALL] = { "remove-all", 5 },
  [OP_LEASE] = { "lease", 75 },
};

static Op
pick_op (Workload *workload)
{
  guint total = 0, roll, i;

  for (i = 0; i < N_OPS; i++)
    total += ops[i].weight;
  roll = (guint) g_rand_int_range (workload->rand, 0, (gint32) total);
  for (i = 0; i < N_OPS; i++)
    {
      if (roll < ops[i].weight)
        return (Op) i;
      roll -= ops[i].weight;
    }
  return OP_PUT_START;
}

static void
run_one (Workload *workload)
{
  Op op = pick_op (workload);
  gboolean done = FALSE;

  switch (op)
    {
    case OP_PUT_START:
      done = do_put_start (workload);
      break;
    case OP_PUT_END:
      done = do_put_finish (workload, TRUE);
      break;
    case OP_PUT_REVOKE:
      done = do_put_finish (workload, FALSE);
      break;
    case OP_BATCH_PUT:
      done = do_batch_put (workload);
      break;
    case OP_UPSERT_START:
      done = do_upsert_start (workload);
      break;
    case OP_COPY:
      done = do_task_start (workload, TASK_COPY);
      break;
    case OP_OFFLOAD:
      done = do_task_start (workload, TASK_OFFLOAD);
      break;
    case OP_PROMOTE:
      done = do_task_start (workload, TASK_PROMOTE);
      break;
    case OP_TASK_END:
      done = do_task_end (workload);
      break;
    case OP_MOVE:
      done = do_move (workload);
      break;
    case OP_EVICT_MEMORY:
      done = do_evict (workload, KVEV_MEDIA_CPU);
      break;
    case OP_EVICT_DISK:
      done = do_evict (workload, KVEV_MEDIA_DISK);
      break;
    case OP_CLEAR_REPLICA:
      done = do_clear_replica (workload);
      break;
    case OP_CLEANUP_CLIENT:
      done = do_cleanup_client (workload);
      break;
    case OP_REMOVE:
      done = do_remove (workload);
      break;
    case OP_BATCH_REMOVE:
      done = do_batch_remove (workload);
      break;
    case OP_REMOVE_REGEX:
      done = do_remove_regex (workload);
      break;
    case OP_REMOVE_ALL:
      done = do_remove_all (workload);
      break;
    case OP_LEASE:
      done = do_lease (workload);
      break;
    case N_OPS:
    default:
      g_assert_not_reached ();
    }
  if (done)
    workload->done[op]++;
  workload->store->now++;
}

/* ------------------------------------------------------------------------
 * Running it
 * ------------------------------------------------------------------------ */

static int
compare_objects (gconstpointer a, gconstpointer b)
{
  const Object *x = *(Object *const *) a, *y = *(Object *const *) b;
  int by_tenant = strcmp (x->tenant, y->tenant);
  int by_key = memcmp (x->key, y->key, (gsize) MIN (x->key_len, y->key_len));

  if (by_tenant != 0)
    return by_tenant;
  if (by_key != 0)
    return by_key;
  return x->key_len < y->key_len ? -1 : x->key_len > y->key_len;
}

/* The ground truth: every object available on at least one tier, named as
 * the wire names it (tenant "default" for the empty one; a key that is not
 * UTF-8 as {"hex": ...}, as the library sends it as bin). */
static gboolean
write_truth (Store *store, const char *path, GError **error)
{
  g_autoptr (GPtrArray) objects = g_ptr_array_copy (store->objects, NULL, NULL);
  g_autoptr (GString) json = g_string_new ("[");
  guint i, n = 0;

  g_ptr_array_sort (objects, compare_objects);
  for (i = 0; i < objects->len; i++)
    {
      const Object *object = g_ptr_array_index (objects, i);
      KvevMedia media = object_media (object);
      const char *tenant = object->tenant[0] != '\0' ? object->tenant : "default";

      if (media == KVEV_MEDIA_NONE)
        continue;
      g_string_append (json, n++ > 0 ? ",\n " : "\n ");
      g_string_append (json, "{\"tenant_id\": ");
      kvt_json_append_bytes (json, tenant, strlen (tenant), TRUE);
      g_string_append (json, ", \"object_key\": ");
      kvt_json_append_bytes (json, object->key, (gsize) object->key_len,
                             kvev_bytes_are_utf8 (object->key, (gsize) object->key_len));
      g_string_append (json, ", \"media\": [");
      if (media & KVEV_MEDIA_CPU)
        g_string_append (json, (media & KVEV_MEDIA_DISK) ? "\"cpu\", \"disk\"" : "\"cpu\"");
      else
        g_string_append (json, "\"disk\"");
      g_string_append (json, "]}");
    }
  g_string_append (json, "\n]\n");
  return g_file_set_contents (path, json->str, (gssize) json->len, error);
}

/* One thread's share of the operations.  Each runs under the store's
 * lock whole: the workload picks objects from the store's lists, which
 * another thread's operation may change.  The events go out from every
 * thread, as from a master's request handlers. */
typedef struct
{
  Workload workload;
  gint64 n_ops;
} Share;

static gpointer
run_share (gpointer data)
{
  Share *share = data;
  Store *store = share->workload.store;

  for (gint64 op = 0; op < share->n_ops; op++)
    {
      g_rec_mutex_lock (&store->lock);
      run_one (&share->workload);
      g_rec_mutex_unlock (&store->lock);
    }
  return NULL;
}

/* Runs n_ops operations over n_threads threads, each with a random
 * sequence of its own drawn from workload's.  With one thread it is
 * workload's own sequence, so that a seed always makes the same store. */
static void
run_ops (Workload *workload, gint64 n_ops, guint n_threads)
{
  g_autofree Share *shares = NULL;
  g_autofree GThread **threads = NULL;
  guint i, op;

  if (n_threads <= 1)
    {
      for (gint64 n = 0; n < n_ops; n++)
        run_one (workload);
      return;
    }
  shares = g_new0 (Share, n_threads);
  threads = g_new0 (GThread *, n_threads);
  for (i = 0; i < n_threads; i++)
    {
      shares[i].workload = *workload;
      shares[i].workload.rand = g_rand_new_with_seed (g_rand_int (workload->rand));
      memset (shares[i].workload.done, 0, sizeof shares[i].workload.done);
      shares[i].workload.cleared = 0;
      shares[i].n_ops = n_ops / n_threads + (i < n_ops % n_threads);
      threads[i] = g_thread_new ("oracle-master", run_share, &shares[i]);
    }
  for (i = 0; i < n_threads; i++)
    {
      g_thread_join (threads[i]);
      for (op = 0; op < N_OPS; op++)
        workload->done[op] += shares[i].workload.done[op];
      workload->cleared += shares[i].workload.cleared;
      g_rand_free (shares[i].workload.rand);
    }
}

/* Waits while path exists (wait_for_absence) or until it does, at most
 * HOLD_LIMIT_US. */
static void
wait_on_file (const char *path, gboolean wait_for_absence)
{
  gint64 deadline = g_get_monotonic_time () + HOLD_LIMIT_US;

  while (g_file_test (path, G_FILE_TEST_EXISTS) == wait_for_absence)
    {
      if (g_get_monotonic_time () > deadline)
        {
          g_printerr (_ ("%s: waited 120 s for %s; going on\n"), g_get_prgname (), path);
          return;
        }
      g_usleep (10 * 1000);
    }
}

static gboolean
write_stats (KvevPublisher *publisher, const char *path, GError **error)
{
  g_autofree char *json = kvev_publisher_stats_json (publisher);
  g_autofree char *line = g_strconcat (json, "\n", NULL);

  return g_file_set_contents (path, line, -1, error);
}

int
main (int argc, char **argv)
{
  g_autoptr (KvevConfig) config = kvev_config_new ();
  g_autoptr (GOptionContext) context = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *truth_path = NULL;
  g_autofree char *stats_path = NULL;
  g_autofree char *close_timeout = NULL;
  g_autofree char *hold_path = NULL;
  g_autofree char *resume_path = NULL;
  gint64 silent_ops = 0, pause_at = -1;
  gint n_threads = 1;
  KvevPublisher *silent = NULL;
  gint64 n_ops = 1000, seed = 1, wait_timeout_ms = -1, idle_ms = 0;
  gint n_tenants = 3, wait_subscribers = 0;
  gboolean quiet = FALSE;
  guint64 close_timeout_ms;
  KvevPublisher *publisher;
  Store store = { 0 };
  Workload workload = { 0 };
  int status = KVT_EXIT_OK;
  guint i;
  const GOptionEntry entries[] = {
    { "ops", 'n', 0, G_OPTION_ARG_INT64, &n_ops, N_ ("Run N operations (default 1000)"), N_ ("N") },
    { "seed", 's', 0, G_OPTION_ARG_INT64, &seed, N_ ("Seed of the random workload (default 1)"),
      N_ ("S") },
    { "tenants", 't', 0, G_OPTION_ARG_INT, &n_tenants,
      N_ ("Spread objects over T tenants, the default tenant first (default 3)"), N_ ("T") },
    { "wait-subscribers", 'w', 0, G_OPTION_ARG_INT, &wait_subscribers,
      N_ ("Before the first operation, wait until N subscribers have subscribed"), N_ ("N") },
    { "wait-timeout-ms", 0, 0, G_OPTION_ARG_INT64, &wait_timeout_ms,
      N_ ("Give up waiting for subscribers after T milliseconds (default: no limit)"), N_ ("T") },
    { "idle-ms", 0, 0, G_OPTION_ARG_INT64, &idle_ms,
      N_ ("After the last operation, publish nothing for T milliseconds before closing "
          "(heartbeats go on)"),
      N_ ("T") },
    { "truth", 0, 0, G_OPTION_ARG_FILENAME, &truth_path,
      N_ ("At the end, write every available object and its tiers as JSON to FILE"), N_ ("FILE") },
    { "stats", 0, 0, G_OPTION_ARG_FILENAME, &stats_path,
      N_ ("At the end, write the publisher's statistics as JSON to FILE"), N_ ("FILE") },
    { "threads", 0, 0, G_OPTION_ARG_INT, &n_threads,
      N_ ("Run the operations on N threads at once (default 1; with more, a seed no longer "
          "makes the same store)"),
      N_ ("N") },
    { "silent-ops", 0, 0, G_OPTION_ARG_INT64, &silent_ops,
      N_ ("First run N operations of the seed's workload without publishing them, as a "
          "restarted master restores its objects"),
      N_ ("N") },
    { "pause-at", 0, 0, G_OPTION_ARG_INT64, &pause_at,
      N_ ("After N of the --ops operations, write --stats and wait until --resume-file exists"),
      N_ ("N") },
    { "resume-file", 0, 0, G_OPTION_ARG_FILENAME, &resume_path,
      N_ ("The file --pause-at waits for (at most 120 s)"), N_ ("FILE") },
    { "hold-file", 0, 0, G_OPTION_ARG_FILENAME, &hold_path,
      N_ ("After writing --truth and --stats, stay open while FILE exists (at most 120 s), so "
          "that a subscriber still reading can ask for replays"),
      N_ ("FILE") },
    { "quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet, N_ ("Do not print the summary"), NULL },
    { NULL },
  };

  kvt_init_i18n ();
  g_set_prgname ("oracle-master");

  context = g_option_context_new (NULL);
  g_option_context_set_translation_domain (context, KVT_GETTEXT_PACKAGE);
  g_option_context_set_summary (context,
                                N_ ("A small in-memory store master that publishes its cache "
                                    "availability through libkvevents."));
  g_option_context_add_main_entries (context, entries, KVT_GETTEXT_PACKAGE);
  /* The library's own flags, exactly as a master exposes them, and a key
   * file of them that the command line overrides. */
  g_option_context_add_group (context, kvev_config_option_group_with_file (config));
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("%s: %s\n", g_get_prgname (), error->message);
      return KVT_EXIT_USAGE;
    }
  if (n_threads < 1 || n_threads > 64 || silent_ops < 0 || pause_at > n_ops
      || (pause_at >= 0) != (resume_path != NULL))
    {
      g_printerr (_ ("%s: --threads takes a number from 1 to 64, --silent-ops one of at least 0, "
                     "and --pause-at, at most --ops, goes with --resume-file\n"),
                  g_get_prgname ());
      return KVT_EXIT_USAGE;
    }
  if (n_ops < 0 || n_tenants < 1 || n_tenants > 1000 || wait_subscribers < 0 || idle_ms < 0)
    {
      g_printerr (_ ("%s: --ops must be at least 0, --tenants from 1 to 1000, and "
                     "--wait-subscribers and --idle-ms at least 0\n"),
                  g_get_prgname ());
      return KVT_EXIT_USAGE;
    }

  publisher = kvev_publisher_new (config, &error);
  if (publisher == NULL)
    {
      g_printerr ("%s: %s\n", g_get_prgname (), error->message);
      return KVT_EXIT_FAILURE;
    }
  store_init (&store, publisher);
  workload.store = &store;
  workload.rand = g_rand_new_with_seed ((guint32) seed);
  workload.n_tenants = (guint) n_tenants;
  workload.tenants = g_new0 (char *, workload.n_tenants + 1);
  workload.tenants[0] = g_strdup ("");
  for (i = 1; i < workload.n_tenants; i++)
    workload.tenants[i] = g_strdup_printf ("tenant-%u", i);
  /* Enough keys that objects live a while, few enough that operations
   * keep meeting them again. */
  workload.key_space = (guint) CLAMP (n_ops / 40, 16, 100000);

  /* A restarted master restores its objects before it serves snapshots:
   * a walk that ran first would find none of them, and the subscriber would
   * never hear of them, since they are not published. */
  if (silent_ops > 0)
    {
      g_autoptr (KvevConfig) off = kvev_config_new ();

      /* A disabled publisher takes every call and sends nothing. */
      silent = kvev_publisher_new (off, NULL);
      g_rec_mutex_lock (&store.lock);
      store.publisher = silent;
      run_ops (&workload, silent_ops, 1);
      store.publisher = publisher;
      g_rec_mutex_unlock (&store.lock);
    }
  /* Under the store's lock, which every operation holds (kvevents(7),
   * SNAPSHOTS); the walk may run whenever a subscriber asks,
   * even one whose first message is the heartbeat its subscription brings. */
  kvev_publisher_set_snapshot_func (publisher, store_snapshot, &store, NULL);

  /* A subscriber receives nothing sent before its subscription arrived,
   * and the oracle needs every event.  A publisher that publishes
   * nothing has nobody to wait for. */
  if (wait_subscribers > 0 && kvev_publisher_is_enabled (publisher)
      && !kvev_publisher_wait_subscribers (publisher, (guint) wait_subscribers, wait_timeout_ms))
    {
      g_printerr (
          g_dngettext (KVT_GETTEXT_PACKAGE,
                       "%s: only %" PRIu64 " of %u subscription arrived within %" PRId64 " ms\n",
                       "%s: only %" PRIu64 " of %u subscriptions arrived within %" PRId64 " ms\n",
                       (guint) wait_subscribers),
          g_get_prgname (), kvev_publisher_stat (publisher, KVEV_STAT_SUBSCRIPTIONS),
          (guint) wait_subscribers, wait_timeout_ms);
      kvev_publisher_set_snapshot_func (publisher, NULL, NULL, NULL);
      store_clear (&store);
      kvev_publisher_free (publisher);
      return KVT_EXIT_FAILURE;
    }

  if (pause_at >= 0)
    {
      run_ops (&workload, pause_at, (guint) n_threads);
      if (stats_path != NULL && !write_stats (publisher, stats_path, &error))
        {
          g_printerr ("%s: %s\n", g_get_prgname (), error->message);
          g_clear_error (&error);
        }
      wait_on_file (resume_path, FALSE);
    }
  run_ops (&workload, n_ops - MAX (pause_at, 0), (guint) n_threads);
  /* A subscriber learns of a loss only from a later message: with
   * kv_events_heartbeat_ms, the heartbeats of an idle spell are the ones
   * after the last event (kvevents(7), HEARTBEATS). */
  if (idle_ms > 0)
    g_usleep ((gulong) MIN (idle_ms, G_MAXLONG / 1000) * 1000);

  /* At shutdown a master flushes, bounded, before it frees the
   * publisher, so subscribers get the last events. */
  close_timeout = kvev_config_get (config, "kv_events_close_timeout_ms");
  if (!kvt_parse_uint (close_timeout, 0, G_MAXUINT32, &close_timeout_ms))
    close_timeout_ms = 1000;
  if (!kvev_publisher_flush (publisher, (gint64) close_timeout_ms))
    g_printerr (_ ("%s: the last events were not all sent within %" PRIu64 " ms\n"),
                g_get_prgname (), close_timeout_ms);

  if (truth_path != NULL && !write_truth (&store, truth_path, &error))
    {
      g_printerr ("%s: %s\n", g_get_prgname (), error->message);
      g_clear_error (&error);
      status = KVT_EXIT_FAILURE;
    }
  if (stats_path != NULL && !write_stats (publisher, stats_path, &error))
    {
      g_printerr ("%s: %s\n", g_get_prgname (), error->message);
      g_clear_error (&error);
      status = KVT_EXIT_FAILURE;
    }
  if (!quiet)
    {
      guint available = 0;

      for (i = 0; i < store.objects->len; i++)
        if (object_media (g_ptr_array_index (store.objects, i)) != KVEV_MEDIA_NONE)
          available++;
      /* Subscribers know of the available ones only: the others are Puts
       * not committed yet, and Upserts whose old value was withdrawn. */
      g_printerr (_ ("%s: %" PRId64 " operations, seed %" PRId64 ", %u objects left, %u of them "
                     "available on a tier\n"),
                  g_get_prgname (), n_ops, seed, store.objects->len, available);
      for (i = 0; i < N_OPS; i++)
        g_printerr ("  %-22s %" PRIu64 "\n", ops[i].name, workload.done[i]);
      g_printerr (_ ("  of which RemoveAlls that cleared their tenant: %" PRIu64 "\n"),
                  workload.cleared);
      g_printerr (
          _ ("%s: published %" PRIu64 " events in %" PRIu64 " messages, dropped %" PRIu64 "\n"),
          g_get_prgname (), kvev_publisher_stat (publisher, KVEV_STAT_PUBLISHED_EVENTS),
          kvev_publisher_stat (publisher, KVEV_STAT_PUBLISHED_BATCHES),
          kvev_publisher_stat (publisher, KVEV_STAT_DROPPED_EVENTS));
    }

  /* Replay is served only while the publisher is open, and a subscriber
   * that lags may find a gap long after the last operation. */
  if (hold_path != NULL)
    wait_on_file (hold_path, TRUE);

  /* No walk may run on a store that is going away. */
  kvev_publisher_set_snapshot_func (publisher, NULL, NULL, NULL);
  store_clear (&store);
  kvev_publisher_free (publisher);
  kvev_publisher_free (silent);
  g_strfreev (workload.tenants);
  g_rand_free (workload.rand);
  return status;
}
