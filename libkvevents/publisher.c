/* publisher.c: the publisher: its lifecycle, what it does with the calls
 * event-calls.c hands it, flush and statistics.  It owns every part, and
 * wires them: the settings, the queue and the snapshot source; ZeroMQ's
 * net, the xpub on its live socket and the services on the others; and
 * the worker, which it lends the xpub and replay.  Each part's counts
 * and endpoints are read from that part.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "publisher.h"

#include "counter.h"
#include "events/snapshot-source.h"
#include "fork.h"
#include "zmq/net.h"
#include "zmq/replay.h"
#include "zmq/resources.h"
#include "zmq/snapshot-server.h"
#include "zmq/xpub.h"
#include "config/settings.h"
#include "stats.h"
#include <base/utf8.h>
#include "worker.h"

#include <inttypes.h>
#include <string.h>

struct _KvevPublisher
{
  /* Read-only after creation. */
  KvevSettings *settings;
  gboolean enabled;
  KvevQueue *queue;
  /* Each made after what it uses and freed before it: the net opens the
   * sockets, the xpub and the services (NULL without their endpoint) use
   * them, and the worker uses the xpub and replay. */
  KvevNet *net;
  KvevXpub *xpub;
  KvevReplay *replay;
  KvevSnapshotServer *snapshot_server;
  KvevWorker *worker;
  gint accepting; /* atomic: 0 once kvev_publisher_free() began, or inherited */
  /* Set in a process forked from the one that created the publisher, by
   * fork.c's child handler, before anything else runs there. */
  KvevForkEntry fork;
  /* The master's walk, for the snapshot thread. */
  KvevSnapshotSource snapshot_source;

  /* Rare paths, bumped with atomic adds from any thread. */
  guint64 skipped_keyless_events;
  guint64 skipped_non_utf8_events;
  guint64 rejected_events;
  guint64 skipped_by_reason[KVEV_N_SKIP_REASONS];
  guint64 cleared_suppressed;
};

static void
publisher_free (KvevPublisher *publisher)
{
  kvev_snapshot_source_clear (&publisher->snapshot_source);
  kvev_queue_free (publisher->queue);
  kvev_settings_free (publisher->settings);
  g_free (publisher);
}

/* What the xpub and the snapshot server ask of the queue, which the
 * publisher owns, in their callbacks' shapes. */
static gboolean
queue_stopped (gpointer queue)
{
  return kvev_queue_stopped (queue);
}

static guint64
queue_barrier (gpointer queue)
{
  return kvev_queue_last_event_id (queue);
}

/* ZeroMQ's side and the thread that sends on it, each part after what
 * it uses.  FALSE with error set; what was made is stop_transport()'s. */
static gboolean
start_transport (KvevPublisher *publisher, GError **error)
{
  const KvevSettings *settings = publisher->settings;
  KvevNet *net;

  net = publisher->net = kvev_net_open (settings, error);
  if (net == NULL)
    return FALSE;
  publisher->xpub = kvev_xpub_new (settings, net, queue_stopped, publisher->queue);
  /* A service runs where the net bound its socket, as the settings ask. */
  if (kvev_net_endpoint (net, KVEV_NET_REPLAY) != NULL)
    {
      publisher->replay = kvev_replay_start (settings, net, error);
      if (publisher->replay == NULL)
        return FALSE;
    }
  if (kvev_net_endpoint (net, KVEV_NET_SNAPSHOTS) != NULL)
    {
      publisher->snapshot_server = kvev_snapshot_server_start (
          settings, net, &publisher->snapshot_source, queue_barrier, publisher->queue, error);
      if (publisher->snapshot_server == NULL)
        return FALSE;
    }
  publisher->worker
      = kvev_worker_start (settings, publisher->queue, publisher->xpub, publisher->replay, error);
  return publisher->worker != NULL;
}

/* Once the worker is stopped, or never started: the rest of ZeroMQ's
 * side, each part before what it uses.  What the live socket still holds
 * may reach subscribers until deadline. */
static void
stop_transport (KvevPublisher *publisher, gint64 deadline)
{
  kvev_snapshot_server_stop (publisher->snapshot_server);
  kvev_replay_stop (publisher->replay);
  kvev_xpub_free (publisher->xpub);
  kvev_net_close (publisher->net, deadline);
}

KvevPublisher *
kvev_publisher_new (const KvevConfig *config, GError **error)
{
  KvevPublisher *publisher;
  KvevSettings *settings;

  kvev_return_val_if_fail (config != NULL, NULL);
  kvev_return_val_if_fail (error == NULL || *error == NULL, NULL);

  /* Validated in every build, so a bad flag is reported even where
   * nothing would be published. */
  settings = kvev_settings_new (config, error);
  if (settings == NULL)
    return NULL;

  publisher = g_new0 (KvevPublisher, 1);
  publisher->settings = settings;
  kvev_snapshot_source_init (&publisher->snapshot_source);
  if (!settings->enable)
    return publisher;

  if (!kvev_has_transport ())
    {
      g_message (_ ("kv_events are enabled, but this libkvevents was built "
                    "without a transport: no event will be published"));
      return publisher;
    }

  if (kvev_fork_watch (error) && kvev_resources_check (settings, error))
    publisher->queue = kvev_queue_new (settings->queue_capacity, error);
  if (publisher->queue == NULL || !start_transport (publisher, error))
    {
      stop_transport (publisher, 0);
      publisher_free (publisher);
      return NULL;
    }
  publisher->enabled = TRUE;
  g_atomic_int_set (&publisher->accepting, 1);
  /* A child forked before this cannot hold the pointer: the thread that
   * would return it is not in the child. */
  kvev_fork_track (&publisher->fork, &publisher->accepting);
  return publisher;
}

/* Enabled, and in the process that created it: a copy inherited by a
 * forked child does nothing (kvevents(7), THE MASTER'S PROCESS). */
static gboolean
live (const KvevPublisher *publisher)
{
  return publisher->enabled && !publisher->fork.inherited;
}

gboolean
kvev_publisher_is_enabled (const KvevPublisher *publisher)
{
  kvev_return_val_if_fail (publisher != NULL, FALSE);

  return live (publisher);
}

const char *
kvev_publisher_get_endpoint (const KvevPublisher *publisher)
{
  kvev_return_val_if_fail (publisher != NULL, NULL);

  /* Read once at creation: the copy a child inherits still has it. */
  return publisher->enabled ? kvev_net_endpoint (publisher->net, KVEV_NET_LIVE) : NULL;
}

const char *
kvev_publisher_get_instance_id (const KvevPublisher *publisher)
{
  kvev_return_val_if_fail (publisher != NULL, NULL);

  return publisher->settings->instance_id_hex;
}

const char *
kvev_publisher_get_replay_endpoint (const KvevPublisher *publisher)
{
  kvev_return_val_if_fail (publisher != NULL, NULL);

  return publisher->enabled ? kvev_net_endpoint (publisher->net, KVEV_NET_REPLAY) : NULL;
}

const char *
kvev_publisher_get_snapshot_endpoint (const KvevPublisher *publisher)
{
  kvev_return_val_if_fail (publisher != NULL, NULL);

  return publisher->enabled ? kvev_net_endpoint (publisher->net, KVEV_NET_SNAPSHOTS) : NULL;
}

void
kvev_publisher_set_snapshot_func (KvevPublisher *publisher, KvevSnapshotFunc func,
                                  gpointer user_data, GDestroyNotify destroy)
{
  kvev_return_if_fail (publisher != NULL);

  /* The parent's walk may have held the source's lock at the fork, and
   * the data and its destroy notify are the parent's. */
  if (publisher->fork.inherited)
    return;
  if (!kvev_snapshot_source_set (&publisher->snapshot_source, func, user_data, destroy))
    {
      static KvevLogLimit limit;

      /* Waiting for the walk to end would wait for itself. */
      kvev_critical_limited (&limit, G_STRFUNC, "called from inside the snapshot walk");
    }
}

/* Whether an event call may queue now. */
static gboolean
accepting (const KvevPublisher *publisher)
{
  return publisher->enabled && G_LIKELY (g_atomic_int_get (&publisher->accepting));
}

/* With kv_events_non_utf8 skip, whether the call's strings keep it off
 * the wire (kvevents(7), "Strings that are not UTF-8").  Decided here,
 * before the call is queued, so that it takes no event_id and no
 * sequence number and no reader sees a loss.  The default, bin, reads
 * only the policy: the worker sorts such calls out as it encodes. */
static gboolean
skipped_non_utf8 (const KvevPublisher *publisher, const char *tenant_id, gsize tenant_len,
                  const char *object_key, gsize key_len, const char *group_id, gsize group_len)
{
  if (G_LIKELY (publisher->settings->non_utf8 != KVEV_NON_UTF8_SKIP))
    return FALSE;
  return !kvev_bytes_are_utf8 (tenant_id, tenant_len) || !kvev_bytes_are_utf8 (object_key, key_len)
         || !kvev_bytes_are_utf8 (group_id, group_len);
}

void
kvev_publisher_queue_keyed (KvevPublisher *publisher, KvevMedia removed, KvevMedia stored,
                            const char *tenant_id, gsize tenant_len, const char *object_key,
                            gsize key_len, const char *group_id, gsize group_len)
{
  if (!accepting (publisher))
    return;
  /* Without its key an event names nothing a subscriber can act on. */
  if (key_len == 0 || !publisher->settings->emit_object_key)
    {
      kvev_counter_add (&publisher->skipped_keyless_events,
                        kvev_media_count (removed) + kvev_media_count (stored));
      return;
    }
  if (G_UNLIKELY (skipped_non_utf8 (publisher, tenant_id, tenant_len, object_key, key_len, group_id,
                                    group_len)))
    {
      kvev_counter_add (&publisher->skipped_non_utf8_events,
                        kvev_media_count (removed) + kvev_media_count (stored));
      return;
    }
  kvev_queue_push (publisher->queue,
                   kvev_call_new_keyed (removed, stored, tenant_id, tenant_len, object_key, key_len,
                                        group_id, group_len));
}

gboolean
kvev_publisher_queue_cleared (KvevPublisher *publisher, const char *tenant_id, gsize tenant_len)
{
  if (G_UNLIKELY (skipped_non_utf8 (publisher, tenant_id, tenant_len, NULL, 0, NULL, 0)))
    {
      if (publisher->enabled)
        kvev_counter_add (&publisher->skipped_non_utf8_events, 1);
      return FALSE;
    }
  if (!publisher->enabled)
    return TRUE;
  if (!accepting (publisher))
    return FALSE;
  /* cleared is tenant-scoped: emit_object_key does not apply. */
  kvev_queue_push (publisher->queue, kvev_call_new_cleared (tenant_id, tenant_len));
  return TRUE;
}

void
kvev_publisher_reject_at (KvevPublisher *publisher, KvevLogLimit *limit, const char *function,
                          const char *reason)
{
  kvev_critical_limited (limit, function, reason);
  if (publisher->enabled)
    kvev_counter_add (&publisher->rejected_events, 1);
}

void
kvev_publisher_count_skip (KvevPublisher *publisher, KvevSkipReason reason)
{
  if (publisher->enabled)
    kvev_counter_add (&publisher->skipped_by_reason[reason], 1);
}

void
kvev_publisher_count_cleared_suppressed (KvevPublisher *publisher)
{
  if (publisher->enabled)
    kvev_counter_add (&publisher->cleared_suppressed, 1);
}

/* A deadline for g_cond_wait_until() from a timeout in milliseconds;
 * -1 for a negative timeout, which waits for ever. */
static gint64
deadline_of (gint64 timeout_ms)
{
  if (timeout_ms < 0)
    return -1;
  return g_get_monotonic_time () + MIN (timeout_ms, G_MAXINT64 / 1000 / 2) * 1000;
}

gboolean
kvev_publisher_flush (KvevPublisher *publisher, gint64 timeout_ms)
{
  gint64 deadline;

  kvev_return_val_if_fail (publisher != NULL, FALSE);

  /* An inherited copy accepts nothing, so nothing of the child's waits;
   * what the parent queued is the parent's publisher's to send. */
  if (!live (publisher))
    return TRUE;
  deadline = deadline_of (timeout_ms);
  /* A flush wants the events out now, not after the worker's nap.  Every
   * event accepted so far has an id <= the last one given, and the queue
   * only ever drops events older than one it still holds, so the worker
   * retiring that id means all of them have left. */
  kvev_queue_wake (publisher->queue);
  return kvev_worker_wait_retired (publisher->worker, kvev_queue_last_event_id (publisher->queue),
                                   deadline);
}

gboolean
kvev_publisher_wait_subscribers (KvevPublisher *publisher, guint n, gint64 timeout_ms)
{
  kvev_return_val_if_fail (publisher != NULL, FALSE);

  if (!live (publisher))
    return n == 0;
  return kvev_xpub_wait_subscriptions (publisher->xpub, n, deadline_of (timeout_ms));
}

void
kvev_publisher_free (KvevPublisher *publisher)
{
  if (publisher == NULL)
    return;
  /* Its queue, locks and worker are as the parent's threads left them at
   * the fork, maybe in the middle of an operation: nothing of it can be
   * freed, stopped or waited for.  It stays allocated, reachable from
   * fork.c's registry. */
  if (publisher->fork.inherited)
    return;

  if (publisher->enabled)
    {
      gint64 deadline
          = g_get_monotonic_time () + (gint64) publisher->settings->close_timeout_ms * 1000;
      guint64 last;

      g_atomic_int_set (&publisher->accepting, 0);
#ifdef KVEV_TESTING
      kvev_queue_hold (publisher->queue, FALSE);
#endif
      last = kvev_queue_last_event_id (publisher->queue);
      kvev_queue_wake (publisher->queue);
      if (!kvev_worker_wait_retired (publisher->worker, last, deadline))
        {
          guint64 lost = kvev_queue_discard (publisher->queue);

          if (lost > 0)
            g_warning (_ ("Closing the kv_events publisher dropped %" PRIu64
                          " queued events after waiting %u ms"),
                       (uint64_t) lost, publisher->settings->close_timeout_ms);
        }
      kvev_queue_stop (publisher->queue);
      kvev_worker_stop (publisher->worker);
      stop_transport (publisher, deadline);
      /* Only now: a child forked while this ran gets an inherited copy,
       * which its own free leaves alone. */
      kvev_fork_untrack (&publisher->fork);
    }
  publisher_free (publisher);
}

/* Every statistic at once.  Read one by one, enqueued would be older than
 * the rest, and a status page could show more events dropped than ever
 * enqueued: the worker's counters come first, then the queue's at one
 * moment, so enqueued covers every event counted published, dropped or
 * still queued. */
static void
read_stats (const KvevPublisher *publisher, gboolean at_once, KvevStatsReading *reading)
{
  guint64 *values = reading->values;
  KvevWorkerCounts worker;
  KvevPeerCounts peers;
  KvevReplayCounts replay;
  KvevSnapshotCounts snapshots;
  KvevQueueCounts queue;
  guint i;

  memset (reading, 0, sizeof *reading);
  reading->instance_id = publisher->settings->instance_id_hex;
  reading->backend_id = publisher->settings->backend_id;
  reading->dp_rank = publisher->settings->dp_rank;
  /* An inherited copy is reported as a disabled publisher, without its
   * queue's lock, which a parent's thread may have held at the fork. */
  if (!live (publisher))
    return;
  reading->enabled = TRUE;
  reading->endpoint = kvev_net_endpoint (publisher->net, KVEV_NET_LIVE);
  kvev_worker_counts (publisher->worker, &worker);
  kvev_xpub_counts (publisher->xpub, &peers);
  kvev_replay_counts (publisher->replay, &replay);
  kvev_snapshot_server_counts (publisher->snapshot_server, &snapshots);
  /* The queue's lock is the producers' too: a single statistic is read
   * without it. */
  if (at_once)
    kvev_queue_counts (publisher->queue, &queue);
  else
    queue = (KvevQueueCounts){ kvev_queue_enqueued (publisher->queue),
                               kvev_queue_dropped (publisher->queue),
                               kvev_queue_depth (publisher->queue),
                               kvev_queue_high_water (publisher->queue) };
  reading->sent_any = worker.published_batches + worker.send_failures + worker.heartbeats > 0;
  values[KVEV_STAT_ENQUEUED_EVENTS] = queue.enqueued;
  values[KVEV_STAT_PUBLISHED_EVENTS] = worker.published_events;
  values[KVEV_STAT_PUBLISHED_BATCHES] = worker.published_batches;
  values[KVEV_STAT_DROPPED_EVENTS] = queue.dropped + worker.send_failed_events;
  values[KVEV_STAT_SKIPPED_KEYLESS_EVENTS] = kvev_counter_get (&publisher->skipped_keyless_events);
  values[KVEV_STAT_SEND_FAILURES] = worker.send_failures;
  values[KVEV_STAT_QUEUE_DEPTH] = queue.depth;
  values[KVEV_STAT_QUEUE_HIGH_WATER] = queue.high_water;
  values[KVEV_STAT_LAST_SEQUENCE] = worker.last_sequence;
  values[KVEV_STAT_REJECTED_EVENTS] = kvev_counter_get (&publisher->rejected_events);
  for (i = 0; i < KVEV_N_SKIP_REASONS; i++)
    values[KVEV_STAT_SKIPPED_LEASED + i] = kvev_counter_get (&publisher->skipped_by_reason[i]);
  values[KVEV_STAT_CLEARED_SUPPRESSED] = kvev_counter_get (&publisher->cleared_suppressed);
  values[KVEV_STAT_SKIPPED_NON_UTF8_EVENTS]
      = kvev_counter_get (&publisher->skipped_non_utf8_events);
  values[KVEV_STAT_SUBSCRIPTIONS] = peers.subscriptions;
  values[KVEV_STAT_SUBSCRIBE_MESSAGES] = peers.subscribe_messages;
  values[KVEV_STAT_UNSUBSCRIBE_MESSAGES] = peers.unsubscribe_messages;
  values[KVEV_STAT_REFUSED_ADDRESSES] = peers.refused_addresses;
  values[KVEV_STAT_REFUSED_KEYS] = peers.refused_keys;
  values[KVEV_STAT_HEARTBEATS] = worker.heartbeats;
  values[KVEV_STAT_REPLAY_REQUESTS] = replay.requests;
  values[KVEV_STAT_REPLAY_MALFORMED_REQUESTS] = replay.malformed_requests;
  values[KVEV_STAT_REPLAY_MESSAGES] = replay.messages;
  values[KVEV_STAT_REPLAY_BUFFER_MESSAGES] = replay.buffered_messages;
  values[KVEV_STAT_REPLAY_BUFFER_BYTES] = replay.buffered_bytes;
  values[KVEV_STAT_SNAPSHOT_REQUESTS] = snapshots.requests;
  values[KVEV_STAT_SNAPSHOTS_REFUSED] = snapshots.refused;
  values[KVEV_STAT_SNAPSHOTS_FAILED] = snapshots.failed;
  values[KVEV_STAT_SNAPSHOT_OBJECTS] = snapshots.objects;
  values[KVEV_STAT_HWM_DROPPED_MESSAGES] = worker.hwm_dropped_messages;
  values[KVEV_STAT_HWM_DROPPED_EVENTS] = worker.hwm_dropped_events;
}
G_STATIC_ASSERT (KVEV_STAT_SKIPPED_OTHER - KVEV_STAT_SKIPPED_LEASED + 1 == KVEV_N_SKIP_REASONS);

guint64
kvev_publisher_stat (const KvevPublisher *publisher, KvevStat stat)
{
  KvevStatsReading reading;

  kvev_return_val_if_fail (publisher != NULL, 0);

  if ((guint) stat >= KVEV_N_STATS)
    return 0;
  read_stats (publisher, FALSE, &reading);
  return reading.values[stat];
}

char *
kvev_publisher_stats_json (const KvevPublisher *publisher)
{
  KvevStatsReading reading;

  kvev_return_val_if_fail (publisher != NULL, NULL);

  read_stats (publisher, TRUE, &reading);
  return kvev_stats_format_json (&reading);
}

char *
kvev_publisher_stats_openmetrics (const KvevPublisher *publisher)
{
  KvevStatsReading reading;

  kvev_return_val_if_fail (publisher != NULL, NULL);

  read_stats (publisher, TRUE, &reading);
  return kvev_stats_format_openmetrics (&reading);
}

#ifdef KVEV_TESTING
KvevQueue *
kvev_publisher_get_queue (const KvevPublisher *publisher)
{
  return publisher->queue;
}
#endif
