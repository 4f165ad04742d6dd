/* kvevents-bench: how much the publisher costs the master that calls it,
 * and how much it delivers, each figure next to a baseline measured in
 * the same run.  See kvevents-bench(1).
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include "bench-memory-child.h"
#include "bench-sections.h"
#include "bench-subscriber.h"
#include "bench-targets.h"
#include "kvtool.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>

#define DEFAULT_RUNS 5
#define DEFAULT_DURATION_MS 100
#define DEFAULT_KEY_LEN 40
#define SMOKE_DURATION_MS 10

static const char *const section_names[]
    = { "hot", "encode", "e2e", "memory", "latency", "snapshot", "loss", "fanout", "scaling" };
#define SECTION_LIST "hot, encode, e2e, memory, latency, snapshot, loss, fanout, scaling"

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
        return bench_fail (error, _ ("Unknown section \"%s\" in --only (known: %s)"), name,
                           SECTION_LIST);
    }
  for (j = 0; j < G_N_ELEMENTS (section_names); j++)
    if (selected[j])
      return TRUE;
  return bench_fail (error, _ ("--only names no section (known: %s)"), SECTION_LIST);
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
  gboolean json = FALSE, smoke = FALSE, quiet = FALSE, version = FALSE;
  /* G_MININT and NAN: not given (a -1 a user types is an error). */
  gint runs = G_MININT, duration_ms = G_MININT, key_len = DEFAULT_KEY_LEN;
  g_autofree char *only = NULL;
  g_auto (GStrv) subscriber = NULL;
  gint subscriber_rcvhwm = 0;
  g_autofree char *memory_child = NULL;
  g_autofree char *child_tmp_dir = NULL;
  gint memory_events = 65536;
  gdouble capacity = NAN; /* not given: measure it */
  gboolean selected[G_N_ELEMENTS (section_names)] = { FALSE };
  gboolean ok = TRUE;
  const GOptionEntry entries[] = {
    { "json", 'j', 0, G_OPTION_ARG_NONE, &json, N_ ("Print one JSON object instead of the table"),
      NULL },
    { "runs", 'r', 0, G_OPTION_ARG_INT, &runs, N_ ("Measure every figure N times (default 5)"),
      N_ ("N") },
    { "duration-ms", 'd', 0, G_OPTION_ARG_INT, &duration_ms,
      N_ ("Length of one measurement (default 100)"), N_ ("MS") },
    { "only", 'o', 0, G_OPTION_ARG_STRING, &only,
      N_ ("Run only these sections: hot,encode,e2e,memory,latency,snapshot,loss,fanout,scaling"),
      N_ ("LIST") },
    { "smoke", 0, 0, G_OPTION_ARG_NONE, &smoke,
      N_ ("Run every section tiny, a few seconds in all (for tests)"), NULL },
    { "key-len", 'k', 0, G_OPTION_ARG_INT, &key_len, N_ ("Object key length in bytes (default 40)"),
      N_ ("BYTES") },
    { "quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet, N_ ("No progress lines on standard error"),
      NULL },
    { "capacity", 'c', 0, G_OPTION_ARG_DOUBLE, &capacity,
      N_ ("Take the latency loads as shares of this many events/s instead of measuring "
          "the capacity, so runs can be compared at the same rates"),
      N_ ("EVENTS") },
    { "version", 'V', 0, G_OPTION_ARG_NONE, &version, N_ ("Print the version and exit"), NULL },
    /* The processes the benchmark starts of itself. */
    { "subscriber", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_STRING_ARRAY, &subscriber, NULL, NULL },
    { "subscriber-rcvhwm", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_INT, &subscriber_rcvhwm, NULL,
      NULL },
    { "memory-child", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_STRING, &memory_child, NULL, NULL },
    { "memory-events", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_INT, &memory_events, NULL, NULL },
    { "tmp-dir", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_FILENAME, &child_tmp_dir, NULL, NULL },
    { NULL },
  };

  kvt_init_i18n ();

  context = g_option_context_new (NULL);
  g_option_context_set_translation_domain (context, KVT_GETTEXT_PACKAGE);
  g_option_context_set_summary (
      context, _ ("Measure libkvevents against baselines taken in the same run: the cost "
                  "of a publish call, encoding, end-to-end throughput, memory per queued "
                  "event, publish-to-receipt latency, snapshots, uncounted loss, fan-out "
                  "and scaling with key size and batch size."));
  g_option_context_add_main_entries (context, entries, KVT_GETTEXT_PACKAGE);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("kvevents-bench: %s\n", error->message);
      return KVT_EXIT_USAGE;
    }
  if (version)
    {
      g_print ("kvevents-bench (%s) %s\n", PACKAGE_NAME, kvev_version ());
      return KVT_EXIT_OK;
    }
  if (argc > 1)
    {
      g_printerr (_ ("kvevents-bench: unexpected argument \"%s\"\n"), argv[1]);
      return KVT_EXIT_USAGE;
    }
  if (key_len < 1 || key_len > 4096 || memory_events < 1)
    {
      g_printerr (_ ("kvevents-bench: --key-len must be between 1 and 4096\n"));
      return KVT_EXIT_USAGE;
    }

  if (subscriber != NULL)
    return bench_subscriber_main (subscriber, subscriber_rcvhwm);
  if (memory_child != NULL && strcmp (memory_child, "snapshot") == 0)
    return bench_snapshot_child_main ((guint) memory_events, (guint) key_len, child_tmp_dir);
  if (memory_child != NULL && strcmp (memory_child, "replay_hostile") == 0)
    return bench_replay_hostile_child_main ((guint) memory_events, (guint) key_len, child_tmp_dir);
  if (memory_child != NULL)
    return bench_memory_child_main (memory_child, (guint) memory_events, (guint) key_len,
                                    child_tmp_dir);

  if (!parse_only (only, selected, &error))
    {
      g_printerr ("kvevents-bench: %s\n", error->message);
      return KVT_EXIT_USAGE;
    }
  if ((runs != G_MININT && runs < 1) || (duration_ms != G_MININT && duration_ms < 1))
    {
      g_printerr (_ ("kvevents-bench: --runs and --duration-ms must be positive\n"));
      return KVT_EXIT_USAGE;
    }
  /* A rate above 100M events/s is a typing error, not a machine. */
  if (!isnan (capacity) && !(capacity >= 1 && capacity <= 1e8))
    {
      g_printerr (_ ("kvevents-bench: --capacity must be between 1 and 100000000 events/s\n"));
      return KVT_EXIT_USAGE;
    }
  if (!kvev_has_transport ())
    {
      g_printerr (_ ("kvevents-bench: this libkvevents was built without a transport\n"));
      return KVT_EXIT_FAILURE;
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
      return KVT_EXIT_FAILURE;
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
  if (ok && selected[6])
    ok = bench_loss (&report, &settings, &error);
  if (ok && selected[7])
    ok = bench_fanout (&report, &settings, &error);
  if (ok && selected[8])
    ok = bench_scaling (&report, &settings, &error);
  if (ok && selected[3])
    ok = bench_memory (&report, &settings, &error);
  if (ok && selected[5])
    ok = bench_snapshot (&report, &settings, &error);

  remove_tmp_dir (settings.tmp_dir);
  if (!ok)
    {
      g_printerr ("kvevents-bench: %s\n", error->message);
      bench_report_free (&report);
      g_free (settings.tmp_dir);
      g_free (settings.self);
      return KVT_EXIT_FAILURE;
    }

  bench_add_targets (&report);
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
  return ferror (stdout) ? KVT_EXIT_FAILURE : KVT_EXIT_OK;
}
