/* bench-encode.c: encoding, ns per event, the library's encoder against
 * the same payload written key by key with msgpack-c's packer
 * (tests/reference-encode.h), which then frees it: what a publisher without a
 * pre-encoded context does per batch.  Its bytes must equal the
 * library's, which is checked once per figure, so the two encode the
 * same thing.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include "bench-internal.h"
#include "bench-sections.h"
#include "reference-encode.h"

#include <stdlib.h>
#include <string.h>
#include <glib/gi18n.h>
#include <msgpack.h>

#define MAX_BATCH 64

typedef struct
{
  RefEventType type;
  gboolean legacy;
  guint batch;
  const RefContext *context;
  RefEvent specs[MAX_BATCH];
  BenchBatch *kvev;
  gint64 timestamp_ms;
} Case;

static const char *const type_ids[] = { "stored", "removed", "cleared" };

/* The strings a RefContext points to, read back from a
 * configuration. */
typedef struct
{
  RefContext wire;
  char *backend_id;
  char *model_name;
  char *additional_salt;
  char *lora_name;
} Context;

static guint32
config_uint (const KvevConfig *config, const char *flag)
{
  g_autofree char *text = kvev_config_get (config, flag);

  return (guint32) g_ascii_strtoull (text, NULL, 10);
}

static void
context_init (Context *context, const KvevConfig *config)
{
  g_autofree char *legacy = kvev_config_get (config, "kv_events_emit_legacy_compat");

  context->backend_id = kvev_config_get (config, "kv_events_backend_id");
  context->model_name = kvev_config_get (config, "kv_events_model_name");
  context->additional_salt = kvev_config_get (config, "kv_events_additional_salt");
  context->lora_name = kvev_config_get (config, "kv_events_lora_name");
  context->wire.backend_id = context->backend_id;
  context->wire.model_name = context->model_name;
  context->wire.block_size = config_uint (config, "kv_events_block_size");
  context->wire.additional_salt = context->additional_salt;
  context->wire.lora_name = context->lora_name;
  context->wire.dp_rank = config_uint (config, "kv_events_dp_rank");
  context->wire.legacy = strcmp (legacy, "true") == 0;
}

static void
context_clear (Context *context)
{
  g_free (context->backend_id);
  g_free (context->model_name);
  g_free (context->additional_salt);
  g_free (context->lora_name);
}

/* The baseline's payload in a fresh sbuffer; the caller destroys it. */
static void
baseline_encode (const Case *c, msgpack_sbuffer *sbuf)
{
  ref_encode (sbuf, c->context, c->timestamp_ms, c->specs, c->batch);
}

/* ---- timing ------------------------------------------------------------ */

static void
run_baseline (const Case *c, guint64 iterations)
{
  guint64 i;

  for (i = 0; i < iterations; i++)
    {
      msgpack_sbuffer sbuf;

      baseline_encode (c, &sbuf);
      msgpack_sbuffer_destroy (&sbuf);
    }
}

static void
run_kvev (const Case *c, guint64 iterations)
{
  guint64 i;

  for (i = 0; i < iterations; i++)
    {
      gsize len;

      free (bench_batch_encode (c->kvev, c->timestamp_ms, &len));
    }
}

typedef void (*RunFunc) (const Case *c, guint64 iterations);

/* Iterations that take about duration_ms, found by doubling. */
static guint64
calibrate (RunFunc func, const Case *c, guint duration_ms)
{
  guint64 iterations = 1;
  gint64 elapsed;

  for (;;)
    {
      gint64 start = bench_now_ns ();

      func (c, iterations);
      elapsed = bench_now_ns () - start;
      if (elapsed >= 2000000 || iterations >= G_MAXUINT32)
        break;
      iterations *= 2;
    }
  return MAX (1, (guint64) ((double) iterations * duration_ms * 1e6 / (double) MAX (elapsed, 1)));
}

static double
ns_per_event (RunFunc func, const Case *c, guint64 iterations)
{
  gint64 start = bench_now_ns ();

  func (c, iterations);
  return (double) (bench_now_ns () - start) / ((double) iterations * c->batch);
}

static gboolean
same_bytes (const Case *c, gsize *payload_len)
{
  msgpack_sbuffer sbuf;
  gsize len;
  char *kvev = bench_batch_encode (c->kvev, c->timestamp_ms, &len);
  gboolean same;

  baseline_encode (c, &sbuf);
  same = len == sbuf.size && memcmp (kvev, sbuf.data, len) == 0;
  *payload_len = len;
  msgpack_sbuffer_destroy (&sbuf);
  free (kvev);
  return same;
}

gboolean
bench_encode (BenchReport *report, const BenchSettings *settings, GError **error)
{
  static const guint batches[] = { 1, MAX_BATCH };
  g_autofree char *keys = bench_make_keys (settings->key_len, MAX_BATCH);
  Context contexts[2];
  Case cases[3][2][2]; /* type, legacy, batch */
  BenchFigure *baselines[3][2][2];
  BenchFigure *figures[3][2][2];
  BenchSection *section;
  guint64 base_iterations[3][2][2];
  guint64 kvev_iterations[3][2][2];
  gint64 timestamp_ms = g_get_real_time () / 1000;
  guint duration_ms = MAX (1, settings->duration_ms / 2);
  guint t, l, b, i, run;

  section = bench_report_add_section (report, "encode",
                                      _ ("Encoding: ns per event, kvev_encode_batch against "
                                         "msgpack-c key by key (lower is better)"));
  for (l = 0; l < 2; l++)
    {
      g_autoptr (KvevConfig) config = bench_config_new ("tcp://127.0.0.1:*", 0, l == 1);

      context_init (&contexts[l], config);
      /* Paid once, when a publisher starts: not in the figures. */
      bench_section_set_info (section, l ? "encoder_new_ns.legacy_on" : "encoder_new_ns.legacy_off",
                              bench_encoder_new_ns (config, settings->smoke ? 10 : 1000));
    }

  for (t = 0; t < 3; t++)
    for (l = 0; l < 2; l++)
      for (b = 0; b < 2; b++)
        {
          Case *c = &cases[t][l][b];
          g_autoptr (KvevConfig) config = bench_config_new ("tcp://127.0.0.1:*", 0, l == 1);
          g_autofree char *base_id = NULL;
          g_autofree char *base_label = NULL;
          g_autofree char *id = NULL;
          g_autofree char *label = NULL;
          gsize payload_len = 0;

          memset (c, 0, sizeof *c);
          c->type = (RefEventType) t;
          c->legacy = l == 1;
          c->batch = batches[b];
          c->context = &contexts[l].wire;
          c->timestamp_ms = timestamp_ms;
          for (i = 0; i < c->batch; i++)
            {
              RefEvent *spec = &c->specs[i];

              spec->type = c->type;
              spec->medium = c->type == REF_EVENT_CLEARED ? KVEV_MEDIA_NONE
                             : i % 2 == 0                 ? KVEV_MEDIA_CPU
                                                          : KVEV_MEDIA_DISK;
              spec->event_id = 1000000 + i;
              spec->tenant = BENCH_TENANT;
              spec->tenant_len = strlen (BENCH_TENANT);
              if (c->type != REF_EVENT_CLEARED)
                {
                  spec->key = keys + (gsize) settings->key_len * i;
                  spec->key_len = settings->key_len;
                }
            }
          c->kvev = bench_batch_new (config, c->specs, c->batch);

          base_id = g_strdup_printf ("msgpack.%s.legacy_%s.batch%u", type_ids[t], l ? "on" : "off",
                                     c->batch);
          /* TRANSLATORS: the event type, legacy on/off, the batch size. */
          base_label = g_strdup_printf (_ ("msgpack-c key by key: %s, legacy %s, batch %u"),
                                        type_ids[t], l ? _ ("on") : _ ("off"), c->batch);
          id = g_strdup_printf ("kvev.%s.legacy_%s.batch%u", type_ids[t], l ? "on" : "off",
                                c->batch);
          label = g_strdup_printf (_ ("kvev_encode_batch: %s, legacy %s, batch %u"), type_ids[t],
                                   l ? _ ("on") : _ ("off"), c->batch);
          baselines[t][l][b]
              = bench_section_add_figure (section, base_id, base_label, "ns/event", NULL);
          figures[t][l][b]
              = bench_section_add_figure (section, id, label, "ns/event", baselines[t][l][b]);
          if (!same_bytes (c, &payload_len))
            bench_figure_set_note (figures[t][l][b],
                                   g_strdup (_ ("BYTES DIFFER from the baseline")));
          else
            bench_figure_set_note (figures[t][l][b],
                                   g_strdup_printf (_ ("same %zu bytes"), (size_t) payload_len));
          bench_figure_add_extra (figures[t][l][b], "payload_bytes", (double) payload_len);
          base_iterations[t][l][b] = calibrate (run_baseline, c, duration_ms);
          kvev_iterations[t][l][b] = calibrate (run_kvev, c, duration_ms);
        }

  for (run = 0; run < settings->runs; run++)
    {
      bench_progress (settings, _ ("encoding, run %u of %u"), run + 1, settings->runs);
      for (t = 0; t < 3; t++)
        for (l = 0; l < 2; l++)
          for (b = 0; b < 2; b++)
            {
              const Case *c = &cases[t][l][b];

              bench_figure_add (baselines[t][l][b],
                                ns_per_event (run_baseline, c, base_iterations[t][l][b]));
              bench_figure_add (figures[t][l][b],
                                ns_per_event (run_kvev, c, kvev_iterations[t][l][b]));
            }
    }

  for (t = 0; t < 3; t++)
    for (l = 0; l < 2; l++)
      for (b = 0; b < 2; b++)
        bench_batch_free (cases[t][l][b].kvev);
  for (l = 0; l < 2; l++)
    context_clear (&contexts[l]);
  (void) error;
  return TRUE;
}
