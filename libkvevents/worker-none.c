/* worker-none.c: the worker of a library built --without-zmq, which
 * has no thread to send with.
 * kvev_has_transport() is FALSE there, so kvev_publisher_new() never
 * starts one; these bodies only keep the same front door linking in
 * both builds.  What it asks of zmq/ is zmq/none.c's.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "worker.h"

KvevWorker *
kvev_worker_start (const KvevSettings *settings, KvevQueue *queue, KvevXpub *xpub,
                   KvevReplay *replay, GError **error)
{
  g_return_val_if_reached (NULL);
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
kvev_worker_stop (KvevWorker *worker)
{
  g_return_if_reached ();
}
