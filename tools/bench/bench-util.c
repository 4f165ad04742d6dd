/* bench-util.c: what every part of kvevents-bench uses; see
 * bench-util.h.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include "bench-util.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <glib/gi18n.h>

/* The quark's name is a token clang-format would read as a subtraction. */
/* clang-format off */
G_DEFINE_QUARK (kvevents-bench-error-quark, bench_error)
/* clang-format on */

gint64
bench_now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (gint64) ts.tv_sec * G_GINT64_CONSTANT (1000000000) + ts.tv_nsec;
}

gint64
bench_thread_cpu_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
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

guint64
bench_queue_depth (KvevPublisher *publisher)
{
  return kvev_publisher_stat (publisher, KVEV_STAT_QUEUE_DEPTH);
}

gboolean
bench_publisher_drain (KvevPublisher *publisher, GError **error)
{
  if (!kvev_publisher_flush (publisher, 30000))
    return bench_fail (error, _ ("The publisher did not drain its queue in 30 s"));
  return TRUE;
}

void
bench_progress (const BenchSettings *settings, const char *format, ...)
{
  va_list args;

  if (!settings->progress)
    return;
  va_start (args, format);
  fprintf (stderr, "%s: ", settings->tool);
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

gint64
bench_rss_bytes (void)
{
  g_autofree char *text = NULL;
  long long size, resident;

  if (!g_file_get_contents ("/proc/self/statm", &text, NULL, NULL)
      || sscanf (text, "%lld %lld", &size, &resident) != 2)
    return -1;
  return (gint64) resident * sysconf (_SC_PAGESIZE);
}

/* The peak resident set of this process image.  getrusage()'s ru_maxrss
 * would do, but Linux carries it across exec(), so a child started by a
 * big parent would report the parent's peak; VmHWM starts afresh. */
long
bench_peak_rss_kib (void)
{
  g_autofree char *text = NULL;
  const char *line;
  struct rusage usage;

  if (g_file_get_contents ("/proc/self/status", &text, NULL, NULL)
      && (line = strstr (text, "\nVmHWM:")) != NULL)
    return strtol (line + strlen ("\nVmHWM:"), NULL, 10);
  if (getrusage (RUSAGE_SELF, &usage) != 0)
    return -1;
  return usage.ru_maxrss;
}

double
bench_load_average (void)
{
  g_autofree char *text = NULL;

  if (!g_file_get_contents ("/proc/loadavg", &text, NULL, NULL))
    return NAN;
  return g_ascii_strtod (text, NULL);
}
