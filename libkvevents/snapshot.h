/* snapshot.h: the master's state, for a subscriber that asks.
 *
 * The publisher keeps no per-object state: the master does, and walks
 * it on request with the function it set (kvev_publisher_set_snapshot_func),
 * from a thread of the library's that answers on a ROUTER socket
 * (kvevents(7), SNAPSHOTS).  The source is the publisher's, in every
 * build; the server exists only with the transport, which owns it.
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEVENTS_SNAPSHOT_H
#define KVEVENTS_SNAPSHOT_H

#include "queue.h"
#include "settings.h"

G_BEGIN_DECLS

/* The master's walk, as last set; the lock is held for a whole walk. */
typedef struct
{
  GMutex lock;
  KvevSnapshotFunc func;
  gpointer user_data;
  GDestroyNotify destroy;
} KvevSnapshotSource;

void kvev_snapshot_source_init (KvevSnapshotSource *source);
void kvev_snapshot_source_set (KvevSnapshotSource *source, KvevSnapshotFunc func,
                               gpointer user_data, GDestroyNotify destroy);
void kvev_snapshot_source_clear (KvevSnapshotSource *source);

G_END_DECLS

#endif /* KVEVENTS_SNAPSHOT_H */
