/* bench-scaling.c: how the end-to-end cost grows with the work: keys of
 * 40 B, 1 KiB and 64 KiB in messages of up to 64 events, and 40-byte keys
 * in messages of up to 1, 64 and 4096 (kv_events_max_batch_events).  One
 * producer flat out over TCP to one subscriber, events/s and payload
 * bytes/s, each against raw ZeroMQ sending payloads of the same events
 * and size from an XPUB with ZMQ_XPUB_NODROP (the ceiling, as in the
 * end-to-end section).
 *
 * The raw payload holds as many events as the publisher's messages did
 * on average in a phase just before, which need not be the configured
 * batch: the worker cuts a message at its size limit, and sends what it
 * has when the queue runs dry.
 *
 * Every configuration keeps a full pipe within the library's default
 * 256 MiB send budget (kv_events_send_buffer_bytes): the high-water mark
 * is lowered so that a whole batch fits a message of budget / HWM, which
 * also stops at 1 MiB (a message larger than Mooncake's readers take
 * would not be measured).  The queue and the keys stay within 64 MiB.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include "bench-phase.h"
#include "bench-sections.h"
#include "bench-stats.h"

#include <math.h>
#include <stdlib.h>
#include <glib/gi18n.h>
#include <zmq.h>

#define SEND_BUDGET_BYTES (256u * 1024 * 1024)
/* About what an event takes in a message besides its key, with the
 * legacy field names on, rounded up. */
#define EVENT_OVERHEAD_BYTES 400
#define QUEUE_BYTES (64u * 1024 * 1024)
#define KEY_RING_BYTES (16u * 1024 * 1024)

typedef struct
{
  guint key_len;
  guint max_batch;
} Workload;

static const Workload workloads[] = {
  { 40, 64 }, { 1024, 64 }, { 65536, 64 }, { 40, 1 }, { 40, 4096 },
};

typedef struct
{
  BenchFigure *raw_rate;
  BenchFigure *kvev_rate;
  BenchFigure *raw_bytes;
  BenchFigure *kvev_bytes;
} WorkloadFigures;

typedef struct
{
  KvevConfig *config;
  void *context;
  BenchSource kvev;
  BenchSource raw;
  int hwm;
} WorkloadSources;

static void
workload_close (WorkloadSources *w)
{
  bench_source_close (&w->kvev);
  bench_source_close (&w->raw);
  if (w->context != NULL)
    zmq_ctx_term (w->context);
  g_clear_pointer (&w->config, kvev_config_free);
}

static gboolean
workload_open (WorkloadSources *w, const Workload *load, gboolean smoke, GError **error)
{
  guint64 message_bytes
      = MIN ((guint64) load->max_batch * (load->key_len + EVENT_OVERHEAD_BYTES), 1024 * 1024);
  g_autofree char *hwm_text = NULL;
  g_autofree char *batch_text = g_strdup_printf ("%u", load->max_batch);
  guint capacity;

  /* A smoke run, as the end-to-end section's, has no time to drain the
   * default high-water mark's worth of messages after every phase, nor
   * a full queue of single events. */
  w->hwm = (int) CLAMP (SEND_BUDGET_BYTES / message_bytes, 16, smoke ? 64 : 10000);
  capacity = CLAMP (QUEUE_BYTES / load->key_len, 2 * load->max_batch,
                    smoke ? 8192 : BENCH_QUEUE_CAPACITY);
  hwm_text = g_strdup_printf ("%d", w->hwm);
  w->config = bench_config_new ("tcp://127.0.0.1:*", capacity, TRUE);
  w->context = zmq_ctx_new ();
  return kvev_config_set (w->config, "kv_events_send_hwm", hwm_text, error)
         && kvev_config_set (w->config, "kv_events_max_batch_events", batch_text, error)
         && bench_source_open_publisher (&w->kvev, w->config, error)
         && bench_source_open_raw (&w->raw, w->context, "tcp://127.0.0.1:*", w->hwm, TRUE,
                                   w->config, error);
}

static void
add_figures (BenchSection *section, const Workload *load, const BenchNet *net, WorkloadFigures *f)
{
  g_autofree char *prefix = g_strdup_printf ("key%u.batch%u", load->key_len, load->max_batch);
  g_autofree char *raw_rate_id = g_strdup_printf ("%s.raw.events_per_s", prefix);
  g_autofree char *kvev_rate_id = g_strdup_printf ("%s.kvev.events_per_s", prefix);
  g_autofree char *raw_bytes_id = g_strdup_printf ("%s.raw.bytes_per_s", prefix);
  g_autofree char *kvev_bytes_id = g_strdup_printf ("%s.kvev.bytes_per_s", prefix);
  /* TRANSLATORS: key length in bytes, then the most events a message. */
  g_autofree char *workload
      = g_strdup_printf (_ ("%u-byte keys, up to %u a message"), load->key_len, load->max_batch);
  /* TRANSLATORS: the workload above, then events and bytes a payload. */
  g_autofree char *raw_label
      = g_strdup_printf (_ ("%s: raw ZeroMQ, %u-event payloads of %zu bytes"), workload,
                         net->payload_events, (size_t) net->payload_len);
  g_autofree char *kvev_label = g_strdup_printf (_ ("%s: kvev_publish_stored"), workload);
  g_autofree char *raw_bytes_label = g_strdup_printf (_ ("%s, payload bytes"), raw_label);
  g_autofree char *kvev_bytes_label = g_strdup_printf (_ ("%s, payload bytes"), kvev_label);

  f->raw_rate = bench_section_add_figure (section, raw_rate_id, raw_label, "events/s", NULL);
  f->kvev_rate
      = bench_section_add_figure (section, kvev_rate_id, kvev_label, "events/s", f->raw_rate);
  f->raw_bytes = bench_section_add_figure (section, raw_bytes_id, raw_bytes_label, "B/s", NULL);
  f->kvev_bytes
      = bench_section_add_figure (section, kvev_bytes_id, kvev_bytes_label, "B/s", f->raw_bytes);
}

static double
bytes_per_s (const BenchPhaseResult *r)
{
  return (double) r->sub[0].bytes_by_stop * 1e9 / (double) MAX (r->t_stop - r->t0, 1);
}

static gboolean
measure_workload (BenchReport *report, BenchSection *section, const BenchSettings *settings,
                  const Workload *load, GError **error)
{
  guint key_ring = CLAMP (KEY_RING_BYTES / load->key_len, 64, BENCH_KEY_RING);
  g_autofree char *keys = bench_make_keys (load->key_len, key_ring);
  guint duration_ms = settings->duration_ms * 3;
  BenchPhaseResult *r = g_new0 (BenchPhaseResult, 1);
  WorkloadSources w = { 0 };
  WorkloadFigures f;
  BenchNet net = { 0 };
  const char *endpoints[3] = { NULL, NULL, NULL };
  gboolean ok;
  guint run;

  net.settings = settings;
  net.keys = keys;
  net.key_len = load->key_len;
  net.key_ring = key_ring;
  ok = workload_open (&w, load, settings->smoke, error);
  endpoints[0] = w.kvev.endpoint;
  endpoints[1] = w.raw.endpoint;
  bench_progress (settings, _ ("scaling: %u-byte keys, up to %u events a message"), load->key_len,
                  load->max_batch);
  ok = ok && bench_net_spawn (&net, endpoints, 1, MIN (w.hwm, 1000), error)
       && bench_probe (&net, &w.kvev, error) && bench_probe (&net, &w.raw, error)
       && bench_phase_run_flat (&net, &w.kvev, 1, duration_ms, r, error);
  /* That phase also warmed up the connection and the subscriber; the raw
   * socket gets a phase of its own. */
  if (ok)
    {
      guint per_message = r->messages > 0
                              ? (guint) lround ((double) r->published_events / (double) r->messages)
                              : load->max_batch;

      bench_net_make_payload (&net, w.raw.wire, CLAMP (per_message, 1, load->max_batch));
      add_figures (section, load, &net, &f);
      ok = settings->smoke || bench_phase_run_flat (&net, &w.raw, 1, duration_ms, r, error);
    }
  for (run = 0; ok && run < settings->runs; run++)
    {
      ok = bench_phase_run_flat (&net, &w.raw, 1, duration_ms, r, error);
      if (ok)
        {
          bench_figure_add_flat (f.raw_rate, r);
          bench_figure_add (f.raw_bytes, bytes_per_s (r));
        }
      ok = ok && bench_phase_run_flat (&net, &w.kvev, 1, duration_ms, r, error);
      if (ok)
        {
          bench_figure_add_flat (f.kvev_rate, r);
          bench_figure_add_extra (f.kvev_rate, "events_per_message",
                                  (double) r->published_events / (double) MAX (r->messages, 1));
          bench_figure_add (f.kvev_bytes, bytes_per_s (r));
        }
    }
  if (ok)
    {
      g_autofree char *note = bench_flat_note (f.kvev_rate);

      bench_figure_set_note (f.raw_rate, bench_flat_note (f.raw_rate));
      bench_figure_set_note (
          f.kvev_rate,
          g_strdup_printf (
              _ ("%s; %.1f events a message"), note,
              bench_median (bench_figure_find_extra (f.kvev_rate, "events_per_message")->values)));
    }
  bench_net_finish (&net, report);
  workload_close (&w);
  /* After the context: the raw messages point into it. */
  free (net.payload);
  g_free (r);
  return ok;
}

gboolean
bench_scaling (BenchReport *report, const BenchSettings *settings, GError **error)
{
  BenchSection *section;
  gboolean ok = TRUE;
  guint i;

  section = bench_report_add_section (
      report, "scaling",
      _ ("Scaling over TCP: events/s and payload bytes/s received and decoded by one "
         "subscriber, 1 producer, by key length and largest batch (higher is better)"));
  for (i = 0; ok && i < G_N_ELEMENTS (workloads); i++)
    ok = measure_workload (report, section, settings, &workloads[i], error);
  return ok;
}
