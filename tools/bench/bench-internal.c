/* bench-internal.c: the library's internals kvevents-bench-internal
 * reaches; see bench-internal.h.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include "publisher.h"
#include "events/encode.h"
#include "config/settings.h"

#include "bench-internal.h"
#include "bench-util.h"

G_STATIC_ASSERT ((int) REF_EVENT_STORED == (int) KVEV_EVENT_STORED);
G_STATIC_ASSERT ((int) REF_EVENT_REMOVED == (int) KVEV_EVENT_REMOVED);
G_STATIC_ASSERT ((int) REF_EVENT_CLEARED == (int) KVEV_EVENT_CLEARED);

/* The encoder runs on a publisher's settings; the benchmark's
 * configurations always validate. */
static KvevSettings *
settings_of (const KvevConfig *config)
{
  g_autoptr (GError) error = NULL;
  KvevSettings *settings = kvev_settings_new (config, &error);

  g_assert_no_error (error);
  return settings;
}

void
bench_publisher_hold (KvevPublisher *publisher, gboolean hold)
{
  g_return_if_fail (publisher != NULL && kvev_publisher_is_enabled (publisher));

  kvev_queue_hold (kvev_publisher_get_queue (publisher), hold);
}

struct _BenchBatch
{
  KvevSettings *settings;
  KvevEncoder *encoder;
  KvevCall **calls;
  KvevEvent *events;
  guint n_events;
};

BenchBatch *
bench_batch_new (const KvevConfig *config, const RefEvent *specs, guint n_events)
{
  BenchBatch *batch = g_new0 (BenchBatch, 1);
  guint i;

  batch->settings = settings_of (config);
  batch->encoder = kvev_encoder_new (batch->settings);
  batch->calls = g_new0 (KvevCall *, n_events);
  batch->events = g_new0 (KvevEvent, n_events);
  batch->n_events = n_events;
  /* One call an event, as a one-tier publish call makes it. */
  for (i = 0; i < n_events; i++)
    {
      const RefEvent *spec = &specs[i];
      KvevCall *call;

      if (spec->type == REF_EVENT_CLEARED)
        call = kvev_call_new_cleared (spec->tenant, spec->tenant_len);
      else
        call = kvev_call_new_keyed (
            spec->type == REF_EVENT_REMOVED ? spec->medium : KVEV_MEDIA_NONE,
            spec->type == REF_EVENT_STORED ? spec->medium : KVEV_MEDIA_NONE, spec->tenant,
            spec->tenant_len, spec->key, spec->key_len, spec->group, spec->group_len);
      call->first_event_id = spec->event_id;
      kvev_call_events (call, 0, !kvev_call_is_utf8 (call), &batch->events[i]);
      batch->calls[i] = call;
    }
  return batch;
}

char *
bench_batch_encode (BenchBatch *batch, gint64 timestamp_ms, gsize *len)
{
  return kvev_encode_batch (batch->encoder, timestamp_ms, batch->events, batch->n_events, len);
}

void
bench_batch_free (BenchBatch *batch)
{
  guint i;

  if (batch == NULL)
    return;
  for (i = 0; i < batch->n_events; i++)
    g_free (batch->calls[i]);
  g_free (batch->calls);
  g_free (batch->events);
  kvev_encoder_free (batch->encoder);
  kvev_settings_free (batch->settings);
  g_free (batch);
}

double
bench_encoder_new_ns (const KvevConfig *config, guint iterations)
{
  g_autoptr (KvevSettings) settings = settings_of (config);
  gint64 start = bench_now_ns ();
  guint i;

  for (i = 0; i < iterations; i++)
    kvev_encoder_free (kvev_encoder_new (settings));
  return (double) (bench_now_ns () - start) / MAX (iterations, 1);
}
