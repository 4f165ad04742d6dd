/* reference-encode.c: a batch packed key by key; see
 * reference-encode.h.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include "reference-encode.h"
#include <base/utf8.h>

#include <string.h>

static const char *const type_names[] = { "stored", "removed", "cleared" };
static const char *const legacy_names[] = { "BlockStored", "BlockRemoved", "AllBlocksCleared" };

static void
pack_cstr (msgpack_packer *pk, const char *s)
{
  msgpack_pack_str_with_body (pk, s, strlen (s));
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
pack_bytes (msgpack_packer *pk, const char *bytes, gsize len)
{
  if (kvev_bytes_are_utf8 (bytes, len))
    msgpack_pack_str_with_body (pk, bytes, len);
  else
    msgpack_pack_bin_with_body (pk, bytes, len);
}

/* The number of keys a map has: the rows of kvevents(7)'s table that
 * apply to the event's type, the legacy ones only with legacy on. */
static guint
map_size (RefEventType type, gboolean legacy)
{
  switch (type)
    {
    case REF_EVENT_STORED:
      return legacy ? 20 : 17;
    case REF_EVENT_REMOVED:
      return legacy ? 17 : 15;
    case REF_EVENT_CLEARED:
    default:
      return legacy ? 12 : 11;
    }
}

static void
pack_event (msgpack_packer *pk, const RefContext *c, const RefEvent *e, gint64 ts)
{
  gboolean keyed = e->type != REF_EVENT_CLEARED;

  msgpack_pack_map (pk, map_size (e->type, c->legacy));
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
    pack_bytes (pk, e->tenant, e->tenant_len);
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
    pack_bytes (pk, e->group, e->group_len);
  else
    msgpack_pack_nil (pk);
  pack_cstr (pk, "object_key");
  pack_bytes (pk, e->key, e->key_len);
  pack_cstr (pk, "seq_hashes");
  msgpack_pack_array (pk, 0);
  if (c->legacy)
    {
      pack_cstr (pk, "block_hashes");
      msgpack_pack_array (pk, 0);
    }
  pack_cstr (pk, "base_block_idx");
  msgpack_pack_nil (pk);
  if (e->type != REF_EVENT_STORED)
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

void
ref_encode (msgpack_sbuffer *sbuf, const RefContext *context, gint64 timestamp_ms,
            const RefEvent *events, guint n_events)
{
  msgpack_packer pk;
  guint i;

  msgpack_sbuffer_init (sbuf);
  msgpack_packer_init (&pk, sbuf, msgpack_sbuffer_write);
  msgpack_pack_array (&pk, 3);
  msgpack_pack_int64 (&pk, timestamp_ms);
  msgpack_pack_array (&pk, n_events);
  for (i = 0; i < n_events; i++)
    pack_event (&pk, context, &events[i], timestamp_ms);
  msgpack_pack_uint32 (&pk, context->dp_rank);
}
