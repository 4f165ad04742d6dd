/* bench-baseline.h: the payload of a batch packed key by key with
 * msgpack-c: every key string and every value through msgpack_pack_*(),
 * into a fresh msgpack_sbuffer, in the order kvevents(7) gives under
 * "Event maps".  It is what a publisher without a pre-encoded context
 * does per batch, and so the baseline of kvevents-bench's encoding
 * figures; and, written apart from the library's encoder, the reference
 * that tests/test-encode.c holds that encoder to, byte for byte.
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEV_BENCH_BASELINE_H
#define KVEV_BENCH_BASELINE_H

#include "bench-event.h"

#include <msgpack.h>

G_BEGIN_DECLS

/* What the maps repeat from the publisher's configuration. */
typedef struct
{
  const char *backend_id;
  const char *model_name;      /* NULL or "": nil */
  guint32 block_size;          /* 0: nil */
  const char *additional_salt; /* NULL or "": nil */
  const char *lora_name;       /* NULL or "": nil */
  guint32 dp_rank;
  gboolean legacy; /* kv_events_emit_legacy_compat */
} BenchWireContext;

/* Initialises sbuf and packs [timestamp_ms, [maps], dp_rank] into it; the
 * caller destroys it.  A tenant, key or group is a str when it is UTF-8
 * (NULs allowed: kvev_bytes_are_utf8 ()) and a bin otherwise, as the
 * library sends it. */
void bench_baseline_encode (msgpack_sbuffer *sbuf, const BenchWireContext *context,
                            gint64 timestamp_ms, const BenchEventSpec *events, guint n_events);

G_END_DECLS

#endif /* KVEV_BENCH_BASELINE_H */
