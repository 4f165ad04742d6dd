/* bench-memory-child.c: the process kvevents-bench --memory-child is;
 * see bench-memory-child.h.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include "bench-memory-child.h"
#include "bench-replay.h"
#include "bench-util.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <glib/gi18n.h>

#define BARE_ITEM_SIZE 128
/* Events queued at a time while the replay buffer fills: few, so that
 * the queue's own memory does not count as the buffer's. */
#define REPLAY_FILL_ROUND 4096

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
#define HAVE_MALLINFO2 1
#endif

static gint64
heap_bytes (void)
{
#ifdef HAVE_MALLINFO2
  struct mallinfo2 info = mallinfo2 ();

  /* In use from the arenas, plus mmap()ed blocks. */
  return (gint64) (info.uordblks + info.hblkhd);
#else
  return -1;
#endif
}

typedef struct
{
  gint64 rss_before, rss_after, heap_before, heap_after;
  long peak_kib;
  guint64 count;
  guint64 held;
} Measure;

/* "replay" and "replay_off": n_messages messages or a few more, sent as
 * bench_replay_fill () sends them, by a publisher with replay on or
 * not. */
static gboolean
measure_replay (gboolean replay, guint n_messages, guint key_len, const char *tmp_dir, Measure *m,
                GError **error)
{
  g_autofree char *endpoint = g_strdup_printf ("ipc://%s/memory-live", tmp_dir);
  g_autofree char *replay_endpoint = g_strdup_printf ("ipc://%s/memory-replay", tmp_dir);
  g_autoptr (KvevConfig) config = bench_config_new (endpoint, REPLAY_FILL_ROUND, TRUE);
  KvevPublisher *publisher;
  guint64 sent = 0;
  gboolean ok;

  if (replay && !bench_config_set_replay (config, replay_endpoint, n_messages, error))
    return FALSE;
  publisher = kvev_publisher_new (config, error);
  if (publisher == NULL)
    return FALSE;
  m->rss_before = bench_rss_bytes ();
  m->heap_before = heap_bytes ();
  ok = bench_replay_fill (publisher, key_len, n_messages, REPLAY_FILL_ROUND, &sent, error);
  m->rss_after = bench_rss_bytes ();
  m->heap_after = heap_bytes ();
  m->peak_kib = bench_peak_rss_kib ();
  m->count = replay ? kvev_publisher_stat (publisher, KVEV_STAT_REPLAY_BUFFER_MESSAGES) : sent;
  m->held = replay ? kvev_publisher_stat (publisher, KVEV_STAT_REPLAY_BUFFER_BYTES) : 0;
  kvev_publisher_free (publisher);
  return ok;
}

/* The line every kind prints. */
static void
print_measure (const Measure *m)
{
  printf ("%" G_GINT64_FORMAT " %" G_GINT64_FORMAT " %" G_GINT64_FORMAT " %" G_GINT64_FORMAT
          " %ld %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT "\n",
          m->rss_before, m->rss_after, m->heap_before, m->heap_after, m->peak_kib, m->count,
          m->held);
}

int
bench_memory_child_main (const char *kind, guint n_events, guint key_len, const char *tmp_dir)
{
  g_autoptr (GError) error = NULL;
  Measure m = { 0 };

  if (strcmp (kind, "replay") != 0 && strcmp (kind, "replay_off") != 0)
    {
      g_printerr (_ ("kvevents-bench: unknown --memory-child \"%s\"\n"), kind);
      return 2;
    }
  if (tmp_dir == NULL)
    {
      g_printerr (_ ("kvevents-bench: --memory-child %s needs --tmp-dir\n"), kind);
      return 2;
    }
  if (!measure_replay (strcmp (kind, "replay") == 0, n_events, key_len, tmp_dir, &m, &error))
    {
      g_printerr ("kvevents-bench: %s\n", error->message);
      return 1;
    }
  print_measure (&m);
  return 0;
}

int
bench_memory_queue_child_main (const char *kind, guint n_events, guint key_len, BenchHoldFunc hold)
{
  g_autofree char *key = g_malloc (key_len);
  Measure m = { 0 };
  guint i;

  g_return_val_if_fail (hold != NULL, 1);

  if (strcmp (kind, "kvev") == 0)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (KvevConfig) config = bench_config_new ("tcp://127.0.0.1:*", n_events, TRUE);
      KvevPublisher *publisher = kvev_publisher_new (config, &error);

      if (publisher == NULL)
        {
          g_printerr ("kvevents-bench: %s\n", error->message);
          return 1;
        }
      hold (publisher, TRUE);
      m.rss_before = bench_rss_bytes ();
      m.heap_before = heap_bytes ();
      for (i = 0; i < n_events; i++)
        {
          bench_fill_key (key, key_len, i);
          kvev_publish_stored (publisher, BENCH_TENANT, key, key_len, NULL, KVEV_MEDIA_CPU);
        }
      m.rss_after = bench_rss_bytes ();
      m.heap_after = heap_bytes ();
      m.count = bench_queue_depth (publisher);
      m.peak_kib = bench_peak_rss_kib ();
      hold (publisher, FALSE);
      kvev_publisher_flush (publisher, 30000);
      kvev_publisher_free (publisher);
    }
  else if (strcmp (kind, "bare") == 0)
    {
      GAsyncQueue *queue = g_async_queue_new ();
      gpointer item;

      m.rss_before = bench_rss_bytes ();
      m.heap_before = heap_bytes ();
      for (i = 0; i < n_events; i++)
        {
          item = malloc (BARE_ITEM_SIZE);
          if (item == NULL)
            return 1;
          memset (item, (int) (i & 0xff), BARE_ITEM_SIZE);
          g_async_queue_push (queue, item);
        }
      m.rss_after = bench_rss_bytes ();
      m.heap_after = heap_bytes ();
      m.count = (guint64) g_async_queue_length (queue);
      m.peak_kib = bench_peak_rss_kib ();
      while ((item = g_async_queue_try_pop (queue)) != NULL)
        free (item);
      g_async_queue_unref (queue);
    }
  else
    {
      g_printerr (_ ("kvevents-bench: unknown --memory-child \"%s\"\n"), kind);
      return 2;
    }
  print_measure (&m);
  return 0;
}
