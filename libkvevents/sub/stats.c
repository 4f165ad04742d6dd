/* stats.c: the subscriber's statistics as numbers, JSON and OpenMetrics
 * text, like the publisher's (libkvevents/stats.c).
 * SPDX-License-Identifier: Apache-2.0
 */
#include "internal.h"

#include "subscriber.h"
#include <base/quote.h>

#include <string.h>

typedef enum
{
  COUNTER,
  GAUGE,
} Kind;

static const struct
{
  const char *name;
  Kind kind;
  const char *help;
} stats[KVEV_SUB_N_STATS] = {
  { "messages", COUNTER, "Live and replayed messages taken" },
  { "events", COUNTER, "Events delivered, snapshots' included" },
  { "heartbeats", COUNTER, "Messages without events" },
  { "gaps", COUNTER, "Sequence jumps" },
  { "recovered_by_replay", COUNTER, "Missing messages a replay brought" },
  { "recovered_by_snapshot", COUNTER, "Missing messages a snapshot made up for" },
  { "lost", COUNTER, "Missing messages nothing recovered" },
  { "snapshots", COUNTER, "Snapshots applied" },
  { "snapshot_failures", COUNTER, "Snapshots refused, failed, malformed or timed out" },
  { "snapshot_events", COUNTER, "Stored events of the snapshots" },
  { "replay_requests", COUNTER, "Replays asked for" },
  { "replay_failures", COUNTER, "Replays that timed out or were malformed" },
  { "decode_errors", COUNTER, "Messages, events and answers the protocol does not allow" },
  { "resets", COUNTER, "Resets delivered" },
  { "restarts", COUNTER, "New publisher_ids and sequences that went back" },
  { "lost_events", COUNTER, "Holes in event_id" },
  { "superseded_events", COUNTER, "Live events already in a snapshot" },
  { "stale_answers", COUNTER, "Replay and snapshot answers dropped by the failover rule" },
  { "stale_events", COUNTER, "Events dropped by the failover rule" },
  { "reconnects", COUNTER, "Sockets connected again after a broken stream" },
  { "silences", COUNTER, "Silences past 3 heartbeat intervals" },
  { "hold_overflows", COUNTER, "Times the held messages went past their bound" },
  { "held_messages", GAUGE, "Live messages held now" },
  { "held_bytes", GAUGE, "Their bytes" },
};

const char *
kvev_sub_stat_name (KvevSubscriberStat stat)
{
  return (guint) stat < KVEV_SUB_N_STATS ? stats[stat].name : NULL;
}

const char *
kvev_sub_state_name (KvevSubscriberState state)
{
  static const char *const names[] = {
    "waiting", "following", "recovering", "lost", "silent", "superseded",
  };

  return (guint) state < G_N_ELEMENTS (names) ? names[state] : "unknown";
}

guint64
kvev_subscriber_stat (const KvevSubscriber *subscriber, gint publisher_index,
                      KvevSubscriberStat stat)
{
  guint64 sum = 0;
  guint i;

  g_return_val_if_fail (subscriber != NULL, 0);
  if ((guint) stat >= KVEV_SUB_N_STATS)
    return 0;
  if (publisher_index >= 0)
    {
      const KvevSubSource *source;

      if ((guint) publisher_index >= subscriber->sources->len)
        return 0;
      source = g_ptr_array_index (subscriber->sources, publisher_index);
      return source->counts[stat];
    }
  for (i = 0; i < subscriber->sources->len; i++)
    sum += ((const KvevSubSource *) g_ptr_array_index (subscriber->sources, i))->counts[stat];
  return sum;
}

static void
append_quoted (GString *out, const char *text, gboolean json)
{
  g_autofree char *quoted = kvev_quote (text, json);

  g_string_append (out, quoted);
}

char *
kvev_subscriber_stats_json (const KvevSubscriber *subscriber)
{
  GString *out;
  guint i, j;

  g_return_val_if_fail (subscriber != NULL, NULL);
  out = g_string_new ("{");
  for (i = 0; i < KVEV_SUB_N_STATS; i++)
    g_string_append_printf (out, "\"%s\": %" G_GUINT64_FORMAT ", ", stats[i].name,
                            kvev_subscriber_stat (subscriber, -1, (KvevSubscriberStat) i));
  g_string_append (out, "\"publishers\": [");
  for (j = 0; j < subscriber->sources->len; j++)
    {
      const KvevSubSource *source = g_ptr_array_index (subscriber->sources, j);

      g_string_append (out, j > 0 ? ", {\"endpoint\": " : "{\"endpoint\": ");
      append_quoted (out, source->endpoint, TRUE);
      g_string_append_printf (out, ", \"state\": \"%s\"", kvev_sub_state_name (source->state));
      for (i = 0; i < KVEV_SUB_N_STATS; i++)
        g_string_append_printf (out, ", \"%s\": %" G_GUINT64_FORMAT, stats[i].name,
                                source->counts[i]);
      g_string_append_c (out, '}');
    }
  g_string_append (out, "]}");
  return g_string_free (out, FALSE);
}

char *
kvev_subscriber_stats_openmetrics (const KvevSubscriber *subscriber)
{
  GString *out;
  guint i, j;

  g_return_val_if_fail (subscriber != NULL, NULL);
  out = g_string_new (NULL);
  for (i = 0; i < KVEV_SUB_N_STATS; i++)
    {
      const char *suffix = stats[i].kind == COUNTER ? "_total" : "";

      g_string_append_printf (out, "# TYPE kvevents_subscriber_%s %s\n", stats[i].name,
                              stats[i].kind == COUNTER ? "counter" : "gauge");
      g_string_append_printf (out, "# HELP kvevents_subscriber_%s %s\n", stats[i].name,
                              stats[i].help);
      for (j = 0; j < subscriber->sources->len; j++)
        {
          const KvevSubSource *source = g_ptr_array_index (subscriber->sources, j);

          g_string_append_printf (out, "kvevents_subscriber_%s%s{endpoint=", stats[i].name, suffix);
          append_quoted (out, source->endpoint, FALSE);
          g_string_append_printf (out, "} %" G_GUINT64_FORMAT "\n", source->counts[i]);
        }
    }
  g_string_append (out, "# EOF\n");
  return g_string_free (out, FALSE);
}
