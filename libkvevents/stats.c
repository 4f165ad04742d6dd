/* stats.c: statistics as JSON and as OpenMetrics text; see stats.h.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "stats.h"
#include <base/quote.h>

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef enum
{
  COUNTER,
  GAUGE,
} Kind;

/* In KvevStat order.  The help texts are for the people who read a
 * metrics page; like the metric names, they are not translated. */
static const struct
{
  const char *name;
  Kind kind;
  const char *help;
} stats[] = {
  { "enqueued_events", COUNTER, "Events accepted into the queue." },
  { "published_events", COUNTER, "Events handed to ZeroMQ." },
  { "published_batches", COUNTER, "Messages of events handed to ZeroMQ." },
  { "dropped_events", COUNTER,
    "Events lost: dropped by the full queue, in a message that failed, or queued at close." },
  { "skipped_keyless_events", COUNTER, "Events not published for want of a key." },
  { "send_failures", COUNTER, "Messages ZeroMQ refused." },
  { "queue_depth", GAUGE, "Events queued now." },
  { "queue_high_water", GAUGE, "The most events ever queued at once." },
  { "last_sequence", GAUGE, "The transport sequence of the last message sent." },
  { "rejected_events", COUNTER, "Event calls refused for their arguments." },
  { "skipped_leased", COUNTER, "RemoveAll skips: leased objects." },
  { "skipped_incomplete_replicas", COUNTER, "RemoveAll skips: incomplete replicas." },
  { "skipped_pending_replication", COUNTER, "RemoveAll skips: pending replication." },
  { "skipped_oplog_reserve_failed", COUNTER, "RemoveAll skips: oplog reserve failed." },
  { "skipped_oplog_append_failed", COUNTER, "RemoveAll skips: oplog append failed." },
  { "skipped_other", COUNTER, "RemoveAll skips: other reasons." },
  { "cleared_suppressed", COUNTER, "RemoveAll scopes that ended without cleared." },
  { "skipped_non_utf8_events", COUNTER, "Events not published for strings that are not UTF-8." },
  { "subscriptions", GAUGE, "Subscriptions present now that can receive events." },
  { "subscribe_messages", COUNTER, "Subscribe messages received." },
  { "unsubscribe_messages", COUNTER, "Unsubscribe messages received, departures included." },
  { "refused_addresses", COUNTER, "Connections refused for their address." },
  { "refused_keys", COUNTER, "CURVE subscribers refused for their key." },
  { "heartbeats", COUNTER, "Empty messages sent to an idle stream." },
  { "replay_requests", COUNTER, "Replay requests answered." },
  { "replay_malformed_requests", COUNTER, "Replay requests of another shape." },
  { "replay_messages", COUNTER, "Messages sent again by replay." },
  { "replay_buffer_messages", GAUGE, "Messages kept for replay now." },
  { "replay_buffer_bytes", GAUGE, "Payload bytes kept for replay now." },
  { "snapshot_requests", COUNTER, "Snapshot requests received." },
  { "snapshots_refused", COUNTER, "Snapshot requests refused." },
  { "snapshots_failed", COUNTER, "Snapshots whose walk failed or whose subscriber left." },
  { "snapshot_objects", COUNTER, "Objects sent in snapshots." },
  { "hwm_dropped_messages", COUNTER,
    "Messages a subscriber's full pipe refused: dropped for it, sent to the others." },
  { "hwm_dropped_events", COUNTER, "Events of the messages a full pipe refused." },
};
G_STATIC_ASSERT (G_N_ELEMENTS (stats) == KVEV_N_STATS);

/* A string that grows with g_realloc(). */
typedef struct
{
  char *data;
  gsize len;
  gsize size;
} Buffer;

static void G_GNUC_PRINTF (2, 3) append (Buffer *buffer, const char *format, ...)
{
  va_list args;
  int n;

  for (;;)
    {
      va_start (args, format);
      n = g_vsnprintf (buffer->data + buffer->len, buffer->size - buffer->len, format, args);
      va_end (args);
      if (n >= 0 && buffer->len + (gsize) n < buffer->size)
        break;
      buffer->size = MAX (buffer->size * 2, buffer->len + (gsize) MAX (n, 0) + 1);
      buffer->data = g_realloc (buffer->data, buffer->size);
    }
  buffer->len += (gsize) n;
}

static void
append_quoted (Buffer *buffer, const char *text, gboolean json)
{
  g_autofree char *quoted = kvev_quote (text, json);

  append (buffer, "%s", quoted);
}

static Buffer
buffer_new (void)
{
  Buffer buffer = { g_malloc (1024), 0, 1024 };

  buffer.data[0] = '\0';
  return buffer;
}

char *
kvev_stats_format_json (const KvevStatsReading *reading)
{
  Buffer buffer = buffer_new ();
  guint i;

  append (&buffer, "{\"enabled\": %s, \"instance_id\": ", reading->enabled ? "true" : "false");
  append_quoted (&buffer, reading->instance_id, TRUE);
  for (i = 0; i < G_N_ELEMENTS (stats); i++)
    {
      /* Before the first message there is no last sequence, which 0
       * would claim. */
      if (i == KVEV_STAT_LAST_SEQUENCE && reading->enabled && !reading->sent_any)
        append (&buffer, ", \"%s\": null", stats[i].name);
      else
        append (&buffer, ", \"%s\": %" G_GUINT64_FORMAT, stats[i].name, reading->values[i]);
    }
  append (&buffer, ", \"version\": \"%s\", \"endpoint\": ", kvev_version ());
  if (reading->endpoint != NULL)
    append_quoted (&buffer, reading->endpoint, TRUE);
  else
    append (&buffer, "null");
  append (&buffer, ", \"backend_id\": ");
  append_quoted (&buffer, reading->backend_id, TRUE);
  append (&buffer, ", \"dp_rank\": %u}", (guint) reading->dp_rank);
  return buffer.data;
}

char *
kvev_stats_format_openmetrics (const KvevStatsReading *reading)
{
  Buffer buffer = buffer_new ();
  Buffer labels = buffer_new ();
  guint i;

  append (&labels, "{backend_id=");
  append_quoted (&labels, reading->backend_id, FALSE);
  append (&labels, ",dp_rank=\"%u\",instance_id=", (guint) reading->dp_rank);
  append_quoted (&labels, reading->instance_id, FALSE);
  append (&labels, "}");

  append (&buffer, "# TYPE kvevents_publisher info\n"
                   "# HELP kvevents_publisher The publisher: library version and endpoint.\n"
                   "kvevents_publisher_info{backend_id=");
  append_quoted (&buffer, reading->backend_id, FALSE);
  append (&buffer, ",dp_rank=\"%u\",instance_id=", (guint) reading->dp_rank);
  append_quoted (&buffer, reading->instance_id, FALSE);
  append (&buffer, ",version=\"%s\",endpoint=", kvev_version ());
  append_quoted (&buffer, reading->endpoint != NULL ? reading->endpoint : "", FALSE);
  append (&buffer, "} 1\n");
  append (&buffer,
          "# TYPE kvevents_enabled gauge\n"
          "# HELP kvevents_enabled 1 when the publisher puts events on the wire.\n"
          "kvevents_enabled%s %d\n",
          labels.data, reading->enabled ? 1 : 0);
  for (i = 0; i < G_N_ELEMENTS (stats); i++)
    {
      const char *type = stats[i].kind == COUNTER ? "counter" : "gauge";

      if (i == KVEV_STAT_LAST_SEQUENCE && !reading->sent_any)
        continue;
      append (&buffer,
              "# TYPE kvevents_%s %s\n# HELP kvevents_%s %s\nkvevents_%s%s%s %" G_GUINT64_FORMAT
              "\n",
              stats[i].name, type, stats[i].name, stats[i].help, stats[i].name,
              stats[i].kind == COUNTER ? "_total" : "", labels.data, reading->values[i]);
    }
  append (&buffer, "# EOF\n");
  g_free (labels.data);
  return buffer.data;
}
