/* snapshot-server.h: the thread that answers snapshot requests on the
 * net's snapshot socket; see events/snapshot-source.h and kvevents(7),
 * SNAPSHOTS.  The net (net.h) hardens the socket as it does the live
 * one, and closes it; the publisher, which keeps the source and the
 * queue the barrier comes from, starts and stops the server and reads
 * its counts.  Built only with ZeroMQ: zmq/none.c stands in otherwise.
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEVENTS_SNAPSHOT_SERVER_H
#define KVEVENTS_SNAPSHOT_SERVER_H

#include "events/snapshot-source.h"
#include "net.h"

G_BEGIN_DECLS

typedef struct _KvevSnapshotServer KvevSnapshotServer;

/* What the snapshot server did. */
typedef struct
{
  guint64 requests;
  guint64 refused; /* no snapshot function, or a request of another shape */
  guint64 failed;  /* the walk failed, or the subscriber went away */
  guint64 objects; /* sent */
} KvevSnapshotCounts;

/* A walk's barrier: the last event_id the publisher accepted.  Every
 * event accepted before the call has an id <= it, every later one a
 * greater id, which whoever hands out the ids (the queue's owner) alone
 * can promise.  Called on the server's thread, once per walk. */
typedef guint64 (*KvevSnapshotBarrier) (gpointer data);

/* Serves net's snapshot socket from a thread of its own, walking source
 * and taking each walk's barrier from barrier, until
 * kvev_snapshot_server_stop(); settings, net, source and barrier_data
 * must outlive the server.  NULL with a KVEV_ERROR_TRANSPORT when the
 * thread cannot start. */
KvevSnapshotServer *kvev_snapshot_server_start (const KvevSettings *settings, const KvevNet *net,
                                                KvevSnapshotSource *source,
                                                KvevSnapshotBarrier barrier, gpointer barrier_data,
                                                GError **error);

/* Thread-safe; all 0 for no server (NULL). */
void kvev_snapshot_server_counts (const KvevSnapshotServer *server, KvevSnapshotCounts *counts);

/* Ends the thread after the walk in progress, if any; before the net
 * closes the socket. */
void kvev_snapshot_server_stop (KvevSnapshotServer *server);

G_END_DECLS

#endif /* KVEVENTS_SNAPSHOT_SERVER_H */
