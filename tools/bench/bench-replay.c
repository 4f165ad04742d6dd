/* bench-replay.c: a publisher with replay on and its buffer full; see
 * bench-replay.h.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include "bench-replay.h"
#include "bench-stats.h"

#include <inttypes.h>
#include <glib/gi18n.h>

gboolean
bench_config_set_replay (KvevConfig *config, const char *replay_endpoint, guint buffer_messages,
                         GError **error)
{
  g_autofree char *messages = g_strdup_printf ("%u", buffer_messages);

  return kvev_config_set (config, "kv_events_replay_endpoint", replay_endpoint, error)
         && (buffer_messages == 0
             || kvev_config_set (config, "kv_events_replay_buffer_messages", messages, error));
}

guint
bench_config_replay_messages (const KvevConfig *config)
{
  g_autofree char *text = kvev_config_get (config, "kv_events_replay_buffer_messages");

  return (guint) g_ascii_strtoull (text, NULL, 10);
}

gboolean
bench_replay_fill (KvevPublisher *publisher, guint key_len, guint n_messages, guint queue_capacity,
                   guint64 *sent, GError **error)
{
  g_autofree char *key = g_malloc (key_len);
  guint64 round_max
      = MAX (queue_capacity / BENCH_REPLAY_BATCH_EVENTS, 1) * (guint64) BENCH_REPLAY_BATCH_EVENTS;
  guint64 dropped = kvev_publisher_stat (publisher, KVEV_STAT_DROPPED_EVENTS);
  guint64 batches = kvev_publisher_stat (publisher, KVEV_STAT_PUBLISHED_BATCHES);
  guint64 messages = 0;
  guint64 i = 0;

  while (messages < n_messages)
    {
      /* Never more than the messages still wanted would hold full, so
       * that the last round overshoots by its short messages at most. */
      guint64 end
          = i + MIN (round_max, (n_messages - messages) * (guint64) BENCH_REPLAY_BATCH_EVENTS);

      for (; i < end; i++)
        {
          bench_fill_key (key, key_len, i);
          kvev_publish_stored (publisher, BENCH_TENANT, key, key_len, NULL, KVEV_MEDIA_CPU);
        }
      if (!bench_publisher_drain (publisher, error))
        return FALSE;
      messages = kvev_publisher_stat (publisher, KVEV_STAT_PUBLISHED_BATCHES) - batches;
    }
  dropped = kvev_publisher_stat (publisher, KVEV_STAT_DROPPED_EVENTS) - dropped;
  if (dropped > 0)
    return bench_fail (error,
                       _ ("Filling the replay buffer sent %" PRIu64 " messages of %u and dropped "
                          "%" PRIu64 " events"),
                       (uint64_t) messages, n_messages, (uint64_t) dropped);
  if (sent != NULL)
    *sent = messages;
  return TRUE;
}

void
bench_replay_add_counts (BenchFigure *figure, const BenchReplayCounts *counts)
{
  bench_figure_add_extra (figure, "replays", (double) counts->replays);
  bench_figure_add_extra (figure, "replayed_messages", (double) counts->messages);
  bench_figure_add_extra (figure, "replayed_bytes_per_s",
                          (double) counts->bytes * 1e9 / (double) MAX (counts->ns, 1));
}

char *
bench_replay_note (const BenchFigure *figure)
{
  return g_strdup_printf (
      _ ("%.0f messages replayed at %.0f MB/s; replays read to the end marker: %.0f"),
      bench_sum (bench_figure_find_extra (figure, "replayed_messages")->values),
      bench_median (bench_figure_find_extra (figure, "replayed_bytes_per_s")->values) / 1e6,
      bench_sum (bench_figure_find_extra (figure, "replays")->values));
}
