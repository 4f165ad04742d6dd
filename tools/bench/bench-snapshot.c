/* bench-snapshot.c: what a snapshot costs (kvevents(7), SNAPSHOTS).
 *
 * The master here is a store of N objects in memory, their keys and
 * tiers (every other object on cpu and disk, the rest on cpu), sharded
 * under SHARDS locks as a master's metadata is: the walk takes an
 * object's lock around its kvev_snapshot_add (), as the API asks, and
 * the producer takes the same lock around each publish call, so every
 * figure includes that lock and whatever waiting on it costs.
 *
 * Three kinds of figure:
 *   the time from the request to the "end" frame at a DEALER client of
 *     this process (a ZeroMQ context of its own, as another process's
 *     would be) that reads every chunk and decodes none, and the objects
 *     per second that makes;
 *   the peak RSS growth of the publisher's process during one snapshot,
 *     in a fresh process (--memory-child snapshot) whose client is this
 *     process: VmHWM, reset through /proc/self/clear_refs once the store
 *     is built, because chunks are freed as soon as they are sent, so
 *     what is in use after the walk says nothing of its peak, and only a
 *     fresh process keeps a reused heap from hiding the growth;
 *   the publish call, as bench-hot.c times it, from one producer thread
 *     (the main thread) taking the store's lock, without a walk and
 *     while a client thread asks for snapshots back to back.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include "bench-replay-client.h"
#include "bench-sections.h"
#include "bench-stats.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <glib/gi18n.h>
#include <msgpack.h>
#include <zmq.h>

#define SHARDS 1024
#define QUEUE_CAPACITY 65536
#define POLL_MS 10
/* The publisher gives up on a client that does not read for 5 s: one that
 * hears nothing for twice as long has lost its snapshot. */
#define STALL_S 10
#define FIRST_HEADER_S 20

static const guint walk_sizes[] = { 10000, 100000, 1000000 };
static const guint smoke_walk_sizes[] = { 1000, 10000 };
#define HOT_WALK_OBJECTS 100000
#define SMOKE_HOT_WALK_OBJECTS 10000

typedef struct
{
  GMutex locks[SHARDS];
  char *keys;
  guint8 *media; /* KvevMedia */
  guint key_len;
  guint n;
  gint walk_n; /* objects the next walks cover, the first ones */
} BenchStore;

static BenchStore *
store_new (guint key_len, guint n)
{
  BenchStore *store = g_new0 (BenchStore, 1);
  guint i;

  for (i = 0; i < SHARDS; i++)
    g_mutex_init (&store->locks[i]);
  store->keys = bench_make_keys (key_len, n);
  store->media = g_new (guint8, n);
  for (i = 0; i < n; i++)
    store->media[i] = i % 2 != 0 ? KVEV_MEDIA_CPU | KVEV_MEDIA_DISK : KVEV_MEDIA_CPU;
  store->key_len = key_len;
  store->n = n;
  store->walk_n = (gint) n;
  return store;
}

static void
store_free (gpointer data)
{
  BenchStore *store = data;
  guint i;

  for (i = 0; i < SHARDS; i++)
    g_mutex_clear (&store->locks[i]);
  g_free (store->keys);
  g_free (store->media);
  g_free (store);
}

static gboolean
store_walk (KvevSnapshot *snapshot, gpointer user_data, GError **error)
{
  BenchStore *store = user_data;
  guint n = (guint) g_atomic_int_get (&store->walk_n);
  guint i;

  for (i = 0; i < n; i++)
    {
      GMutex *lock = &store->locks[i % SHARDS];
      gboolean going;

      g_mutex_lock (lock);
      going = kvev_snapshot_add (snapshot, BENCH_TENANT, store->keys + (gsize) store->key_len * i,
                                 store->key_len, NULL, store->media[i]);
      g_mutex_unlock (lock);
      /* Between objects no lock is held: where the walk may wait. */
      if (!going || (i % SHARDS == SHARDS - 1 && !kvev_snapshot_pause (snapshot)))
        break;
    }
  return TRUE;
}

/* A Put of object i on cpu, as a master commits it; the nanoseconds it
 * waited for the lock the walk held, 0 when it did not. */
static gint64
store_put (BenchStore *store, KvevPublisher *publisher, guint i)
{
  GMutex *lock = &store->locks[i % SHARDS];
  gint64 waited = 0;

  if (!g_mutex_trylock (lock))
    {
      gint64 start = bench_now_ns ();

      g_mutex_lock (lock);
      waited = MAX (bench_now_ns () - start, 1);
    }
  store->media[i] |= KVEV_MEDIA_CPU;
  kvev_publish_stored (publisher, BENCH_TENANT, store->keys + (gsize) store->key_len * i,
                       store->key_len, NULL, KVEV_MEDIA_CPU);
  g_mutex_unlock (lock);
  return waited;
}

/* A publisher with snapshots on ipc://, answered by walks of store. */
static KvevPublisher *
snapshot_publisher_new (const char *tmp_dir, const char *name, BenchStore *store, GError **error)
{
  g_autofree char *endpoint = g_strdup_printf ("ipc://%s/%s-live", tmp_dir, name);
  g_autofree char *snapshot_endpoint = g_strdup_printf ("ipc://%s/%s", tmp_dir, name);
  g_autoptr (KvevConfig) config = bench_config_new (endpoint, QUEUE_CAPACITY, TRUE);
  KvevPublisher *publisher;

  if (!kvev_config_set (config, "kv_events_snapshot_endpoint", snapshot_endpoint, error))
    return NULL;
  publisher = kvev_publisher_new (config, error);
  if (publisher != NULL)
    kvev_publisher_set_snapshot_func (publisher, store_walk, store, NULL);
  return publisher;
}

/* ---- the client -------------------------------------------------------- */

typedef struct
{
  guint64 snapshots; /* read to their "end" */
  guint64 objects;   /* as the "end" frames told */
  guint64 chunks;
  guint64 bytes; /* chunk payloads */
  gint64 ns;     /* request to "end", summed */
} SnapshotCounts;

static void *
client_socket_new (void *context, const char *endpoint, GError **error)
{
  void *socket = zmq_socket (context, ZMQ_DEALER);
  int zero = 0;

  if (socket == NULL || zmq_setsockopt (socket, ZMQ_LINGER, &zero, sizeof zero) != 0
      || zmq_connect (socket, endpoint) != 0)
    {
      bench_fail (error, _ ("The snapshot client cannot connect to %s: %s"), endpoint,
                  zmq_strerror (zmq_errno ()));
      if (socket != NULL)
        zmq_close (socket);
      return NULL;
    }
  return socket;
}

/* The number under key in the msgpack map data, or -1. */
static gint64
map_uint (const char *data, gsize len, const char *key)
{
  msgpack_unpacked unpacked;
  gint64 value = -1;
  guint32 i;

  msgpack_unpacked_init (&unpacked);
  if (msgpack_unpack_next (&unpacked, data, len, NULL) == MSGPACK_UNPACK_SUCCESS
      && unpacked.data.type == MSGPACK_OBJECT_MAP)
    for (i = 0; i < unpacked.data.via.map.size; i++)
      {
        const msgpack_object_kv *kv = &unpacked.data.via.map.ptr[i];

        if (kv->key.type == MSGPACK_OBJECT_STR && kv->key.via.str.size == strlen (key)
            && memcmp (kv->key.via.str.ptr, key, kv->key.via.str.size) == 0
            && kv->val.type == MSGPACK_OBJECT_POSITIVE_INTEGER)
          value = (gint64) kv->val.via.u64;
      }
  msgpack_unpacked_destroy (&unpacked);
  return value;
}

static gboolean
frame_is (zmq_msg_t *frame, const char *word)
{
  return zmq_msg_size (frame) == strlen (word)
         && memcmp (zmq_msg_data (frame), word, strlen (word)) == 0;
}

/* Asks for one snapshot and reads it to its "end", which must tell
 * objects objects; *answered (when not NULL) is set once the header
 * came. */
static gboolean
read_snapshot (void *socket, const char *endpoint, guint64 objects, gint *answered,
               SnapshotCounts *counts, GError **error)
{
  gint64 start = bench_now_ns ();
  gint64 last = g_get_monotonic_time ();
  guint64 chunks = 0, bytes = 0;

  if (zmq_send (socket, "", 0, ZMQ_SNDMORE) < 0 || zmq_send (socket, "snapshot", 8, 0) < 0)
    return bench_fail (error, _ ("The snapshot client cannot send to %s: %s"), endpoint,
                       zmq_strerror (zmq_errno ()));
  for (;;)
    {
      zmq_pollitem_t item = { socket, 0, ZMQ_POLLIN, 0 };
      zmq_msg_t frames[3];
      guint n, i;
      int rc = zmq_poll (&item, 1, POLL_MS);

      if (rc < 0 && zmq_errno () == EINTR)
        continue;
      if (rc < 0)
        return bench_fail (error, "zmq_poll: %s", zmq_strerror (zmq_errno ()));
      if (rc == 0)
        {
          if (g_get_monotonic_time () - last <= STALL_S * G_USEC_PER_SEC)
            continue;
          return bench_fail (error, _ ("A snapshot from %s stalled: nothing came in %u s"),
                             endpoint, STALL_S);
        }
      last = g_get_monotonic_time ();
      n = bench_receive_frames (socket, frames, G_N_ELEMENTS (frames));
      if (n == 3 && zmq_msg_size (&frames[0]) == 0 && frame_is (&frames[1], "chunk"))
        {
          chunks++;
          bytes += zmq_msg_size (&frames[2]);
        }
      else if (n == 3 && zmq_msg_size (&frames[0]) == 0 && frame_is (&frames[1], "header"))
        {
          if (answered != NULL)
            g_atomic_int_set (answered, TRUE);
        }
      else if (n == 3 && zmq_msg_size (&frames[0]) == 0 && frame_is (&frames[1], "end"))
        {
          gint64 told = map_uint (zmq_msg_data (&frames[2]), zmq_msg_size (&frames[2]), "objects");

          counts->ns += bench_now_ns () - start;
          for (i = 0; i < n; i++)
            zmq_msg_close (&frames[i]);
          if (told < 0 || (guint64) told != objects)
            return bench_fail (error, _ ("A snapshot from %s ended with %" PRId64 " objects of %u"),
                               endpoint, (int64_t) told, (guint) objects);
          counts->snapshots++;
          counts->objects += objects;
          counts->chunks += chunks;
          counts->bytes += bytes;
          return TRUE;
        }
      else
        {
          gboolean is_error
              = n == 3 && zmq_msg_size (&frames[0]) == 0 && frame_is (&frames[1], "error");

          for (i = 0; i < MIN (n, G_N_ELEMENTS (frames)); i++)
            zmq_msg_close (&frames[i]);
          if (is_error)
            return bench_fail (error, _ ("%s answered a snapshot request with an error"), endpoint);
          return bench_fail (
              error, _ ("%s sent a reply that is not [\"\", kind, body] (%u frames)"), endpoint, n);
        }
      for (i = 0; i < n; i++)
        zmq_msg_close (&frames[i]);
    }
}

/* A thread that asks for snapshots back to back while run is set, and
 * reads the last one to its end all the same: a walk left sending to a
 * client that went away would hold the walk thread for its send timeout
 * and fall on the next figure. */
typedef struct
{
  void *context;
  const char *endpoint;
  guint64 objects;
  GThread *thread;
  gint run;
  gint answered;
  SnapshotCounts counts;
  GError *error;
} LoopClient;

static gpointer
loop_client_main (gpointer data)
{
  LoopClient *client = data;
  void *socket = client_socket_new (client->context, client->endpoint, &client->error);

  while (socket != NULL && g_atomic_int_get (&client->run))
    if (!read_snapshot (socket, client->endpoint, client->objects, &client->answered,
                        &client->counts, &client->error))
      break;
  if (socket != NULL)
    zmq_close (socket);
  /* Read by the main thread, which otherwise waits for ever. */
  g_atomic_int_set (&client->answered, TRUE);
  return NULL;
}

/* Starts the loop and returns once the first header came, so that a
 * walk runs from the start of what is measured next. */
static gboolean
loop_client_start (LoopClient *client, GError **error)
{
  gint64 deadline = g_get_monotonic_time () + FIRST_HEADER_S * G_USEC_PER_SEC;

  memset (&client->counts, 0, sizeof client->counts);
  client->answered = FALSE;
  client->run = TRUE;
  client->thread = g_thread_new ("bench-snapshot", loop_client_main, client);
  while (!g_atomic_int_get (&client->answered) && g_get_monotonic_time () < deadline)
    g_usleep (100);
  if (g_atomic_int_get (&client->answered))
    return TRUE;
  g_atomic_int_set (&client->run, FALSE);
  g_thread_join (client->thread);
  g_clear_error (&client->error);
  return bench_fail (error, _ ("The snapshot endpoint %s never answered"), client->endpoint);
}

static gboolean
loop_client_stop (LoopClient *client, GError **error)
{
  g_atomic_int_set (&client->run, FALSE);
  g_thread_join (client->thread);
  client->thread = NULL;
  if (client->error != NULL)
    {
      g_propagate_error (error, client->error);
      client->error = NULL;
      return FALSE;
    }
  return TRUE;
}

/* ---- the memory child -------------------------------------------------- */

/* Brings VmHWM down to the RSS of now (Linux 4.0 and later); FALSE when
 * this kernel or this process cannot. */
static gboolean
reset_peak_rss (void)
{
  /* Not g_file_set_contents (): it would rename a new file over it. */
  FILE *file = fopen ("/proc/self/clear_refs", "w");

  return file != NULL && fputs ("5", file) >= 0 && fclose (file) == 0;
}

int
bench_snapshot_child_main (guint n_objects, guint key_len, const char *tmp_dir)
{
  g_autoptr (GError) error = NULL;
  BenchStore *store;
  KvevPublisher *publisher;
  gint64 rss_before, rss_after;
  gboolean reset;
  char line[64];

  if (tmp_dir == NULL)
    {
      g_printerr (_ ("kvevents-bench: --memory-child %s needs --tmp-dir\n"), "snapshot");
      return 2;
    }
  store = store_new (key_len, n_objects);
  publisher = snapshot_publisher_new (tmp_dir, "snapshot-memory", store, &error);
  if (publisher == NULL)
    {
      g_printerr ("kvevents-bench: %s\n", error->message);
      store_free (store);
      return 1;
    }
  /* Without the reset VmHWM would be the store's build, not the walk. */
  reset = reset_peak_rss ();
  rss_before = bench_rss_bytes ();
  printf ("ready\n");
  fflush (stdout);
  /* The parent reads the snapshot, then says so (or goes away). */
  if (fgets (line, sizeof line, stdin) == NULL)
    line[0] = '\0';
  rss_after = bench_rss_bytes ();
  printf ("%" G_GINT64_FORMAT " %" G_GINT64_FORMAT " %ld %" G_GUINT64_FORMAT "\n", rss_before,
          rss_after, reset ? bench_peak_rss_kib () : -1L,
          kvev_publisher_stat (publisher, KVEV_STAT_SNAPSHOT_OBJECTS));
  fflush (stdout);
  kvev_publisher_free (publisher);
  store_free (store);
  return 0;
}

typedef struct
{
  double peak_growth_kib; /* NAN when unknown */
  double after_growth_kib;
  SnapshotCounts counts;
} ChildResult;

static gboolean
run_child (const BenchSettings *settings, void *context, guint n, ChildResult *result,
           GError **error)
{
  g_autofree char *objects = g_strdup_printf ("%u", n);
  g_autofree char *key_len = g_strdup_printf ("%u", settings->key_len);
  g_autofree char *endpoint = g_strdup_printf ("ipc://%s/snapshot-memory", settings->tmp_dir);
  const char *argv[] = { settings->self, "--memory-child", "snapshot",  "--memory-events", objects,
                         "--key-len",    key_len,          "--tmp-dir", settings->tmp_dir, NULL };
  GError *snapshot_error = NULL;
  GPid pid;
  int to_child, from_child, status;
  FILE *in, *out;
  char line[256];
  gint64 rss_before, rss_after;
  long peak_kib;
  guint64 counted;
  gboolean ok = FALSE;
  void *socket = NULL;

  if (!g_spawn_async_with_pipes (NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL,
                                 &pid, &to_child, &from_child, NULL, error))
    return FALSE;
  in = fdopen (from_child, "r");
  out = fdopen (to_child, "w");
  if (fgets (line, sizeof line, in) != NULL && strcmp (line, "ready\n") == 0)
    {
      socket = client_socket_new (context, endpoint, &snapshot_error);
      if (socket != NULL)
        {
          read_snapshot (socket, endpoint, n, NULL, &result->counts, &snapshot_error);
          zmq_close (socket);
        }
      fputs ("done\n", out);
      fflush (out);
      if (fgets (line, sizeof line, in) != NULL
          && sscanf (line, "%" G_GINT64_FORMAT " %" G_GINT64_FORMAT " %ld %" G_GUINT64_FORMAT,
                     &rss_before, &rss_after, &peak_kib, &counted)
                 == 4)
        ok = TRUE;
    }
  fclose (out);
  fclose (in);
  while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
    ;
  g_spawn_close_pid (pid);
  if (!g_spawn_check_exit_status (status, error))
    {
      g_clear_error (&snapshot_error);
      return FALSE;
    }
  if (snapshot_error != NULL)
    {
      g_propagate_error (error, snapshot_error);
      return FALSE;
    }
  if (!ok || counted != n)
    return bench_fail (error,
                       _ ("The snapshot child did not report a whole snapshot of %u objects"), n);
  result->peak_growth_kib
      = peak_kib < 0 || rss_before < 0 ? NAN : (double) peak_kib - (double) rss_before / 1024;
  result->after_growth_kib
      = rss_before < 0 || rss_after < 0 ? NAN : (double) (rss_after - rss_before) / 1024;
  return TRUE;
}

/* ---- the section ------------------------------------------------------- */

typedef struct
{
  gint64 ns;
  /* The producer's own CPU time: on a machine with fewer cores than
   * busy threads, what the walk takes from the call by preempting it
   * shows as ns above cpu_ns. */
  gint64 cpu_ns;
  guint64 calls;
  guint64 lock_waits;
  /* What the calls waited for the store's lock: on a machine with fewer
   * cores than busy threads, mostly a walk preempted while it held the
   * lock, which the scheduler, not the library, decides. */
  gint64 lock_wait_ns;
} CallTimes;

/* Rounds of calls for duration_ns, each timed, the queue flushed between
 * them untimed so that the worker keeps up, as bench-hot.c's running
 * mode; the first round warms up and is not counted. */
static gboolean
time_calls (BenchStore *store, KvevPublisher *publisher, guint calls_per_round, gint64 duration_ns,
            CallTimes *times, GError **error)
{
  guint ring = MIN (store->n, BENCH_KEY_RING);
  gint64 deadline = bench_now_ns () + duration_ns;
  guint64 next = 0;
  gboolean warming = TRUE;

  do
    {
      gint64 start = bench_now_ns ();
      gint64 cpu_start = bench_thread_cpu_ns ();
      guint64 waits = 0;
      gint64 wait_ns = 0;
      guint j;

      for (j = 0; j < calls_per_round; j++, next++)
        {
          gint64 waited = store_put (store, publisher, (guint) (next % ring));

          waits += waited > 0;
          wait_ns += waited;
        }
      if (!warming)
        {
          times->lock_waits += waits;
          times->lock_wait_ns += wait_ns;
          times->cpu_ns += bench_thread_cpu_ns () - cpu_start;
          times->ns += bench_now_ns () - start;
          times->calls += calls_per_round;
        }
      warming = FALSE;
      if (!bench_publisher_drain (publisher, error))
        return FALSE;
    }
  while (bench_now_ns () < deadline || times->calls == 0);
  return TRUE;
}

static void
add_call_times (BenchFigure *figure, const CallTimes *times)
{
  bench_figure_add (figure, (double) times->ns / (double) MAX (times->calls, 1));
  bench_figure_add_extra (figure, "thread_cpu_ns_per_call",
                          (double) times->cpu_ns / (double) MAX (times->calls, 1));
  bench_figure_add_extra (figure, "lock_waits", (double) times->lock_waits);
  bench_figure_add_extra (figure, "lock_wait_ns_per_call",
                          (double) times->lock_wait_ns / (double) MAX (times->calls, 1));
  bench_figure_add_extra (figure, "calls", (double) times->calls);
}

static char *
cpu_note (const BenchFigure *figure)
{
  return g_strdup_printf (
      _ ("the producer's thread ran %.0f ns a call; %.0f calls of %.0f waited for the lock, "
         "%.0f ns a call in all"),
      bench_median (bench_figure_find_extra (figure, "thread_cpu_ns_per_call")->values),
      bench_sum (bench_figure_find_extra (figure, "lock_waits")->values),
      bench_sum (bench_figure_find_extra (figure, "calls")->values),
      bench_median (bench_figure_find_extra (figure, "lock_wait_ns_per_call")->values));
}

static void
add_call_notes (BenchFigure *idle, BenchFigure *busy, guint64 dropped)
{
  g_autofree char *busy_cpu = cpu_note (busy);
  g_autofree char *snapshots
      = g_strdup_printf (_ ("%.0f snapshots read to the end"),
                         bench_sum (bench_figure_find_extra (busy, "snapshots")->values));
  g_autofree char *drops
      = dropped > 0 ? g_strdup_printf (_ ("%.0f events dropped"), (double) dropped) : NULL;

  bench_figure_set_note (idle, cpu_note (idle));
  bench_figure_set_note (busy, g_strjoin ("; ", snapshots, busy_cpu, drops, NULL));
}

typedef struct
{
  BenchFigure *ms;
  BenchFigure *rate;
  BenchFigure *peak;
} WalkFigures;

static void
add_walk_note (BenchFigure *figure)
{
  bench_figure_set_note (
      figure,
      g_strdup_printf (_ ("%.0f chunks, %.2f MB per snapshot"),
                       bench_median (bench_figure_find_extra (figure, "chunks")->values),
                       bench_median (bench_figure_find_extra (figure, "bytes")->values) / 1e6));
}

gboolean
bench_snapshot (BenchReport *report, const BenchSettings *settings, GError **error)
{
  const guint *sizes = settings->smoke ? smoke_walk_sizes : walk_sizes;
  guint n_sizes = settings->smoke ? G_N_ELEMENTS (smoke_walk_sizes) : G_N_ELEMENTS (walk_sizes);
  guint hot_objects = settings->smoke ? SMOKE_HOT_WALK_OBJECTS : HOT_WALK_OBJECTS;
  guint calls_per_round = settings->smoke ? 256 : 4096;
  gint64 duration_ns = (gint64) settings->duration_ms * 1000000;
  g_autofree char *title = g_strdup_printf (
      _ ("Snapshots: request to \"end\" at a DEALER client reading every chunk, and the "
         "publish call with and without walks; %u-byte keys, the store's %u locks included "
         "(lower is better)"),
      settings->key_len, SHARDS);
  BenchSection *section = bench_report_add_section (report, "snapshot", title);
  WalkFigures walks[G_N_ELEMENTS (walk_sizes)];
  BenchFigure *idle, *busy;
  BenchStore *store;
  KvevPublisher *publisher;
  void *context, *socket = NULL;
  g_autofree char *endpoint = NULL;
  g_autofree char *busy_label = NULL;
  LoopClient client = { 0 };
  guint64 dropped = 0;
  guint max_objects = 0;
  gboolean ok = TRUE;
  guint run, s;

  /* A memory child that died must fail the run, not end it. */
  signal (SIGPIPE, SIG_IGN);
  for (s = 0; s < n_sizes; s++)
    {
      g_autofree char *ms_id = g_strdup_printf ("walk%u.ms", sizes[s]);
      g_autofree char *rate_id = g_strdup_printf ("walk%u.objects_per_s", sizes[s]);
      g_autofree char *ms_label
          = g_strdup_printf (_ ("%u objects, request to \"end\" at the client"), sizes[s]);
      g_autofree char *rate_label
          = g_strdup_printf (_ ("%u objects, objects per second"), sizes[s]);

      walks[s].ms = bench_section_add_figure (section, ms_id, ms_label, "ms", NULL);
      walks[s].rate = bench_section_add_figure (section, rate_id, rate_label, "objects/s", NULL);
      max_objects = MAX (max_objects, sizes[s]);
    }
  /* Against the smallest walk: the same growth whatever the count. */
  for (s = 0; s < n_sizes; s++)
    {
      g_autofree char *peak_id = g_strdup_printf ("walk%u.peak_rss_growth_kib", sizes[s]);
      g_autofree char *peak_label = g_strdup_printf (
          _ ("%u objects, peak RSS growth of the publisher's process"), sizes[s]);

      walks[s].peak = bench_section_add_figure (section, peak_id, peak_label, "KiB",
                                                s > 0 ? walks[0].peak : NULL);
    }
  idle = bench_section_add_figure (
      section, "stored_cpu.p1.locked",
      _ ("stored cpu, 1 producer, worker running, store lock, no walk"), "ns/call", NULL);
  busy_label = g_strdup_printf (
      _ ("stored cpu, 1 producer, worker running, store lock, walks of %u objects in a loop"),
      hot_objects);
  busy = bench_section_add_figure (section, "stored_cpu.p1.locked.walk_busy", busy_label, "ns/call",
                                   idle);
  bench_section_set_info (section, "store_locks", SHARDS);
  bench_section_set_info (section, "hot_walk_objects", hot_objects);

  bench_progress (settings, _ ("snapshot: building a store of %u objects"),
                  MAX (max_objects, hot_objects));
  store = store_new (settings->key_len, MAX (max_objects, hot_objects));
  publisher = snapshot_publisher_new (settings->tmp_dir, "snapshot", store, error);
  if (publisher == NULL)
    {
      store_free (store);
      return FALSE;
    }
  endpoint = g_strdup (kvev_publisher_get_snapshot_endpoint (publisher));
  context = zmq_ctx_new ();
  socket = client_socket_new (context, endpoint, error);
  ok = socket != NULL;
  client.context = context;
  client.endpoint = endpoint;
  client.objects = hot_objects;

  /* Warm: the store's pages and the publisher's first chunks. */
  if (ok)
    {
      SnapshotCounts warm = { 0 };

      g_atomic_int_set (&store->walk_n, (gint) hot_objects);
      ok = read_snapshot (socket, endpoint, hot_objects, NULL, &warm, error);
    }

  for (run = 0; ok && run < settings->runs; run++)
    {
      CallTimes times[2] = { { 0 } };
      guint64 dropped_before;

      bench_progress (settings, _ ("snapshot, run %u of %u"), run + 1, settings->runs);
      for (s = 0; ok && s < n_sizes; s++)
        {
          SnapshotCounts counts = { 0 };

          g_atomic_int_set (&store->walk_n, (gint) sizes[s]);
          ok = read_snapshot (socket, endpoint, sizes[s], NULL, &counts, error);
          if (!ok)
            break;
          bench_figure_add (walks[s].ms, (double) counts.ns / 1e6);
          bench_figure_add (walks[s].rate, (double) sizes[s] * 1e9 / (double) MAX (counts.ns, 1));
          bench_figure_add_extra (walks[s].ms, "chunks", (double) counts.chunks);
          bench_figure_add_extra (walks[s].ms, "bytes", (double) counts.bytes);
        }
      for (s = 0; ok && s < n_sizes; s++)
        {
          ChildResult child = { 0 };

          ok = run_child (settings, context, sizes[s], &child, error);
          if (!ok)
            break;
          bench_figure_add (walks[s].peak, child.peak_growth_kib);
          bench_figure_add_extra (walks[s].peak, "rss_growth_after_kib", child.after_growth_kib);
        }

      dropped_before = kvev_publisher_stat (publisher, KVEV_STAT_DROPPED_EVENTS);
      g_atomic_int_set (&store->walk_n, (gint) hot_objects);
      if (ok)
        ok = time_calls (store, publisher, calls_per_round, duration_ns, &times[0], error);
      if (ok && (ok = loop_client_start (&client, error)))
        {
          ok = time_calls (store, publisher, calls_per_round, duration_ns, &times[1], error);
          ok = loop_client_stop (&client, ok ? error : NULL) && ok;
        }
      if (!ok)
        break;
      dropped += kvev_publisher_stat (publisher, KVEV_STAT_DROPPED_EVENTS) - dropped_before;
      add_call_times (idle, &times[0]);
      add_call_times (busy, &times[1]);
      bench_figure_add_extra (busy, "snapshots", (double) client.counts.snapshots);
    }

  if (ok)
    {
      for (s = 0; s < n_sizes; s++)
        add_walk_note (walks[s].ms);
      bench_figure_set_note (walks[0].peak,
                             g_strdup (_ ("VmHWM reset after the store was built, minus the RSS "
                                          "before the request, in a fresh process")));
      add_call_notes (idle, busy, dropped);
    }

  if (socket != NULL)
    zmq_close (socket);
  kvev_publisher_free (publisher);
  zmq_ctx_term (context);
  store_free (store);
  return ok;
}
