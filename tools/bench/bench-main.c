/* bench-main.c: a run of either benchmark program; see bench-main.h.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include "bench-main.h"
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

static gboolean
is_listed (const char *const *names, const char *name)
{
  return names != NULL && g_strv_contains (names, name);
}

static gboolean
parse_only (const BenchProgram *program, const char *only, gboolean *selected, GError **error)
{
  guint n = g_strv_length ((char **) program->sections);
  g_autofree char *known = g_strjoinv (", ", (char **) program->sections);
  g_auto (GStrv) names = NULL;
  guint i, j;

  if (only == NULL)
    {
      for (j = 0; j < n; j++)
        selected[j] = TRUE;
      return TRUE;
    }
  names = g_strsplit (only, ",", -1);
  for (i = 0; names[i] != NULL; i++)
    {
      char *name = g_strstrip (names[i]);
      gboolean known_here = FALSE;

      if (*name == '\0')
        continue;
      for (j = 0; j < n; j++)
        if (strcmp (name, program->sections[j]) == 0)
          selected[j] = known_here = TRUE;
      if (!known_here && is_listed (program->elsewhere, name))
        return bench_fail (error, _ ("Section \"%s\" is not measured here: %s"), name,
                           _ (program->elsewhere_reason));
      if (!known_here)
        return bench_fail (error, _ ("Unknown section \"%s\" in --only (known: %s)"), name, known);
    }
  for (j = 0; j < n; j++)
    if (selected[j])
      return TRUE;
  return bench_fail (error, _ ("--only names no section (known: %s)"), known);
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

/* A message on stderr, after the program's name. */
static int
fail (const BenchProgram *program, int status, const GError *error)
{
  g_printerr ("%s: %s\n", program->name, error->message);
  return status;
}

int
bench_main (const BenchProgram *program, int argc, char **argv)
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
  g_autofree gboolean *selected = g_new0 (gboolean, g_strv_length ((char **) program->sections));
  gboolean ok;
  const GOptionEntry entries[] = {
    { "json", 'j', 0, G_OPTION_ARG_NONE, &json, N_ ("Print one JSON object instead of the table"),
      NULL },
    { "runs", 'r', 0, G_OPTION_ARG_INT, &runs, N_ ("Measure every figure N times (default 5)"),
      N_ ("N") },
    { "duration-ms", 'd', 0, G_OPTION_ARG_INT, &duration_ms,
      N_ ("Length of one measurement (default 100)"), N_ ("MS") },
    { "only", 'o', 0, G_OPTION_ARG_STRING, &only, program->only, N_ ("LIST") },
    { "smoke", 0, 0, G_OPTION_ARG_NONE, &smoke,
      N_ ("Run every section tiny, a few seconds in all (for tests)"), NULL },
    { "key-len", 'k', 0, G_OPTION_ARG_INT, &key_len, N_ ("Object key length in bytes (default 40)"),
      N_ ("BYTES") },
    { "quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet, N_ ("No progress lines on standard error"),
      NULL },
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
  const GOptionEntry capacity_entries[] = {
    { "capacity", 'c', 0, G_OPTION_ARG_DOUBLE, &capacity,
      N_ ("Take the latency loads as shares of this many events/s instead of measuring "
          "the capacity, so runs can be compared at the same rates"),
      N_ ("EVENTS") },
    { NULL },
  };

  kvt_init_i18n ();

  context = g_option_context_new (NULL);
  g_option_context_set_translation_domain (context, KVT_GETTEXT_PACKAGE);
  g_option_context_set_summary (context, program->summary);
  g_option_context_add_main_entries (context, entries, KVT_GETTEXT_PACKAGE);
  if (program->capacity)
    g_option_context_add_main_entries (context, capacity_entries, KVT_GETTEXT_PACKAGE);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    return fail (program, KVT_EXIT_USAGE, error);
  if (version)
    {
      g_print ("%s (%s) %s\n", program->name, PACKAGE_NAME, kvev_version ());
      return KVT_EXIT_OK;
    }
  if (argc > 1)
    {
      bench_fail (&error, _ ("unexpected argument \"%s\""), argv[1]);
      return fail (program, KVT_EXIT_USAGE, error);
    }
  if (key_len < 1 || key_len > 4096 || memory_events < 1)
    {
      bench_fail (&error, _ ("--key-len must be between 1 and 4096"));
      return fail (program, KVT_EXIT_USAGE, error);
    }

  if (subscriber != NULL)
    return bench_subscriber_main (subscriber, subscriber_rcvhwm);
  if (memory_child != NULL)
    return program->child (memory_child, (guint) memory_events, (guint) key_len, child_tmp_dir);

  if (!parse_only (program, only, selected, &error))
    return fail (program, KVT_EXIT_USAGE, error);
  if ((runs != G_MININT && runs < 1) || (duration_ms != G_MININT && duration_ms < 1))
    {
      bench_fail (&error, _ ("--runs and --duration-ms must be positive"));
      return fail (program, KVT_EXIT_USAGE, error);
    }
  /* A rate above 100M events/s is a typing error, not a machine. */
  if (!isnan (capacity) && !(capacity >= 1 && capacity <= 1e8))
    {
      bench_fail (&error, _ ("--capacity must be between 1 and 100000000 events/s"));
      return fail (program, KVT_EXIT_USAGE, error);
    }
  if (!kvev_has_transport ())
    {
      bench_fail (&error, _ ("this libkvevents was built without a transport"));
      return fail (program, KVT_EXIT_FAILURE, error);
    }

  settings.tool = program->name;
  settings.hold = program->hold;
  settings.smoke = smoke;
  settings.runs = runs > 0 ? (guint) runs : smoke ? 1 : DEFAULT_RUNS;
  settings.duration_ms = duration_ms > 0 ? (guint) duration_ms
                         : smoke         ? SMOKE_DURATION_MS
                                         : DEFAULT_DURATION_MS;
  settings.key_len = (guint) key_len;
  settings.capacity = isnan (capacity) ? 0 : capacity;
  settings.progress = !quiet && isatty (STDERR_FILENO);
  /* Subscribers and children are this program again: no other file is
   * needed at run time, wherever it is installed. */
  settings.self = g_file_read_link ("/proc/self/exe", NULL);
  if (settings.self == NULL)
    settings.self = g_strdup (argv[0]);
  settings.tmp_dir = g_dir_make_tmp ("kvevents-bench-XXXXXX", &error);
  if (settings.tmp_dir == NULL)
    {
      g_free (settings.self);
      return fail (program, KVT_EXIT_FAILURE, error);
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

  ok = program->run (&report, &settings, selected, &error);
  remove_tmp_dir (settings.tmp_dir);
  g_free (settings.tmp_dir);
  if (!ok)
    {
      bench_report_free (&report);
      g_free (settings.self);
      return fail (program, KVT_EXIT_FAILURE, error);
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
  g_free (settings.self);
  return ferror (stdout) ? KVT_EXIT_FAILURE : KVT_EXIT_OK;
}
