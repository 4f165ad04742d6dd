/* bench-memory.c: the memory section, each figure of a run measured in a
 * fresh process (this program started again with --memory-child,
 * bench-memory-child.c) so that no earlier allocation is reused and the
 * growth is the one measured.
 *
 * kvevents-bench (bench_memory ()): the memory of a full replay buffer,
 * in two children: one with replay on, against the payload its buffer
 * holds, and one that sends as many messages with replay off.
 *
 * kvevents-bench-internal (bench_memory_queue ()): bytes per queued
 * event, which needs the worker held while the queue fills, against a
 * child that queues as many malloc()ed 128-byte items in a bare
 * GAsyncQueue.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include "bench-replay.h"
#include "bench-sections.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <glib/gi18n.h>

typedef struct
{
  double rss_growth;  /* bytes; NAN when unknown */
  double heap_growth; /* bytes; NAN without mallinfo2 */
  double peak_kib;
  guint64 count;
  guint64 held;
} ChildResult;

/* Runs one child of kind with n items.  A replay buffer may hold fewer
 * messages than it was sent (its byte budget); everything else must hold
 * them all. */
static gboolean
run_child (const BenchSettings *settings, const char *kind, guint n, ChildResult *result,
           GError **error)
{
  g_autofree char *events = g_strdup_printf ("%u", n);
  g_autofree char *key_len = g_strdup_printf ("%u", settings->key_len);
  const char *argv[] = { settings->self, "--memory-child", kind,        "--memory-events", events,
                         "--key-len",    key_len,          "--tmp-dir", settings->tmp_dir, NULL };
  g_autofree char *out = NULL;
  gint64 rss_before, rss_after, heap_before, heap_after;
  long peak;
  guint64 count, held;
  int status;

  if (!g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, NULL, &status,
                     error)
      || !g_spawn_check_exit_status (status, error))
    return FALSE;
  if (sscanf (out,
              "%" G_GINT64_FORMAT " %" G_GINT64_FORMAT " %" G_GINT64_FORMAT " %" G_GINT64_FORMAT
              " %ld %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT,
              &rss_before, &rss_after, &heap_before, &heap_after, &peak, &count, &held)
      != 7)
    return bench_fail (error, _ ("Unexpected output from the memory child: %s"), out);
  if (strcmp (kind, "replay") == 0       ? count == 0 || count > n
      : strcmp (kind, "replay_off") == 0 ? count < n
                                         : count != n)
    return bench_fail (error, _ ("The memory child queued %" PRIu64 " events of %u"),
                       (uint64_t) count, n);
  result->rss_growth = rss_before < 0 ? NAN : (double) (rss_after - rss_before);
  result->heap_growth = heap_before < 0 ? NAN : (double) (heap_after - heap_before);
  result->peak_kib = (double) peak;
  result->count = count;
  result->held = held;
  return TRUE;
}

/* The replay buffer's figures: totals and per buffered message, RSS and
 * heap against the payload bytes the buffer holds. */
typedef struct
{
  BenchFigure *off_rss;
  BenchFigure *payload;
  BenchFigure *rss;
  BenchFigure *heap;
  BenchFigure *payload_per_message;
  BenchFigure *rss_per_message;
  BenchFigure *heap_per_message;
} ReplayFigures;

static void
add_replay_figures (BenchSection *section, guint n_messages, ReplayFigures *f)
{
  g_autofree char *off_label
      = g_strdup_printf (_ ("RSS growth, %u messages of up to %u events sent without replay"),
                         n_messages, BENCH_REPLAY_BATCH_EVENTS);
  g_autofree char *payload_label = g_strdup_printf (
      _ ("payload bytes held by a full replay buffer of %u messages"), n_messages);

  f->off_rss = bench_section_add_figure (section, "replay_off.rss_bytes", off_label, "B", NULL);
  f->payload = bench_section_add_figure (section, "replay.payload_bytes", payload_label, "B", NULL);
  f->rss = bench_section_add_figure (section, "replay.rss_bytes",
                                     _ ("RSS growth, publisher with a full replay buffer"), "B",
                                     f->payload);
  f->heap = bench_section_add_figure (section, "replay.heap_bytes",
                                      _ ("heap in use (mallinfo2), full replay buffer"), "B",
                                      f->payload);
  f->payload_per_message
      = bench_section_add_figure (section, "replay.payload_bytes_per_message",
                                  _ ("payload bytes per buffered message"), "B/message", NULL);
  f->rss_per_message = bench_section_add_figure (section, "replay.rss_bytes_per_message",
                                                 _ ("RSS growth per buffered message"), "B/message",
                                                 f->payload_per_message);
  f->heap_per_message = bench_section_add_figure (section, "replay.heap_bytes_per_message",
                                                  _ ("heap in use per buffered message"),
                                                  "B/message", f->payload_per_message);
}

static gboolean
run_replay_children (const BenchSettings *settings, guint n_messages, const ReplayFigures *f,
                     GError **error)
{
  ChildResult off, on;
  double messages;

  if (!run_child (settings, "replay_off", n_messages, &off, error)
      || !run_child (settings, "replay", n_messages, &on, error))
    return FALSE;
  messages = (double) on.count;
  bench_figure_add (f->off_rss, off.rss_growth);
  bench_figure_add (f->payload, (double) on.held);
  bench_figure_add (f->rss, on.rss_growth);
  bench_figure_add (f->heap, on.heap_growth);
  bench_figure_add (f->payload_per_message, (double) on.held / messages);
  bench_figure_add (f->rss_per_message, on.rss_growth / messages);
  bench_figure_add (f->heap_per_message, on.heap_growth / messages);
  bench_figure_add_extra (f->payload, "buffered_messages", messages);
  return TRUE;
}

gboolean
bench_memory (BenchReport *report, const BenchSettings *settings, GError **error)
{
  g_autoptr (KvevConfig) defaults = kvev_config_new ();
  guint n_messages
      = settings->smoke ? BENCH_REPLAY_SMOKE_MESSAGES : bench_config_replay_messages (defaults);
  g_autofree char *title = g_strdup_printf (
      _ ("Memory: a full replay buffer, %u-byte keys (lower is better)"), settings->key_len);
  BenchSection *section = bench_report_add_section (report, "memory", title);
  ReplayFigures replay;
  guint run;

  add_replay_figures (section, n_messages, &replay);
  bench_section_set_info (section, "replay_buffer_messages", n_messages);
  for (run = 0; run < settings->runs; run++)
    {
      bench_progress (settings, _ ("memory, run %u of %u"), run + 1, settings->runs);
      if (!run_replay_children (settings, n_messages, &replay, error))
        return FALSE;
    }
  return TRUE;
}

gboolean
bench_memory_queue (BenchReport *report, const BenchSettings *settings, GError **error)
{
  guint n_events = settings->smoke ? 8192 : 65536;
  g_autofree char *title = g_strdup_printf (
      _ ("Memory: bytes per queued event, %u events with %u-byte keys, worker held (lower is "
         "better)"),
      n_events, settings->key_len);
  BenchSection *section = bench_report_add_section (report, "memory", title);
  BenchFigure *bare_rss, *kvev_rss, *bare_heap, *kvev_heap, *bare_peak, *kvev_peak;
  guint run;

  bare_rss = bench_section_add_figure (section, "bare.rss_bytes_per_event",
                                       _ ("RSS growth, bare GAsyncQueue of 128-byte items"),
                                       "B/event", NULL);
  kvev_rss = bench_section_add_figure (section, "kvev.rss_bytes_per_event",
                                       _ ("RSS growth, publisher queue"), "B/event", bare_rss);
  bare_heap
      = bench_section_add_figure (section, "bare.heap_bytes_per_event",
                                  _ ("heap in use (mallinfo2), bare GAsyncQueue"), "B/event", NULL);
  kvev_heap = bench_section_add_figure (section, "kvev.heap_bytes_per_event",
                                        _ ("heap in use (mallinfo2), publisher queue"), "B/event",
                                        bare_heap);
  bare_peak = bench_section_add_figure (
      section, "bare.peak_rss_kib", _ ("peak RSS of the process, bare GAsyncQueue"), "KiB", NULL);
  kvev_peak = bench_section_add_figure (section, "kvev.peak_rss_kib",
                                        _ ("peak RSS of the process, publisher"), "KiB", bare_peak);
  bench_section_set_info (section, "events", n_events);

  for (run = 0; run < settings->runs; run++)
    {
      ChildResult bare, kvev;

      bench_progress (settings, _ ("memory, run %u of %u"), run + 1, settings->runs);
      if (!run_child (settings, "bare", n_events, &bare, error)
          || !run_child (settings, "kvev", n_events, &kvev, error))
        return FALSE;
      bench_figure_add (bare_rss, bare.rss_growth / n_events);
      bench_figure_add (kvev_rss, kvev.rss_growth / n_events);
      bench_figure_add (bare_heap, bare.heap_growth / n_events);
      bench_figure_add (kvev_heap, kvev.heap_growth / n_events);
      bench_figure_add (bare_peak, bare.peak_kib);
      bench_figure_add (kvev_peak, kvev.peak_kib);
    }
  return TRUE;
}
