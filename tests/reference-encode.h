/* reference-encode.h: the payload of a batch packed key by key with
 * msgpack-c: every key string and every value through msgpack_pack_*(),
 * into a fresh msgpack_sbuffer, in the order kvevents(7) gives under
 * "Event maps".  Written apart from the library's encoder, from the
 * manual page alone, it is the reference tests/test-encode.c holds that
 * encoder to, byte for byte; and, being what a publisher without a
 * pre-encoded context does per batch, the baseline of the encode section
 * of kvevents-bench-internal, which links this copy so that its baseline
 * is the one the tests prove equal to the library.
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEV_REFERENCE_ENCODE_H
#define KVEV_REFERENCE_ENCODE_H

#include <glib.h>
#include <kvevents/kvevents.h>
#include <msgpack.h>

G_BEGIN_DECLS

/* The event types of kvevents(7); their values are the library's own
 * (checked where the two meet: tests/test-encode.c, and
 * tools/bench/bench-internal.c). */
typedef enum
{
  REF_EVENT_STORED,
  REF_EVENT_REMOVED,
  REF_EVENT_CLEARED,
} RefEventType;

/* One event of a batch. */
typedef struct
{
  RefEventType type;
  KvevMedia medium; /* KVEV_MEDIA_NONE for cleared */
  guint64 event_id;
  const char *tenant; /* tenant_len 0: "default" */
  gsize tenant_len;
  const char *key;
  gsize key_len;
  const char *group; /* group_len 0: nil */
  gsize group_len;
} RefEvent;

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
} RefContext;

/* Initialises sbuf and packs [timestamp_ms, [maps], dp_rank] into it; the
 * caller destroys it.  A tenant, key or group is a str when it is UTF-8
 * (NULs allowed: kvev_bytes_are_utf8 ()) and a bin otherwise, as the
 * library sends it. */
void ref_encode (msgpack_sbuffer *sbuf, const RefContext *context, gint64 timestamp_ms,
                 const RefEvent *events, guint n_events);

G_END_DECLS

#endif /* KVEV_REFERENCE_ENCODE_H */
