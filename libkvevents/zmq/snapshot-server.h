/* snapshot-server.h: the thread that answers snapshot requests; see
 * snapshot-source.h and kvevents(7), SNAPSHOTS.  Built only with the transport,
 * which makes its socket with the live socket's keys and policy and owns
 * it.
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEVENTS_SNAPSHOT_SERVER_H
#define KVEVENTS_SNAPSHOT_SERVER_H

#include "events/snapshot-source.h"
#include "xpub.h"

G_BEGIN_DECLS

typedef struct _KvevSnapshotServer KvevSnapshotServer;

/* A walk's barrier: the last event_id the publisher accepted.  Every
 * event accepted before the call has an id <= it, every later one a
 * greater id, which whoever hands out the ids (the queue's owner) alone
 * can promise.  Called on the server's thread, once per walk. */
typedef guint64 (*KvevSnapshotBarrier) (gpointer data);

/* Serves socket (a bound ROUTER of context) from a thread of its own,
 * walking source and taking each walk's barrier from barrier, until
 * kvev_snapshot_server_stop(); source and barrier_data outlive the
 * server.  NULL with a KVEV_ERROR_TRANSPORT when the thread cannot
 * start; socket is then the caller's to close. */
KvevSnapshotServer *kvev_snapshot_server_start (const KvevSettings *settings, void *context,
                                                void *socket, KvevSnapshotSource *source,
                                                KvevSnapshotBarrier barrier, gpointer barrier_data,
                                                GError **error);

/* Thread-safe. */
void kvev_snapshot_server_counts (const KvevSnapshotServer *server, KvevSnapshotCounts *counts);

/* Ends the thread after the walk in progress, if any; before the context
 * is terminated. */
void kvev_snapshot_server_stop (KvevSnapshotServer *server);

G_END_DECLS

#endif /* KVEVENTS_SNAPSHOT_SERVER_H */
