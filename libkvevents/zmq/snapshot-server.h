/* snapshot-server.h: the thread that answers snapshot requests; see
 * snapshot-source.h and kvevents(7), SNAPSHOTS.  Built only with the transport,
 * which makes its socket with the live socket's keys and policy and owns
 * it.
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEVENTS_SNAPSHOT_SERVER_H
#define KVEVENTS_SNAPSHOT_SERVER_H

#include "snapshot-source.h"
#include "xpub.h"

G_BEGIN_DECLS

typedef struct _KvevSnapshotServer KvevSnapshotServer;

/* Serves socket (a bound ROUTER of context) from a thread of its own,
 * walking source and taking each barrier from queue, until
 * kvev_snapshot_server_stop().  NULL with a KVEV_ERROR_TRANSPORT when the
 * thread cannot start; socket is then the caller's to close. */
KvevSnapshotServer *kvev_snapshot_server_start (const KvevSettings *settings, void *context,
                                                void *socket, KvevQueue *queue,
                                                KvevSnapshotSource *source, GError **error);

/* Thread-safe. */
void kvev_snapshot_server_counts (const KvevSnapshotServer *server, KvevSnapshotCounts *counts);

/* Ends the thread after the walk in progress, if any; before the context
 * is terminated. */
void kvev_snapshot_server_stop (KvevSnapshotServer *server);

G_END_DECLS

#endif /* KVEVENTS_SNAPSHOT_SERVER_H */
