/* bench-encode.c: encoding, ns per event, the library's encoder against
 * the same payload written key by key with msgpack-c's packer.
 *
 * The baseline packs [timestamp_ms, [maps], dp_rank] into a fresh
 * msgpack_sbuffer, every key string and every value, in the order of
 * wire-format.md, and frees it: what a publisher without a pre-encoded
 * context does per batch.  Its bytes must equal the library's, which is
 * checked once per figure, so the two encode the same thing.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include "bench.h"

#include <stdlib.h>
#include <string.h>
#include <glib/gi18n.h>
#include <msgpack.h>

#define MAX_BATCH 64

/* The context a baseline packs, from the same configuration. */
typedef struct
{
  char *backend_id;
  char *model_name;
  guint32 block_size;
  char *additional_salt;
  char *lora_name;
  guint32 dp_rank;
  gboolean legacy;
} Context;

typedef struct
{
  BenchEventType type;
  gboolean legacy;
  guint batch;
  const Context *context;
  BenchEventSpec specs[MAX_BATCH];
  BenchBatch *kvev;
  gint64 timestamp_ms;
} Case;

static const char *const type_ids[] = { "stored", "removed", "cleared" };
static const char *const type_names[] = { "stored", "removed", "cleared" };
static const char *const legacy_names[] = { "BlockStored", "BlockRemoved", "AllBlocksCleared" };

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
  context->block_size = config_uint (config, "kv_events_block_size");
  context->additional_salt = kvev_config_get (config, "kv_events_additional_salt");
  context->lora_name = kvev_config_get (config, "kv_events_lora_name");
  context->dp_rank = config_uint (config, "kv_events_dp_rank");
  context->legacy = strcmp (legacy, "true") == 0;
}

static void
context_clear (Context *context)
{
  g_free (context->backend_id);
  g_free (context->model_name);
  g_free (context->additional_salt);
  g_free (context->lora_name);
}

/* ---- the baseline: every key and value through msgpack_pack_*() --------- */

static void
pack_str (msgpack_packer *pk, const char *s, size_t len)
{
  msgpack_pack_str (pk, len);
  msgpack_pack_str_body (pk, s, len);
}

static void
pack_cstr (msgpack_packer *pk, const char *s)
{
  pack_str (pk, s, strlen (s));
}

static void
pack_cstr_or_nil (msgpack_packer *pk, const char *s)
{
  if (s == NULL || *s == '\0')
    msgpack_pack_nil (pk);
  else
    pack_cstr (pk, s);
}

static void
pack_event (msgpack_packer *pk, const Context *c, const BenchEventSpec *e, gint64 ts)
{
  gboolean keyed = e->type != BENCH_EVENT_CLEARED;
  guint size;

  switch (e->type)
    {
    case BENCH_EVENT_STORED:
      size = c->legacy ? 20 : 17;
      break;
    case BENCH_EVENT_REMOVED:
      size = c->legacy ? 17 : 15;
      break;
    case BENCH_EVENT_CLEARED:
    default:
      size = c->legacy ? 12 : 11;
      break;
    }
  msgpack_pack_map (pk, size);
  pack_cstr (pk, "event_id");
  msgpack_pack_uint64 (pk, e->event_id);
  pack_cstr (pk, "timestamp");
  msgpack_pack_int64 (pk, ts);
  pack_cstr (pk, "event_type");
  pack_cstr (pk, type_names[e->type]);
  if (c->legacy)
    {
      pack_cstr (pk, "type");
      pack_cstr (pk, legacy_names[e->type]);
    }
  pack_cstr (pk, "model_name");
  pack_cstr_or_nil (pk, c->model_name);
  pack_cstr (pk, "block_size");
  if (c->block_size == 0)
    msgpack_pack_nil (pk);
  else
    msgpack_pack_uint32 (pk, c->block_size);
  pack_cstr (pk, "additional_salt");
  pack_cstr_or_nil (pk, c->additional_salt);
  pack_cstr (pk, "lora_name");
  pack_cstr_or_nil (pk, c->lora_name);
  pack_cstr (pk, "tenant_id");
  if (e->tenant_len > 0)
    pack_str (pk, e->tenant, e->tenant_len);
  else
    pack_cstr (pk, "default");
  pack_cstr (pk, "backend_id");
  pack_cstr (pk, c->backend_id);
  pack_cstr (pk, "medium");
  if (keyed)
    pack_cstr (pk, e->medium == KVEV_MEDIA_DISK ? "disk" : "cpu");
  else
    msgpack_pack_nil (pk);
  pack_cstr (pk, "dp_rank");
  msgpack_pack_uint32 (pk, c->dp_rank);
  if (!keyed)
    return;
  pack_cstr (pk, "group_id");
  if (e->group_len > 0)
    pack_str (pk, e->group, e->group_len);
  else
    msgpack_pack_nil (pk);
  pack_cstr (pk, "object_key");
  pack_str (pk, e->key, e->key_len);
  pack_cstr (pk, "seq_hashes");
  msgpack_pack_array (pk, 0);
  if (c->legacy)
    {
      pack_cstr (pk, "block_hashes");
      msgpack_pack_array (pk, 0);
    }
  pack_cstr (pk, "base_block_idx");
  msgpack_pack_nil (pk);
  if (e->type != BENCH_EVENT_STORED)
    return;
  pack_cstr (pk, "parent_hash");
  msgpack_pack_nil (pk);
  pack_cstr (pk, "token_ids");
  msgpack_pack_nil (pk);
  if (c->legacy)
    {
      pack_cstr (pk, "parent_block_hash");
      msgpack_pack_nil (pk);
    }
}

/* Returns the payload in a fresh sbuffer; the caller destroys it. */
static void
baseline_encode (const Case *c, msgpack_sbuffer *sbuf)
{
  msgpack_packer pk;
  guint i;

  msgpack_sbuffer_init (sbuf);
  msgpack_packer_init (&pk, sbuf, msgpack_sbuffer_write);
  msgpack_pack_array (&pk, 3);
  msgpack_pack_int64 (&pk, c->timestamp_ms);
  msgpack_pack_array (&pk, c->batch);
  for (i = 0; i < c->batch; i++)
    pack_event (&pk, c->context, &c->specs[i], c->timestamp_ms);
  msgpack_pack_uint32 (&pk, c->context->dp_rank);
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
                                      _("Encoding: ns per event, kvev_encode_batch against "
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
          c->type = (BenchEventType) t;
          c->legacy = l == 1;
          c->batch = batches[b];
          c->context = &contexts[l];
          c->timestamp_ms = timestamp_ms;
          for (i = 0; i < c->batch; i++)
            {
              BenchEventSpec *spec = &c->specs[i];

              spec->type = c->type;
              spec->medium = c->type == BENCH_EVENT_CLEARED ? KVEV_MEDIA_NONE
                             : i % 2 == 0                   ? KVEV_MEDIA_CPU
                                                            : KVEV_MEDIA_DISK;
              spec->event_id = 1000000 + i;
              spec->tenant = BENCH_TENANT;
              spec->tenant_len = strlen (BENCH_TENANT);
              if (c->type != BENCH_EVENT_CLEARED)
                {
                  spec->key = keys + (gsize) settings->key_len * i;
                  spec->key_len = settings->key_len;
                }
            }
          c->kvev = bench_batch_new (config, c->specs, c->batch);

          base_id = g_strdup_printf ("msgpack.%s.legacy_%s.batch%u", type_ids[t], l ? "on" : "off",
                                     c->batch);
          /* TRANSLATORS: the event type, legacy on/off, the batch size. */
          base_label = g_strdup_printf (_("msgpack-c key by key: %s, legacy %s, batch %u"),
                                        type_ids[t], l ? _("on") : _("off"), c->batch);
          id = g_strdup_printf ("kvev.%s.legacy_%s.batch%u", type_ids[t], l ? "on" : "off",
                                c->batch);
          label = g_strdup_printf (_("kvev_encode_batch: %s, legacy %s, batch %u"), type_ids[t],
                                   l ? _("on") : _("off"), c->batch);
          baselines[t][l][b]
              = bench_section_add_figure (section, base_id, base_label, "ns/event", NULL);
          figures[t][l][b]
              = bench_section_add_figure (section, id, label, "ns/event", baselines[t][l][b]);
          if (!same_bytes (c, &payload_len))
            bench_figure_set_note (figures[t][l][b],
                                   g_strdup (_("BYTES DIFFER from the baseline")));
          else
            bench_figure_set_note (
                figures[t][l][b],
                g_strdup_printf (_("same %zu bytes"), (size_t) payload_len));
          bench_figure_add_extra (figures[t][l][b], "payload_bytes", (double) payload_len);
          base_iterations[t][l][b] = calibrate (run_baseline, c, duration_ms);
          kvev_iterations[t][l][b] = calibrate (run_kvev, c, duration_ms);
        }

  for (run = 0; run < settings->runs; run++)
    {
      bench_progress (settings, _("encoding, run %u of %u"), run + 1, settings->runs);
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
