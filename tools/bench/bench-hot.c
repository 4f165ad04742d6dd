/* bench-hot.c: the hot path, what a master pays per publish call while it
 * holds its object locks.
 *
 * Producer threads make rounds of calls; each thread times its own round,
 * so a figure is the time a caller sees per call.  Between rounds (not
 * timed) the main thread brings the queue back to the state the mode
 * measures:
 *   running  the worker runs; after each round the queue is flushed, so
 *            the worker keeps up and every call takes the accept path;
 *   held     the worker is held (kvev_queue_hold): pure enqueue;
 *   full     the worker is held and the queue kept at capacity: every
 *            call drops the oldest events (the drop path).
 * Each mode has its baseline, measured just before in the same run with
 * the same producers: a bare GAsyncQueue push of a malloc()ed 128-byte
 * item, popped and freed by another thread (running) or left queued
 * (held), and a bare drop-oldest push (full).
 *
 * Only the running mode is the shipped library's alone: holding the
 * worker takes the testing build's seam (settings->hold), so kvevents-bench
 * measures the running mode (bench_hot ()) and kvevents-bench-internal
 * the held and full ones (bench_hot_held ()), in the same section.
 *
 * What replay costs the caller is measured in the running mode, where
 * the worker keeps every message for replay: stored cpu calls on a
 * second publisher with kv_events_replay_endpoint on ipc:// and its
 * buffer full (bench-replay.h), with no replay client, in the same
 * slices as the calls on the publisher without replay they are compared
 * with, and with a client replaying the whole buffer in a loop
 * (bench-replay-client.h), in one block as long as the slices together,
 * right after them.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include "bench-replay.h"
#include "bench-replay-client.h"
#include "bench-sections.h"
#include "bench-stats.h"

#include <stdlib.h>
#include <string.h>
#include <glib/gi18n.h>

#define MAX_PRODUCERS 2
#define BARE_ITEM_SIZE 128
#define QUEUE_CAPACITY 65536

typedef enum
{
  OP_BARE_PUSH,
  OP_BARE_DROP,
  OP_STORED_CPU,
  OP_STORED_BOTH,
  OP_DELTA,
} HotOp;

typedef enum
{
  MODE_RUNNING,
  MODE_HELD,
  MODE_FULL,
} HotMode;

typedef struct
{
  GMutex lock;
  GCond cond;
  guint parties;
  guint waiting;
  guint generation;
} Barrier;

typedef struct
{
  HotOp op;
  HotMode mode;
  guint producers;
  guint calls;    /* per producer per round */
  guint capacity; /* of the publisher's queue and the bare drop-oldest one */
  KvevPublisher *publisher;
  BenchHoldFunc hold; /* for the held and full modes */
  GAsyncQueue *bare;
  guint64 bare_depth;    /* under the bare queue's lock */
  guint64 bare_consumed; /* atomic */
  const char *keys;
  guint key_len;
  Barrier start;
  Barrier done;
  gboolean quit;
  gboolean warming; /* the first round of a run is not counted */
  gint64 ns[MAX_PRODUCERS];
  gint64 cpu_ns[MAX_PRODUCERS]; /* the time the thread ran, of ns */
  guint64 n[MAX_PRODUCERS];
} HotJob;

typedef struct
{
  HotJob *job;
  guint index;
} Producer;

/* The consumer's signal to stop; never freed. */
static char stop_item;

static void
barrier_init (Barrier *barrier, guint parties)
{
  g_mutex_init (&barrier->lock);
  g_cond_init (&barrier->cond);
  barrier->parties = parties;
  barrier->waiting = 0;
  barrier->generation = 0;
}

static void
barrier_clear (Barrier *barrier)
{
  g_mutex_clear (&barrier->lock);
  g_cond_clear (&barrier->cond);
}

static void
barrier_wait (Barrier *barrier)
{
  guint generation;

  g_mutex_lock (&barrier->lock);
  generation = barrier->generation;
  if (++barrier->waiting == barrier->parties)
    {
      barrier->waiting = 0;
      barrier->generation++;
      g_cond_broadcast (&barrier->cond);
    }
  else
    {
      while (generation == barrier->generation)
        g_cond_wait (&barrier->cond, &barrier->lock);
    }
  g_mutex_unlock (&barrier->lock);
}

static guint
events_per_call (HotOp op)
{
  return op == OP_STORED_BOTH ? 2 : 1;
}

static gpointer
bare_item_new (guint64 i)
{
  gpointer item = malloc (BARE_ITEM_SIZE);

  if (item == NULL)
    g_error ("out of memory");
  /* Touch it, as an event is written once it is allocated. */
  memcpy (item, &i, sizeof i);
  return item;
}

/* The calls themselves: nothing here but the call, a key from the ring
 * and the loop. */
static void
do_calls (HotJob *job, guint64 first, guint count)
{
  KvevPublisher *publisher = job->publisher;
  GAsyncQueue *bare = job->bare;
  const char *keys = job->keys;
  gsize key_len = job->key_len;
  guint64 i;

  switch (job->op)
    {
    case OP_STORED_CPU:
      for (i = first; i < first + count; i++)
        kvev_publish_stored (publisher, BENCH_TENANT, keys + key_len * (i % BENCH_KEY_RING),
                             (gssize) key_len, NULL, KVEV_MEDIA_CPU);
      break;
    case OP_STORED_BOTH:
      for (i = first; i < first + count; i++)
        kvev_publish_stored (publisher, BENCH_TENANT, keys + key_len * (i % BENCH_KEY_RING),
                             (gssize) key_len, NULL, KVEV_MEDIA_CPU | KVEV_MEDIA_DISK);
      break;
    case OP_DELTA:
      /* Eviction from memory: cpu|disk -> disk, one removed event. */
      for (i = first; i < first + count; i++)
        kvev_publish_delta (publisher, BENCH_TENANT, keys + key_len * (i % BENCH_KEY_RING),
                            (gssize) key_len, NULL, KVEV_MEDIA_CPU | KVEV_MEDIA_DISK,
                            KVEV_MEDIA_DISK);
      break;
    case OP_BARE_PUSH:
      for (i = first; i < first + count; i++)
        g_async_queue_push (bare, bare_item_new (i));
      break;
    case OP_BARE_DROP:
    default:
      for (i = first; i < first + count; i++)
        {
          gpointer item = bare_item_new (i);

          g_async_queue_lock (bare);
          if (job->bare_depth >= job->capacity)
            {
              free (g_async_queue_try_pop_unlocked (bare));
              job->bare_depth--;
            }
          g_async_queue_push_unlocked (bare, item);
          job->bare_depth++;
          g_async_queue_unlock (bare);
        }
      break;
    }
}

static gpointer
producer_main (gpointer data)
{
  Producer *producer = data;
  HotJob *job = producer->job;
  guint64 next = (guint64) producer->index * (BENCH_KEY_RING / MAX_PRODUCERS);

  for (;;)
    {
      gint64 start, cpu_start;

      barrier_wait (&job->start);
      if (job->quit)
        break;
      start = bench_now_ns ();
      cpu_start = bench_thread_cpu_ns ();
      do_calls (job, next, job->calls);
      if (!job->warming)
        {
          job->ns[producer->index] += bench_now_ns () - start;
          job->cpu_ns[producer->index] += bench_thread_cpu_ns () - cpu_start;
          job->n[producer->index] += job->calls;
        }
      next += job->calls;
      barrier_wait (&job->done);
    }
  return NULL;
}

static gpointer
consumer_main (gpointer data)
{
  HotJob *job = data;

  for (;;)
    {
      gpointer item = g_async_queue_pop (job->bare);

      if (item == &stop_item)
        break;
      free (item);
      __atomic_add_fetch (&job->bare_consumed, 1, __ATOMIC_RELEASE);
    }
  return NULL;
}

static void
bare_drain (HotJob *job)
{
  gpointer item;

  while ((item = g_async_queue_try_pop (job->bare)) != NULL)
    free (item);
  job->bare_depth = 0;
}

/* Fills a held publisher's queue to capacity, untimed. */
static void
fill_publisher (HotJob *job)
{
  guint64 i = 0;

  while (bench_queue_depth (job->publisher) < job->capacity)
    {
      kvev_publish_stored (job->publisher, BENCH_TENANT,
                           job->keys + (gsize) job->key_len * (i % BENCH_KEY_RING), job->key_len,
                           NULL, KVEV_MEDIA_CPU);
      i++;
    }
}

static guint64
total_calls_so_far (const HotJob *job)
{
  return job->n[0];
}

/* Measures one figure for one slice of a run, adding the time, the time
 * they ran (to *cpu_ns, when not NULL) and the calls of its producers to
 * *ns and *calls; FALSE with error set when the publisher would not
 * drain. */
static gboolean
run_job (HotJob *job, gint64 slice_ns, gint64 *ns, gint64 *cpu_ns, guint64 *calls, guint64 *dropped,
         GError **error)
{
  Producer producers[MAX_PRODUCERS];
  GThread *threads[MAX_PRODUCERS];
  GThread *consumer = NULL;
  gboolean kvev = job->op != OP_BARE_PUSH && job->op != OP_BARE_DROP;
  guint64 dropped_before = 0;
  guint64 pushed = 0;
  gint64 total_ns = 0;
  gint64 total_cpu_ns = 0;
  guint64 total_calls = 0;
  gint64 deadline;
  gboolean ok = TRUE;
  guint i;

  memset (job->ns, 0, sizeof job->ns);
  memset (job->cpu_ns, 0, sizeof job->cpu_ns);
  memset (job->n, 0, sizeof job->n);
  job->quit = FALSE;
  job->warming = TRUE;
  barrier_init (&job->start, job->producers + 1);
  barrier_init (&job->done, job->producers + 1);

  /* The state the mode measures. */
  if (kvev)
    {
      dropped_before = kvev_publisher_stat (job->publisher, KVEV_STAT_DROPPED_EVENTS);
      if (job->mode != MODE_RUNNING)
        job->hold (job->publisher, TRUE);
      if (job->mode == MODE_FULL)
        fill_publisher (job);
    }
  else
    {
      job->bare = g_async_queue_new ();
      job->bare_depth = 0;
      job->bare_consumed = 0;
      if (job->mode == MODE_RUNNING)
        consumer = g_thread_new ("bench-consumer", consumer_main, job);
      if (job->mode == MODE_FULL)
        {
          for (i = 0; i < job->capacity; i++)
            g_async_queue_push (job->bare, bare_item_new (i));
          job->bare_depth = job->capacity;
        }
    }

  for (i = 0; i < job->producers; i++)
    {
      producers[i].job = job;
      producers[i].index = i;
      threads[i] = g_thread_new ("bench-producer", producer_main, &producers[i]);
    }

  deadline = bench_now_ns () + slice_ns;
  do
    {
      guint64 round_events = (guint64) job->calls * job->producers * events_per_call (job->op);

      /* Room for the round, outside the timing. */
      if (job->mode == MODE_HELD)
        {
          if (kvev && bench_queue_depth (job->publisher) + round_events > job->capacity)
            {
              job->hold (job->publisher, FALSE);
              if (!(ok = bench_publisher_drain (job->publisher, error)))
                break;
              job->hold (job->publisher, TRUE);
            }
          else if (!kvev && job->bare_depth + round_events > job->capacity)
            bare_drain (job);
        }

      barrier_wait (&job->start);
      barrier_wait (&job->done);
      job->warming = FALSE;
      pushed += round_events;
      if (!kvev && job->mode == MODE_HELD)
        job->bare_depth += round_events;

      /* Back to an idle worker that keeps up. */
      if (job->mode == MODE_RUNNING)
        {
          if (kvev && !(ok = bench_publisher_drain (job->publisher, error)))
            break;
          while (!kvev && __atomic_load_n (&job->bare_consumed, __ATOMIC_ACQUIRE) < pushed)
            g_usleep (20);
        }
    }
  while (bench_now_ns () < deadline || total_calls_so_far (job) == 0);

  job->quit = TRUE;
  barrier_wait (&job->start);
  for (i = 0; i < job->producers; i++)
    {
      g_thread_join (threads[i]);
      total_ns += job->ns[i];
      total_cpu_ns += job->cpu_ns[i];
      total_calls += job->n[i];
    }

  if (kvev)
    {
      if (job->mode != MODE_RUNNING)
        job->hold (job->publisher, FALSE);
      if (ok)
        ok = bench_publisher_drain (job->publisher, error);
      *dropped += kvev_publisher_stat (job->publisher, KVEV_STAT_DROPPED_EVENTS) - dropped_before;
    }
  else
    {
      if (consumer != NULL)
        {
          g_async_queue_push (job->bare, &stop_item);
          g_thread_join (consumer);
        }
      bare_drain (job);
      g_clear_pointer (&job->bare, g_async_queue_unref);
    }
  barrier_clear (&job->start);
  barrier_clear (&job->done);

  *ns += total_ns;
  if (cpu_ns != NULL)
    *cpu_ns += total_cpu_ns;
  *calls += total_calls;
  return ok;
}

typedef struct
{
  HotOp op;
  const char *id;
} OpName;

static const OpName op_names[] = {
  { OP_STORED_CPU, "stored_cpu" },
  { OP_STORED_BOTH, "stored_both" },
  { OP_DELTA, "delta_evict" },
};

static const char *const mode_ids[] = { "running", "held", "full" };
static const char *const baseline_ids[] = { "bare_push_pop", "bare_push", "bare_drop" };

static char *
op_label (HotOp op, HotMode mode, guint producers)
{
  const char *what;
  const char *how;

  switch (op)
    {
    case OP_STORED_CPU:
      what = _ ("stored cpu");
      break;
    case OP_STORED_BOTH:
      what = _ ("stored cpu|disk");
      break;
    case OP_DELTA:
      what = _ ("delta cpu|disk -> disk");
      break;
    case OP_BARE_PUSH:
      what
          = mode == MODE_RUNNING ? _ ("bare push, popped and freed") : _ ("bare push, left queued");
      break;
    case OP_BARE_DROP:
    default:
      what = _ ("bare drop-oldest push");
      break;
    }
  how = mode == MODE_RUNNING ? _ ("worker running")
        : mode == MODE_HELD  ? _ ("worker held")
                             : _ ("queue full");
  return g_strdup_printf (ngettext ("%s, %u producer, %s", "%s, %u producers, %s", producers), what,
                          producers, how);
}

/* The replay variants of stored_cpu in the running mode. */
typedef enum
{
  REPLAY_IDLE,
  REPLAY_BUSY,
  N_REPLAY_VARIANTS,
} ReplayVariant;

static const char *const replay_ids[] = { "replay_idle", "replay_busy" };

static char *
replay_label (ReplayVariant variant, guint producers)
{
  g_autofree char *call = op_label (OP_STORED_CPU, MODE_RUNNING, producers);

  return g_strdup_printf (variant == REPLAY_IDLE ? _ ("%s, replay on, no client")
                                                 : _ ("%s, replay on, full replays in a loop"),
                          call);
}

/* A publisher with replay on ipc:// and its buffer full, and a paused
 * client of it. */
static gboolean
replay_open (const BenchSettings *settings, guint capacity, KvevPublisher **publisher,
             BenchReplayClient **client, guint *buffer_messages, GError **error)
{
  g_autofree char *endpoint = g_strdup_printf ("ipc://%s/hot-replay-live", settings->tmp_dir);
  g_autofree char *replay_endpoint = g_strdup_printf ("ipc://%s/hot-replay", settings->tmp_dir);
  g_autoptr (KvevConfig) config = bench_config_new (endpoint, capacity, TRUE);

  if (!bench_config_set_replay (config, replay_endpoint,
                                settings->smoke ? BENCH_REPLAY_SMOKE_MESSAGES : 0, error))
    return FALSE;
  *buffer_messages = bench_config_replay_messages (config);
  *publisher = kvev_publisher_new (config, error);
  if (*publisher == NULL)
    return FALSE;
  bench_progress (settings, _ ("hot path: filling a replay buffer of %u messages"),
                  *buffer_messages);
  if (!bench_replay_fill (*publisher, settings->key_len, *buffer_messages, capacity, NULL, error))
    return FALSE;
  *client = bench_replay_client_new (kvev_publisher_get_replay_endpoint (*publisher));
  return TRUE;
}

/* One slice of a replay variant: the calls of stored_cpu on the replay
 * publisher, the client replaying throughout when the variant has it. */
static gboolean
run_replay_job (HotJob *job, ReplayVariant variant, BenchReplayClient *client, gint64 slice_ns,
                gint64 *ns, guint64 *calls, guint64 *dropped, BenchReplayCounts *counts,
                GError **error)
{
  gboolean ok;

  if (variant == REPLAY_BUSY && !bench_replay_client_resume (client, error))
    return FALSE;
  ok = run_job (job, slice_ns, ns, NULL, calls, dropped, error);
  if (variant == REPLAY_BUSY)
    ok = bench_replay_client_pause (client, counts, ok ? error : NULL) && ok;
  return ok;
}

/* The modes first to last, each group of producers and mode with its
 * baseline; the running mode with its replay variants. */
static gboolean
hot_modes (BenchReport *report, const BenchSettings *settings, HotMode first, HotMode last,
           GError **error)
{
  g_autofree char *endpoint = g_strdup_printf ("ipc://%s/hot", settings->tmp_dir);
  guint capacity = settings->smoke ? 4096 : QUEUE_CAPACITY;
  g_autoptr (KvevConfig) config = bench_config_new (endpoint, capacity, TRUE);
  g_autofree char *keys = bench_make_keys (settings->key_len, BENCH_KEY_RING);
  BenchFigure *figures[MAX_PRODUCERS][3][1 + G_N_ELEMENTS (op_names)];
  BenchFigure *replay_figures[MAX_PRODUCERS][N_REPLAY_VARIANTS];
  BenchSection *section;
  gboolean replay = first == MODE_RUNNING;
  KvevPublisher *publisher;
  KvevPublisher *replay_publisher = NULL;
  BenchReplayClient *client = NULL;
  guint buffer_messages = 0;
  HotJob job = { 0 };
  gboolean ok = TRUE;
  guint run, p, mode, o, v, slices;
  gint64 slice_ns;

  publisher = kvev_publisher_new (config, error);
  if (publisher == NULL)
    return FALSE;

  section = bench_report_add_section (report, "hot",
                                      _ ("Hot path: ns per kvev_publish_stored / _delta call, "
                                         "as the calling thread sees it (lower is better); "
                                         "baselines: a bare GAsyncQueue"));
  for (p = 0; p < MAX_PRODUCERS; p++)
    for (mode = first; mode <= last; mode++)
      {
        HotOp bare_op = mode == MODE_FULL ? OP_BARE_DROP : OP_BARE_PUSH;
        g_autofree char *id = g_strdup_printf ("%s.p%u", baseline_ids[mode], p + 1);
        g_autofree char *label = op_label (bare_op, (HotMode) mode, p + 1);
        BenchFigure *baseline = bench_section_add_figure (section, id, label, "ns/call", NULL);

        figures[p][mode][0] = baseline;
        for (o = 0; o < G_N_ELEMENTS (op_names); o++)
          {
            g_autofree char *op_id
                = g_strdup_printf ("%s.p%u.%s", op_names[o].id, p + 1, mode_ids[mode]);
            g_autofree char *op_text = op_label (op_names[o].op, (HotMode) mode, p + 1);

            figures[p][mode][o + 1]
                = bench_section_add_figure (section, op_id, op_text, "ns/call", baseline);
          }
        /* Against stored_cpu of the same group: what replay adds. */
        for (v = 0; mode == MODE_RUNNING && v < N_REPLAY_VARIANTS; v++)
          {
            g_autofree char *replay_id
                = g_strdup_printf ("stored_cpu.p%u.running.%s", p + 1, replay_ids[v]);
            g_autofree char *replay_text = replay_label ((ReplayVariant) v, p + 1);

            replay_figures[p][v] = bench_section_add_figure (section, replay_id, replay_text,
                                                             "ns/call", figures[p][mode][1]);
          }
      }

  if (replay)
    {
      ok = replay_open (settings, capacity, &replay_publisher, &client, &buffer_messages, error);
      if (ok)
        bench_section_set_info (section, "replay_buffer_messages", buffer_messages);
    }

  job.hold = settings->hold;
  job.keys = keys;
  job.key_len = settings->key_len;
  job.calls = settings->smoke ? 256 : 4096;
  job.capacity = capacity;
  slices = settings->smoke ? 1 : 5;
  slice_ns = (gint64) settings->duration_ms * 1000000 / slices;

  /* Within a run, each group (producers, mode) measures its baseline and
   * its figures in turn, in short slices, so that whatever else the
   * machine does falls on all of them alike. */
  for (run = 0; ok && run < settings->runs; run++)
    {
      bench_progress (settings, _ ("hot path, run %u of %u"), run + 1, settings->runs);
      for (p = 0; ok && p < MAX_PRODUCERS; p++)
        for (mode = first; ok && mode <= last; mode++)
          {
            gint64 ns[1 + G_N_ELEMENTS (op_names)] = { 0 };
            gint64 cpu_ns[1 + G_N_ELEMENTS (op_names)] = { 0 };
            guint64 calls[1 + G_N_ELEMENTS (op_names)] = { 0 };
            guint64 dropped[1 + G_N_ELEMENTS (op_names)] = { 0 };
            gint64 replay_ns[N_REPLAY_VARIANTS] = { 0 };
            guint64 replay_calls[N_REPLAY_VARIANTS] = { 0 };
            guint64 replay_dropped[N_REPLAY_VARIANTS] = { 0 };
            BenchReplayCounts counts = { 0 };
            guint slice;

            job.mode = (HotMode) mode;
            job.producers = p + 1;
            for (slice = 0; ok && slice < slices; slice++)
              {
                job.publisher = publisher;
                for (o = 0; ok && o <= G_N_ELEMENTS (op_names); o++)
                  {
                    job.op = o == 0 ? (mode == MODE_FULL ? OP_BARE_DROP : OP_BARE_PUSH)
                                    : op_names[o - 1].op;
                    ok = run_job (&job, slice_ns, &ns[o], &cpu_ns[o], &calls[o], &dropped[o],
                                  error);
                  }
                job.publisher = replay_publisher;
                job.op = OP_STORED_CPU;
                if (ok && mode == MODE_RUNNING)
                  ok = run_replay_job (&job, REPLAY_IDLE, client, slice_ns, &replay_ns[REPLAY_IDLE],
                                       &replay_calls[REPLAY_IDLE], &replay_dropped[REPLAY_IDLE],
                                       &counts, error);
              }
            /* One block of all the slices, right after them: the client
             * reads every replay to its end before it stops, which takes
             * longer than a slice. */
            if (ok && mode == MODE_RUNNING)
              ok = run_replay_job (&job, REPLAY_BUSY, client, slice_ns * slices,
                                   &replay_ns[REPLAY_BUSY], &replay_calls[REPLAY_BUSY],
                                   &replay_dropped[REPLAY_BUSY], &counts, error);
            for (o = 0; ok && o <= G_N_ELEMENTS (op_names); o++)
              {
                BenchFigure *figure = figures[p][mode][o];

                bench_figure_add (figure, (double) ns[o] / (double) MAX (calls[o], 1));
                bench_figure_add_extra (figure, "thread_cpu_ns_per_call",
                                        (double) cpu_ns[o] / (double) MAX (calls[o], 1));
                if (o > 0)
                  bench_figure_add_extra (figure, "dropped", (double) dropped[o]);
              }
            for (v = 0; ok && mode == MODE_RUNNING && v < N_REPLAY_VARIANTS; v++)
              {
                BenchFigure *figure = replay_figures[p][v];

                bench_figure_add (figure,
                                  (double) replay_ns[v] / (double) MAX (replay_calls[v], 1));
                bench_figure_add_extra (figure, "dropped", (double) replay_dropped[v]);
                if (v == REPLAY_BUSY)
                  bench_replay_add_counts (figure, &counts);
              }
          }
    }

  /* A worker that keeps up drops nothing: say so where it did.  With
   * more threads than CPUs a call takes longer than its thread runs:
   * the difference is the time it waited for a CPU. */
  for (p = 0; ok && p < MAX_PRODUCERS; p++)
    {
      for (mode = first; mode <= last; mode++)
        for (o = 0; o <= G_N_ELEMENTS (op_names); o++)
          {
            BenchFigure *figure = figures[p][mode][o];
            const BenchExtra *dropped_extra = bench_figure_find_extra (figure, "dropped");
            double dropped = dropped_extra != NULL ? bench_sum (dropped_extra->values) : 0;
            double ran
                = bench_median (bench_figure_find_extra (figure, "thread_cpu_ns_per_call")->values);

            if (mode != MODE_FULL && dropped > 0)
              bench_figure_set_note (
                  figure, g_strdup_printf (_ ("the thread ran %.0f ns a call; %.0f events dropped"),
                                           ran, dropped));
            else
              bench_figure_set_note (figure,
                                     g_strdup_printf (_ ("the thread ran %.0f ns a call"), ran));
          }
      for (v = 0; replay && v < N_REPLAY_VARIANTS; v++)
        {
          BenchFigure *figure = replay_figures[p][v];
          double dropped = bench_sum (bench_figure_find_extra (figure, "dropped")->values);
          g_autofree char *replayed = v == REPLAY_BUSY ? bench_replay_note (figure) : NULL;
          g_autofree char *drops
              = dropped > 0 ? g_strdup_printf (_ ("%.0f events dropped"), dropped) : NULL;

          if (replayed != NULL || drops != NULL)
            bench_figure_set_note (figure, g_strjoin ("; ", replayed != NULL ? replayed : drops,
                                                      replayed != NULL ? drops : NULL, NULL));
        }
    }

  bench_replay_client_free (client);
  g_clear_pointer (&replay_publisher, kvev_publisher_free);
  kvev_publisher_free (publisher);
  return ok;
}

gboolean
bench_hot (BenchReport *report, const BenchSettings *settings, GError **error)
{
  return hot_modes (report, settings, MODE_RUNNING, MODE_RUNNING, error);
}

gboolean
bench_hot_held (BenchReport *report, const BenchSettings *settings, GError **error)
{
  g_return_val_if_fail (settings->hold != NULL, FALSE);

  return hot_modes (report, settings, MODE_HELD, MODE_FULL, error);
}
