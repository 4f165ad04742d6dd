/* publisher.c: the publisher's lifecycle, flush and statistics.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "publisher-private.h"
#include "fork.h"
#include "resources.h"

#include <inttypes.h>
#include <string.h>

KvevPublisher *
kvev_publisher_new (const KvevConfig *config, GError **error)
{
  g_autoptr (KvevPublisher) publisher = NULL;

  g_return_val_if_fail (config != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  /* Validated in every build, so a bad flag is reported even where
   * nothing would be published. */
  if (!kvev_config_validate (config, error))
    return NULL;

  publisher = g_new0 (KvevPublisher, 1);
  publisher->config = kvev_config_copy (config);
  g_mutex_init (&publisher->progress_lock);
  g_cond_init (&publisher->progress_cond);

  if (!config->enable)
    return g_steal_pointer (&publisher);

  if (!kvev_has_transport ())
    {
      g_message (_("kv_events are enabled, but this libkvevents was built "
                   "without a transport: no event will be published"));
      return g_steal_pointer (&publisher);
    }

  if (!kvev_fork_watch (error) || !kvev_resources_check (config, error))
    return NULL;
  publisher->queue = kvev_queue_new (config->queue_capacity);
  publisher->transport = kvev_transport_start (publisher, &publisher->endpoint, error);
  if (publisher->transport == NULL)
    return NULL;
  publisher->enabled = TRUE;
  g_atomic_int_set (&publisher->accepting, 1);
  /* A child forked before this cannot hold the pointer: the thread that
   * would return it is not in the child. */
  kvev_fork_track (publisher);
  return g_steal_pointer (&publisher);
}

gboolean
kvev_publisher_is_enabled (const KvevPublisher *publisher)
{
  g_return_val_if_fail (publisher != NULL, FALSE);

  return publisher->enabled && !publisher->inherited;
}

const char *
kvev_publisher_get_endpoint (const KvevPublisher *publisher)
{
  g_return_val_if_fail (publisher != NULL, NULL);

  return publisher->endpoint;
}

void
kvev_publisher_retire (KvevPublisher *publisher, guint64 last_event_id)
{
  g_mutex_lock (&publisher->progress_lock);
  if (last_event_id > publisher->retired_event_id)
    publisher->retired_event_id = last_event_id;
  if (publisher->flush_waiters > 0)
    g_cond_broadcast (&publisher->progress_cond);
  g_mutex_unlock (&publisher->progress_lock);
}

/* Every event accepted so far has an id <= the last one given, and the
 * queue only ever drops events older than one it still holds, so the
 * worker retiring that id means all of them have left. */
static gboolean
wait_retired (KvevPublisher *publisher, guint64 target, gint64 deadline)
{
  gboolean done;

  g_mutex_lock (&publisher->progress_lock);
  publisher->flush_waiters++;
  while (publisher->retired_event_id < target)
    {
      if (deadline < 0)
        g_cond_wait (&publisher->progress_cond, &publisher->progress_lock);
      else if (!g_cond_wait_until (&publisher->progress_cond,
                                   &publisher->progress_lock, deadline))
        break;
    }
  done = publisher->retired_event_id >= target;
  publisher->flush_waiters--;
  g_mutex_unlock (&publisher->progress_lock);
  return done;
}

gboolean
kvev_publisher_flush (KvevPublisher *publisher, gint64 timeout_ms)
{
  gint64 deadline = -1;

  g_return_val_if_fail (publisher != NULL, FALSE);

  /* An inherited copy accepts nothing, so nothing of the child's waits;
   * what the parent queued is the parent's publisher's to send. */
  if (!publisher->enabled || publisher->inherited)
    return TRUE;
  if (timeout_ms >= 0)
    deadline = g_get_monotonic_time () + MIN (timeout_ms, G_MAXINT64 / 1000 / 2) * 1000;
  /* A flush wants the events out now, not after the worker's nap. */
  kvev_queue_wake (publisher->queue);
  return wait_retired (publisher, kvev_queue_last_event_id (publisher->queue), deadline);
}

void
kvev_publisher_free (KvevPublisher *publisher)
{
  if (publisher == NULL)
    return;
  /* Its queue, locks and transport are as the parent's threads left them
   * at the fork, maybe in the middle of an operation: nothing of it can
   * be freed, stopped or waited for.  It stays allocated, reachable from
   * fork.c's registry. */
  if (publisher->inherited)
    return;

  if (publisher->enabled)
    {
      gint64 deadline = g_get_monotonic_time ()
                        + (gint64) publisher->config->close_timeout_ms * 1000;
      guint64 last;

      g_atomic_int_set (&publisher->accepting, 0);
      kvev_queue_hold (publisher->queue, FALSE);
      last = kvev_queue_last_event_id (publisher->queue);
      if (!wait_retired (publisher, last, deadline))
        {
          guint64 lost = kvev_queue_discard (publisher->queue);

          if (lost > 0)
            g_warning (_("Closing the kv_events publisher dropped %" PRIu64
                         " queued events after waiting %u ms"),
                       (uint64_t) lost, publisher->config->close_timeout_ms);
        }
      kvev_queue_stop (publisher->queue);
      kvev_transport_stop (publisher->transport, deadline);
      /* Only now: a child forked while this ran gets an inherited copy,
       * which its own free leaves alone. */
      kvev_fork_untrack (publisher);
    }

  kvev_queue_free (publisher->queue);
  g_mutex_clear (&publisher->progress_lock);
  g_cond_clear (&publisher->progress_cond);
  g_free (publisher->endpoint);
  kvev_config_free (publisher->config);
  g_free (publisher);
}

guint64
kvev_publisher_stat (const KvevPublisher *publisher, KvevStat stat)
{
  const KvevQueue *queue;

  g_return_val_if_fail (publisher != NULL, 0);

  if (!kvev_publisher_is_enabled (publisher))
    return 0;
  queue = publisher->queue;
  switch (stat)
    {
    case KVEV_STAT_ENQUEUED_EVENTS:
      return kvev_queue_enqueued (queue);
    case KVEV_STAT_PUBLISHED_EVENTS:
      return kvev_counter_get (&publisher->published_events);
    case KVEV_STAT_PUBLISHED_BATCHES:
      return kvev_counter_get (&publisher->published_batches);
    case KVEV_STAT_DROPPED_EVENTS:
      return kvev_queue_dropped (queue) + kvev_counter_get (&publisher->send_failed_events);
    case KVEV_STAT_SKIPPED_KEYLESS_EVENTS:
      return kvev_counter_get (&publisher->skipped_keyless_events);
    case KVEV_STAT_SEND_FAILURES:
      return kvev_counter_get (&publisher->send_failures);
    case KVEV_STAT_QUEUE_DEPTH:
      return kvev_queue_depth (queue);
    case KVEV_STAT_QUEUE_HIGH_WATER:
      return kvev_queue_high_water (queue);
    case KVEV_STAT_LAST_SEQUENCE:
      return kvev_counter_get (&publisher->last_sequence);
    case KVEV_STAT_REJECTED_EVENTS:
      return kvev_counter_get (&publisher->rejected_events);
    case KVEV_STAT_SKIPPED_LEASED:
    case KVEV_STAT_SKIPPED_INCOMPLETE_REPLICAS:
    case KVEV_STAT_SKIPPED_PENDING_REPLICATION:
    case KVEV_STAT_SKIPPED_OPLOG_RESERVE_FAILED:
    case KVEV_STAT_SKIPPED_OPLOG_APPEND_FAILED:
    case KVEV_STAT_SKIPPED_OTHER:
      return kvev_counter_get (
          &publisher->skipped_by_reason[stat - KVEV_STAT_SKIPPED_LEASED]);
    case KVEV_STAT_CLEARED_SUPPRESSED:
      return kvev_counter_get (&publisher->cleared_suppressed);
    default:
      return 0;
    }
}

/* The names a status endpoint shows, in KvevStat order. */
static const char *const stat_names[] = {
  "enqueued_events",
  "published_events",
  "published_batches",
  "dropped_events",
  "skipped_keyless_events",
  "send_failures",
  "queue_depth",
  "queue_high_water",
  "last_sequence",
  "rejected_events",
  "skipped_leased",
  "skipped_incomplete_replicas",
  "skipped_pending_replication",
  "skipped_oplog_reserve_failed",
  "skipped_oplog_append_failed",
  "skipped_other",
  "cleared_suppressed",
};
G_STATIC_ASSERT (G_N_ELEMENTS (stat_names) == KVEV_STAT_CLEARED_SUPPRESSED + 1);

char *
kvev_publisher_stats_json (const KvevPublisher *publisher)
{
  guint64 values[G_N_ELEMENTS (stat_names)];
  gsize size = sizeof "{\"enabled\": false}", len;
  gboolean enabled;
  char *json;
  guint i;

  g_return_val_if_fail (publisher != NULL, NULL);

  /* An inherited copy is reported as a disabled publisher, without its
   * queue's lock, which a parent's thread may have held at the fork. */
  enabled = kvev_publisher_is_enabled (publisher);
  for (i = 0; i < G_N_ELEMENTS (stat_names); i++)
    values[i] = kvev_publisher_stat (publisher, (KvevStat) i);
  /* Read one by one, enqueued would be older than the rest, and a status
   * page could show more events dropped than ever enqueued.  The worker's
   * counters come first, then the queue's at one moment: enqueued then
   * covers every event counted published, dropped or still queued. */
  if (enabled)
    {
      guint64 published = kvev_counter_get_acquire (&publisher->published_events);
      guint64 send_failed = kvev_counter_get_acquire (&publisher->send_failed_events);
      KvevQueueCounts counts;

      kvev_queue_counts (publisher->queue, &counts);
      values[KVEV_STAT_ENQUEUED_EVENTS] = counts.enqueued;
      values[KVEV_STAT_PUBLISHED_EVENTS] = published;
      values[KVEV_STAT_DROPPED_EVENTS] = counts.dropped + send_failed;
      values[KVEV_STAT_QUEUE_DEPTH] = counts.depth;
      values[KVEV_STAT_QUEUE_HIGH_WATER] = counts.high_water;
    }

  /* malloc alone, which glibc keeps usable after a fork, and no GString:
   * GLib's slice allocator under it (before GLib 2.76) takes a lock of its
   * own, which a parent's thread may have held at the fork. */
  for (i = 0; i < G_N_ELEMENTS (stat_names); i++)
    size += strlen (", \"\": ") + strlen (stat_names[i]) + strlen ("18446744073709551615");
  json = g_malloc (size);
  len = g_snprintf (json, size, "{\"enabled\": %s", enabled ? "true" : "false");
  for (i = 0; i < G_N_ELEMENTS (stat_names); i++)
    len += g_snprintf (json + len, size - len, ", \"%s\": %" G_GUINT64_FORMAT, stat_names[i],
                       values[i]);
  g_assert (len + 1 < size);
  json[len++] = '}';
  json[len] = '\0';
  return json;
}
