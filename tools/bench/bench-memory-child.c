/* bench-memory-child.c: the process kvevents-bench --memory-child is;
 * see bench-memory-child.h.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include "bench-memory-child.h"
#include "bench-internal.h"
#include "bench-util.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <glib/gi18n.h>

#define BARE_ITEM_SIZE 128

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
#define HAVE_MALLINFO2 1
#endif

static gint64
rss_bytes (void)
{
  g_autofree char *text = NULL;
  long long size, resident;

  if (!g_file_get_contents ("/proc/self/statm", &text, NULL, NULL)
      || sscanf (text, "%lld %lld", &size, &resident) != 2)
    return -1;
  return (gint64) resident * sysconf (_SC_PAGESIZE);
}

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

int
bench_memory_child_main (const char *kind, guint n_events, guint key_len)
{
  g_autofree char *key = g_malloc (key_len);
  gint64 rss_before, rss_after, heap_before, heap_after;
  guint64 depth = 0;
  long peak_kib;
  guint i;

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
      bench_publisher_hold (publisher, TRUE);
      rss_before = rss_bytes ();
      heap_before = heap_bytes ();
      for (i = 0; i < n_events; i++)
        {
          bench_fill_key (key, key_len, i);
          kvev_publish_stored (publisher, BENCH_TENANT, key, key_len, NULL, KVEV_MEDIA_CPU);
        }
      rss_after = rss_bytes ();
      heap_after = heap_bytes ();
      depth = bench_publisher_queue_depth (publisher);
      peak_kib = bench_peak_rss_kib ();
      bench_publisher_hold (publisher, FALSE);
      kvev_publisher_flush (publisher, 30000);
      kvev_publisher_free (publisher);
    }
  else if (strcmp (kind, "bare") == 0)
    {
      GAsyncQueue *queue = g_async_queue_new ();
      gpointer item;

      rss_before = rss_bytes ();
      heap_before = heap_bytes ();
      for (i = 0; i < n_events; i++)
        {
          item = malloc (BARE_ITEM_SIZE);
          if (item == NULL)
            return 1;
          memset (item, (int) (i & 0xff), BARE_ITEM_SIZE);
          g_async_queue_push (queue, item);
        }
      rss_after = rss_bytes ();
      heap_after = heap_bytes ();
      depth = (guint64) g_async_queue_length (queue);
      peak_kib = bench_peak_rss_kib ();
      while ((item = g_async_queue_try_pop (queue)) != NULL)
        free (item);
      g_async_queue_unref (queue);
    }
  else
    {
      g_printerr (_ ("kvevents-bench: unknown --memory-child \"%s\"\n"), kind);
      return 2;
    }

  printf ("%" G_GINT64_FORMAT " %" G_GINT64_FORMAT " %" G_GINT64_FORMAT " %" G_GINT64_FORMAT
          " %ld %" G_GUINT64_FORMAT "\n",
          rss_before, rss_after, heap_before, heap_after, peak_kib, depth);
  return 0;
}
