/* none.c: what the front door asks of zmq/ in a library built
 * --without-zmq, which has no ZeroMQ, so none of zmq/ but resources.c.
 *
 * kvev_has_transport() is FALSE there, and kvev_publisher_new() stops
 * before it would open anything, so these bodies stand in only so that
 * the same front door links in both builds: kvev_net_open() for net.c
 * (it says why there is no net, should anything ask), and bodies never
 * reached for the rest of net.c, xpub.c, replay.c and snapshot-server.c.
 * kvev_snapshot_add() and kvev_snapshot_pause() are public: no walk ever
 * runs, so no snapshot reaches them, and they keep only their checks.
 * The worker is the front door's, and worker-none.c stands in for it.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "net.h"
#include "replay.h"
#include "snapshot-server.h"
#include "xpub.h"

#include "precondition.h"

KvevNet *
kvev_net_open (const KvevSettings *settings, GError **error)
{
  g_set_error_literal (error, KVEV_ERROR, KVEV_ERROR_TRANSPORT,
                       _ ("This libkvevents was built without a transport"));
  return NULL;
}

const char *
kvev_net_endpoint (const KvevNet *net, KvevNetSocket which)
{
  g_return_val_if_reached (NULL);
}

void
kvev_net_close (KvevNet *net, gint64 deadline)
{
  g_return_if_reached ();
}

KvevXpub *
kvev_xpub_new (const KvevSettings *settings, const KvevNet *net, KvevXpubStopping stopping,
               gpointer stopping_data)
{
  g_return_val_if_reached (NULL);
}

void
kvev_xpub_counts (const KvevXpub *xpub, KvevPeerCounts *counts)
{
  g_return_if_reached ();
}

gboolean
kvev_xpub_wait_subscriptions (KvevXpub *xpub, guint64 n, gint64 deadline)
{
  g_return_val_if_reached (FALSE);
}

void
kvev_xpub_free (KvevXpub *xpub)
{
  g_return_if_reached ();
}

KvevReplay *
kvev_replay_start (const KvevSettings *settings, const KvevNet *net, GError **error)
{
  g_return_val_if_reached (NULL);
}

void
kvev_replay_counts (const KvevReplay *replay, KvevReplayCounts *counts)
{
  g_return_if_reached ();
}

void
kvev_replay_stop (KvevReplay *replay)
{
  g_return_if_reached ();
}

KvevSnapshotServer *
kvev_snapshot_server_start (const KvevSettings *settings, const KvevNet *net,
                            KvevSnapshotSource *source, KvevSnapshotBarrier barrier,
                            gpointer barrier_data, GError **error)
{
  g_return_val_if_reached (NULL);
}

void
kvev_snapshot_server_counts (const KvevSnapshotServer *server, KvevSnapshotCounts *counts)
{
  g_return_if_reached ();
}

void
kvev_snapshot_server_stop (KvevSnapshotServer *server)
{
  g_return_if_reached ();
}

gboolean
kvev_snapshot_add (KvevSnapshot *snapshot, const char *tenant_id, const char *object_key,
                   gssize key_len, const char *group_id, KvevMedia media)
{
  kvev_return_val_if_fail (snapshot != NULL, FALSE);
  return FALSE;
}

gboolean
kvev_snapshot_pause (KvevSnapshot *snapshot)
{
  kvev_return_val_if_fail (snapshot != NULL, FALSE);
  return FALSE;
}
