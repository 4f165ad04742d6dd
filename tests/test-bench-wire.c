/* test-bench-wire.c: kvevents-bench's raw baselines send the library's
 * bytes.  Their payloads are made from an event the shipped library
 * published (tools/bench/bench-wire.h); each must equal, byte for byte,
 * the key-by-key reference (tests/reference-encode.h) that
 * tests/test-encode.c holds the library's encoder to, for every setting
 * the benchmark's phases use: legacy keys on and off, short and long keys
 * (str8, str16 and str32 headers), batches of 1 to 4096 events.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include "bench-util.h"
#include "bench-wire.h"
#include "reference-encode.h"

#include <stdlib.h>
#include <string.h>

#define KEY_RING 16
#define FIRST_EVENT_ID G_GUINT64_CONSTANT (1000000)
#define TIMESTAMP G_GINT64_CONSTANT (1717171717171)

/* What bench_config_new () sets, as the reference takes it. */
static RefContext
context_of (gboolean legacy)
{
  RefContext context = {
    .backend_id = "bench-master-0",
    .model_name = "bench-model-7b",
    .block_size = 256,
    .dp_rank = 0,
    .legacy = legacy,
  };

  return context;
}

static void
assert_same_as_reference (gboolean legacy, guint key_len, guint n_events)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (KvevConfig) config = bench_config_new ("tcp://127.0.0.1:*", 1024, legacy);
  g_autoptr (BenchWire) wire = bench_wire_capture (config, &error);
  g_autofree char *keys = bench_make_keys (key_len, KEY_RING);
  g_autofree RefEvent *events = g_new0 (RefEvent, n_events);
  RefContext context = context_of (legacy);
  msgpack_sbuffer sbuf;
  char *payload;
  gsize len;
  guint i;

  g_assert_no_error (error);
  for (i = 0; i < n_events; i++)
    {
      events[i].type = REF_EVENT_STORED;
      events[i].medium = KVEV_MEDIA_CPU;
      events[i].event_id = FIRST_EVENT_ID + i;
      events[i].tenant = BENCH_TENANT;
      events[i].tenant_len = strlen (BENCH_TENANT);
      events[i].key = keys + (gsize) key_len * (i % KEY_RING);
      events[i].key_len = key_len;
    }
  ref_encode (&sbuf, &context, TIMESTAMP, events, n_events);
  payload = bench_wire_encode (wire, TIMESTAMP, FIRST_EVENT_ID, keys, key_len, KEY_RING, n_events,
                               &len);
  g_assert_cmpmem (payload, len, sbuf.data, sbuf.size);
  free (payload);
  msgpack_sbuffer_destroy (&sbuf);
}

static void
test_same_bytes (void)
{
  static const guint key_lens[] = { 1, 40, 255, 256, 1024, 65535, 65536 };
  static const guint batches[] = { 1, 64, 4096 };
  guint legacy, k, b;

  for (legacy = 0; legacy < 2; legacy++)
    for (k = 0; k < G_N_ELEMENTS (key_lens); k++)
      for (b = 0; b < G_N_ELEMENTS (batches); b++)
        if (key_lens[k] < 65535 || batches[b] < 4096)
          assert_same_as_reference (legacy, key_lens[k], batches[b]);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/kvevents/bench/wire-same-bytes", test_same_bytes);
  return g_test_run ();
}
