/* bench-net.c: end to end and latency, through a subscriber in another
 * process (bench-phase.h says how phases are run through it).
 *
 * The subscriber connects to three sockets: the publisher's, and two raw
 * ZeroMQ ones that send pre-encoded payloads of the same size and event
 * count (the baselines): a PUB socket that drops at the high-water mark,
 * and an XPUB with ZMQ_XPUB_NODROP whose sender waits for a full pipe, as
 * the publisher's worker does with one subscription.  The second is the
 * ceiling the publisher is held to: what ZeroMQ and a decoding subscriber
 * deliver here when nothing is lost; the first delivers less, since what
 * it drops still cost the sender.
 *
 * With the end-to-end section the subscriber listens to a third socket:
 * a second publisher with replay on, over the same transport, its buffer
 * filled before the subscriber connects (bench-replay.h), which one
 * producer drives as tcp.kvev.p1 is driven, once with no replay client
 * and once with a client replaying the whole buffer in a loop
 * (bench-replay-client.h): what replay costs the live stream.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include "bench-paced.h"
#include "bench-phase.h"
#include "bench-replay.h"
#include "bench-replay-client.h"
#include "bench-sections.h"
#include "bench-stats.h"
#include "bench-subscriber.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <glib/gi18n.h>
#include <zmq.h>

#define BATCH_EVENTS BENCH_BATCH_EVENTS
#define QUEUE_CAPACITY BENCH_QUEUE_CAPACITY

typedef struct
{
  /* The subscriber, and the raw baselines' payload: BATCH_EVENTS events,
   * pre-encoded. */
  BenchNet net;
  /* The raw latency baseline's. */
  BenchStamped *stamped;
} Net;

/* ---- sections ----------------------------------------------------------- */

typedef struct
{
  BenchSource kvev;
  BenchSource raw;        /* PUB: drops at the high-water mark */
  BenchSource raw_nodrop; /* XPUB with ZMQ_XPUB_NODROP: waits */
  BenchSource replay;     /* publisher NULL without the end-to-end section */
  void *raw_context;
  KvevConfig *config;
  KvevConfig *replay_config;
  BenchReplayClient *client;
  guint replay_messages;
} Transport;

static void
transport_close (Transport *t)
{
  bench_replay_client_free (t->client);
  bench_source_close (&t->replay);
  bench_source_close (&t->kvev);
  bench_source_close (&t->raw);
  bench_source_close (&t->raw_nodrop);
  if (t->raw_context != NULL)
    zmq_ctx_term (t->raw_context);
  g_clear_pointer (&t->config, kvev_config_free);
  g_clear_pointer (&t->replay_config, kvev_config_free);
  memset (t, 0, sizeof *t);
}

/* A port of 127.0.0.1 free now.  The replay endpoint needs one of its
 * own: the library refuses a kv_events_replay_endpoint equal to
 * kv_events_bind_endpoint, "tcp://127.0.0.1:*" included. */
static gboolean
free_tcp_port (guint16 *port, GError **error)
{
  struct sockaddr_in address = { 0 };
  socklen_t len = sizeof address;
  int fd = socket (AF_INET, SOCK_STREAM, 0);
  gboolean ok;

  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  ok = fd >= 0 && bind (fd, (struct sockaddr *) &address, sizeof address) == 0
       && getsockname (fd, (struct sockaddr *) &address, &len) == 0;
  if (!ok)
    bench_fail (error, _ ("Cannot find a free port on 127.0.0.1: %s"), g_strerror (errno));
  if (fd >= 0)
    close (fd);
  *port = ntohs (address.sin_port);
  return ok;
}

/* The publisher with replay on, its buffer full, and a paused client. */
static gboolean
transport_open_replay (Transport *t, const BenchSettings *settings, gboolean tcp, GError **error)
{
  g_autofree char *endpoint = tcp ? g_strdup ("tcp://127.0.0.1:*")
                                  : g_strdup_printf ("ipc://%s/e2e-replay-live", settings->tmp_dir);
  g_autofree char *replay_endpoint = NULL;
  guint16 port;

  if (tcp && !free_tcp_port (&port, error))
    return FALSE;
  replay_endpoint = tcp ? g_strdup_printf ("tcp://127.0.0.1:%u", port)
                        : g_strdup_printf ("ipc://%s/e2e-replay", settings->tmp_dir);
  t->replay_config = bench_config_new (endpoint, QUEUE_CAPACITY, TRUE);
  if ((settings->smoke && !kvev_config_set (t->replay_config, "kv_events_send_hwm", "64", error))
      || !bench_config_set_replay (t->replay_config, replay_endpoint,
                                   settings->smoke ? BENCH_REPLAY_SMOKE_MESSAGES : 0, error))
    return FALSE;
  t->replay_messages = bench_config_replay_messages (t->replay_config);
  if (!bench_source_open_publisher (&t->replay, t->replay_config, error))
    return FALSE;
  /* Before any subscriber: nothing to send it, and nothing left over
   * for the phases to count. */
  bench_progress (settings, _ ("end to end: filling a replay buffer of %u messages"),
                  t->replay_messages);
  if (!bench_replay_fill (t->replay.publisher, settings->key_len, t->replay_messages,
                          QUEUE_CAPACITY, NULL, error))
    return FALSE;
  t->client = bench_replay_client_new (kvev_publisher_get_replay_endpoint (t->replay.publisher));
  return TRUE;
}

static gboolean
transport_open (Transport *t, const BenchSettings *settings, gboolean tcp, gboolean replay,
                GError **error)
{
  g_autofree char *kvev_endpoint = tcp ? g_strdup ("tcp://127.0.0.1:*")
                                       : g_strdup_printf ("ipc://%s/e2e-kvev", settings->tmp_dir);
  g_autofree char *raw_endpoint = tcp ? g_strdup ("tcp://127.0.0.1:*")
                                      : g_strdup_printf ("ipc://%s/e2e-raw", settings->tmp_dir);
  g_autofree char *nodrop_endpoint
      = tcp ? g_strdup ("tcp://127.0.0.1:*")
            : g_strdup_printf ("ipc://%s/e2e-raw-nodrop", settings->tmp_dir);
  int hwm;

  memset (t, 0, sizeof *t);
  t->config = bench_config_new (kvev_endpoint, QUEUE_CAPACITY, TRUE);
  /* A smoke run has no time to drain the default high-water mark's worth
   * of flooded messages after every phase. */
  if (settings->smoke && !kvev_config_set (t->config, "kv_events_send_hwm", "64", error))
    return FALSE;
  if (!bench_source_open_publisher (&t->kvev, t->config, error))
    return FALSE;
  hwm = bench_config_hwm (t->config);
  t->raw_context = zmq_ctx_new ();
  return bench_source_open_raw (&t->raw, t->raw_context, raw_endpoint, hwm, FALSE, t->config, error)
         && bench_source_open_raw (&t->raw_nodrop, t->raw_context, nodrop_endpoint, hwm, TRUE,
                                   t->config, error)
         && (!replay || transport_open_replay (t, settings, tcp, error));
}

/* A flat-out phase of one producer on the replay publisher, the client
 * replaying throughout when busy. */
static gboolean
run_replay_phase (Net *net, Transport *t, gboolean busy, guint duration_ms, BenchPhaseResult *r,
                  BenchReplayCounts *counts, GError **error)
{
  gboolean ok;

  if (busy && !bench_replay_client_resume (t->client, error))
    return FALSE;
  ok = bench_phase_run_flat (&net->net, &t->replay, 1, duration_ms, r, error);
  if (busy)
    ok = bench_replay_client_pause (t->client, counts, ok ? error : NULL) && ok;
  return ok;
}

/* The raw baselines' payloads: a batch as the publisher would send it,
 * and batches of 1 to BATCH_EVENTS timed events. */
static void
make_payloads (Net *net, const BenchWire *wire)
{
  bench_net_make_payload (&net->net, wire, BATCH_EVENTS);
  net->stamped = bench_stamped_new (wire, net->net.key_len);
}

static void
free_payloads (Net *net)
{
  g_clear_pointer (&net->net.payload, free);
  g_clear_pointer (&net->stamped, bench_stamped_free);
}

/* How late this machine wakes a thread that slept 100 us: the floor
 * under every latency figure, where each event crosses four threads. */
static void
measure_wake_lateness (BenchSection *section, guint n)
{
  g_autoptr (GArray) late = g_array_sized_new (FALSE, FALSE, sizeof (gint64), n);
  guint i;

  for (i = 0; i < n; i++)
    {
      gint64 due = bench_now_ns () + 100000;
      struct timespec ts = { (time_t) (due / 1000000000), (long) (due % 1000000000) };
      gint64 lateness;

      clock_nanosleep (CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
      lateness = bench_now_ns () - due;
      g_array_append_val (late, lateness);
    }
  bench_sort_ns (late);
  bench_section_set_info (section, "wake_lateness_p50_us", bench_percentile_ns (late, 0.50) / 1e3);
  bench_section_set_info (section, "wake_lateness_p99_us", bench_percentile_ns (late, 0.99) / 1e3);
}

/* One spinning thread per CPU: the gaps between its clock reads are the
 * time its CPU was taken from it. */
typedef struct
{
  gint64 t_end;
  guint over_1ms;
  gint64 longest;
} StallProbe;

static gpointer
stall_probe_main (gpointer data)
{
  StallProbe *probe = data;
  gint64 last = bench_now_ns ();
  gint64 longest = 0;
  guint over_1ms = 0;
  gint64 now;

  /* Locals only: the probes' results share a cache line. */
  do
    {
      now = bench_now_ns ();
      if (now - last > 1000000)
        over_1ms++;
      longest = MAX (longest, now - last);
      last = now;
    }
  while (now < probe->t_end);
  probe->over_1ms = over_1ms;
  probe->longest = longest;
  return NULL;
}

/* How often a busy CPU here stops for over a millisecond, with every CPU
 * busy as in the paced phases.  On a shared host this, not the
 * publisher, can decide a p99: at 50 % of capacity one stop of a few
 * milliseconds in a 300 ms run holds back about its slowest 1 %. */
static void
measure_cpu_stalls (BenchSection *section, guint duration_ms)
{
  guint n = CLAMP (g_get_num_processors (), 1, 16);
  g_autofree StallProbe *probes = g_new0 (StallProbe, n);
  g_autofree GThread **threads = g_new (GThread *, n);
  gint64 t_end = bench_now_ns () + (gint64) duration_ms * 1000000;
  guint over_1ms = 0;
  gint64 longest = 0;
  guint i;

  for (i = 0; i < n; i++)
    {
      probes[i].t_end = t_end;
      threads[i] = g_thread_new ("bench-stalls", stall_probe_main, &probes[i]);
    }
  for (i = 0; i < n; i++)
    {
      g_thread_join (threads[i]);
      over_1ms += probes[i].over_1ms;
      longest = MAX (longest, probes[i].longest);
    }
  bench_section_set_info (section, "cpu_stalls_over_1ms_per_s",
                          over_1ms * 1000.0 / ((double) duration_ms * n));
  bench_section_set_info (section, "cpu_longest_stall_us", longest / 1e3);
}

static const guint loads[] = { 10, 50, 90 };
static const char *const quantile_names[] = { "p50", "p99", "p999" };

/* The quantiles of a paced phase into figures[0..2], with its counts on
 * the p99 figure and the maximum on the p999 one. */
static void
add_latency_result (BenchFigure **figures, const BenchPhaseResult *r)
{
  const BenchSubReport *s = &r->sub[0];
  double dropped = r->offered > s->received ? (double) (r->offered - s->received) : 0;

  /* A phase with no timed event has no quantiles (the subscriber sends
   * -1): not measured, never a latency of -0.001 us that meets a target. */
  bench_figure_add (figures[0], s->n_latencies > 0 ? s->p50 / 1e3 : NAN);
  bench_figure_add (figures[1], s->n_latencies > 0 ? s->p99 / 1e3 : NAN);
  bench_figure_add (figures[2], s->n_latencies > 0 ? s->p999 / 1e3 : NAN);
  bench_figure_add_extra (figures[1], "offered", (double) r->offered);
  bench_figure_add_extra (figures[1], "offered_per_s",
                          (double) r->offered * 1e9 / (double) MAX (r->t_stop - r->t0, 1));
  bench_figure_add_extra (figures[1], "received", (double) s->received);
  bench_figure_add_extra (figures[1], "dropped", dropped);
  bench_figure_add_extra (figures[1], "queue_dropped", (double) r->queue_dropped);
  bench_figure_add_extra (figures[1], "messages", (double) r->messages);
  bench_figure_add_extra (figures[2], "max_us", s->n_latencies > 0 ? s->max / 1e3 : NAN);
}

static void
note_latency (BenchFigure **figures)
{
  const GArray *offered_per_s = bench_figure_find_extra (figures[1], "offered_per_s")->values;
  const GArray *offered = bench_figure_find_extra (figures[1], "offered")->values;
  const GArray *dropped = bench_figure_find_extra (figures[1], "dropped")->values;
  const GArray *max_us = bench_figure_find_extra (figures[2], "max_us")->values;
  double messages = bench_sum (bench_figure_find_extra (figures[1], "messages")->values);
  g_autofree char *note = g_strdup_printf (_ ("%.3fM events/s offered; %.0f of %.0f dropped"),
                                           bench_median (offered_per_s) / 1e6, bench_sum (dropped),
                                           bench_sum (offered));

  if (messages > 0)
    bench_figure_set_note (figures[1], g_strdup_printf (_ ("%s; %.1f events a message"), note,
                                                        bench_sum (offered) / messages));
  else
    bench_figure_set_note (figures[1], g_steal_pointer (&note));
  bench_figure_set_note (figures[2], g_strdup_printf (_ ("max %.0f us"), bench_max (max_us)));
}

/* A paced phase at rate events/s. */
static gboolean
run_paced (Net *net, BenchSource *source, double rate, guint duration_ms, BenchPhaseResult *r,
           GError **error)
{
  BenchPace pace = { rate, net->stamped };

  return bench_phase_run (&net->net, source, bench_produce_paced, &pace, duration_ms, r, error);
}

gboolean
bench_net (BenchReport *report, const BenchSettings *settings, gboolean e2e, gboolean latency,
           GError **error)
{
  g_autofree char *keys = bench_make_keys (settings->key_len, BENCH_KEY_RING);
  BenchSection *e2e_section = NULL;
  BenchSection *lat_section = NULL;
  BenchFigure *lat_figures[G_N_ELEMENTS (loads)][3];
  BenchFigure *lat_raw[G_N_ELEMENTS (loads)][3];
  Net net = { 0 };
  guint e2e_ms = settings->duration_ms * 3;
  gboolean ok = TRUE;
  guint tr;

  net.net.settings = settings;
  net.net.keys = keys;
  net.net.key_len = settings->key_len;
  net.net.key_ring = BENCH_KEY_RING;

  if (e2e)
    e2e_section = bench_report_add_section (
        report, "e2e",
        _ ("End to end: events/s received and decoded by a subscriber in another "
           "process (higher is better)"));
  if (latency)
    {
      guint l;

      lat_section = bench_report_add_section (
          report, "latency",
          _ ("Latency over TCP: publish call to the subscriber's receipt, microseconds, paced "
             "producer at a share of the measured capacity (lower is better)"));
      for (l = 0; l < G_N_ELEMENTS (loads); l++)
        {
          guint q;

          for (q = 0; q < 3; q++)
            {
              g_autofree char *raw_id
                  = g_strdup_printf ("tcp.load%u.raw.%s_us", loads[l], quantile_names[q]);
              g_autofree char *id
                  = g_strdup_printf ("tcp.load%u.%s_us", loads[l], quantile_names[q]);
              /* TRANSLATORS: p50/p99/p999, then a percentage of capacity. */
              g_autofree char *raw_label = g_strdup_printf (
                  _ ("%s at %u%% of capacity, raw ZeroMQ, batched by the producer"),
                  quantile_names[q], loads[l]);
              g_autofree char *label = g_strdup_printf (
                  _ ("%s at %u%% of capacity, kvev_publish_stored"), quantile_names[q], loads[l]);

              lat_raw[l][q] = bench_section_add_figure (lat_section, raw_id, raw_label, "us", NULL);
              lat_figures[l][q]
                  = bench_section_add_figure (lat_section, id, label, "us", lat_raw[l][q]);
            }
        }
    }

  for (tr = 0; ok && tr < 2; tr++)
    {
      gboolean tcp = tr == 1;
      const char *tname = tcp ? "tcp" : "ipc";
      Transport t;
      const char *endpoints[5];
      BenchFigure *raw_figure = NULL, *nodrop_figure = NULL, *p1 = NULL, *p2 = NULL;
      BenchFigure *replay_idle = NULL, *replay_busy = NULL;
      guint run;

      if (!e2e && !tcp)
        continue;
      if (!transport_open (&t, settings, tcp, e2e, error))
        {
          transport_close (&t);
          ok = FALSE;
          break;
        }
      make_payloads (&net, t.raw.wire);
      endpoints[0] = t.kvev.endpoint;
      endpoints[1] = t.raw.endpoint;
      endpoints[2] = t.raw_nodrop.endpoint;
      endpoints[3] = t.replay.endpoint;
      endpoints[4] = NULL;
      ok = bench_net_spawn (&net.net, endpoints, 1, 0, error)
           && bench_probe (&net.net, &t.kvev, error) && bench_probe (&net.net, &t.raw, error)
           && bench_probe (&net.net, &t.raw_nodrop, error)
           && (!e2e || bench_probe (&net.net, &t.replay, error));

      /* The first phases after the probes meet a cold connection, queue
       * and subscriber: the first of five rounds measured 0.74M events/s
       * for tcp.kvev.p1 against 1.05-1.36M, and 0.98M for tcp.raw against
       * 1.24-1.61M.  A round that counts for nothing comes first, so a
       * figure's min is a run and not the warm-up, and a capacity taken
       * from one phase is not half the real one.  The paced phases would
       * meet the same cold start, so it runs with --capacity too. */
      if (ok)
        {
          BenchPhaseResult r;
          BenchReplayCounts counts = { 0 };

          bench_progress (settings, _ ("warming up over %s"), tname);
          ok = bench_phase_run_flat (&net.net, &t.raw, 1, e2e_ms, &r, error)
               && (!e2e || bench_phase_run_flat (&net.net, &t.raw_nodrop, 1, e2e_ms, &r, error))
               && bench_phase_run_flat (&net.net, &t.kvev, 1, e2e_ms, &r, error)
               && (!e2e || bench_phase_run_flat (&net.net, &t.kvev, 2, e2e_ms, &r, error))
               && (!e2e || run_replay_phase (&net, &t, TRUE, e2e_ms, &r, &counts, error));
        }

      if (ok && e2e)
        {
          g_autofree char *raw_id = g_strdup_printf ("%s.raw", tname);
          g_autofree char *nodrop_id = g_strdup_printf ("%s.raw_nodrop", tname);
          g_autofree char *p1_id = g_strdup_printf ("%s.kvev.p1", tname);
          g_autofree char *p2_id = g_strdup_printf ("%s.kvev.p2", tname);
          g_autofree char *raw_label = g_strdup_printf (
              _ ("%s: raw ZeroMQ, pre-encoded %u-event payloads of %zu bytes, drops at the HWM"),
              tname, BATCH_EVENTS, (size_t) net.net.payload_len);
          g_autofree char *nodrop_label = g_strdup_printf (
              _ ("%s: raw ZeroMQ, the same payloads, ZMQ_XPUB_NODROP, the sender waits"), tname);
          g_autofree char *p1_label
              = g_strdup_printf (_ ("%s: kvev_publish_stored, 1 producer"), tname);
          g_autofree char *p2_label
              = g_strdup_printf (_ ("%s: kvev_publish_stored, 2 producers"), tname);
          g_autofree char *idle_id = g_strdup_printf ("%s.kvev.p1.replay_idle", tname);
          g_autofree char *busy_id = g_strdup_printf ("%s.kvev.p1.replay_busy", tname);
          g_autofree char *idle_label = g_strdup_printf (
              _ ("%s: kvev_publish_stored, 1 producer, replay on, no client"), tname);
          g_autofree char *busy_label = g_strdup_printf (
              _ ("%s: kvev_publish_stored, 1 producer, replay on, full replays in a loop"), tname);

          raw_figure = bench_section_add_figure (e2e_section, raw_id, raw_label, "events/s", NULL);
          /* The ceiling: ZeroMQ with nothing lost, as the publisher sends. */
          nodrop_figure
              = bench_section_add_figure (e2e_section, nodrop_id, nodrop_label, "events/s", NULL);
          p1 = bench_section_add_figure (e2e_section, p1_id, p1_label, "events/s", nodrop_figure);
          p2 = bench_section_add_figure (e2e_section, p2_id, p2_label, "events/s", nodrop_figure);
          /* Against tcp.kvev.p1 (ipc.kvev.p1) of the same run: what
           * replay costs the live stream. */
          replay_idle = bench_section_add_figure (e2e_section, idle_id, idle_label, "events/s", p1);
          replay_busy = bench_section_add_figure (e2e_section, busy_id, busy_label, "events/s", p1);
          bench_section_set_info (e2e_section, "replay_buffer_messages", t.replay_messages);
          for (run = 0; ok && run < settings->runs; run++)
            {
              BenchReplayCounts counts = { 0 };
              BenchPhaseResult r;

              bench_progress (settings, _ ("end to end over %s, run %u of %u"), tname, run + 1,
                              settings->runs);
              ok = bench_phase_run_flat (&net.net, &t.raw, 1, e2e_ms, &r, error);
              if (ok)
                bench_figure_add_flat (raw_figure, &r);
              ok = ok && bench_phase_run_flat (&net.net, &t.raw_nodrop, 1, e2e_ms, &r, error);
              if (ok)
                bench_figure_add_flat (nodrop_figure, &r);
              ok = ok && bench_phase_run_flat (&net.net, &t.kvev, 1, e2e_ms, &r, error);
              if (ok)
                bench_figure_add_flat (p1, &r);
              ok = ok && bench_phase_run_flat (&net.net, &t.kvev, 2, e2e_ms, &r, error);
              if (ok)
                bench_figure_add_flat (p2, &r);
              ok = ok && run_replay_phase (&net, &t, FALSE, e2e_ms, &r, &counts, error);
              if (ok)
                bench_figure_add_flat (replay_idle, &r);
              ok = ok && run_replay_phase (&net, &t, TRUE, e2e_ms, &r, &counts, error);
              if (ok)
                {
                  bench_figure_add_flat (replay_busy, &r);
                  bench_replay_add_counts (replay_busy, &counts);
                }
            }
          if (ok)
            {
              g_autofree char *busy_note = bench_flat_note (replay_busy);
              g_autofree char *replayed = bench_replay_note (replay_busy);

              bench_figure_set_note (raw_figure, bench_flat_note (raw_figure));
              bench_figure_set_note (nodrop_figure, bench_flat_note (nodrop_figure));
              bench_figure_set_note (p1, bench_flat_note (p1));
              bench_figure_set_note (p2, bench_flat_note (p2));
              bench_figure_set_note (replay_idle, bench_flat_note (replay_idle));
              bench_figure_set_note (replay_busy, g_strjoin ("; ", busy_note, replayed, NULL));
            }
        }

      if (ok && latency && tcp)
        {
          g_autoptr (GArray) capacities = g_array_new (FALSE, FALSE, sizeof (double));
          double capacity;
          guint l;

          /* Without the end-to-end figures, measure the capacity as that
           * section does, over the runs after the warm-up: one phase alone
           * measured as little as 0.47M events/s where the median of five
           * gave 1.15M, and put every load, and so every latency, at well
           * under half its rate. */
          if (settings->capacity > 0)
            g_array_append_val (capacities, settings->capacity);
          else if (p1 != NULL)
            g_array_append_vals (capacities, p1->values->data, p1->values->len);
          else
            {
              for (run = 0; ok && run < settings->runs; run++)
                {
                  BenchPhaseResult r;
                  double events_per_s;

                  bench_progress (settings, _ ("latency: measuring the capacity, run %u of %u"),
                                  run + 1, settings->runs);
                  ok = bench_phase_run_flat (&net.net, &t.kvev, 1, e2e_ms, &r, error);
                  events_per_s = bench_phase_events_per_s (&r, 0);
                  g_array_append_val (capacities, events_per_s);
                }
            }
          capacity = bench_median (capacities);
          if (ok)
            {
              for (run = 0; run < capacities->len; run++)
                bench_section_add_info (lat_section, "capacity_events_per_s",
                                        g_array_index (capacities, double, run));
              measure_wake_lateness (lat_section, settings->smoke ? 100 : 2000);
            }
          for (l = 0; ok && l < G_N_ELEMENTS (loads); l++)
            {
              double rate = capacity * loads[l] / 100.0;

              bench_section_set_info (lat_section,
                                      loads[l] == 10   ? "rate_load10"
                                      : loads[l] == 50 ? "rate_load50"
                                                       : "rate_load90",
                                      rate);
              for (run = 0; ok && run < settings->runs; run++)
                {
                  BenchPhaseResult r;

                  bench_progress (settings, _ ("latency at %u%% of capacity, run %u of %u"),
                                  loads[l], run + 1, settings->runs);
                  ok = run_paced (&net, &t.raw, rate, e2e_ms, &r, error);
                  if (ok)
                    add_latency_result (lat_raw[l], &r);
                  ok = ok && run_paced (&net, &t.kvev, rate, e2e_ms, &r, error);
                  if (ok)
                    add_latency_result (lat_figures[l], &r);
                }
              if (ok)
                {
                  note_latency (lat_raw[l]);
                  note_latency (lat_figures[l]);
                }
            }
          /* After the phases: a second of every CPU spinning must not
           * be what the first phase meets. */
          if (ok)
            measure_cpu_stalls (lat_section, settings->smoke ? 50 : 1000);
        }

      bench_net_finish (&net.net, report);
      transport_close (&t);
      free_payloads (&net);
    }
  return ok;
}
