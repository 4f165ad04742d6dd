/* bench-fanout.c: one publisher, 1, 8 and 32 subscriber processes over
 * TCP, against raw ZeroMQ sending the same pre-encoded payloads to the
 * same subscribers from an XPUB with ZMQ_XPUB_NODROP whose sender waits
 * (the publisher's worker waits too, within kv_events_send_wait_ms a
 * second, so both lose nothing they would not count).  Events/s per
 * subscriber and in all, and the publisher's CPU: its worker and
 * ZeroMQ's I/O thread, or the raw socket's I/O threads, per event
 * delivered to a subscriber.
 *
 * ZeroMQ serves every connection of a context from one of its I/O
 * threads, one by default; the publisher has two (kv_events_io_threads).
 * The raw socket and the publisher are each measured with one and with
 * two, each publisher against the raw socket with as many: what more
 * I/O threads gain, and what the publisher costs with the same.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include "bench-phase.h"
#include "bench-sections.h"
#include "bench-stats.h"

#include <stdlib.h>
#include <glib/gi18n.h>
#include <zmq.h>

/* With the default 10000 messages a pipe, and 1000 on the subscriber's
 * side, 32 subscribers reading some 800 messages a second each would
 * take over ten seconds to read what a phase left queued. */
#define FANOUT_HWM 500
#define FANOUT_RCVHWM 100

static const guint counts[] = { 1, 8, 32 };

enum
{
  RAW,
  RAW_IO2,
  KVEV_IO1,
  KVEV,
  N_KINDS
};

typedef struct
{
  BenchFigure *rate[N_KINDS];
  BenchFigure *cpu[N_KINDS];
} CountFigures;

static void
add_result (BenchFigure *rate, BenchFigure *cpu, const BenchPhaseResult *r)
{
  double slowest = G_MAXDOUBLE;
  guint64 delivered = 0;
  gint64 worst = G_MININT64;
  guint i;

  for (i = 0; i < r->n_subs; i++)
    {
      slowest = MIN (slowest, bench_phase_events_per_s (r, i));
      delivered += r->sub[i].received;
      worst = MAX (worst, bench_phase_uncounted (r, i));
    }
  bench_figure_add (rate, bench_phase_total_events_per_s (r));
  bench_figure_add_extra (rate, "per_subscriber", bench_phase_total_events_per_s (r) / r->n_subs);
  bench_figure_add_extra (rate, "slowest_subscriber", slowest);
  bench_figure_add (cpu, (double) r->publisher_cpu_ns / (double) MAX (delivered, 1));
  bench_figure_add_extra (cpu, "cpu_share_per_subscriber",
                          (double) r->publisher_cpu_ns / (double) MAX (r->t_done - r->t0, 1)
                              / r->n_subs);
  if (r->publisher)
    {
      bench_figure_add_extra (rate, "counted_drops", (double) bench_phase_counted_drops (r));
      bench_figure_add_extra (rate, "uncounted_loss", (double) worst);
    }
  else
    bench_figure_add_extra (rate, "unsent_messages", (double) r->raw_unsent);
}

static void
note_results (BenchFigure *rate, BenchFigure *cpu)
{
  const BenchExtra *loss = bench_figure_find_extra (rate, "uncounted_loss");
  GString *note = g_string_new (NULL);

  g_string_printf (note, _ ("per subscriber %.0f, the slowest %.0f"),
                   bench_median (bench_figure_find_extra (rate, "per_subscriber")->values),
                   bench_median (bench_figure_find_extra (rate, "slowest_subscriber")->values));
  if (loss != NULL)
    /* TRANSLATORS: followed by one number per run. */
    bench_note_runs (note, _ ("; the largest uncounted loss of a subscriber by run:"),
                     loss->values);
  bench_figure_set_note (rate, g_string_free (note, FALSE));
  bench_figure_set_note (
      cpu,
      g_strdup_printf (
          _ ("%.1f%% of a CPU per subscriber"),
          100 * bench_median (bench_figure_find_extra (cpu, "cpu_share_per_subscriber")->values)));
}

static void
add_figures (BenchSection *section, guint n, CountFigures *f)
{
  static const char *const kind_ids[N_KINDS] = { "raw", "raw_io2", "kvev_io1", "kvev" };
  static const guint baselines[N_KINDS] = { RAW, RAW, RAW, RAW_IO2 };
  const char *kinds[N_KINDS];
  guint k;

  kinds[RAW] = _ ("raw ZeroMQ, 1 I/O thread");
  kinds[RAW_IO2] = _ ("raw ZeroMQ, 2 I/O threads");
  kinds[KVEV_IO1] = _ ("kvev_publish_stored, 1 producer, 1 I/O thread");
  kinds[KVEV] = _ ("kvev_publish_stored, 1 producer, 2 I/O threads");
  for (k = 0; k < N_KINDS; k++)
    {
      g_autofree char *rate_id = g_strdup_printf ("sub%u.%s.events_per_s", n, kind_ids[k]);
      g_autofree char *cpu_id = g_strdup_printf ("sub%u.%s.cpu_ns_per_event", n, kind_ids[k]);
      /* TRANSLATORS: a number of subscribers, then one of the four kinds
       * of sender above. */
      g_autofree char *rate_label = g_strdup_printf (
          g_dngettext (KVT_GETTEXT_PACKAGE, "%u subscriber: %s", "%u subscribers: %s", n), n,
          kinds[k]);
      g_autofree char *cpu_label
          = g_strdup_printf (g_dngettext (KVT_GETTEXT_PACKAGE, "%u subscriber: %s, publisher CPU",
                                          "%u subscribers: %s, publisher CPU", n),
                             n, kinds[k]);

      f->rate[k] = bench_section_add_figure (section, rate_id, rate_label, "events/s",
                                             k == RAW ? NULL : f->rate[baselines[k]]);
      f->cpu[k] = bench_section_add_figure (section, cpu_id, cpu_label, "ns/event",
                                            k == RAW ? NULL : f->cpu[baselines[k]]);
    }
}

typedef struct
{
  KvevConfig *config;
  KvevConfig *config_io1;
  void *contexts[2]; /* 1 and 2 I/O threads */
  BenchSource sources[N_KINDS];
} Sources;

static void
sources_close (Sources *s)
{
  guint k;

  for (k = 0; k < N_KINDS; k++)
    bench_source_close (&s->sources[k]);
  for (k = 0; k < 2; k++)
    if (s->contexts[k] != NULL)
      zmq_ctx_term (s->contexts[k]);
  g_clear_pointer (&s->config, kvev_config_free);
  g_clear_pointer (&s->config_io1, kvev_config_free);
}

static gboolean
sources_open (Sources *s, const BenchSettings *settings, GError **error)
{
  g_autofree char *hwm_text = g_strdup_printf ("%d", settings->smoke ? 64 : FANOUT_HWM);
  guint k;

  s->config = bench_config_new ("tcp://127.0.0.1:*", BENCH_QUEUE_CAPACITY, TRUE);
  s->config_io1 = bench_config_new ("tcp://127.0.0.1:*", BENCH_QUEUE_CAPACITY, TRUE);
  if (!kvev_config_set (s->config, "kv_events_send_hwm", hwm_text, error)
      || !kvev_config_set (s->config_io1, "kv_events_send_hwm", hwm_text, error)
      || !kvev_config_set (s->config_io1, "kv_events_io_threads", "1", error)
      || !bench_source_open_publisher (&s->sources[KVEV], s->config, error)
      || !bench_source_open_publisher (&s->sources[KVEV_IO1], s->config_io1, error))
    return FALSE;
  for (k = 0; k < 2; k++)
    {
      s->contexts[k] = zmq_ctx_new ();
      zmq_ctx_set (s->contexts[k], ZMQ_IO_THREADS, (int) k + 1);
      if (!bench_source_open_raw (&s->sources[k == 0 ? RAW : RAW_IO2], s->contexts[k],
                                  "tcp://127.0.0.1:*", bench_config_hwm (s->config), TRUE,
                                  s->config, error))
        return FALSE;
    }
  return TRUE;
}

/* Every source once, raw first as everywhere. */
static gboolean
run_round (BenchNet *net, Sources *s, guint duration_ms, CountFigures *f, GError **error)
{
  BenchPhaseResult *r = g_new0 (BenchPhaseResult, 1);
  gboolean ok = TRUE;
  guint k;

  for (k = 0; ok && k < N_KINDS; k++)
    {
      ok = bench_phase_run_flat (net, &s->sources[k], 1, duration_ms, r, error);
      if (ok && f != NULL)
        add_result (f->rate[k], f->cpu[k], r);
    }
  g_free (r);
  return ok;
}

gboolean
bench_fanout (BenchReport *report, const BenchSettings *settings, GError **error)
{
  g_autofree char *keys = bench_make_keys (settings->key_len, BENCH_KEY_RING);
  guint duration_ms = settings->duration_ms * 3;
  BenchSection *section;
  BenchNet net = { 0 };
  Sources s = { 0 };
  const char *endpoints[N_KINDS + 1];
  gboolean ok;
  guint c, k, run;

  section = bench_report_add_section (
      report, "fanout",
      _ ("Fan-out over TCP: events/s delivered to all the subscribers together, each decoding "
         "in a process of its own, and the publisher's CPU per event delivered to one (its "
         "worker and I/O threads; higher events/s, lower CPU are better); raw ZeroMQ with "
         "ZMQ_XPUB_NODROP, its sender waiting"));
  net.settings = settings;
  net.keys = keys;
  net.key_len = settings->key_len;
  net.key_ring = BENCH_KEY_RING;
  ok = sources_open (&s, settings, error);
  if (ok)
    {
      bench_net_make_payload (&net, s.sources[RAW].wire, BENCH_BATCH_EVENTS);
      bench_section_set_info (section, "payload_bytes", (double) net.payload_len);
      bench_section_set_info (section, "send_hwm", bench_config_hwm (s.config));
      bench_section_set_info (section, "subscriber_rcvhwm", FANOUT_RCVHWM);
    }
  for (k = 0; k < N_KINDS; k++)
    endpoints[k] = s.sources[k].endpoint;
  endpoints[N_KINDS] = NULL;

  for (c = 0; ok && c < G_N_ELEMENTS (counts); c++)
    {
      CountFigures f;

      add_figures (section, counts[c], &f);
      bench_progress (settings, _ ("fan-out: starting %u subscribers"), counts[c]);
      ok = bench_net_spawn (&net, endpoints, counts[c], FANOUT_RCVHWM, error);
      for (k = 0; ok && k < N_KINDS; k++)
        ok = bench_probe (&net, &s.sources[k], error);
      /* A round that counts for nothing, against the cold start (a
       * smoke run's figures mean nothing anyway). */
      ok = ok && (settings->smoke || run_round (&net, &s, duration_ms, NULL, error));
      for (run = 0; ok && run < settings->runs; run++)
        {
          bench_progress (settings, _ ("fan-out to %u subscribers, run %u of %u"), counts[c],
                          run + 1, settings->runs);
          ok = run_round (&net, &s, duration_ms, &f, error);
        }
      for (k = 0; ok && k < N_KINDS; k++)
        note_results (f.rate[k], f.cpu[k]);
      bench_net_finish (&net, report);
    }
  sources_close (&s);
  /* After the contexts: the raw messages point into it. */
  free (net.payload);
  return ok;
}
