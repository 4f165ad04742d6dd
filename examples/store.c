/* store.c: a small in-memory store master that publishes its cache
 * availability through libkvevents; see store.h.
 *
 * Read this if you write a master.  Each operation below is wired the way
 * a real master must wire it:
 *
 *   1. capture the object's medium set (kvev_media_of_replica () over its
 *      *completed* replicas) before touching its metadata;
 *   2. mutate the metadata;
 *   3. make the one library call the publication-point table prescribes
 *      (kvevents(7), "PUBLICATION POINTS"), with the "before" from step 1
 *      and the set as it is now,
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
 * Look for "kvev_" to find every place the library is called.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "store.h"

#include <string.h>

/* ------------------------------------------------------------------------
 * The store
 * ------------------------------------------------------------------------ */

/* The tiers an object is available on: its completed replicas only. */
KvevMedia
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

gboolean
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

void
store_init (Store *store, KvevPublisher *publisher)
{
  g_rec_mutex_init (&store->lock);
  store->publisher = publisher;
  store->by_name = g_hash_table_new_full (g_bytes_hash, g_bytes_equal,
                                          (GDestroyNotify) g_bytes_unref, object_free);
  store->objects = g_ptr_array_new ();
  store->pending = g_ptr_array_new ();
  store->tasks = g_ptr_array_new ();
  store->now = 0;
}

void
store_clear (Store *store)
{
  g_clear_pointer (&store->objects, g_ptr_array_unref);
  g_clear_pointer (&store->pending, g_ptr_array_unref);
  g_clear_pointer (&store->tasks, g_ptr_array_unref);
  g_clear_pointer (&store->by_name, g_hash_table_unref); /* frees the objects */
  g_rec_mutex_clear (&store->lock);
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

  kvev_publish_removed (store->publisher, object->tenant, object->key, object->key_len,
                        object->group, before);
  store_erase (store, object);
}

/* PutStart: replicas are allocated but not written.  Nothing is readable,
 * so nothing is published. */
Object *
store_put_start (Store *store, const char *tenant, const char *key, gsize key_len,
                 const char *group, const Replica *replicas, guint n_replicas, gsize size)
{
  G_GNUC_UNUSED g_autoptr (GRecMutexLocker) locker = g_rec_mutex_locker_new (&store->lock);
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

/* A commit, of a Put or of an Upsert, makes every replica readable, and
 * stored goes out for every completed tier. */
static void
commit (Store *store, Object *object)
{
  guint i;

  for (i = 0; i < object->replicas->len; i++)
    g_array_index (object->replicas, Replica, i).state = REPLICA_COMPLETE;
  object->phase = PHASE_READY;
  g_ptr_array_remove_fast (store->pending, object);
  kvev_publish_stored (store->publisher, object->tenant, object->key, object->key_len,
                       object->group, object_media (object));
}

/* PutEnd (and each object of BatchPutEnd). */
void
store_put_end (Store *store, Object *object)
{
  G_GNUC_UNUSED g_autoptr (GRecMutexLocker) locker = g_rec_mutex_locker_new (&store->lock);
  commit (store, object);
}

/* PutRevoke, or a Put that failed before its commit: the object was never
 * readable, so its disappearance is no event at all. */
void
store_put_revoke (Store *store, Object *object)
{
  G_GNUC_UNUSED g_autoptr (GRecMutexLocker) locker = g_rec_mutex_locker_new (&store->lock);
  store_erase (store, object);
}

/* UpsertStart on an existing object.  The old value becomes unreadable
 * now: rewritten in place when the size is the same, replaced by new
 * replicas (possibly on other tiers) when it is not.  removed goes out for
 * the tiers the old value had. */
gboolean
store_upsert_start (Store *store, Object *object, gsize size, const Replica *replicas,
                    guint n_replicas)
{
  G_GNUC_UNUSED g_autoptr (GRecMutexLocker) locker = g_rec_mutex_locker_new (&store->lock);
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
  kvev_publish_removed (store->publisher, object->tenant, object->key, object->key_len,
                        object->group, before);
  return TRUE;
}

/* UpsertEnd: the new value is committed exactly as a Put's. */
void
store_upsert_end (Store *store, Object *object)
{
  G_GNUC_UNUSED g_autoptr (GRecMutexLocker) locker = g_rec_mutex_locker_new (&store->lock);
  commit (store, object);
}

/* An Upsert that failed after the old value was gone: the removed of
 * store_upsert_start () already told subscribers, and nothing readable
 * is lost now. */
void
store_upsert_revoke (Store *store, Object *object)
{
  G_GNUC_UNUSED g_autoptr (GRecMutexLocker) locker = g_rec_mutex_locker_new (&store->lock);
  store_erase (store, object);
}

/* Copy, offload and promotion start by allocating the target replica; it
 * is not readable until the task ends, so starting publishes nothing. */
gboolean
store_task_start (Store *store, Object *object, Task task, KvevReplicaType type, guint client)
{
  G_GNUC_UNUSED g_autoptr (GRecMutexLocker) locker = g_rec_mutex_locker_new (&store->lock);
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
void
store_task_end (Store *store, Object *object)
{
  G_GNUC_UNUSED g_autoptr (GRecMutexLocker) locker = g_rec_mutex_locker_new (&store->lock);
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
      kvev_publish_delta (store->publisher, object->tenant, object->key, object->key_len,
                          object->group, before, after);
    }
  else
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
gboolean
store_move_replica (Store *store, Object *object, guint index, KvevReplicaType type, guint client)
{
  G_GNUC_UNUSED g_autoptr (GRecMutexLocker) locker = g_rec_mutex_locker_new (&store->lock);
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
  kvev_publish_delta (store->publisher, object->tenant, object->key, object->key_len, object->group,
                      before, object_media (object));
  return TRUE;
}

/* Eviction of one tier (memory under memory pressure, disk under disk
 * pressure): removed when the last replica of the tier goes.  Leased
 * objects and objects being written are not evicted. */
gboolean
store_evict (Store *store, Object *object, KvevMedia tier)
{
  G_GNUC_UNUSED g_autoptr (GRecMutexLocker) locker = g_rec_mutex_locker_new (&store->lock);
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
  kvev_publish_delta (store->publisher, object->tenant, object->key, object->key_len, object->group,
                      before, object_media (object));
  return TRUE;
}

/* Replica clear: one replica is dropped (its segment was unmounted, say),
 * whatever its state. */
gboolean
store_clear_replica (Store *store, Object *object, guint index)
{
  G_GNUC_UNUSED g_autoptr (GRecMutexLocker) locker = g_rec_mutex_locker_new (&store->lock);
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
  kvev_publish_delta (store->publisher, object->tenant, object->key, object->key_len, object->group,
                      before, object_media (object));
  return TRUE;
}

/* Stale client cleanup: a client went away, and every replica in its
 * buffers with it, across every object.  Each object gets its own delta;
 * an object left without replicas is erased.  A Put in flight that loses
 * its replicas was never readable, so its erase publishes nothing (its
 * "before" is empty). */
void
store_cleanup_client (Store *store, guint client)
{
  G_GNUC_UNUSED g_autoptr (GRecMutexLocker) locker = g_rec_mutex_locker_new (&store->lock);
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
      else
        kvev_publish_delta (store->publisher, object->tenant, object->key, object->key_len,
                            object->group, before, object_media (object));
    }
}

/* Remove (and each object of BatchRemove and of a regex remove): removed
 * for every tier the object had.  A leased object, or one being written,
 * is refused. */
gboolean
store_remove (Store *store, Object *object)
{
  G_GNUC_UNUSED g_autoptr (GRecMutexLocker) locker = g_rec_mutex_locker_new (&store->lock);
  KvevMedia before;

  if (object->phase != PHASE_READY || object_has_processing_replicas (object)
      || object_is_leased (store, object))
    return FALSE;

  before = object_media (object);
  kvev_publish_removed (store->publisher, object->tenant, object->key, object->key_len,
                        object->group, before);
  store_erase (store, object);
  return TRUE;
}

/* Regex remove: every key of the tenant that matches.  Keys are bytes, not
 * text, hence G_REGEX_RAW.  The pattern is a client's: a bad one is the
 * client's error, and removes nothing. */
guint
store_remove_by_regex (Store *store, const char *tenant, const char *pattern, GError **error)
{
  G_GNUC_UNUSED g_autoptr (GRecMutexLocker) locker = g_rec_mutex_locker_new (&store->lock);
  g_autoptr (GRegex) regex = g_regex_new (pattern, G_REGEX_RAW, 0, error);
  g_autoptr (GPtrArray) objects = NULL;
  guint i, removed = 0;

  if (regex == NULL)
    return 0;
  objects = g_ptr_array_copy (store->objects, NULL, NULL);
  for (i = 0; i < objects->len; i++)
    {
      Object *object = g_ptr_array_index (objects, i);

      if (strcmp (object->tenant, tenant) == 0
          && g_regex_match_full (regex, object->key, object->key_len, 0, 0, NULL, NULL)
          && store_remove (store, object))
        removed++;
    }
  return removed;
}

/* RemoveAll of one tenant.  Every object the loop accepts is announced
 * through the scope; every object it leaves behind is reported as a skip
 * with its reason, so the scope publishes the tenant-wide cleared only
 * when the tenant is really empty.  oplog () decides each erase's oplog
 * outcome (HA masters reserve a slot and append before erasing). */
gboolean
store_remove_all (Store *store, const char *tenant, StoreOplogFunc oplog, gpointer data)
{
  G_GNUC_UNUSED g_autoptr (GRecMutexLocker) locker = g_rec_mutex_locker_new (&store->lock);
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
      kvev_clear_object_removed (scope, object->key, object->key_len, object->group, before);
      store_erase (store, object);
    }
  return kvev_clear_end (scope);
}

/* ------------------------------------------------------------------------
 * Snapshots
 * ------------------------------------------------------------------------ */

/* Under the store's lock for the whole walk, which every operation takes
 * to mutate and publish: each object's tiers are then those its events
 * said so far, and a mutation after the walk is an event past the
 * barrier.  Objects whose Put or Upsert is not committed are left out:
 * no stored event said they were there. */
gboolean
store_snapshot (KvevSnapshot *snapshot, gpointer data, GError **error)
{
  Store *store = data;
  G_GNUC_UNUSED g_autoptr (GRecMutexLocker) locker = g_rec_mutex_locker_new (&store->lock);
  guint i;

  (void) error;
  for (i = 0; i < store->objects->len; i++)
    {
      const Object *object = g_ptr_array_index (store->objects, i);

      /* The store holds one lock for the whole walk, so it never calls
       * kvev_snapshot_pause(): a subscriber too far behind makes the add
       * say stop.  A store with shards pauses between them. */
      if (object->phase == PHASE_READY
          && !kvev_snapshot_add (snapshot, object->tenant, object->key, object->key_len,
                                 object->group, object_media (object)))
        break;
    }
  return TRUE;
}
