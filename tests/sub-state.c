/* sub-state.c: a subscriber on the library's API that keeps the
 * availability its events describe, for the tests that compare it with a
 * master's truth (tests/oracle-rebuild.py).
 *
 *   sub-state --endpoint=E [--replay-endpoint=R] [--snapshot-endpoint=S]
 *             [--endpoint=E2 ...] --state=FILE [--stats=FILE]
 *             [--heartbeat-ms=T] [--test-drop=INDEX:SKIP:COUNT [--drop-on-usr2]]
 *
 * --replay-endpoint and --snapshot-endpoint are given once per
 * --endpoint, in the same order ("" for none), as kvevents-sub takes them.
 * The state is written in kvevents-sub --state's format on SIGUSR1 and at
 * the end (SIGTERM or SIGINT), the statistics as
 * kvev_subscriber_stats_json () at the end; what the status and notice
 * callbacks say goes to standard error.  It runs in a GMainLoop through
 * kvev_subscriber_create_source (), so that the GSource is what the tests
 * drive.  --test-drop uses the testing build's seam to lose messages as a
 * network would: after SKIP more messages with events from publisher
 * INDEX, its next COUNT messages; with --drop-on-usr2, counted from the
 * first SIGUSR2.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include "kvtool.h"
#include "state.h"

#include <kvevents/kvevents.h>

#include <glib-unix.h>
#include <stdio.h>
#include <string.h>

void kvev_subscriber_test_drop (KvevSubscriber *subscriber, guint publisher_index, guint64 from,
                                guint64 count);

typedef struct
{
  KvtState *state;
  char *state_path;
  char *stats_path;
  KvevSubscriber *subscriber;
  GMainLoop *loop;
  gboolean drop_armed;
  guint64 drop_index, drop_skip, drop_count;
} Indexer;

/* As kvevents-sub prints a byte string. */
static char *
json_of (const KvevValue *value)
{
  GString *out;

  if (value->type != KVEV_VALUE_STR && value->type != KVEV_VALUE_BIN)
    return NULL;
  out = g_string_new (NULL);
  kvt_json_append_bytes (out, value->data, value->len, value->type == KVEV_VALUE_STR);
  return g_string_free (out, FALSE);
}

static void
on_event (KvevSubscriber *subscriber, const KvevSubscriberEvent *event, gpointer data)
{
  Indexer *indexer = data;
  g_autofree char *backend = json_of (&event->backend_id);
  g_autofree char *tenant = json_of (&event->tenant_id);
  g_autofree char *key = json_of (&event->object_key);
  g_autofree char *medium = json_of (&event->medium);
  KvtEvent applied = { 0 };

  if (event->tagged)
    return;
  applied.kind = event->kind == KVEV_KIND_STORED    ? KVT_EVENT_STORED
                 : event->kind == KVEV_KIND_REMOVED ? KVT_EVENT_REMOVED
                                                    : KVT_EVENT_CLEARED;
  applied.backend_id = backend;
  applied.tenant_id = tenant;
  applied.object_key = key;
  applied.medium = medium;
  kvt_state_apply (indexer->state, &applied);
}

static void
on_reset (KvevSubscriber *subscriber, const KvevReset *reset, gpointer data)
{
  Indexer *indexer = data;
  g_autofree char *backend = json_of (&reset->backend_id);
  g_autoptr (KvtState) empty = kvt_state_new ();

  g_printerr ("sub-state: %s: reset of %s, barrier %" G_GUINT64_FORMAT "\n", reset->endpoint,
              backend, reset->barrier_event_id);
  kvt_state_replace_backend (indexer->state, backend, empty);
}

static void
on_status (KvevSubscriber *subscriber, const KvevSubscriberStatus *status, gpointer data)
{
  g_printerr ("sub-state: %s: status %d (reason %d, lost %" G_GUINT64_FORMAT "): %s\n",
              status->endpoint, status->state, status->reason, status->lost_messages,
              status->message);
}

static void
on_notice (KvevSubscriber *subscriber, const KvevSubscriberNotice *notice, gpointer data)
{
  g_printerr ("sub-state: %s: %s\n", notice->endpoint, notice->message);
}

static void
write_state (Indexer *indexer)
{
  g_autoptr (GError) error = NULL;

  if (indexer->state_path != NULL && !kvt_state_write (indexer->state, indexer->state_path, &error))
    g_printerr ("sub-state: %s\n", error->message);
}

static gboolean
on_usr1 (gpointer data)
{
  write_state (data);
  return G_SOURCE_CONTINUE;
}

static gboolean
on_usr2 (gpointer data)
{
  Indexer *indexer = data;

  if (indexer->drop_armed)
    kvev_subscriber_test_drop (indexer->subscriber, (guint) indexer->drop_index, indexer->drop_skip,
                               indexer->drop_count);
  indexer->drop_armed = FALSE;
  return G_SOURCE_CONTINUE;
}

static gboolean
on_stop (gpointer data)
{
  Indexer *indexer = data;

  g_main_loop_quit (indexer->loop);
  return G_SOURCE_CONTINUE;
}

static const char *
nth (char **values, guint i)
{
  if (values == NULL || i >= g_strv_length (values) || values[i][0] == '\0'
      || strcmp (values[i], "-") == 0)
    return NULL;
  return values[i];
}

int
main (int argc, char **argv)
{
  g_auto (GStrv) endpoints = NULL, replays = NULL, snapshots = NULL;
  g_autofree char *test_drop = NULL;
  gint heartbeat_ms = 0;
  gboolean drop_on_usr2 = FALSE;
  GOptionEntry entries[] = {
    { "endpoint", 0, 0, G_OPTION_ARG_STRING_ARRAY, &endpoints, "A publisher", "E" },
    { "replay-endpoint", 0, 0, G_OPTION_ARG_STRING_ARRAY, &replays, "Its replay endpoint", "R" },
    { "snapshot-endpoint", 0, 0, G_OPTION_ARG_STRING_ARRAY, &snapshots, "Its snapshots", "S" },
    { "heartbeat-ms", 0, 0, G_OPTION_ARG_INT, &heartbeat_ms, "Heartbeat interval", "T" },
    { "test-drop", 0, 0, G_OPTION_ARG_STRING, &test_drop, "Lose messages", "I:SKIP:COUNT" },
    { "drop-on-usr2", 0, 0, G_OPTION_ARG_NONE, &drop_on_usr2, "Lose them after SIGUSR2", NULL },
    { NULL },
  };
  g_autoptr (GOptionContext) context = g_option_context_new (NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (GSource) source = NULL;
  Indexer indexer = { 0 };
  g_autofree char *stats = NULL;
  GOptionEntry files[] = {
    { "state", 0, 0, G_OPTION_ARG_FILENAME, &indexer.state_path, "State file", "FILE" },
    { "stats", 0, 0, G_OPTION_ARG_FILENAME, &indexer.stats_path, "Statistics file", "FILE" },
    { NULL },
  };
  guint i;

  g_option_context_add_main_entries (context, entries, NULL);
  g_option_context_add_main_entries (context, files, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error) || endpoints == NULL)
    {
      g_printerr ("sub-state: %s\n", error != NULL ? error->message : "no --endpoint");
      return 2;
    }
  indexer.state = kvt_state_new ();
  indexer.loop = g_main_loop_new (NULL, FALSE);
  indexer.subscriber = kvev_subscriber_new (&error);
  if (indexer.subscriber == NULL
      || !kvev_subscriber_set_option (indexer.subscriber, KVEV_SUBSCRIBER_OPTION_HEARTBEAT_MS,
                                      heartbeat_ms, &error))
    {
      g_printerr ("sub-state: %s\n", error->message);
      return 1;
    }
  for (i = 0; endpoints[i] != NULL; i++)
    if (kvev_subscriber_add_publisher (indexer.subscriber, endpoints[i], nth (replays, i),
                                       nth (snapshots, i), NULL, &error)
        < 0)
      {
        g_printerr ("sub-state: %s\n", error->message);
        return 1;
      }
  if (test_drop != NULL)
    {
      g_auto (GStrv) parts = g_strsplit (test_drop, ":", 3);

      if (g_strv_length (parts) != 3
          || !kvt_parse_uint (parts[0], 0, G_MAXUINT, &indexer.drop_index)
          || !kvt_parse_uint (parts[1], 0, G_MAXUINT64, &indexer.drop_skip)
          || !kvt_parse_uint (parts[2], 0, G_MAXUINT64, &indexer.drop_count))
        {
          g_printerr ("sub-state: --test-drop=INDEX:SKIP:COUNT\n");
          return 2;
        }
      indexer.drop_armed = TRUE;
      if (!drop_on_usr2)
        on_usr2 (&indexer);
    }
  kvev_subscriber_set_event_func (indexer.subscriber, on_event, &indexer, NULL);
  kvev_subscriber_set_reset_func (indexer.subscriber, on_reset, &indexer, NULL);
  kvev_subscriber_set_status_func (indexer.subscriber, on_status, &indexer, NULL);
  kvev_subscriber_set_notice_func (indexer.subscriber, on_notice, &indexer, NULL);

  source = kvev_subscriber_create_source (indexer.subscriber);
  g_source_attach (source, NULL);
  g_unix_signal_add (SIGUSR1, on_usr1, &indexer);
  g_unix_signal_add (SIGUSR2, on_usr2, &indexer);
  g_unix_signal_add (SIGTERM, on_stop, &indexer);
  g_unix_signal_add (SIGINT, on_stop, &indexer);
  g_main_loop_run (indexer.loop);

  write_state (&indexer);
  stats = kvev_subscriber_stats_json (indexer.subscriber);
  if (indexer.stats_path != NULL)
    g_file_set_contents (indexer.stats_path, stats, -1, NULL);
  g_source_destroy (source);
  kvev_subscriber_free (indexer.subscriber);
  kvt_state_free (indexer.state);
  g_main_loop_unref (indexer.loop);
  g_free (indexer.state_path);
  g_free (indexer.stats_path);
  return 0;
}
