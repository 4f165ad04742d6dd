/* worker-none.c: the worker and snapshots of a library built
 * --without-zmq.
 * kvev_has_transport() is FALSE there, so kvev_publisher_new() never
 * starts one; these bodies only keep the same code linking in both
 * builds.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "worker.h"

#include "precondition.h"

KvevWorker *
kvev_worker_start (const KvevSettings *settings, KvevQueue *queue, KvevSnapshotSource *snapshots,
                   GError **error)
{
  g_set_error_literal (error, KVEV_ERROR, KVEV_ERROR_TRANSPORT,
                       _ ("This libkvevents was built without a transport"));
  return NULL;
}

const char *
kvev_worker_get_endpoint (const KvevWorker *worker)
{
  g_return_val_if_reached (NULL);
}

const char *
kvev_worker_get_replay_endpoint (const KvevWorker *worker)
{
  g_return_val_if_reached (NULL);
}

void
kvev_worker_replay_counts (const KvevWorker *worker, KvevReplayCounts *counts)
{
  g_return_if_reached ();
}

const char *
kvev_worker_get_snapshot_endpoint (const KvevWorker *worker)
{
  g_return_val_if_reached (NULL);
}

void
kvev_worker_snapshot_counts (const KvevWorker *worker, KvevSnapshotCounts *counts)
{
  g_return_if_reached ();
}

gboolean
kvev_worker_wait_retired (KvevWorker *worker, guint64 event_id, gint64 deadline)
{
  g_return_val_if_reached (TRUE);
}

void
kvev_worker_counts (const KvevWorker *worker, KvevWorkerCounts *counts)
{
  g_return_if_reached ();
}

void
kvev_worker_peer_counts (const KvevWorker *worker, KvevPeerCounts *counts)
{
  g_return_if_reached ();
}

gboolean
kvev_worker_wait_subscriptions (KvevWorker *worker, guint64 n, gint64 deadline)
{
  g_return_val_if_reached (FALSE);
}

void
kvev_worker_stop (KvevWorker *worker, gint64 deadline)
{
  g_return_if_reached ();
}

gboolean
kvev_snapshot_add (KvevSnapshot *snapshot, const char *tenant_id, const char *object_key,
                   gssize key_len, const char *group_id, KvevMedia media)
{
  /* No snapshot is ever made without a transport. */
  kvev_return_val_if_fail (snapshot != NULL, FALSE);
  return FALSE;
}

gboolean
kvev_snapshot_pause (KvevSnapshot *snapshot)
{
  kvev_return_val_if_fail (snapshot != NULL, FALSE);
  return FALSE;
}
