/* snapshot-source.h: the master's state, for a subscriber that asks.
 *
 * The publisher keeps no per-object state: the master does, and walks
 * it on request with the function it set (kvev_publisher_set_snapshot_func),
 * from a thread of the library's that answers on a ROUTER socket
 * (kvevents(7), SNAPSHOTS).  It sits beside the queue: the other way
 * events reach the library, and like the queue in every build and
 * without a socket.  The publisher keeps the source; the snapshot server
 * (zmq/snapshot-server.h), which only a ZeroMQ build has, walks it.
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEVENTS_SNAPSHOT_SOURCE_H
#define KVEVENTS_SNAPSHOT_SOURCE_H

#include "internal.h"

G_BEGIN_DECLS

/* The master's walk, as last set.  The lock is held for a whole walk, so
 * that the function and its data stay while it runs. */
typedef struct
{
  GMutex lock;
  KvevSnapshotFunc func;
  gpointer user_data;
  GDestroyNotify destroy;
  /* Atomic: setters waiting for the walk to end, which tells it to stop. */
  gint replacing;
  /* Atomic: the thread inside func, if any. */
  gpointer walker;
} KvevSnapshotSource;

void kvev_snapshot_source_init (KvevSnapshotSource *source);

/* Replaces the function once no walk runs, telling one that does to
 * stop; FALSE, and nothing changed, when called from inside the walk,
 * which it would wait for. */
gboolean kvev_snapshot_source_set (KvevSnapshotSource *source, KvevSnapshotFunc func,
                                   gpointer user_data, GDestroyNotify destroy);
void kvev_snapshot_source_clear (KvevSnapshotSource *source);

/* Runs with the lock held, before the function: FALSE skips the walk. */
typedef gboolean (*KvevSnapshotBegin) (KvevSnapshot *snapshot, gpointer data);

/* Runs begin, then the function, with the lock held.  FALSE when there
 * is none (*found FALSE), begin said no, or the function failed (with
 * error set). */
gboolean kvev_snapshot_source_walk (KvevSnapshotSource *source, KvevSnapshot *snapshot,
                                    KvevSnapshotBegin begin, gpointer data, gboolean *found,
                                    GError **error);

/* Whether a setter waits: the walk should stop. */
gboolean kvev_snapshot_source_replacing (KvevSnapshotSource *source);

G_END_DECLS

#endif /* KVEVENTS_SNAPSHOT_SOURCE_H */
