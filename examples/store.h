/* store.h: a small in-memory store master that publishes its cache
 * availability through libkvevents.  Read store.c if you write a master.
 *
 * The store is a toy (objects in a hash table; the callers stand in for
 * its clients), but its operations are the ones of the publication-point
 * table (kvevents(7), "PUBLICATION POINTS"; README, "Wiring the
 * publication points"), and each is wired the way a real master must wire
 * it.  It needs nothing but <kvevents/kvevents.h> and GLib.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEV_EXAMPLE_STORE_H
#define KVEV_EXAMPLE_STORE_H

#include <kvevents/kvevents.h>

G_BEGIN_DECLS

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
  /* Every operation holds it while it mutates and publishes, and the
   * snapshot walk holds it too: the rule that makes a snapshot exact
   * (kvevents(7), SNAPSHOTS).  A master with a lock per object takes that
   * object's lock instead; this store has one. */
  GRecMutex lock;
  GHashTable *by_name; /* tenant, NUL, key -> Object */
  GPtrArray *objects;  /* every object */
  GPtrArray *pending;  /* objects PUTTING or UPSERTING */
  GPtrArray *tasks;    /* ready objects with a task in flight */
  guint64 now;         /* operations so far: the clock leases expire by */
} Store;

/* A store that publishes through publisher, which it does not own. */
void store_init (Store *store, KvevPublisher *publisher);
void store_clear (Store *store);

/* The tiers an object is available on: its completed replicas only. */
KvevMedia object_media (const Object *object);
gboolean object_is_leased (const Store *store, const Object *object);

/* The operations.  Those that return a gboolean return FALSE when the
 * store refuses them, and then nothing changed and nothing is
 * published. */

/* PutStart; NULL when the key exists (an existing object takes the
 * Upsert path).  PutEnd commits it; PutRevoke, or a failed Put, drops
 * it. */
Object *store_put_start (Store *store, const char *tenant, const char *key, gsize key_len,
                         const char *group, const Replica *replicas, guint n_replicas, gsize size);
void store_put_end (Store *store, Object *object);
void store_put_revoke (Store *store, Object *object);

/* UpsertStart on a ready object: rewritten in place when size is the
 * same, on new replicas otherwise.  UpsertEnd commits it; UpsertRevoke,
 * or a failed Upsert, drops the object. */
gboolean store_upsert_start (Store *store, Object *object, gsize size, const Replica *replicas,
                             guint n_replicas);
void store_upsert_end (Store *store, Object *object);
void store_upsert_revoke (Store *store, Object *object);

/* Copy, offload or promotion onto a new replica of type; task_end
 * completes the task of an object in store->tasks. */
gboolean store_task_start (Store *store, Object *object, Task task, KvevReplicaType type,
                           guint client);
void store_task_end (Store *store, Object *object);

/* Move: completed replica index goes to another segment, maybe another
 * tier. */
gboolean store_move_replica (Store *store, Object *object, guint index, KvevReplicaType type,
                             guint client);

/* Eviction of one tier; a replica clear of one replica; the cleanup of
 * a client that went away, across every object. */
gboolean store_evict (Store *store, Object *object, KvevMedia tier);
gboolean store_clear_replica (Store *store, Object *object, guint index);
void store_cleanup_client (Store *store, guint client);

/* Remove (and each object of BatchRemove); regex remove of a tenant's
 * keys, how many it removed (0 with error set for a bad pattern). */
gboolean store_remove (Store *store, Object *object);
guint store_remove_by_regex (Store *store, const char *tenant, const char *pattern, GError **error);

/* The outcome of the oplog for one RemoveAll erase (HA masters reserve a
 * slot and append before erasing). */
typedef enum
{
  OPLOG_OK,
  OPLOG_RESERVE_FAILED,
  OPLOG_APPEND_FAILED,
} OplogResult;

typedef OplogResult (*StoreOplogFunc) (gpointer data);

/* RemoveAll of one tenant; oplog decides each erase's oplog outcome.
 * TRUE when the tenant-wide cleared went out. */
gboolean store_remove_all (Store *store, const char *tenant, StoreOplogFunc oplog, gpointer data);

/* A KvevSnapshotFunc for kvev_publisher_set_snapshot_func (), with the
 * store as its user data: every committed object with its completed
 * tiers. */
gboolean store_snapshot (KvevSnapshot *snapshot, gpointer store, GError **error);

G_END_DECLS

#endif /* KVEV_EXAMPLE_STORE_H */
