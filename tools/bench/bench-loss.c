/* bench-loss.c: whether every event the publisher does not deliver is
 * counted.  For each phase and subscriber: events submitted, minus the
 * events it received, minus the drops the publisher counted (its queue's
 * drop-oldest, KVEV_STAT_DROPPED_EVENTS, and the messages ZeroMQ dropped
 * for a full pipe, KVEV_STAT_HWM_DROPPED_EVENTS).  The target is 0, in
 * three scenarios, one producer over TCP:
 *
 *   - one subscriber that keeps up as well as it can, the producer flat
 *     out;
 *   - one subscriber that stops reading for a third of the phase, the
 *     producer flat out: with a single subscription the worker waits for
 *     it as long as it takes, so the loss lands in the queue's counted
 *     drop-oldest;
 *   - eight subscribers, one of them slow (it sleeps after every
 *     message), the producer at half of what the eight take flat out, so
 *     that only the slow one falls behind (flat out, all eight would,
 *     and what the policy does to the seven would be lost in what the
 *     machine cannot do; the fan-out section measures that): the worker
 *     waits for it only kv_events_send_wait_ms in any second, then sends
 *     past it and ZeroMQ drops for it alone.  The other seven should keep
 *     the rate they have with none slow, which the same eight measure
 *     right before, at the same rate.
 *
 * With several subscribers a message ZeroMQ dropped for one of them is
 * counted once and still reached the others: a fast subscriber can get
 * more than submitted minus the counted drops (its figure is below 0),
 * and the slow one, which every dropped message missed, would get
 * exactly that.  The target is that none lost more than was counted.
 * libzmq, though, skips a pipe it refused until its reader has read half
 * its backlog, and what the slow one misses then the publisher cannot
 * count (kvevents(7), SLOW SUBSCRIBERS): its figure is above 0 by that
 * much, which the slow_uncounted extra keeps apart.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include "bench-paced.h"
#include "bench-phase.h"
#include "bench-sections.h"
#include "bench-stats.h"

#include <math.h>
#include <stdlib.h>
#include <glib/gi18n.h>

#define N_SUBS 8
#define SLOW_SUB 7
/* About a tenth of what each of eight subscribers decodes on two CPUs. */
#define SLOW_SLEEP_US 2000
/* The eight subscribers' rate: this share of what the slowest of them
 * takes with the producer flat out. */
#define SUB8_LOAD 0.5
/* Small buffers on both sides of the slow subscriber's pipe, so that it
 * fills within a phase (with the defaults, 10000 messages and 1000 on
 * the subscriber's side, it would take seconds at these rates), and
 * drains in well under a second after it. */
#define LOSS_HWM 500
#define LOSS_RCVHWM 100

static BenchFigure *
add_loss_figure (BenchSection *section, const char *id, const char *label)
{
  return bench_section_add_figure (section, id, label, _ ("events"), NULL);
}

/* The largest uncounted loss of the phase's subscribers, and what went
 * into it; slow is the slow subscriber's index, or -1, and then the
 * others' largest is kept apart too. */
static void
add_loss (BenchFigure *figure, const BenchPhaseResult *r, gint slow)
{
  gint64 worst = G_MININT64, others = G_MININT64;
  guint64 least_received = G_MAXUINT64;
  guint i;

  for (i = 0; i < r->n_subs; i++)
    {
      worst = MAX (worst, bench_phase_uncounted (r, i));
      if ((gint) i != slow)
        others = MAX (others, bench_phase_uncounted (r, i));
      least_received = MIN (least_received, r->sub[i].received);
    }
  bench_figure_add (figure, (double) worst);
  bench_figure_add_extra (figure, "offered", (double) r->offered);
  bench_figure_add_extra (figure, "least_received", (double) least_received);
  bench_figure_add_extra (figure, "queue_dropped", (double) r->queue_dropped);
  bench_figure_add_extra (figure, "hwm_dropped_events", (double) r->hwm_dropped_events);
  bench_figure_add_extra (figure, "hwm_dropped_messages", (double) r->hwm_dropped_messages);
  if (slow >= 0)
    {
      bench_figure_add_extra (figure, "slow_uncounted", (double) bench_phase_uncounted (r, slow));
      bench_figure_add_extra (figure, "others_uncounted", (double) others);
    }
}

static char *
loss_note (const BenchFigure *figure)
{
  const BenchExtra *slow = bench_figure_find_extra (figure, "slow_uncounted");
  const BenchExtra *others = bench_figure_find_extra (figure, "others_uncounted");
  GString *note = g_string_new (NULL);

  bench_note_runs (note, _ ("by run:"), figure->values);
  if (slow != NULL)
    {
      bench_note_runs (note, _ ("; the slow subscriber's:"), slow->values);
      bench_note_runs (note, _ ("; the largest of the others:"), others->values);
    }
  g_string_append_printf (
      note, _ ("; median %.0f submitted, %.0f dropped by the queue, %.0f by ZeroMQ at the HWM"),
      bench_median (bench_figure_find_extra (figure, "offered")->values),
      bench_median (bench_figure_find_extra (figure, "queue_dropped")->values),
      bench_median (bench_figure_find_extra (figure, "hwm_dropped_events")->values));
  return g_string_free (note, FALSE);
}

/* Subscribers [0, n)'s slowest rate, and their mean. */
static double
slowest_rate (const BenchPhaseResult *r, guint n, double *mean)
{
  double slowest = INFINITY, sum = 0;
  guint i;

  for (i = 0; i < n; i++)
    {
      double rate = bench_phase_events_per_s (r, i);

      slowest = MIN (slowest, rate);
      sum += rate;
    }
  *mean = sum / n;
  return slowest;
}

static void
add_fast_rate (BenchFigure *figure, const BenchPhaseResult *r)
{
  double mean;

  bench_figure_add (figure, slowest_rate (r, SLOW_SUB, &mean));
  bench_figure_add_extra (figure, "mean_events_per_s", mean);
}

static char *
rate_note (const BenchFigure *figure)
{
  return g_strdup_printf (
      _ ("mean of the seven %.0f events/s"),
      bench_median (bench_figure_find_extra (figure, "mean_events_per_s")->values));
}

typedef struct
{
  BenchFigure *fast;
  BenchFigure *stall;
  BenchFigure *rate_none_slow;
  BenchFigure *rate_one_slow;
  BenchFigure *rate_slow;
  BenchFigure *none_slow8;
  BenchFigure *slow8;
} LossFigures;

/* The same eight subscribers with none slow, then with one, the
 * producer at rate events/s: the seven fast ones' rates and everyone's
 * losses. */
static gboolean
run_slow8 (BenchNet *net, BenchSource *kvev, double rate, guint duration_ms, const LossFigures *f,
           GError **error)
{
  g_autofree char *slow = g_strdup_printf ("L %u\n", SLOW_SLEEP_US);
  BenchPhaseResult *r = g_new0 (BenchPhaseResult, 1);
  BenchPace pace = { rate, NULL };
  gboolean ok;

  ok = bench_phase_run (net, kvev, bench_produce_paced, &pace, duration_ms, r, error);
  if (ok)
    {
      add_fast_rate (f->rate_none_slow, r);
      add_loss (f->none_slow8, r, -1);
    }
  ok = ok && bench_net_tell (net, SLOW_SUB, slow, error) && bench_phase_start (net, kvev, r, error);
  if (ok)
    {
      bench_phase_produce (net, kvev, bench_produce_paced, &pace, duration_ms, r);
      /* Its backlog is read at full speed: the phase ends sooner, and
       * what was lost was lost while the producer ran. */
      ok = bench_net_tell (net, SLOW_SUB, "L 0\n", error)
           && bench_phase_finish (net, kvev, r, error);
    }
  if (ok)
    {
      add_fast_rate (f->rate_one_slow, r);
      bench_figure_add (f->rate_slow, bench_phase_events_per_s (r, SLOW_SUB));
      add_loss (f->slow8, r, SLOW_SUB);
    }
  g_free (r);
  return ok;
}

gboolean
bench_loss (BenchReport *report, const BenchSettings *settings, GError **error)
{
  g_autofree char *keys = bench_make_keys (settings->key_len, BENCH_KEY_RING);
  g_autofree char *wait_ms = NULL;
  g_autofree char *hwm_text = g_strdup_printf ("%d", settings->smoke ? 64 : LOSS_HWM);
  /* A third of the stall phase, in its middle. */
  guint phase_ms = settings->duration_ms * 9, stall_ms = phase_ms / 3;
  g_autofree char *stall = g_strdup_printf ("H %u %u\n", stall_ms, stall_ms);
  /* TRANSLATORS: %u is a number of milliseconds. */
  g_autofree char *stall_label
      = g_strdup_printf (_ ("1 subscriber that stops reading for %u ms"), stall_ms);
  /* TRANSLATORS: %u is a number of microseconds. */
  g_autofree char *slow_label = g_strdup_printf (
      _ ("8 subscribers: the slow one, %u us asleep after every message"), SLOW_SLEEP_US);
  BenchSection *section;
  BenchNet net = { 0 };
  BenchSource kvev = { 0 };
  KvevConfig *config;
  LossFigures f;
  BenchPhaseResult *r = g_new0 (BenchPhaseResult, 1);
  const char *endpoints[2] = { NULL, NULL };
  double rate = 0;
  gboolean ok;
  guint run;

  section = bench_report_add_section (
      report, "loss",
      _ ("Loss: events submitted, minus received, minus the drops the publisher counted, per "
         "subscriber, over TCP, 1 producer, flat out but for eight subscribers (0 is the "
         "target)"));
  f.fast = add_loss_figure (section, "fast.uncounted", _ ("1 subscriber"));
  f.stall = add_loss_figure (section, "stall.uncounted", stall_label);
  f.none_slow8 = add_loss_figure (section, "sub8.uncounted",
                                  _ ("8 subscribers, none slow: the largest of the eight"));
  f.rate_none_slow = bench_section_add_figure (section, "sub8.fast.events_per_s",
                                               _ ("8 subscribers, none slow: the slowest of seven"),
                                               "events/s", NULL);
  f.rate_one_slow = bench_section_add_figure (
      section, "sub8_slow.fast.events_per_s",
      _ ("8 subscribers, the eighth slow: the slowest of the other seven"), "events/s",
      f.rate_none_slow);
  f.rate_slow = bench_section_add_figure (section, "sub8_slow.slow.events_per_s", slow_label,
                                          "events/s", f.rate_none_slow);
  f.slow8 = add_loss_figure (section, "sub8_slow.uncounted",
                             _ ("8 subscribers, one slow: the largest of the eight"));

  config = bench_config_new ("tcp://127.0.0.1:*", BENCH_QUEUE_CAPACITY, TRUE);
  ok = kvev_config_set (config, "kv_events_send_hwm", hwm_text, error)
       && bench_source_open_publisher (&kvev, config, error);
  bench_section_set_info (section, "send_hwm", bench_config_hwm (config));
  bench_section_set_info (section, "subscriber_rcvhwm", LOSS_RCVHWM);
  wait_ms = kvev_config_get (config, "kv_events_send_wait_ms");
  if (wait_ms != NULL)
    bench_section_set_info (section, "send_wait_ms", g_ascii_strtod (wait_ms, NULL));

  net.settings = settings;
  net.keys = keys;
  net.key_len = settings->key_len;
  net.key_ring = BENCH_KEY_RING;
  endpoints[0] = kvev.endpoint;

  /* One subscriber; a phase that counts for nothing first, against the
   * cold start. */
  ok = ok && bench_net_spawn (&net, endpoints, 1, LOSS_RCVHWM, error)
       && bench_probe (&net, &kvev, error)
       && bench_phase_run_flat (&net, &kvev, 1, settings->duration_ms * 3, r, error);
  for (run = 0; ok && run < settings->runs; run++)
    {
      bench_progress (settings, _ ("loss, 1 subscriber, run %u of %u"), run + 1, settings->runs);
      ok = bench_phase_run_flat (&net, &kvev, 1, settings->duration_ms * 3, r, error);
      if (ok)
        add_loss (f.fast, r, -1);
      ok = ok && bench_net_tell (&net, 0, stall, error)
           && bench_phase_run_flat (&net, &kvev, 1, phase_ms, r, error);
      if (ok)
        add_loss (f.stall, r, -1);
    }
  bench_net_finish (&net, report);

  /* Eight; the phase against the cold start also measures what they
   * take flat out. */
  ok = ok && bench_net_spawn (&net, endpoints, N_SUBS, LOSS_RCVHWM, error)
       && bench_probe (&net, &kvev, error)
       && bench_phase_run_flat (&net, &kvev, 1, phase_ms, r, error);
  if (ok)
    {
      double mean;

      rate = SUB8_LOAD * slowest_rate (r, N_SUBS, &mean);
      bench_section_set_info (section, "sub8_events_per_s", rate);
    }
  for (run = 0; ok && run < settings->runs; run++)
    {
      bench_progress (settings, _ ("loss, 8 subscribers, run %u of %u"), run + 1, settings->runs);
      ok = run_slow8 (&net, &kvev, rate, phase_ms, &f, error);
    }
  bench_net_finish (&net, report);

  if (ok)
    {
      bench_figure_set_note (f.fast, loss_note (f.fast));
      bench_figure_set_note (f.stall, loss_note (f.stall));
      bench_figure_set_note (f.none_slow8, loss_note (f.none_slow8));
      bench_figure_set_note (f.slow8, loss_note (f.slow8));
      bench_figure_set_note (f.rate_none_slow, rate_note (f.rate_none_slow));
      bench_figure_set_note (f.rate_one_slow, rate_note (f.rate_one_slow));
    }
  bench_source_close (&kvev);
  kvev_config_free (config);
  g_free (r);
  return ok;
}
