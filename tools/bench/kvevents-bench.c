/* kvevents-bench: how much the publisher costs the master that calls it,
 * and how much it delivers, each figure next to a baseline measured in
 * the same run.  See kvevents-bench(1).
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include "bench.h"

#include <locale.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>

G_DEFINE_QUARK (kvevents-bench-error-quark, bench_error)

#define DEFAULT_RUNS 5
#define DEFAULT_DURATION_MS 100
#define DEFAULT_KEY_LEN 40
#define SMOKE_DURATION_MS 10

static const char *const section_names[] = { "hot", "encode", "e2e", "memory", "latency" };

/* ---- shared helpers ---------------------------------------------------- */

gint64
bench_now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (gint64) ts.tv_sec * G_GINT64_CONSTANT (1000000000) + ts.tv_nsec;
}

gboolean
bench_fail (GError **error, const char *format, ...)
{
  va_list args;
  char *message;

  va_start (args, format);
  message = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error_literal (error, bench_error_quark (), 0, message);
  g_free (message);
  return FALSE;
}

void
bench_progress (const BenchSettings *settings, const char *format, ...)
{
  va_list args;

  if (!settings->progress)
    return;
  va_start (args, format);
  fputs ("kvevents-bench: ", stderr);
  vfprintf (stderr, format, args);
  fputc ('\n', stderr);
  va_end (args);
}

void
bench_fill_key (char *key, guint key_len, guint64 i)
{
  char head[64];
  int head_len;
  guint j;

  /* A path-like Store key, unique in its first bytes, padded with a
   * repeating tail to the length asked for. */
  head_len = g_snprintf (head, sizeof head, "model/layer-%02u/block-%08x/", (guint) (i % 61),
                         (guint) (i * 2654435761u));
  for (j = 0; j < key_len; j++)
    key[j] = j < (guint) head_len ? head[j] : (char) ('a' + (i + j) % 26);
}

char *
bench_make_keys (guint key_len, guint n)
{
  char *keys = g_malloc ((gsize) key_len * n + 1);
  guint i;

  for (i = 0; i < n; i++)
    bench_fill_key (keys + (gsize) key_len * i, key_len, i);
  keys[(gsize) key_len * n] = '\0';
  return keys;
}

KvevConfig *
bench_config_new (const char *endpoint, guint32 queue_capacity, gboolean legacy)
{
  KvevConfig *config = kvev_config_new ();
  g_autofree char *capacity = g_strdup_printf ("%u", queue_capacity);
  const char *const settings[][2] = {
    { "enable_kv_events", "true" },
    { "kv_events_bind_endpoint", endpoint },
    { "kv_events_backend_id", "bench-master-0" },
    { "kv_events_model_name", "bench-model-7b" },
    { "kv_events_block_size", "256" },
    { "kv_events_dp_rank", "0" },
    { "kv_events_emit_legacy_compat", legacy ? "true" : "false" },
    { "kv_events_queue_capacity", capacity },
    /* Closing after a phase that flooded the socket must not wait. */
    { "kv_events_close_timeout_ms", "0" },
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (settings); i++)
    {
      g_autoptr (GError) error = NULL;

      if (!kvev_config_set (config, settings[i][0], settings[i][1], &error))
        g_error ("%s: %s", settings[i][0], error->message);
    }
  return config;
}

/* ---- targets ----------------------------------------------------------- */

static double
ratio_of (const BenchReport *report, const char *section, const char *figure_id)
{
  BenchFigure *figure = bench_report_find_figure (report, section, figure_id);

  return figure != NULL ? bench_median (figure->ratios) : NAN;
}

static double
value_of (const BenchReport *report, const char *section, const char *figure_id)
{
  BenchFigure *figure = bench_report_find_figure (report, section, figure_id);

  return figure != NULL ? bench_median (figure->values) : NAN;
}

/* The worst (largest) median ratio among the encode figures of a batch
 * size. */
static double
worst_encode_ratio (const BenchReport *report, guint batch)
{
  BenchSection *section = bench_report_find_section (report, "encode");
  g_autofree char *suffix = g_strdup_printf (".batch%u", batch);
  double worst = NAN;
  guint i;

  for (i = 0; section != NULL && i < section->figures->len; i++)
    {
      BenchFigure *figure = g_ptr_array_index (section->figures, i);
      double ratio = bench_median (figure->ratios);

      if (figure->baseline == NULL || !g_str_has_suffix (figure->id, suffix))
        continue;
      if (isnan (worst) || ratio > worst)
        worst = ratio;
    }
  return worst;
}

static void
add_targets (BenchReport *report)
{
  BenchSection *section;
  BenchFigure *figure;
  static const char *const drop_loads[] = { "tcp.load10.p99_us", "tcp.load50.p99_us" };
  double drops = NAN;
  char *basis;
  guint i;

  if (bench_report_find_section (report, "hot") != NULL)
    {
      bench_report_add_target (report, "hot.running.one_medium",
                               _("Hot path, worker running, 1 producer, one medium"),
                               ratio_of (report, "hot", "stored_cpu.p1.running"), BENCH_AT_MOST,
                               1.0, "x", _("stored_cpu.p1.running / bare_push_pop.p1"));
      bench_report_add_target (report, "hot.running.two_media",
                               _("Hot path, worker running, 1 producer, two media"),
                               ratio_of (report, "hot", "stored_both.p1.running"), BENCH_AT_MOST,
                               1.3, "x", _("stored_both.p1.running / bare_push_pop.p1"));
      bench_report_add_target (report, "hot.full.drop",
                               _("Hot path, queue full (drop-oldest), 1 producer"),
                               ratio_of (report, "hot", "stored_cpu.p1.full"), BENCH_AT_MOST, 2.5,
                               "x", _("stored_cpu.p1.full / bare_drop.p1"));
    }
  if (bench_report_find_section (report, "encode") != NULL)
    {
      bench_report_add_target (report, "encode.batch64",
                               _("Encoding per event, batches of 64 (worst case)"),
                               worst_encode_ratio (report, 64), BENCH_AT_MOST, 0.2, "x",
                               _("largest ratio of the six batch-64 figures"));
      bench_report_add_target (report, "encode.batch1",
                               _("Encoding per event, batches of 1 (worst case)"),
                               worst_encode_ratio (report, 1), BENCH_AT_MOST, 0.2, "x",
                               _("largest ratio of the six batch-1 figures"));
    }
  if (bench_report_find_section (report, "e2e") != NULL)
    bench_report_add_target (report, "e2e.tcp.p1", _("End to end over TCP, 1 producer, events/s"),
                             ratio_of (report, "e2e", "tcp.kvev.p1"), BENCH_AT_LEAST, 0.7, "x",
                             _("tcp.kvev.p1 / tcp.raw"));
  if (bench_report_find_section (report, "memory") != NULL)
    {
      /* The figure is for --key-len; the target is for 40 bytes. */
      g_autofree char *label = g_strdup_printf (_("Memory per queued event, %u-byte keys"),
                                                report->settings->key_len);

      bench_report_add_target (report, "memory.bytes_per_event", label,
                               value_of (report, "memory", "kvev.rss_bytes_per_event"),
                               BENCH_AT_MOST, 128, "B", _("median RSS growth / events"));
    }
  if (bench_report_find_section (report, "latency") != NULL)
    {
      /* "No drops below 50 %": at 10 % as at 50 %. */
      drops = 0;
      for (i = 0; i < G_N_ELEMENTS (drop_loads) && !isnan (drops); i++)
        {
          figure = bench_report_find_figure (report, "latency", drop_loads[i]);
          drops += figure != NULL && bench_figure_find_extra (figure, "dropped") != NULL
                       ? bench_sum (bench_figure_find_extra (figure, "dropped")->values)
                       : NAN;
        }
      bench_report_add_target (report, "latency.load50.drops",
                               /* xgettext:no-c-format */
                               _("Drops at 10% and 50% of capacity, every run"), drops,
                               BENCH_AT_MOST, 0, _("events"),
                               _("sum over the runs, subscriber's count"));
      section = bench_report_find_section (report, "latency");
      basis = g_strdup_printf (
          _("median over the runs; raw ZeroMQ batched by the producer %.0f us; a sleeping "
            "thread wakes %.0f us late "
            "at p99 here, and a busy CPU stops for over 1 ms %.1f times a second (longest "
            "%.1f ms)"),
          value_of (report, "latency", "tcp.load50.raw.p99_us"),
          bench_section_get_info (section, "wake_lateness_p99_us"),
          bench_section_get_info (section, "cpu_stalls_over_1ms_per_s"),
          bench_section_get_info (section, "cpu_longest_stall_us") / 1e3);
      bench_report_add_target (
          report, "latency.load50.p99",
          /* xgettext:no-c-format */
          _("p99 publish-to-receipt at 50% of capacity"),
          value_of (report, "latency", "tcp.load50.p99_us"), BENCH_AT_MOST, 1000, "us", basis);
      g_free (basis);
    }
}

/* ---- main -------------------------------------------------------------- */

static gboolean
parse_only (const char *only, gboolean *selected, GError **error)
{
  g_auto (GStrv) names = NULL;
  guint i, j;

  if (only == NULL)
    {
      for (j = 0; j < G_N_ELEMENTS (section_names); j++)
        selected[j] = TRUE;
      return TRUE;
    }
  names = g_strsplit (only, ",", -1);
  for (i = 0; names[i] != NULL; i++)
    {
      char *name = g_strstrip (names[i]);
      gboolean known = FALSE;

      if (*name == '\0')
        continue;
      for (j = 0; j < G_N_ELEMENTS (section_names); j++)
        if (strcmp (name, section_names[j]) == 0)
          selected[j] = known = TRUE;
      if (!known)
        return bench_fail (error, _("Unknown section \"%s\" in --only (known: %s)"), name,
                           "hot, encode, e2e, memory, latency");
    }
  for (j = 0; j < G_N_ELEMENTS (section_names); j++)
    if (selected[j])
      return TRUE;
  return bench_fail (error, _("--only names no section (known: %s)"),
                     "hot, encode, e2e, memory, latency");
}

static void
remove_tmp_dir (const char *path)
{
  g_autoptr (GDir) dir = NULL;
  const char *name;

  if (path == NULL)
    return;
  dir = g_dir_open (path, 0, NULL);
  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *file = g_build_filename (path, name, NULL);

      g_unlink (file);
    }
  g_rmdir (path);
}

int
main (int argc, char **argv)
{
  g_autoptr (GOptionContext) context = NULL;
  g_autoptr (GError) error = NULL;
  BenchSettings settings = { 0 };
  BenchReport report = { 0 };
  gboolean json = FALSE, smoke = FALSE, quiet = FALSE;
  /* G_MININT and NAN: not given (a -1 a user types is an error). */
  gint runs = G_MININT, duration_ms = G_MININT, key_len = DEFAULT_KEY_LEN;
  g_autofree char *only = NULL;
  g_auto (GStrv) subscriber = NULL;
  g_autofree char *memory_child = NULL;
  gint memory_events = 65536;
  gdouble capacity = NAN; /* not given: measure it */
  gboolean selected[G_N_ELEMENTS (section_names)] = { FALSE };
  gboolean ok = TRUE;
  const GOptionEntry entries[] = {
    { "json", 'j', 0, G_OPTION_ARG_NONE, &json, N_("Print one JSON object instead of the table"),
      NULL },
    { "runs", 'r', 0, G_OPTION_ARG_INT, &runs, N_("Measure every figure N times (default 5)"),
      N_("N") },
    { "duration-ms", 'd', 0, G_OPTION_ARG_INT, &duration_ms,
      N_("Length of one measurement (default 100)"), N_("MS") },
    { "only", 'o', 0, G_OPTION_ARG_STRING, &only,
      N_("Run only these sections: hot,encode,e2e,memory,latency"), N_("LIST") },
    { "smoke", 0, 0, G_OPTION_ARG_NONE, &smoke,
      N_("Run every section tiny, about a second in all (for tests)"), NULL },
    { "key-len", 'k', 0, G_OPTION_ARG_INT, &key_len, N_("Object key length in bytes (default 40)"),
      N_("BYTES") },
    { "quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet, N_("No progress lines on standard error"),
      NULL },
    { "capacity", 'c', 0, G_OPTION_ARG_DOUBLE, &capacity,
      N_("Take the latency loads as shares of this many events/s instead of measuring "
         "the capacity, so runs can be compared at the same rates"),
      N_("EVENTS") },
    /* The processes the benchmark starts of itself. */
    { "subscriber", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_STRING_ARRAY, &subscriber, NULL, NULL },
    { "memory-child", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_STRING, &memory_child, NULL, NULL },
    { "memory-events", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_INT, &memory_events, NULL, NULL },
    { NULL },
  };

  setlocale (LC_ALL, "");
  bindtextdomain (GETTEXT_PACKAGE, LOCALEDIR);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  textdomain (GETTEXT_PACKAGE);

  context = g_option_context_new (NULL);
  g_option_context_set_translation_domain (context, GETTEXT_PACKAGE);
  g_option_context_set_summary (
      context, _("Measure libkvevents against baselines taken in the same run: the cost "
                 "of a publish call, encoding, end-to-end throughput, memory per queued "
                 "event and publish-to-receipt latency."));
  g_option_context_add_main_entries (context, entries, GETTEXT_PACKAGE);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("kvevents-bench: %s\n", error->message);
      return 2;
    }
  if (argc > 1)
    {
      g_printerr (_("kvevents-bench: unexpected argument \"%s\"\n"), argv[1]);
      return 2;
    }
  if (key_len < 1 || key_len > 4096 || memory_events < 1)
    {
      g_printerr (_("kvevents-bench: --key-len must be between 1 and 4096\n"));
      return 2;
    }

  if (subscriber != NULL)
    return bench_subscriber_main (subscriber);
  if (memory_child != NULL)
    return bench_memory_child_main (memory_child, (guint) memory_events, (guint) key_len);

  if (!parse_only (only, selected, &error))
    {
      g_printerr ("kvevents-bench: %s\n", error->message);
      return 2;
    }
  if ((runs != G_MININT && runs < 1) || (duration_ms != G_MININT && duration_ms < 1))
    {
      g_printerr (_("kvevents-bench: --runs and --duration-ms must be positive\n"));
      return 2;
    }
  /* A rate above 100M events/s is a typing error, not a machine. */
  if (!isnan (capacity) && !(capacity >= 1 && capacity <= 1e8))
    {
      g_printerr (_("kvevents-bench: --capacity must be between 1 and 100000000 events/s\n"));
      return 2;
    }
  if (!kvev_has_transport ())
    {
      g_printerr (_("kvevents-bench: this libkvevents was built without a transport\n"));
      return 1;
    }

  settings.smoke = smoke;
  settings.runs = runs > 0 ? (guint) runs : smoke ? 1 : DEFAULT_RUNS;
  settings.duration_ms = duration_ms > 0 ? (guint) duration_ms
                         : smoke         ? SMOKE_DURATION_MS
                                         : DEFAULT_DURATION_MS;
  settings.key_len = (guint) key_len;
  settings.capacity = isnan (capacity) ? 0 : capacity;
  settings.progress = !quiet && isatty (STDERR_FILENO);
  settings.self = g_file_read_link ("/proc/self/exe", NULL);
  if (settings.self == NULL)
    settings.self = g_strdup (argv[0]);
  settings.tmp_dir = g_dir_make_tmp ("kvevents-bench-XXXXXX", &error);
  if (settings.tmp_dir == NULL)
    {
      g_printerr ("kvevents-bench: %s\n", error->message);
      return 1;
    }

  report.settings = &settings;
  report.started_ns = bench_now_ns ();
  report.load_at_start = bench_load_average ();

#ifdef __GLIBC__
  /* A long-running master's heap is warm: what it frees it reuses.
   * Keep freed memory in the process, so that a figure does not pay for
   * handing pages back to the kernel and faulting them in again (which
   * costs tens of microseconds a page on some virtual machines).  The
   * memory section runs in fresh processes, without this. */
  mallopt (M_TRIM_THRESHOLD, 256 * 1024 * 1024);
  mallopt (M_TOP_PAD, 64 * 1024 * 1024);
  mallopt (M_MMAP_THRESHOLD, 32 * 1024 * 1024);
#endif

  if (ok && selected[0])
    ok = bench_hot (&report, &settings, &error);
  if (ok && selected[1])
    ok = bench_encode (&report, &settings, &error);
  if (ok && (selected[2] || selected[4]))
    ok = bench_net (&report, &settings, selected[2], selected[4], &error);
  if (ok && selected[3])
    ok = bench_memory (&report, &settings, &error);

  remove_tmp_dir (settings.tmp_dir);
  if (!ok)
    {
      g_printerr ("kvevents-bench: %s\n", error->message);
      bench_report_free (&report);
      g_free (settings.tmp_dir);
      g_free (settings.self);
      return 1;
    }

  add_targets (&report);
  if (json)
    {
      g_autofree char *text = bench_report_to_json (&report);

      fputs (text, stdout);
    }
  else
    bench_report_print_table (&report);
  fflush (stdout);

  bench_report_free (&report);
  g_free (settings.tmp_dir);
  g_free (settings.self);
  return ferror (stdout) ? 1 : 0;
}
