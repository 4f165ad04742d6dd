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
/* RUSAGE_THREAD */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "config.h"

#include "bench-replay.h"
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
#include <sys/resource.h>
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

/* What the library calls made under a store lock waited, told by the
 * calling thread's voluntary context switches: a call that slept, or
 * waited on a futex or in poll (), shows one, which its wall time then
 * covers; a preemption is involuntary, no wait of the library's.  A wait
 * for a peer lasts at least the millisecond a wait for room sleeps; the
 * shorter ones are the locks the library shares with its own threads
 * (the queue's with the worker, libzmq's mailboxes with its I/O
 * threads), which the same calls show without a walk too. */
#define LONG_WAIT_NS 1000000

typedef struct
{
  guint64 calls;
  guint64 waits;
  guint64 long_waits; /* of LONG_WAIT_NS or more */
  gint64 wait_ns;
  guint64 preempted;
} WaitCounts;

typedef struct
{
  struct rusage usage;
  gint64 start;
} Probe;

static void
probe_begin (Probe *probe)
{
  getrusage (RUSAGE_THREAD, &probe->usage);
  probe->start = bench_now_ns ();
}

static void
probe_end (const Probe *probe, WaitCounts *counts)
{
  gint64 end = bench_now_ns ();
  struct rusage usage;

  getrusage (RUSAGE_THREAD, &usage);
  counts->calls++;
  if (usage.ru_nvcsw > probe->usage.ru_nvcsw)
    {
      counts->waits++;
      counts->long_waits += end - probe->start >= LONG_WAIT_NS;
      counts->wait_ns += end - probe->start;
    }
  if (usage.ru_nivcsw > probe->usage.ru_nivcsw)
    counts->preempted++;
}

typedef struct
{
  GMutex locks[SHARDS];
  char *keys;
  guint8 *media; /* KvevMedia */
  guint key_len;
  guint n;
  gint walk_n;  /* objects the next walks cover, the first ones */
  gint probing; /* the walks probe their adds into walk_waits */
  /* The walk thread's; read once its snapshot's "end" came. */
  WaitCounts walk_waits;
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
  gboolean probing = g_atomic_int_get (&store->probing);
  guint i;

  for (i = 0; i < n; i++)
    {
      GMutex *lock = &store->locks[i % SHARDS];
      gboolean going;
      Probe probe;

      g_mutex_lock (lock);
      if (probing)
        probe_begin (&probe);
      going = kvev_snapshot_add (snapshot, BENCH_TENANT, store->keys + (gsize) store->key_len * i,
                                 store->key_len, NULL, store->media[i]);
      if (probing)
        probe_end (&probe, &store->walk_waits);
      g_mutex_unlock (lock);
      /* Between objects no lock is held: where the walk may wait. */
      if (!going || (i % SHARDS == SHARDS - 1 && !kvev_snapshot_pause (snapshot)))
        break;
    }
  return TRUE;
}

/* A Put of object i on cpu, as a master commits it, its publish call
 * probed into waits unless NULL; the nanoseconds it waited for the lock
 * the walk held, 0 when it did not. */
static gint64
store_put (BenchStore *store, KvevPublisher *publisher, guint i, WaitCounts *waits)
{
  GMutex *lock = &store->locks[i % SHARDS];
  gint64 waited = 0;
  Probe probe;

  if (!g_mutex_trylock (lock))
    {
      gint64 start = bench_now_ns ();

      g_mutex_lock (lock);
      waited = MAX (bench_now_ns () - start, 1);
    }
  store->media[i] |= KVEV_MEDIA_CPU;
  if (waits != NULL)
    probe_begin (&probe);
  kvev_publish_stored (publisher, BENCH_TENANT, store->keys + (gsize) store->key_len * i,
                       store->key_len, NULL, KVEV_MEDIA_CPU);
  if (waits != NULL)
    probe_end (&probe, waits);
  g_mutex_unlock (lock);
  return waited;
}

/* A publisher with snapshots on ipc://, answered by walks of store;
 * duty is its kv_events_snapshot_duty_percent, NULL for the default. */
static KvevPublisher *
snapshot_publisher_new (const char *tmp_dir, const char *name, BenchStore *store, const char *duty,
                        GError **error)
{
  g_autofree char *endpoint = g_strdup_printf ("ipc://%s/%s-live", tmp_dir, name);
  g_autofree char *snapshot_endpoint = g_strdup_printf ("ipc://%s/%s", tmp_dir, name);
  g_autoptr (KvevConfig) config = bench_config_new (endpoint, QUEUE_CAPACITY, TRUE);
  KvevPublisher *publisher;

  if (!kvev_config_set (config, "kv_events_snapshot_endpoint", snapshot_endpoint, error)
      || (duty != NULL
          && !kvev_config_set (config, "kv_events_snapshot_duty_percent", duty, error)))
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
 * came.  With pace above 0 it reads that many chunk bytes a second, a
 * slow reader whose pipe fills. */
static gboolean
read_snapshot (void *socket, const char *endpoint, guint64 objects, double pace, gint *answered,
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
          if (pace > 0)
            {
              gint64 ahead = start + (gint64) ((double) bytes * 1e9 / pace) - bench_now_ns ();

              if (ahead > 0)
                g_usleep ((gulong) (ahead / 1000));
            }
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
    if (!read_snapshot (socket, client->endpoint, client->objects, 0, &client->answered,
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

/* The memory children's side of their protocol: resets VmHWM, reads the
 * RSS, and says "ready"; FALSE when this kernel cannot reset VmHWM. */
static gboolean
child_ready (gint64 *rss_before)
{
  gboolean reset = reset_peak_rss ();

  *rss_before = bench_rss_bytes ();
  printf ("ready\n");
  fflush (stdout);
  return reset;
}

/* Then waits for the parent's line (or for it to go away), and reads the
 * RSS and the peak since the reset (-1 without one). */
static void
child_wait_parent (gboolean reset, gint64 *rss_after, long *peak_kib)
{
  char line[64];

  if (fgets (line, sizeof line, stdin) == NULL)
    line[0] = '\0';
  *rss_after = bench_rss_bytes ();
  *peak_kib = reset ? bench_peak_rss_kib () : -1L;
}

int
bench_snapshot_child_main (guint n_objects, guint key_len, const char *tmp_dir)
{
  g_autoptr (GError) error = NULL;
  BenchStore *store;
  KvevPublisher *publisher;
  gint64 rss_before, rss_after;
  long peak_kib;
  gboolean reset;

  if (tmp_dir == NULL)
    {
      g_printerr (_ ("kvevents-bench: --memory-child %s needs --tmp-dir\n"), "snapshot");
      return 2;
    }
  store = store_new (key_len, n_objects);
  publisher = snapshot_publisher_new (tmp_dir, "snapshot-memory", store, NULL, &error);
  if (publisher == NULL)
    {
      g_printerr ("kvevents-bench: %s\n", error->message);
      store_free (store);
      return 1;
    }
  /* Without the reset VmHWM would be the store's build, not the walk;
   * the parent reads the snapshot meanwhile. */
  reset = child_ready (&rss_before);
  child_wait_parent (reset, &rss_after, &peak_kib);
  printf ("%" G_GINT64_FORMAT " %" G_GINT64_FORMAT " %ld %" G_GUINT64_FORMAT "\n", rss_before,
          rss_after, peak_kib, kvev_publisher_stat (publisher, KVEV_STAT_SNAPSHOT_OBJECTS));
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

/* A memory child started by the parent, its stdout and stdin. */
typedef struct
{
  GPid pid;
  FILE *in;
  FILE *out;
} Child;

static gboolean
child_spawn (const char *const *argv, Child *child, GError **error)
{
  int to_child, from_child;

  if (!g_spawn_async_with_pipes (NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL,
                                 &child->pid, &to_child, &from_child, NULL, error))
    return FALSE;
  child->in = fdopen (from_child, "r");
  child->out = fdopen (to_child, "w");
  return TRUE;
}

/* Closes the pipes, so that a child still waiting for its line ends, and
 * reaps it; FALSE with error set when it did not exit with 0. */
static gboolean
child_reap (Child *child, GError **error)
{
  int status;

  fclose (child->out);
  fclose (child->in);
  while (waitpid (child->pid, &status, 0) < 0 && errno == EINTR)
    ;
  g_spawn_close_pid (child->pid);
  return g_spawn_check_exit_status (status, error);
}

/* One snapshot of n objects from a fresh process, read at pace chunk
 * bytes a second (0: flat out). */
static gboolean
run_child (const BenchSettings *settings, void *context, guint n, double pace, ChildResult *result,
           GError **error)
{
  g_autofree char *objects = g_strdup_printf ("%u", n);
  g_autofree char *key_len = g_strdup_printf ("%u", settings->key_len);
  g_autofree char *endpoint = g_strdup_printf ("ipc://%s/snapshot-memory", settings->tmp_dir);
  const char *argv[] = { settings->self, "--memory-child", "snapshot",  "--memory-events", objects,
                         "--key-len",    key_len,          "--tmp-dir", settings->tmp_dir, NULL };
  GError *snapshot_error = NULL;
  Child child;
  char line[256];
  gint64 rss_before, rss_after;
  long peak_kib;
  guint64 counted;
  gboolean ok = FALSE;
  void *socket = NULL;

  if (!child_spawn (argv, &child, error))
    return FALSE;
  if (fgets (line, sizeof line, child.in) != NULL && strcmp (line, "ready\n") == 0)
    {
      socket = client_socket_new (context, endpoint, &snapshot_error);
      if (socket != NULL)
        {
          read_snapshot (socket, endpoint, n, pace, NULL, &result->counts, &snapshot_error);
          zmq_close (socket);
        }
      fputs ("done\n", child.out);
      fflush (child.out);
      if (fgets (line, sizeof line, child.in) != NULL
          && sscanf (line, "%" G_GINT64_FORMAT " %" G_GINT64_FORMAT " %ld %" G_GUINT64_FORMAT,
                     &rss_before, &rss_after, &peak_kib, &counted)
                 == 4)
        ok = TRUE;
    }
  if (!child_reap (&child, error))
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

/* ---- hostile replay readers -------------------------------------------- */

/* Messages filled at a time into the hostile child's replay buffer, and
 * events queued at a time meanwhile: few, so that the queue's own memory
 * does not count as what replay holds. */
#define HOSTILE_FILL_MESSAGES 64
#define HOSTILE_FILL_ROUND 4096
#define HOSTILE_PEERS 4
/* Each hostile peer's receive high-water mark, in messages: it reads
 * nothing, so what the replay service makes for it stays on the
 * publisher's side once this and the connection are full. */
#define HOSTILE_RCVHWM 4
#define HOSTILE_ASK_MS 50

/* The publisher of the hostile-replay figure (--memory-child
 * replay_hostile): a replay buffer of buffer_bytes, filled, then what
 * four peers that ask and never read make it hold.  "ready"; at the
 * parent's first line it publishes twice the buffer and says "rolled";
 * at its second, one line RSS_BEFORE RSS_AFTER PEAK_KIB HELD_BYTES.
 * Replies share the payload the buffer holds, so peers that never read
 * pin memory of their own only once the buffer moves on, as a live
 * master's does. */
int
bench_replay_hostile_child_main (guint buffer_bytes, guint key_len, const char *tmp_dir)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *endpoint = NULL;
  g_autofree char *replay_endpoint = NULL;
  g_autofree char *bytes_text = g_strdup_printf ("%u", buffer_bytes);
  g_autoptr (KvevConfig) config = NULL;
  KvevPublisher *publisher;
  gint64 rss_before, rss_after;
  long peak_kib;
  guint64 held = 0, per_message = 1;
  gboolean ok = TRUE, reset;
  char line[64];
  guint round;

  if (tmp_dir == NULL)
    {
      g_printerr (_ ("kvevents-bench: --memory-child %s needs --tmp-dir\n"), "replay_hostile");
      return 2;
    }
  endpoint = g_strdup_printf ("ipc://%s/hostile-live", tmp_dir);
  replay_endpoint = g_strdup_printf ("ipc://%s/hostile-replay", tmp_dir);
  config = bench_config_new (endpoint, HOSTILE_FILL_ROUND, TRUE);
  /* So many messages that the bytes are the bound that holds. */
  ok = bench_config_set_replay (config, replay_endpoint, G_MAXINT32, &error)
       && kvev_config_set (config, "kv_events_replay_buffer_bytes", bytes_text, &error);
  publisher = ok ? kvev_publisher_new (config, &error) : NULL;
  if (publisher == NULL)
    {
      g_printerr ("kvevents-bench: %s\n", error->message);
      return 1;
    }
  /* Until the buffer evicts: full to its bound. */
  for (round = 0; ok && round < 100000; round++)
    {
      ok = bench_replay_fill (publisher, key_len, HOSTILE_FILL_MESSAGES, HOSTILE_FILL_ROUND, NULL,
                              &error);
      held = kvev_publisher_stat (publisher, KVEV_STAT_REPLAY_BUFFER_BYTES);
      per_message
          = held / MAX (kvev_publisher_stat (publisher, KVEV_STAT_REPLAY_BUFFER_MESSAGES), 1);
      if (held + per_message * HOSTILE_FILL_MESSAGES > buffer_bytes)
        break;
    }
  if (!ok)
    {
      g_printerr ("kvevents-bench: %s\n", error->message);
      kvev_publisher_free (publisher);
      return 1;
    }
  reset = child_ready (&rss_before);
  if (fgets (line, sizeof line, stdin) == NULL)
    line[0] = '\0';
  ok = bench_replay_fill (publisher, key_len, (guint) (2 * held / MAX (per_message, 1)),
                          HOSTILE_FILL_ROUND, NULL, &error);
  printf (ok ? "rolled\n" : "failed\n");
  fflush (stdout);
  child_wait_parent (reset, &rss_after, &peak_kib);
  if (!ok)
    {
      g_printerr ("kvevents-bench: %s\n", error->message);
      kvev_publisher_free (publisher);
      return 1;
    }
  printf ("%" G_GINT64_FORMAT " %" G_GINT64_FORMAT " %ld %" G_GUINT64_FORMAT "\n", rss_before,
          rss_after, peak_kib, held);
  fflush (stdout);
  kvev_publisher_free (publisher);
  return 0;
}

typedef struct
{
  double peak_growth_kib; /* NAN when unknown */
  guint64 held;           /* the buffer's payload bytes */
  guint64 asked;          /* requests the peers sent */
} HostileResult;

/* Peers that ask every HOSTILE_ASK_MS until deadline_ns; a peer whose
 * own queue is full asks no more (DONTWAIT). */
static void
hostile_ask (void **peers, guint n_peers, gint64 deadline_ns, guint64 *asked)
{
  const guint64 start_be = GUINT64_TO_BE (0);
  guint i;

  while (bench_now_ns () < deadline_ns)
    {
      for (i = 0; i < n_peers; i++)
        if (zmq_send (peers[i], "", 0, ZMQ_SNDMORE | ZMQ_DONTWAIT) == 0
            && zmq_send (peers[i], &start_be, sizeof start_be, ZMQ_DONTWAIT) > 0)
          (*asked)++;
      g_usleep (HOSTILE_ASK_MS * 1000);
    }
}

/* n_peers DEALERs of context (HOSTILE_PEERS at most) that ask the
 * child's replay endpoint for everything, every HOSTILE_ASK_MS for
 * duration_ms, and read nothing; half way the child rolls its buffer
 * over. */
static gboolean
run_hostile_child (const BenchSettings *settings, void *context, guint buffer_bytes,
                   guint duration_ms, guint n_peers, HostileResult *result, GError **error)
{
  g_autofree char *bytes_text = g_strdup_printf ("%u", buffer_bytes);
  g_autofree char *key_len = g_strdup_printf ("%u", settings->key_len);
  g_autofree char *endpoint = g_strdup_printf ("ipc://%s/hostile-replay", settings->tmp_dir);
  const char *argv[]
      = { settings->self, "--memory-child", "replay_hostile", "--memory-events", bytes_text,
          "--key-len",    key_len,          "--tmp-dir",      settings->tmp_dir, NULL };
  void *peers[HOSTILE_PEERS] = { NULL };
  Child child;
  char line[256];
  gint64 rss_before, rss_after;
  long peak_kib;
  gboolean ok = FALSE, rolled;
  guint i;

  if (!child_spawn (argv, &child, error))
    return FALSE;
  if (fgets (line, sizeof line, child.in) != NULL && strcmp (line, "ready\n") == 0)
    {
      int hwm = HOSTILE_RCVHWM, zero = 0;

      for (i = 0; i < n_peers; i++)
        {
          peers[i] = zmq_socket (context, ZMQ_DEALER);
          zmq_setsockopt (peers[i], ZMQ_RCVHWM, &hwm, sizeof hwm);
          zmq_setsockopt (peers[i], ZMQ_LINGER, &zero, sizeof zero);
          zmq_connect (peers[i], endpoint);
        }
      hostile_ask (peers, n_peers, bench_now_ns () + (gint64) duration_ms * 500000, &result->asked);
      fputs ("roll\n", child.out);
      fflush (child.out);
      rolled = fgets (line, sizeof line, child.in) != NULL && strcmp (line, "rolled\n") == 0;
      hostile_ask (peers, n_peers, bench_now_ns () + (gint64) duration_ms * 500000, &result->asked);
      fputs ("done\n", child.out);
      fflush (child.out);
      if (fgets (line, sizeof line, child.in) != NULL
          && sscanf (line, "%" G_GINT64_FORMAT " %" G_GINT64_FORMAT " %ld %" G_GUINT64_FORMAT,
                     &rss_before, &rss_after, &peak_kib, &result->held)
                 == 4)
        ok = rolled;
      for (i = 0; i < n_peers; i++)
        zmq_close (peers[i]);
    }
  if (!child_reap (&child, error))
    return FALSE;
  if (!ok)
    return bench_fail (error, _ ("The hostile replay child did not report its memory"));
  result->peak_growth_kib
      = peak_kib < 0 || rss_before < 0 ? NAN : (double) peak_kib - (double) rss_before / 1024;
  return TRUE;
}

/* ---- the mutator, paced ------------------------------------------------ */

#define ROUND_NS 1000000
/* The rate of the mutator beside a slow reader's walk: a busy master's
 * commits, far below what one core calls (millions a second), so that the
 * mutator, the worker, the walk, the reader and ZeroMQ's I/O threads fit
 * on two cores and what its CPU time shows is the walk, not the
 * scheduler. */
#define MUTATOR_RATE 100000.0
/* The paced producer's offer, against the capacity measured flat out in
 * the same run: room for the walk's share of the time. */
#define OFFERED_SHARE 0.8
#define SLOW_READER_SHARE 0.1
/* Runs of the figures that read one snapshot of the whole store slowly:
 * each takes ten times a walk. */
#define SLOW_RUNS 3

typedef struct
{
  guint64 calls;
  /* The thread's CPU time in unprobed rounds, and their calls: the
   * probe's two system calls would otherwise be most of the figure. */
  gint64 cpu_ns;
  guint64 cpu_calls;
  guint64 lock_waits;
  guint64 published; /* KVEV_STAT_PUBLISHED_EVENTS in the phase */
  guint64 dropped;
  gint64 ns;
  WaitCounts waits; /* of the probed rounds' calls */
} PacedCounts;

/* Publish calls at rate a second in rounds of ROUND_NS, catching up after
 * a round that came late, every other round's calls probed when probe,
 * until *done is set (when done is not NULL) or for duration_ns. */
static void
paced_calls (BenchStore *store, KvevPublisher *publisher, double rate, gboolean probe,
             gint64 duration_ns, gint *done, PacedCounts *counts)
{
  guint ring = MIN (store->n, BENCH_KEY_RING);
  guint64 published = kvev_publisher_stat (publisher, KVEV_STAT_PUBLISHED_EVENTS);
  guint64 dropped = kvev_publisher_stat (publisher, KVEV_STAT_DROPPED_EVENTS);
  gint64 start = bench_now_ns ();
  guint64 round;

  for (round = 1;; round++)
    {
      gint64 now = bench_now_ns ();
      guint64 owed = (guint64) ((double) (now - start) * rate / 1e9);
      gboolean probed = probe && round % 2 == 0;
      gint64 cpu_start = bench_thread_cpu_ns ();
      guint64 n = 0;
      struct timespec due;
      gint64 due_ns = start + (gint64) round * ROUND_NS;

      for (; counts->calls < owed; counts->calls++, n++)
        counts->lock_waits += store_put (store, publisher, (guint) (counts->calls % ring),
                                         probed ? &counts->waits : NULL)
                              > 0;
      if (!probed)
        {
          counts->cpu_ns += bench_thread_cpu_ns () - cpu_start;
          counts->cpu_calls += n;
        }
      if (done != NULL ? g_atomic_int_get (done) : now - start >= duration_ns)
        break;
      due.tv_sec = due_ns / 1000000000;
      due.tv_nsec = due_ns % 1000000000;
      while (clock_nanosleep (CLOCK_MONOTONIC, TIMER_ABSTIME, &due, NULL) == EINTR)
        ;
    }
  counts->ns = bench_now_ns () - start;
  counts->published = kvev_publisher_stat (publisher, KVEV_STAT_PUBLISHED_EVENTS) - published;
  counts->dropped = kvev_publisher_stat (publisher, KVEV_STAT_DROPPED_EVENTS) - dropped;
}

/* Events a second the worker publishes while the producer calls flat
 * out for duration_ns: the capacity the paced producer offers a share
 * of. */
static double
flat_out_rate (BenchStore *store, KvevPublisher *publisher, gint64 duration_ns, GError **error)
{
  guint ring = MIN (store->n, BENCH_KEY_RING);
  guint64 published = kvev_publisher_stat (publisher, KVEV_STAT_PUBLISHED_EVENTS);
  gint64 start = bench_now_ns ();
  gint64 ns;
  guint64 i;

  for (i = 0; (i & 1023) != 0 || bench_now_ns () - start < duration_ns; i++)
    store_put (store, publisher, (guint) (i % ring), NULL);
  ns = bench_now_ns () - start;
  published = kvev_publisher_stat (publisher, KVEV_STAT_PUBLISHED_EVENTS) - published;
  if (!bench_publisher_drain (publisher, error))
    return NAN;
  return (double) published * 1e9 / (double) MAX (ns, 1);
}

/* One snapshot read on a thread of its own, at pace chunk bytes a second
 * (0: flat out); done is set once it ended, well or not. */
typedef struct
{
  void *context;
  const char *endpoint;
  guint64 objects;
  double pace;
  GThread *thread;
  gint done;
  SnapshotCounts counts;
  GError *error;
} OneReader;

static gpointer
one_reader_main (gpointer data)
{
  OneReader *reader = data;
  void *socket = client_socket_new (reader->context, reader->endpoint, &reader->error);

  if (socket != NULL)
    {
      read_snapshot (socket, reader->endpoint, reader->objects, reader->pace, NULL, &reader->counts,
                     &reader->error);
      zmq_close (socket);
    }
  g_atomic_int_set (&reader->done, TRUE);
  return NULL;
}

static void
one_reader_start (OneReader *reader)
{
  memset (&reader->counts, 0, sizeof reader->counts);
  reader->done = FALSE;
  reader->error = NULL;
  reader->thread = g_thread_new ("bench-slow-reader", one_reader_main, reader);
}

static gboolean
one_reader_join (OneReader *reader, GError **error)
{
  g_thread_join (reader->thread);
  reader->thread = NULL;
  if (reader->error != NULL)
    {
      g_propagate_error (error, reader->error);
      reader->error = NULL;
      return FALSE;
    }
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
          gint64 waited = store_put (store, publisher, (guint) (next % ring), NULL);

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

/* ---- the slow reader, the paced producer, hostile replay peers --------- */

/* Bytes of the hostile figure's replay buffer, and how long its peers
 * ask. */
#define HOSTILE_BUFFER_BYTES (16u * 1024 * 1024)
#define SMOKE_HOSTILE_BUFFER_BYTES (1024u * 1024)
#define HOSTILE_MS 1000
#define SMOKE_HOSTILE_MS 200
/* What one snapshot may hold (kvevents(7), SNAPSHOTS). */
#define SNAPSHOT_HELD_KIB (8.0 * 1024)
/* The walks' pacing as kvevents(7) documents it: the default
 * kv_events_snapshot_duty_percent and the burst after a quiet time. */
#define DEFAULT_DUTY 0.10
#define BURST_NS G_GINT64_CONSTANT (1000000000)

typedef struct
{
  BenchFigure *fast;
  BenchFigure *cpu_idle;
  BenchFigure *cpu_walk;
  BenchFigure *waits;
  BenchFigure *wait_us;
  BenchFigure *peak_small;
  BenchFigure *peak_large;
  BenchFigure *hostile;
  BenchFigure *capacity;
  BenchFigure *rate_idle;
  BenchFigure *rate_busy;
  guint small, large;
} SlowFigures;

/* The walk of the whole store by a publisher whose walks are not paced,
 * its adds probed: once with a fast reader for its speed, then with a
 * reader at a tenth of it while the mutator publishes, probed, at
 * MUTATOR_RATE, after a phase of the same calls without a walk. */
static gboolean
measure_slow_walk (void *context, BenchStore *store, KvevPublisher *publisher, const char *endpoint,
                   gint64 quiet_ns, SlowFigures *f, GError **error)
{
  OneReader reader = { 0 };
  PacedCounts idle = { 0 }, busy = { 0 };
  const WaitCounts *walk = &store->walk_waits;
  double fast;
  gboolean ok;

  reader.context = context;
  reader.endpoint = endpoint;
  reader.objects = store->n;
  g_atomic_int_set (&store->walk_n, (gint) store->n);
  g_atomic_int_set (&store->probing, TRUE);
  one_reader_start (&reader);
  ok = one_reader_join (&reader, error);
  fast = (double) reader.counts.bytes * 1e9 / (double) MAX (reader.counts.ns, 1);
  if (ok)
    {
      paced_calls (store, publisher, MUTATOR_RATE, TRUE, quiet_ns, NULL, &idle);
      memset (&store->walk_waits, 0, sizeof store->walk_waits);
      reader.pace = fast * SLOW_READER_SHARE;
      one_reader_start (&reader);
      paced_calls (store, publisher, MUTATOR_RATE, TRUE, 0, &reader.done, &busy);
      ok = one_reader_join (&reader, error);
    }
  g_atomic_int_set (&store->probing, FALSE);
  if (!ok || !bench_publisher_drain (publisher, error))
    return FALSE;
  bench_figure_add (f->fast, fast / 1e6);
  bench_figure_add_extra (f->fast, "slow_reader_ms", (double) reader.counts.ns / 1e6);
  bench_figure_add (f->cpu_idle, (double) idle.cpu_ns / (double) MAX (idle.cpu_calls, 1));
  bench_figure_add (f->cpu_walk, (double) busy.cpu_ns / (double) MAX (busy.cpu_calls, 1));
  bench_figure_add_extra (f->cpu_walk, "lock_waits", (double) busy.lock_waits);
  bench_figure_add_extra (f->cpu_walk, "calls", (double) busy.calls);
  bench_figure_add (f->waits, (double) (busy.waits.long_waits + walk->long_waits));
  bench_figure_add_extra (
      f->waits, "short_waits",
      (double) (busy.waits.waits + walk->waits - busy.waits.long_waits - walk->long_waits));
  bench_figure_add_extra (f->waits, "mutator_short_waits_without_walk",
                          (double) (idle.waits.waits - idle.waits.long_waits));
  bench_figure_add_extra (f->waits, "mutator_waits", (double) busy.waits.waits);
  bench_figure_add_extra (f->waits, "walk_waits", (double) walk->waits);
  bench_figure_add_extra (f->waits, "mutator_calls_probed", (double) busy.waits.calls);
  bench_figure_add_extra (f->waits, "walk_calls_probed", (double) walk->calls);
  bench_figure_add_extra (f->waits, "preempted", (double) (busy.waits.preempted + walk->preempted));
  bench_figure_add (f->wait_us, (double) (busy.waits.wait_ns + walk->wait_ns) / 1e3);
  return TRUE;
}

/* The paced producer's events a second without snapshots, then while a
 * client asks for snapshots of objects back to back at the default duty,
 * each phase phase_ns; last_walk_ns is when the walks last stopped. */
static gboolean
measure_paced_rate (BenchStore *store, KvevPublisher *publisher, LoopClient *client,
                    gint64 phase_ns, gint64 *last_walk_ns, SlowFigures *f, GError **error)
{
  PacedCounts idle = { 0 }, busy = { 0 };
  double capacity = flat_out_rate (store, publisher, phase_ns / 2, error);
  gint64 burst_ns;
  gboolean ok;

  if (isnan (capacity))
    return FALSE;
  paced_calls (store, publisher, capacity * OFFERED_SHARE, FALSE, phase_ns, NULL, &idle);
  if (!bench_publisher_drain (publisher, error))
    return FALSE;
  /* What the quiet time earned the walks, spent at full speed before the
   * figure: it is the steady share that back-to-back requests cost. */
  burst_ns = MIN ((gint64) ((double) (bench_now_ns () - *last_walk_ns) * DEFAULT_DUTY), BURST_NS);
  if (!loop_client_start (client, error))
    return FALSE;
  g_usleep ((gulong) (burst_ns / (1 - DEFAULT_DUTY) / 1000) + 20000);
  paced_calls (store, publisher, capacity * OFFERED_SHARE, FALSE, phase_ns, NULL, &busy);
  ok = loop_client_stop (client, error);
  *last_walk_ns = bench_now_ns ();
  if (!ok || !bench_publisher_drain (publisher, error))
    return FALSE;
  bench_figure_add (f->capacity, capacity);
  bench_figure_add (f->rate_idle, (double) (idle.published) * 1e9 / (double) MAX (idle.ns, 1));
  bench_figure_add_extra (f->rate_idle, "dropped", (double) idle.dropped);
  bench_figure_add (f->rate_busy, (double) (busy.published) * 1e9 / (double) MAX (busy.ns, 1));
  bench_figure_add_extra (f->rate_busy, "dropped", (double) busy.dropped);
  bench_figure_add_extra (f->rate_busy, "snapshots", (double) client->counts.snapshots);
  return TRUE;
}

static void
add_slow_figures (BenchSection *section, guint small, guint large, SlowFigures *f)
{
  g_autofree char *small_id = g_strdup_printf ("slow%u.peak_rss_growth_kib", small);
  g_autofree char *large_id = g_strdup_printf ("slow%u.peak_rss_growth_kib", large);
  g_autofree char *small_label = g_strdup_printf (
      _ ("%u objects, a reader at a tenth of the walk, peak RSS growth of the publisher"), small);
  g_autofree char *large_label = g_strdup_printf (
      _ ("%u objects, a reader at a tenth of the walk, peak RSS growth of the publisher"), large);
  g_autofree char *hostile_label = g_strdup_printf (
      _ ("%u replay peers asking for everything and reading nothing, peak RSS growth"),
      HOSTILE_PEERS);

  f->small = small;
  f->large = large;
  f->fast = bench_section_add_figure (section, "slow_walk.fast_reader_mb_per_s",
                                      _ ("walk of the store, probed, unpaced, a fast reader"),
                                      "MB/s", NULL);
  f->cpu_idle = bench_section_add_figure (
      section, "mutator.cpu_ns_per_call",
      _ ("mutator at 100000 calls/s, its thread's CPU per call, no walk"), "ns/call", NULL);
  f->cpu_walk = bench_section_add_figure (
      section, "mutator.cpu_ns_per_call.slow_walk",
      _ ("mutator at 100000 calls/s, its thread's CPU per call, walk to a slow reader"), "ns/call",
      f->cpu_idle);
  f->waits = bench_section_add_figure (
      section, "slow_walk.waits",
      _ ("library calls under a store lock that waited 1 ms or more, walk to a slow reader"),
      _ ("calls"), NULL);
  f->wait_us = bench_section_add_figure (section, "slow_walk.wait_us", _ ("time those calls took"),
                                         "us", NULL);
  f->peak_small = bench_section_add_figure (section, small_id, small_label, "KiB", NULL);
  f->peak_large = bench_section_add_figure (section, large_id, large_label, "KiB", f->peak_small);
  f->hostile = bench_section_add_figure (section, "replay_hostile.peak_rss_growth_per_buffer",
                                         hostile_label, _ ("x buffer"), NULL);
  f->capacity = bench_section_add_figure (section, "paced.capacity_events_per_s",
                                          _ ("producer flat out, events published a second"),
                                          "events/s", NULL);
  f->rate_idle = bench_section_add_figure (
      section, "paced.events_per_s",
      /* xgettext:no-c-format */
      _ ("producer paced at 80% of that, events published a second, no walk"), "events/s", NULL);
  f->rate_busy = bench_section_add_figure (
      section, "paced.events_per_s.snapshots_busy",
      /* xgettext:no-c-format */
      _ ("producer paced at 80%, snapshots asked back to back, default duty"), "events/s",
      f->rate_idle);
}

static void
add_slow_notes (SlowFigures *f)
{
  const BenchExtra *mutator = bench_figure_find_extra (f->waits, "mutator_waits");

  if (mutator == NULL)
    return;
  bench_figure_set_note (
      f->waits,
      g_strdup_printf (
          _ ("shorter waits: %.0f (the mutator's without a walk: %.0f); the mutator's %.0f of "
             "%.0f probed calls, the walk's %.0f of %.0f adds waited; %.0f calls preempted"),
          bench_sum (bench_figure_find_extra (f->waits, "short_waits")->values),
          bench_sum (
              bench_figure_find_extra (f->waits, "mutator_short_waits_without_walk")->values),
          bench_sum (mutator->values),
          bench_sum (bench_figure_find_extra (f->waits, "mutator_calls_probed")->values),
          bench_sum (bench_figure_find_extra (f->waits, "walk_waits")->values),
          bench_sum (bench_figure_find_extra (f->waits, "walk_calls_probed")->values),
          bench_sum (bench_figure_find_extra (f->waits, "preempted")->values)));
  bench_figure_set_note (
      f->fast,
      g_strdup_printf (_ ("the slow reader took %.0f ms"),
                       bench_median (bench_figure_find_extra (f->fast, "slow_reader_ms")->values)));
  bench_figure_set_note (
      f->cpu_walk,
      g_strdup_printf (_ ("%.0f calls of %.0f waited for the lock"),
                       bench_sum (bench_figure_find_extra (f->cpu_walk, "lock_waits")->values),
                       bench_sum (bench_figure_find_extra (f->cpu_walk, "calls")->values)));
  bench_figure_set_note (
      f->hostile,
      g_strdup_printf (
          _ ("%.0f KiB over a buffer of %.0f KiB (%.0f KiB with no peer), %.0f requests"),
          bench_median (bench_figure_find_extra (f->hostile, "peak_rss_growth_kib")->values),
          bench_median (bench_figure_find_extra (f->hostile, "buffer_held_bytes")->values) / 1024,
          bench_median (
              bench_figure_find_extra (f->hostile, "no_peer_peak_rss_growth_kib")->values),
          bench_median (bench_figure_find_extra (f->hostile, "requests")->values)));
  bench_figure_set_note (
      f->rate_busy,
      g_strdup_printf (_ ("%.0f snapshots read to the end; %.0f events dropped"),
                       bench_sum (bench_figure_find_extra (f->rate_busy, "snapshots")->values),
                       bench_sum (bench_figure_find_extra (f->rate_busy, "dropped")->values)));
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
  LoopClient paced_client = { 0 };
  SlowFigures slow = { 0 };
  KvevPublisher *slow_publisher = NULL, *paced_publisher = NULL;
  const char *slow_endpoint = NULL;
  /* The paced publisher starts with its burst, as after a quiet time. */
  gint64 last_walk_ns = G_MININT64 / 2;
  gint64 paced_ns = (gint64) settings->duration_ms * 3 * 1000000;
  gint64 quiet_ns = (gint64) settings->duration_ms * 5 * 1000000;
  guint slow_runs = MIN (settings->runs, SLOW_RUNS);
  double walk_bytes_per_s = NAN;
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
  add_slow_figures (section, sizes[0], sizes[n_sizes - 1], &slow);
  bench_section_set_info (section, "store_locks", SHARDS);
  bench_section_set_info (section, "hot_walk_objects", hot_objects);
  bench_section_set_info (section, "mutator_calls_per_s", MUTATOR_RATE);
  bench_section_set_info (section, "slow_runs", slow_runs);

  bench_progress (settings, _ ("snapshot: building a store of %u objects"),
                  MAX (max_objects, hot_objects));
  store = store_new (settings->key_len, MAX (max_objects, hot_objects));
  publisher = snapshot_publisher_new (settings->tmp_dir, "snapshot", store, NULL, error);
  if (publisher == NULL)
    {
      store_free (store);
      return FALSE;
    }
  endpoint = g_strdup (kvev_publisher_get_snapshot_endpoint (publisher));
  /* Not paced, so that its walks wait for the slow reader alone; and the
   * default duty for the paced producer, a publisher of its own whose
   * burst is known. */
  slow_publisher = snapshot_publisher_new (settings->tmp_dir, "snapshot-slow", store, "100", error);
  if (slow_publisher != NULL)
    paced_publisher
        = snapshot_publisher_new (settings->tmp_dir, "snapshot-paced", store, NULL, error);
  if (paced_publisher == NULL)
    {
      if (slow_publisher != NULL)
        kvev_publisher_free (slow_publisher);
      kvev_publisher_free (publisher);
      store_free (store);
      return FALSE;
    }
  slow_endpoint = kvev_publisher_get_snapshot_endpoint (slow_publisher);
  context = zmq_ctx_new ();
  socket = client_socket_new (context, endpoint, error);
  ok = socket != NULL;
  client.context = context;
  client.endpoint = endpoint;
  client.objects = hot_objects;
  paced_client.context = context;
  paced_client.endpoint = kvev_publisher_get_snapshot_endpoint (paced_publisher);
  paced_client.objects = hot_objects;

  /* Warm: the store's pages and the publisher's first chunks. */
  if (ok)
    {
      SnapshotCounts warm = { 0 };

      g_atomic_int_set (&store->walk_n, (gint) hot_objects);
      ok = read_snapshot (socket, endpoint, hot_objects, 0, NULL, &warm, error);
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
          ok = read_snapshot (socket, endpoint, sizes[s], 0, NULL, &counts, error);
          if (!ok)
            break;
          bench_figure_add (walks[s].ms, (double) counts.ns / 1e6);
          bench_figure_add (walks[s].rate, (double) sizes[s] * 1e9 / (double) MAX (counts.ns, 1));
          bench_figure_add_extra (walks[s].ms, "chunks", (double) counts.chunks);
          bench_figure_add_extra (walks[s].ms, "bytes", (double) counts.bytes);
          walk_bytes_per_s = (double) counts.bytes * 1e9 / (double) MAX (counts.ns, 1);
        }
      for (s = 0; ok && s < n_sizes; s++)
        {
          ChildResult child = { 0 };

          ok = run_child (settings, context, sizes[s], 0, &child, error);
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

      g_atomic_int_set (&store->walk_n, (gint) hot_objects);
      ok = measure_paced_rate (store, paced_publisher, &paced_client, paced_ns, &last_walk_ns,
                               &slow, error);
      if (ok && run < slow_runs)
        ok = measure_slow_walk (context, store, slow_publisher, slow_endpoint, quiet_ns, &slow,
                                error);
      /* A tenth of the unprobed walk of the largest size, this run's. */
      if (ok && run < slow_runs)
        {
          ChildResult small = { 0 }, large = { 0 };

          ok = run_child (settings, context, slow.small, walk_bytes_per_s * SLOW_READER_SHARE,
                          &small, error)
               && run_child (settings, context, slow.large, walk_bytes_per_s * SLOW_READER_SHARE,
                             &large, error);
          if (ok)
            {
              bench_figure_add (slow.peak_small, small.peak_growth_kib);
              bench_figure_add (slow.peak_large, large.peak_growth_kib);
            }
        }
      if (ok && run < slow_runs)
        {
          guint buffer = settings->smoke ? SMOKE_HOSTILE_BUFFER_BYTES : HOSTILE_BUFFER_BYTES;
          HostileResult hostile = { 0 }, alone = { 0 };

          /* The same roll with no peer: what publishing costs anyway. */
          ok = run_hostile_child (settings, context, buffer, 0, 0, &alone, error)
               && run_hostile_child (settings, context, buffer,
                                     settings->smoke ? SMOKE_HOSTILE_MS : HOSTILE_MS, HOSTILE_PEERS,
                                     &hostile, error);
          if (ok)
            {
              bench_figure_add (slow.hostile, hostile.peak_growth_kib * 1024 / buffer);
              bench_figure_add_extra (slow.hostile, "peak_rss_growth_kib", hostile.peak_growth_kib);
              bench_figure_add_extra (slow.hostile, "no_peer_peak_rss_growth_kib",
                                      alone.peak_growth_kib);
              bench_figure_add_extra (slow.hostile, "buffer_held_bytes", (double) hostile.held);
              bench_figure_add_extra (slow.hostile, "requests", (double) hostile.asked);
            }
        }
    }

  if (ok)
    {
      for (s = 0; s < n_sizes; s++)
        add_walk_note (walks[s].ms);
      bench_figure_set_note (walks[0].peak,
                             g_strdup (_ ("VmHWM reset after the store was built, minus the RSS "
                                          "before the request, in a fresh process")));
      add_call_notes (idle, busy, dropped);
      add_slow_notes (&slow);
    }

  if (socket != NULL)
    zmq_close (socket);
  kvev_publisher_free (paced_publisher);
  kvev_publisher_free (slow_publisher);
  kvev_publisher_free (publisher);
  zmq_ctx_term (context);
  store_free (store);
  return ok;
}
