/* bench-memory.c: bytes per queued event, each run in a fresh process
 * (this program started again with --memory-child, bench-memory-child.c)
 * so that no earlier allocation is reused and the growth is the queue's
 * alone.  The baseline child queues as many malloc()ed 128-byte items in
 * a bare GAsyncQueue.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include "bench-sections.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <glib/gi18n.h>

typedef struct
{
  double rss_per_event;
  double heap_per_event;
  double peak_kib;
} ChildResult;

static gboolean
run_child (const BenchSettings *settings, const char *kind, guint n_events, ChildResult *result,
           GError **error)
{
  g_autofree char *events = g_strdup_printf ("%u", n_events);
  g_autofree char *key_len = g_strdup_printf ("%u", settings->key_len);
  const char *argv[] = { settings->self, "--memory-child", kind,    "--memory-events",
                         events,         "--key-len",      key_len, NULL };
  g_autofree char *out = NULL;
  gint64 rss_before, rss_after, heap_before, heap_after;
  long peak;
  guint64 depth;
  int status;

  if (!g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, NULL, &status,
                     error)
      || !g_spawn_check_exit_status (status, error))
    return FALSE;
  if (sscanf (out,
              "%" G_GINT64_FORMAT " %" G_GINT64_FORMAT " %" G_GINT64_FORMAT " %" G_GINT64_FORMAT
              " %ld %" G_GUINT64_FORMAT,
              &rss_before, &rss_after, &heap_before, &heap_after, &peak, &depth)
      != 6)
    return bench_fail (error, _ ("Unexpected output from the memory child: %s"), out);
  if (depth != n_events)
    return bench_fail (error, _ ("The memory child queued %" PRIu64 " events of %u"),
                       (uint64_t) depth, n_events);
  result->rss_per_event = rss_before < 0 ? NAN : (double) (rss_after - rss_before) / n_events;
  result->heap_per_event = heap_before < 0 ? NAN : (double) (heap_after - heap_before) / n_events;
  result->peak_kib = (double) peak;
  return TRUE;
}

gboolean
bench_memory (BenchReport *report, const BenchSettings *settings, GError **error)
{
  guint n_events = settings->smoke ? 8192 : 65536;
  g_autofree char *title = g_strdup_printf (
      _ ("Memory: bytes per queued event, %u events with %u-byte keys, worker held "
         "(lower is better)"),
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
      bench_figure_add (bare_rss, bare.rss_per_event);
      bench_figure_add (kvev_rss, kvev.rss_per_event);
      bench_figure_add (bare_heap, bare.heap_per_event);
      bench_figure_add (kvev_heap, kvev.heap_per_event);
      bench_figure_add (bare_peak, bare.peak_kib);
      bench_figure_add (kvev_peak, kvev.peak_kib);
    }
  return TRUE;
}
