/* mini-master.c: a small in-memory store master that publishes its cache
 * availability through libkvevents.
 *
 * Read this if you write a master.  The store below is a toy (objects in a
 * hash table, a seeded random workload instead of clients), but its
 * operations are the ones of the seed design's publication-point table,
 * and each one is wired the way a real master must wire it:
 *
 *   1. capture the object's medium set (kvev_media_of_replica () over its
 *      *completed* replicas) before touching its metadata;
 *   2. mutate the metadata;
 *   3. make the one library call the table prescribes, with the "before"
 *      from step 1 and the set as it is now,
 *
 * all three in the same function.  The one exception here is the erase
 * path, which publishes for an eviction, a replica clear or a client
 * cleanup: those hand it the "before" they captured as an argument, and it
 * never reads the object's tiers itself.  The library keeps no per-object
 * state: the snapshot you take is the only "before" there is, and a path
 * that publishes without one cannot be right.
 *
 * The calls never block.  They refuse only caller errors, with a GLib
 * critical and a count in KVEV_STAT_REJECTED_EVENTS: a key, tenant or
 * group over 1 MiB, or tier bits outside KVEV_MEDIA_ALL.  A master that
 * keeps within those needs no error handling; kvev_clear_end () says
 * whether cleared went out.  A disabled publisher (events off, or a
 * library built without ZeroMQ) accepts every call and does nothing.
 *
 * Look for "kvev_" to find every place the library is called.  Everything
 * under "The workload" and "Running it" only drives the store and checks
 * it: the oracle test (tests/test-oracle.sh) compares the availability a
 * subscriber rebuilds from the events with the --truth this program writes.
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
#include "relay.h"
#include "utf8.h"

/* A test switch, not something a master has: the oracle test builds a
 * second binary with -DKVEV_MINI_MASTER_SKIP=<point> to leave one
 * publication out, and checks that the oracle notices. */
#ifdef KVEV_MINI_MASTER_SKIP
#define SKIPPED(point) (strcmp (G_STRINGIFY (KVEV_MINI_MASTER_SKIP), (point)) == 0)
#else
#define SKIPPED(point) FALSE
#endif

/* ------------------------------------------------------------------------
 * The store
 * ------------------------------------------------------------------------ */

typedef enum
{
  REPLICA_PROCESSING, /* allocated, being written or copied: not readable */
  REPLICA_COMPLETE,   /* readable */
} ReplicaState;

typedef struct
{
  KvevReplicaType type;
  ReplicaState state;
  guint client; /* the client whose buffer holds it, for stale cleanup */
} Replica;

typedef enum
{
  PHASE_READY,     /* committed: readable through its completed replicas */
  PHASE_PUTTING,   /* a Put started and was neither committed nor revoked */
  PHASE_UPSERTING, /* an Upsert is rewriting the value */
} Phase;

/* A replica task in flight on a ready object. */
typedef enum
{
  TASK_NONE,
  TASK_COPY,    /* Copy: a replica on another segment, of any type */
  TASK_OFFLOAD, /* offload to a disk tier */
  TASK_PROMOTE, /* promotion to memory */
} Task;

typedef struct
{
  char *tenant; /* "" is the default tenant */
  char *key;    /* any bytes, NULs included: the library forwards them */
  gssize key_len;
  char *group; /* NULL when the object has none */
  GArray *replicas;
  gsize size;
  Phase phase;
  Task task;
  gboolean pending_replication;
  guint64 lease_until; /* leased while the operation counter is below */
} Object;

typedef struct
{
  KvevPublisher *publisher;
  GHashTable *by_name; /* tenant, NUL, key -> Object */
  GPtrArray *objects;  /* every object, for the workload's random picks */
  GPtrArray *pending;  /* objects PUTTING or UPSERTING */
  GPtrArray *tasks;    /* ready objects with a task in flight */
  guint64 now;         /* operations so far: the clock leases expire by */
} Store;

/* The tiers an object is available on: its completed replicas only. */
static KvevMedia
object_media (const Object *object)
{
  KvevMedia media = KVEV_MEDIA_NONE;
  guint i;

  for (i = 0; i < object->replicas->len; i++)
    {
      const Replica *replica = &g_array_index (object->replicas, Replica, i);

      if (replica->state == REPLICA_COMPLETE)
        media |= kvev_media_of_replica (replica->type);
    }
  return media;
}

static gboolean
object_has_processing_replicas (const Object *object)
{
  guint i;

  for (i = 0; i < object->replicas->len; i++)
    if (g_array_index (object->replicas, Replica, i).state == REPLICA_PROCESSING)
      return TRUE;
  return FALSE;
}

static gboolean
object_is_leased (const Store *store, const Object *object)
{
  return store->now < object->lease_until;
}

static GBytes *
object_name (const char *tenant, const char *key, gsize key_len)
{
  GByteArray *name = g_byte_array_new ();

  g_byte_array_append (name, (const guint8 *) tenant, (guint) strlen (tenant) + 1);
  g_byte_array_append (name, (const guint8 *) key, (guint) key_len);
  return g_byte_array_free_to_bytes (name);
}

static void
object_free (gpointer data)
{
  Object *object = data;

  g_free (object->tenant);
  g_free (object->key);
  g_free (object->group);
  g_array_unref (object->replicas);
  g_free (object);
}

static Object *
store_lookup (Store *store, const char *tenant, const char *key, gsize key_len)
{
  g_autoptr (GBytes) name = object_name (tenant, key, key_len);

  return g_hash_table_lookup (store->by_name, name);
}

static Object *
store_insert (Store *store, const char *tenant, const char *key, gsize key_len, const char *group)
{
  Object *object = g_new0 (Object, 1);

  object->tenant = g_strdup (tenant);
  object->key = g_memdup2 (key, key_len);
  object->key_len = (gssize) key_len;
  object->group = g_strdup (group);
  object->replicas = g_array_new (FALSE, FALSE, sizeof (Replica));
  g_hash_table_insert (store->by_name, object_name (tenant, key, key_len), object);
  g_ptr_array_add (store->objects, object);
  return object;
}

/* Drops the metadata.  Publishing is the caller's business. */
static void
store_erase (Store *store, Object *object)
{
  g_autoptr (GBytes) name = object_name (object->tenant, object->key, (gsize) object->key_len);

  g_ptr_array_remove_fast (store->objects, object);
  g_ptr_array_remove_fast (store->pending, object);
  g_ptr_array_remove_fast (store->tasks, object);
  g_hash_table_remove (store->by_name, name); /* frees the object */
}

static void
add_replica (Object *object, KvevReplicaType type, ReplicaState state, guint client)
{
  Replica replica = { type, state, client };

  g_array_append_val (object->replicas, replica);
}

/* ------------------------------------------------------------------------
 * The publication points, one function per operation
 * ------------------------------------------------------------------------ */

/* The erase path.  When an eviction or a replica clear leaves an object
 * without any replica, the object is invalid and is erased here; the
 * eviction returns early and leaves the announcement to this one place, so
 * subscribers get one removed rather than two.  before is what the caller
 * captured before its own mutation. */
static void
erase_invalid_object (Store *store, Object *object, KvevMedia before)
{

  if (!SKIPPED ("erase"))
    kvev_publish_removed (store->publisher, object->tenant, object->key, object->key_len,
                          object->group, before);
  store_erase (store, object);
}

/* PutStart: replicas are allocated but not written.  Nothing is readable,
 * so nothing is published. */
static Object *
put_start (Store *store, const char *tenant, const char *key, gsize key_len, const char *group,
           const Replica *replicas, guint n_replicas, gsize size)
{
  Object *object;
  guint i;

  if (store_lookup (store, tenant, key, key_len) != NULL)
    return NULL; /* an existing object takes the Upsert path */
  object = store_insert (store, tenant, key, key_len, group);
  object->size = size;
  object->phase = PHASE_PUTTING;
  for (i = 0; i < n_replicas; i++)
    add_replica (object, replicas[i].type, REPLICA_PROCESSING, replicas[i].client);
  g_ptr_array_add (store->pending, object);
  return object;
}

/* PutEnd (and each object of BatchPutEnd): the commit makes every
 * replica readable, and stored goes out for every completed tier. */
static void
put_end (Store *store, Object *object)
{
  guint i;

  for (i = 0; i < object->replicas->len; i++)
    g_array_index (object->replicas, Replica, i).state = REPLICA_COMPLETE;
  object->phase = PHASE_READY;
  g_ptr_array_remove_fast (store->pending, object);
  if (!SKIPPED ("put_end"))
    kvev_publish_stored (store->publisher, object->tenant, object->key, object->key_len,
                         object->group, object_media (object));
}

/* PutRevoke, or a Put that failed before its commit: the object was never
 * readable, so its disappearance is no event at all. */
static void
put_revoke (Store *store, Object *object)
{
  store_erase (store, object);
}

/* UpsertStart on an existing object.  The old value becomes unreadable
 * now: rewritten in place when the size is the same, replaced by new
 * replicas (possibly on other tiers) when it is not.  removed goes out for
 * the tiers the old value had. */
static gboolean
upsert_start (Store *store, Object *object, gsize size, const Replica *replicas, guint n_replicas)
{
  KvevMedia before;
  guint i;

  if (object->phase != PHASE_READY || object->task != TASK_NONE || object_is_leased (store, object))
    return FALSE; /* refused: nothing changed */

  before = object_media (object);
  if (size == object->size)
    for (i = 0; i < object->replicas->len; i++)
      g_array_index (object->replicas, Replica, i).state = REPLICA_PROCESSING;
  else
    {
      g_array_set_size (object->replicas, 0);
      for (i = 0; i < n_replicas; i++)
        add_replica (object, replicas[i].type, REPLICA_PROCESSING, replicas[i].client);
      object->size = size;
    }
  object->phase = PHASE_UPSERTING;
  g_ptr_array_add (store->pending, object);
  if (!SKIPPED ("upsert_start"))
    kvev_publish_removed (store->publisher, object->tenant, object->key, object->key_len,
                          object->group, before);
  return TRUE;
}

/* UpsertEnd: the new value is committed, stored for every completed tier,
 * exactly as for a Put. */
static void
upsert_end (Store *store, Object *object)
{
  guint i;

  for (i = 0; i < object->replicas->len; i++)
    g_array_index (object->replicas, Replica, i).state = REPLICA_COMPLETE;
  object->phase = PHASE_READY;
  g_ptr_array_remove_fast (store->pending, object);
  if (!SKIPPED ("upsert_end"))
    kvev_publish_stored (store->publisher, object->tenant, object->key, object->key_len,
                         object->group, object_media (object));
}

/* An Upsert that failed after the old value was gone: the removed of
 * upsert_start () already told subscribers, and nothing readable is lost
 * now. */
static void
upsert_revoke (Store *store, Object *object)
{
  store_erase (store, object);
}

/* Copy, offload and promotion start by allocating the target replica; it
 * is not readable until the task ends, so starting publishes nothing. */
static gboolean
task_start (Store *store, Object *object, Task task, KvevReplicaType type, guint client)
{
  if (object->phase != PHASE_READY || object->task != TASK_NONE)
    return FALSE;
  add_replica (object, type, REPLICA_PROCESSING, client);
  object->task = task;
  /* A Copy is a replication task: RemoveAll must not take the object
   * while it runs. */
  object->pending_replication = task == TASK_COPY;
  g_ptr_array_add (store->tasks, object);
  return TRUE;
}

/* The task completes: its replica becomes readable.  A task starts only
 * on a ready object with none running, so the one replica being written
 * is the task's; a master that writes several at once must complete only
 * the task's own, or it announces a tier that is not readable yet. */
static void
task_end (Store *store, Object *object)
{
  KvevMedia before = object_media (object), after;
  Task task = object->task;
  guint i;

  for (i = 0; i < object->replicas->len; i++)
    {
      Replica *replica = &g_array_index (object->replicas, Replica, i);

      if (replica->state == REPLICA_PROCESSING)
        replica->state = REPLICA_COMPLETE;
    }
  object->task = TASK_NONE;
  object->pending_replication = FALSE;
  g_ptr_array_remove_fast (store->tasks, object);
  after = object_media (object);

  if (task == TASK_COPY)
    {
      /* Copy completion: the availability delta (nothing when the copy
       * landed on a tier the object already had). */
      if (!SKIPPED ("copy"))
        kvev_publish_delta (store->publisher, object->tenant, object->key, object->key_len,
                            object->group, before, after);
    }
  else if (!SKIPPED ("tier"))
    {
      /* Offload or promotion completion: stored for the target tier, and
       * only when it is new.  A stored call with no tier does nothing, so
       * the subtraction is the whole rule. */
      kvev_publish_stored (store->publisher, object->tenant, object->key, object->key_len,
                           object->group, after & ~before);
    }
}

/* Move: one completed replica goes to another segment, maybe another
 * tier.  The delta says what that did to availability. */
static gboolean
move_replica (Store *store, Object *object, guint index, KvevReplicaType type, guint client)
{
  KvevMedia before;
  Replica *replica;

  if (object->phase != PHASE_READY || index >= object->replicas->len)
    return FALSE;
  replica = &g_array_index (object->replicas, Replica, index);
  if (replica->state != REPLICA_COMPLETE)
    return FALSE;

  before = object_media (object);
  replica->type = type;
  replica->client = client;
  if (!SKIPPED ("move"))
    kvev_publish_delta (store->publisher, object->tenant, object->key, object->key_len,
                        object->group, before, object_media (object));
  return TRUE;
}

/* Eviction of one tier (memory under memory pressure, disk under disk
 * pressure): removed when the last replica of the tier goes.  Leased
 * objects and objects being written are not evicted. */
static gboolean
evict (Store *store, Object *object, KvevMedia tier)
{
  KvevMedia before;
  guint i;

  if (object->phase != PHASE_READY || object_is_leased (store, object))
    return FALSE;

  before = object_media (object);
  for (i = object->replicas->len; i-- > 0;)
    {
      const Replica *replica = &g_array_index (object->replicas, Replica, i);

      if (replica->state == REPLICA_COMPLETE && kvev_media_of_replica (replica->type) == tier)
        g_array_remove_index_fast (object->replicas, i);
    }
  if (object->replicas->len == 0)
    {
      erase_invalid_object (store, object, before);
      return TRUE;
    }
  if (!SKIPPED ("eviction"))
    kvev_publish_delta (store->publisher, object->tenant, object->key, object->key_len,
                        object->group, before, object_media (object));
  return TRUE;
}

/* Replica clear: one replica is dropped (its segment was unmounted, say),
 * whatever its state. */
static gboolean
clear_replica (Store *store, Object *object, guint index)
{
  KvevMedia before;

  if (object->phase != PHASE_READY || index >= object->replicas->len)
    return FALSE;

  before = object_media (object);
  g_array_remove_index_fast (object->replicas, index);
  if (object->replicas->len == 0)
    {
      erase_invalid_object (store, object, before);
      return TRUE;
    }
  if (!SKIPPED ("replica_clear"))
    kvev_publish_delta (store->publisher, object->tenant, object->key, object->key_len,
                        object->group, before, object_media (object));
  return TRUE;
}

/* Stale client cleanup: a client went away, and every replica in its
 * buffers with it, across every object.  Each object gets its own delta;
 * an object left without replicas is erased.  A Put in flight that loses
 * its replicas was never readable, so its erase publishes nothing (its
 * "before" is empty). */
static void
cleanup_client (Store *store, guint client)
{
  g_autoptr (GPtrArray) objects = g_ptr_array_copy (store->objects, NULL, NULL);
  guint i, j;

  for (i = 0; i < objects->len; i++)
    {
      Object *object = g_ptr_array_index (objects, i);
      KvevMedia before = object_media (object);
      gboolean changed = FALSE;

      for (j = object->replicas->len; j-- > 0;)
        if (g_array_index (object->replicas, Replica, j).client == client)
          {
            g_array_remove_index_fast (object->replicas, j);
            changed = TRUE;
          }
      if (!changed)
        continue;
      if (object->replicas->len == 0)
        erase_invalid_object (store, object, before);
      else if (!SKIPPED ("stale_cleanup"))
        kvev_publish_delta (store->publisher, object->tenant, object->key, object->key_len,
                            object->group, before, object_media (object));
    }
}

/* Remove (and each object of BatchRemove and of a regex remove): removed
 * for every tier the object had.  A leased object, or one being written,
 * is refused. */
static gboolean
remove_object (Store *store, Object *object)
{
  KvevMedia before;

  if (object->phase != PHASE_READY || object_has_processing_replicas (object)
      || object_is_leased (store, object))
    return FALSE;

  before = object_media (object);
  if (!SKIPPED ("remove"))
    kvev_publish_removed (store->publisher, object->tenant, object->key, object->key_len,
                          object->group, before);
  store_erase (store, object);
  return TRUE;
}

/* Regex remove: every key of the tenant that matches.  Keys are bytes, not
 * text, hence G_REGEX_RAW. */
static guint
remove_by_regex (Store *store, const char *tenant, const char *pattern)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GRegex) regex = g_regex_new (pattern, G_REGEX_RAW, 0, &error);
  g_autoptr (GPtrArray) objects = g_ptr_array_copy (store->objects, NULL, NULL);
  guint i, removed = 0;

  /* The pattern is a client's: a bad one is the client's error. */
  if (regex == NULL)
    {
      g_printerr (_ ("%s: regex remove: %s\n"), g_get_prgname (), error->message);
      return 0;
    }
  for (i = 0; i < objects->len; i++)
    {
      Object *object = g_ptr_array_index (objects, i);

      if (strcmp (object->tenant, tenant) == 0
          && g_regex_match_full (regex, object->key, object->key_len, 0, 0, NULL, NULL)
          && remove_object (store, object))
        removed++;
    }
  return removed;
}

/* The outcome of the (simulated) oplog for one RemoveAll erase. */
typedef enum
{
  OPLOG_OK,
  OPLOG_RESERVE_FAILED,
  OPLOG_APPEND_FAILED,
} OplogResult;

/* RemoveAll of one tenant.  Every object the loop accepts is announced
 * through the scope; every object it leaves behind is reported as a skip
 * with its reason, so the scope publishes the tenant-wide cleared only
 * when the tenant is really empty.  oplog () decides each erase's oplog
 * outcome (HA masters reserve a slot and append before erasing). */
static gboolean
remove_all (Store *store, const char *tenant, OplogResult (*oplog) (gpointer), gpointer data)
{
  g_autoptr (GPtrArray) objects = g_ptr_array_copy (store->objects, NULL, NULL);
  KvevClearScope *scope = kvev_clear_begin (store->publisher, tenant);
  guint i;

  for (i = 0; i < objects->len; i++)
    {
      Object *object = g_ptr_array_index (objects, i);
      KvevMedia before;

      if (strcmp (object->tenant, tenant) != 0)
        continue;
      if (object_is_leased (store, object))
        {
          kvev_clear_skipped (scope, KVEV_SKIP_LEASED);
          continue;
        }
      if (object->pending_replication)
        {
          kvev_clear_skipped (scope, KVEV_SKIP_PENDING_REPLICATION);
          continue;
        }
      if (object->phase != PHASE_READY || object_has_processing_replicas (object))
        {
          kvev_clear_skipped (scope, KVEV_SKIP_INCOMPLETE_REPLICAS);
          continue;
        }
      switch (oplog (data))
        {
        case OPLOG_RESERVE_FAILED:
          kvev_clear_skipped (scope, KVEV_SKIP_OPLOG_RESERVE_FAILED);
          continue;
        case OPLOG_APPEND_FAILED:
          kvev_clear_skipped (scope, KVEV_SKIP_OPLOG_APPEND_FAILED);
          continue;
        case OPLOG_OK:
        default:
          break;
        }

      before = object_media (object);
      if (!SKIPPED ("remove_all"))
        kvev_clear_object_removed (scope, object->key, object->key_len, object->group, before);
      store_erase (store, object);
    }
  return kvev_clear_end (scope);
}

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
  return put_start (workload->store, pick_tenant (workload), key_data, key_len, group, replicas, n,
                    (gsize) g_rand_int_range (workload->rand, 1, 4) * 4096);
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
        put_end (workload->store, object);
      else
        put_revoke (workload->store, object);
    }
  else if (commit)
    upsert_end (workload->store, object);
  else
    upsert_revoke (workload->store, object);
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
        put_revoke (workload->store, object);
      else
        put_end (workload->store, object);
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
  return upsert_start (workload->store, object, size, replicas, n);
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
  return task_start (workload->store, object, task, type, pick_client (workload));
}

static gboolean
do_task_end (Workload *workload)
{
  Object *object = pick_from (workload, workload->store->tasks);

  if (object == NULL)
    return FALSE;
  task_end (workload->store, object);
  return TRUE;
}

static gboolean
do_move (Workload *workload)
{
  Object *object = pick_from (workload, workload->store->objects);

  if (object == NULL || object->replicas->len == 0)
    return FALSE;
  return move_replica (workload->store, object,
                       (guint) g_rand_int_range (workload->rand, 0, (gint32) object->replicas->len),
                       pick_type (workload), pick_client (workload));
}

static gboolean
do_evict (Workload *workload, KvevMedia tier)
{
  Object *object = pick_from (workload, workload->store->objects);

  return object != NULL && evict (workload->store, object, tier);
}

static gboolean
do_clear_replica (Workload *workload)
{
  Object *object = pick_from (workload, workload->store->objects);

  if (object == NULL || object->replicas->len == 0)
    return FALSE;
  return clear_replica (
      workload->store, object,
      (guint) g_rand_int_range (workload->rand, 0, (gint32) object->replicas->len));
}

static gboolean
do_cleanup_client (Workload *workload)
{
  cleanup_client (workload->store, pick_client (workload));
  return TRUE;
}

static gboolean
do_remove (Workload *workload)
{
  Object *object = pick_from (workload, workload->store->objects);

  return object != NULL && remove_object (workload->store, object);
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

  return remove_by_regex (workload->store, pick_tenant (workload), pattern) > 0;
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
        put_end (workload->store, object);
      else if (object->phase == PHASE_UPSERTING)
        upsert_end (workload->store, object);
      else if (object->task != TASK_NONE)
        task_end (workload->store, object);
      object->lease_until = 0;
    }
}

static gboolean
do_remove_all (Workload *workload)
{
  const char *tenant = pick_tenant (workload);

  if (g_rand_boolean (workload->rand))
    quiesce_tenant (workload, tenant);
  if (remove_all (workload->store, tenant, random_oplog, workload))
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

int
main (int argc, char **argv)
{
  g_autoptr (KvevConfig) config = kvev_config_new ();
  g_autoptr (GOptionContext) context = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (KvtRelay) relay = NULL;
  g_autofree char *truth_path = NULL;
  g_autofree char *stats_path = NULL;
  g_autofree char *close_timeout = NULL;
  gint64 n_ops = 1000, seed = 1, wait_timeout_ms = -1;
  gint n_tenants = 3, wait_subscribers = 0;
  gboolean quiet = FALSE;
  guint64 close_timeout_ms;
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
    { "truth", 0, 0, G_OPTION_ARG_FILENAME, &truth_path,
      N_ ("At the end, write every available object and its tiers as JSON to FILE"), N_ ("FILE") },
    { "stats", 0, 0, G_OPTION_ARG_FILENAME, &stats_path,
      N_ ("At the end, write the publisher's statistics as JSON to FILE"), N_ ("FILE") },
    { "quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet, N_ ("Do not print the summary"), NULL },
    { NULL },
  };

  kvt_init_i18n ();
  g_set_prgname ("mini-master");

  context = g_option_context_new (NULL);
  g_option_context_set_translation_domain (context, GETTEXT_PACKAGE);
  g_option_context_set_summary (context,
                                N_ ("A small in-memory store master that publishes its cache "
                                    "availability through libkvevents."));
  g_option_context_add_main_entries (context, entries, GETTEXT_PACKAGE);
  /* The library's own flags, exactly as a master exposes them. */
  g_option_context_add_group (context, kvev_config_option_group (config));
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("%s: %s\n", g_get_prgname (), error->message);
      return KVT_EXIT_USAGE;
    }
  if (n_ops < 0 || n_tenants < 1 || n_tenants > 1000 || wait_subscribers < 0)
    {
      g_printerr (_ ("%s: --ops must be at least 0, --tenants from 1 to 1000 and "
                     "--wait-subscribers at least 0\n"),
                  g_get_prgname ());
      return KVT_EXIT_USAGE;
    }

  /* A master creates its publisher once, at start-up, from its flags:
   * kvev_publisher_new (config, &error).  This is that call when
   * --wait-subscribers is 0; otherwise it first puts the tools' relay in
   * front of the library (tools/relay.h), which a master does not need. */
  store.publisher
      = kvt_relay_publisher_new (config, (guint) wait_subscribers, wait_timeout_ms, &relay, &error);
  if (store.publisher == NULL)
    {
      g_printerr ("%s: %s\n", g_get_prgname (), error->message);
      return KVT_EXIT_FAILURE;
    }
  store.by_name = g_hash_table_new_full (g_bytes_hash, g_bytes_equal,
                                         (GDestroyNotify) g_bytes_unref, object_free);
  store.objects = g_ptr_array_new ();
  store.pending = g_ptr_array_new ();
  store.tasks = g_ptr_array_new ();

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

  for (gint64 op = 0; op < n_ops; op++)
    run_one (&workload);

  /* At shutdown a master flushes, bounded, before it frees the
   * publisher, so subscribers get the last events. */
  close_timeout = kvev_config_get (config, "kv_events_close_timeout_ms");
  if (!kvt_parse_uint (close_timeout, 0, G_MAXUINT32, &close_timeout_ms))
    close_timeout_ms = 1000;
  if (!kvev_publisher_flush (store.publisher, (gint64) close_timeout_ms))
    g_printerr (_ ("%s: the last events were not all sent within %" PRIu64 " ms\n"),
                g_get_prgname (), close_timeout_ms);
  kvt_relay_finish (relay, store.publisher, (gint64) close_timeout_ms);

  if (truth_path != NULL && !write_truth (&store, truth_path, &error))
    {
      g_printerr ("%s: %s\n", g_get_prgname (), error->message);
      g_clear_error (&error);
      status = KVT_EXIT_FAILURE;
    }
  if (stats_path != NULL)
    {
      g_autofree char *json = kvev_publisher_stats_json (store.publisher);
      g_autofree char *line = g_strconcat (json, "\n", NULL);

      if (!g_file_set_contents (stats_path, line, -1, &error))
        {
          g_printerr ("%s: %s\n", g_get_prgname (), error->message);
          g_clear_error (&error);
          status = KVT_EXIT_FAILURE;
        }
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
          g_get_prgname (), kvev_publisher_stat (store.publisher, KVEV_STAT_PUBLISHED_EVENTS),
          kvev_publisher_stat (store.publisher, KVEV_STAT_PUBLISHED_BATCHES),
          kvev_publisher_stat (store.publisher, KVEV_STAT_DROPPED_EVENTS));
    }

  kvev_publisher_free (store.publisher);
  g_clear_pointer (&relay, kvt_relay_free);
  g_hash_table_unref (store.by_name);
  g_ptr_array_unref (store.objects);
  g_ptr_array_unref (store.pending);
  g_ptr_array_unref (store.tasks);
  g_strfreev (workload.tenants);
  g_rand_free (workload.rand);
  return status;
}
