/* test-encode.c: the msgpack payload, checked against kvevents(7),
 * "WIRE FORMAT", by decoding it and by comparing it with a payload packed
 * key by key (tests/reference-encode.c).
 * SPDX-License-Identifier: Apache-2.0
 */
#include "internal.h"
#include "events/encode.h"
#include "config/settings.h"
#include <base/utf8.h>

#include "reference-encode.h"
#include "test-util.h"

#include <msgpack.h>
#include <stdlib.h>
#include <string.h>

#define TIMESTAMP G_GINT64_CONSTANT (1717171717171)

/* ---- fixtures ---------------------------------------------------------- */

/* The encoder reads only the fields below, so the tests fill the private
 * struct directly and do not depend on flag parsing. */
static KvevSettings *
test_settings_new (gboolean legacy)
{
  KvevSettings *config = g_new0 (KvevSettings, 1);

  config->enable = TRUE;
  config->backend_id = g_strdup ("mooncake-master-0");
  config->model_name = g_strdup ("meta-llama/Llama-3.1-8B");
  config->block_size = 16;
  config->additional_salt = g_strdup ("salt-1");
  config->lora_name = g_strdup ("lora-a");
  config->dp_rank = 0;
  config->emit_object_key = TRUE;
  config->emit_legacy_compat = legacy;
  return config;
}

static void
test_settings_free (KvevSettings *config)
{
  g_free (config->backend_id);
  g_free (config->model_name);
  g_free (config->additional_salt);
  g_free (config->lora_name);
  g_free (config);
}

static void
set_text (char **field, const char *value)
{
  g_free (*field);
  *field = g_strdup (value);
}

/* An event the encoder reads and the one-event call it points into, in
 * one allocation that g_free() releases.  Built field by field, so a test
 * can also make events no publish call would. */
static KvevEvent *
event_new_len (KvevEventType type, KvevMedia medium, guint64 id, const char *tenant,
               gsize tenant_len, const char *key, gsize key_len, const char *group, gsize group_len)
{
  KvevEvent *event
      = g_malloc0 (sizeof (KvevEvent) + sizeof (KvevCall) + tenant_len + key_len + group_len);
  KvevCall *call = (KvevCall *) (event + 1);

  call->first_event_id = id;
  call->tenant_len = (guint32) tenant_len;
  call->key_len = (guint32) key_len;
  call->group_len = (guint32) group_len;
  call->removed = type == KVEV_EVENT_REMOVED ? medium : KVEV_MEDIA_NONE;
  call->stored = type == KVEV_EVENT_STORED ? medium : KVEV_MEDIA_NONE;
  call->n_events = 1;
  if (tenant_len > 0)
    memcpy (call->strings, tenant, tenant_len);
  if (key_len > 0)
    memcpy (call->strings + tenant_len, key, key_len);
  if (group_len > 0)
    memcpy (call->strings + tenant_len + key_len, group, group_len);
  event->call = call;
  event->event_id = id;
  event->type = (guint8) type;
  event->medium = (guint8) medium;
  /* What the worker tells the encoder about every call. */
  event->not_utf8 = !kvev_call_is_utf8 (call);
  return event;
}

/* The encoder takes the events themselves, side by side. */
static char *
encode_with (KvevEncoder *encoder, gint64 timestamp, KvevEvent *const *events, guint n_events,
             gsize *len)
{
  g_autofree KvevEvent *run = g_new (KvevEvent, MAX (n_events, 1));
  guint i;

  for (i = 0; i < n_events; i++)
    run[i] = *events[i];
  return kvev_encode_batch (encoder, timestamp, run, n_events, len);
}

/* NUL-terminated strings; NULL means none (length 0). */
static KvevEvent *
event_new (KvevEventType type, KvevMedia medium, guint64 id, const char *tenant, const char *key,
           const char *group)
{
  return event_new_len (type, medium, id, tenant, tenant ? strlen (tenant) : 0, key,
                        key ? strlen (key) : 0, group, group ? strlen (group) : 0);
}

static char *
encode (const KvevSettings *config, gint64 timestamp, KvevEvent **events, guint n_events,
        gsize *len)
{
  KvevEncoder *encoder = kvev_encoder_new (config);
  char *buf;

  g_assert_nonnull (encoder);
  buf = encode_with (encoder, timestamp, events, n_events, len);
  g_assert_nonnull (buf);
  g_assert_cmpuint (*len, >, 0);
  kvev_encoder_free (encoder);
  return buf;
}

static void
free_events (KvevEvent **events, guint n_events)
{
  guint i;

  for (i = 0; i < n_events; i++)
    g_free (events[i]);
}

/* ---- decoding ---------------------------------------------------------- */

typedef struct
{
  msgpack_unpacked unpacked;
  gint64 timestamp;
  const msgpack_object *maps;
  guint n_maps;
  guint64 dp_rank;
} Payload;

static gint64
object_int (const msgpack_object *o)
{
  if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
    {
      g_assert_cmpuint (o->via.u64, <=, G_MAXINT64);
      return (gint64) o->via.u64;
    }
  g_assert_cmpint (o->type, ==, MSGPACK_OBJECT_NEGATIVE_INTEGER);
  return o->via.i64;
}

/* Decodes the payload and checks the envelope: exactly one msgpack object
 * filling the buffer, [timestamp_ms, [maps...], dp_rank]. */
static void
payload_decode (Payload *p, const char *buf, gsize len)
{
  const msgpack_object *root;
  const msgpack_object *list;
  size_t offset = 0;

  msgpack_unpacked_init (&p->unpacked);
  g_assert_cmpint (msgpack_unpack_next (&p->unpacked, buf, len, &offset), ==,
                   MSGPACK_UNPACK_SUCCESS);
  g_assert_cmpuint (offset, ==, len);

  root = &p->unpacked.data;
  g_assert_cmpint (root->type, ==, MSGPACK_OBJECT_ARRAY);
  g_assert_cmpuint (root->via.array.size, ==, 3);
  p->timestamp = object_int (&root->via.array.ptr[0]);

  list = &root->via.array.ptr[1];
  g_assert_cmpint (list->type, ==, MSGPACK_OBJECT_ARRAY);
  g_assert_cmpuint (list->via.array.size, >, 0);
  p->maps = list->via.array.ptr;
  p->n_maps = list->via.array.size;

  g_assert_cmpint (root->via.array.ptr[2].type, ==, MSGPACK_OBJECT_POSITIVE_INTEGER);
  p->dp_rank = root->via.array.ptr[2].via.u64;
}

static void
payload_clear (Payload *p)
{
  msgpack_unpacked_destroy (&p->unpacked);
}

static void
assert_nil (const msgpack_object *o)
{
  g_assert_nonnull (o);
  g_assert_cmpint (o->type, ==, MSGPACK_OBJECT_NIL);
}

static void
assert_uint (const msgpack_object *o, guint64 value)
{
  g_assert_nonnull (o);
  g_assert_cmpint (o->type, ==, MSGPACK_OBJECT_POSITIVE_INTEGER);
  g_assert_cmpuint (o->via.u64, ==, value);
}

static void
assert_str_len (const msgpack_object *o, const char *bytes, gsize len)
{
  g_assert_nonnull (o);
  g_assert_cmpint (o->type, ==, MSGPACK_OBJECT_STR);
  g_assert_cmpmem (o->via.str.ptr, o->via.str.size, bytes, len);
}

static void
assert_str (const msgpack_object *o, const char *text)
{
  assert_str_len (o, text, strlen (text));
}

static void
assert_bin (const msgpack_object *o, const char *bytes, gsize len)
{
  g_assert_nonnull (o);
  g_assert_cmpint (o->type, ==, MSGPACK_OBJECT_BIN);
  g_assert_cmpmem (o->via.bin.ptr, o->via.bin.size, bytes, len);
}

static void
assert_empty_array (const msgpack_object *o)
{
  g_assert_nonnull (o);
  g_assert_cmpint (o->type, ==, MSGPACK_OBJECT_ARRAY);
  g_assert_cmpuint (o->via.array.size, ==, 0);
}

static void
assert_text_or_nil (const msgpack_object *o, const char *text)
{
  if (text == NULL || *text == '\0')
    assert_nil (o);
  else
    assert_str (o, text);
}

/* The call's strings: str when UTF-8, bin otherwise, bytes exact. */
static void
assert_bytes (const msgpack_object *o, const char *bytes, gsize len)
{
  if (kvev_bytes_are_utf8 (bytes, len))
    assert_str_len (o, bytes, len);
  else
    assert_bin (o, bytes, len);
}

/* kvevents(7)'s table of event map keys ("Event maps"), in emission
 * order.  Per
 * column: 'v' a value, 'n' nil, '-' absent. */
static const struct
{
  const char *key;
  char column[3]; /* stored, removed, cleared */
  gboolean legacy_only;
} wire_table[] = {
  { "event_id", { 'v', 'v', 'v' }, FALSE },        { "timestamp", { 'v', 'v', 'v' }, FALSE },
  { "event_type", { 'v', 'v', 'v' }, FALSE },      { "type", { 'v', 'v', 'v' }, TRUE },
  { "model_name", { 'v', 'v', 'v' }, FALSE },      { "block_size", { 'v', 'v', 'v' }, FALSE },
  { "additional_salt", { 'v', 'v', 'v' }, FALSE }, { "lora_name", { 'v', 'v', 'v' }, FALSE },
  { "tenant_id", { 'v', 'v', 'v' }, FALSE },       { "backend_id", { 'v', 'v', 'v' }, FALSE },
  { "medium", { 'v', 'v', 'n' }, FALSE },          { "dp_rank", { 'v', 'v', 'v' }, FALSE },
  { "group_id", { 'v', 'v', '-' }, FALSE },        { "object_key", { 'v', 'v', '-' }, FALSE },
  { "seq_hashes", { 'v', 'v', '-' }, FALSE },      { "block_hashes", { 'v', 'v', '-' }, TRUE },
  { "base_block_idx", { 'n', 'n', '-' }, FALSE },  { "parent_hash", { 'n', '-', '-' }, FALSE },
  { "token_ids", { 'n', '-', '-' }, FALSE },       { "parent_block_hash", { 'n', '-', '-' }, TRUE },
};

static const char *const type_names[] = { "stored", "removed", "cleared" };
static const char *const legacy_names[] = { "BlockStored", "BlockRemoved", "AllBlocksCleared" };

static void
assert_value (const char *key, const msgpack_object *o, const KvevSettings *config,
              gint64 timestamp, const KvevEvent *event)
{
  if (strcmp (key, "event_id") == 0)
    assert_uint (o, event->event_id);
  else if (strcmp (key, "timestamp") == 0)
    g_assert_cmpint (object_int (o), ==, timestamp);
  else if (strcmp (key, "event_type") == 0)
    assert_str (o, type_names[event->type]);
  else if (strcmp (key, "type") == 0)
    assert_str (o, legacy_names[event->type]);
  else if (strcmp (key, "model_name") == 0)
    assert_text_or_nil (o, config->model_name);
  else if (strcmp (key, "block_size") == 0)
    {
      if (config->block_size == 0)
        assert_nil (o);
      else
        assert_uint (o, config->block_size);
    }
  else if (strcmp (key, "additional_salt") == 0)
    assert_text_or_nil (o, config->additional_salt);
  else if (strcmp (key, "lora_name") == 0)
    assert_text_or_nil (o, config->lora_name);
  else if (strcmp (key, "tenant_id") == 0)
    {
      if (event->call->tenant_len == 0)
        assert_str (o, "default");
      else
        assert_bytes (o, kvev_call_tenant (event->call), event->call->tenant_len);
    }
  else if (strcmp (key, "backend_id") == 0)
    assert_str (o, config->backend_id);
  else if (strcmp (key, "medium") == 0)
    assert_str (o, event->medium == KVEV_MEDIA_CPU ? "cpu" : "disk");
  else if (strcmp (key, "dp_rank") == 0)
    assert_uint (o, config->dp_rank);
  else if (strcmp (key, "group_id") == 0)
    {
      if (event->call->group_len == 0)
        assert_nil (o);
      else
        assert_bytes (o, kvev_call_group (event->call), event->call->group_len);
    }
  else if (strcmp (key, "object_key") == 0)
    assert_bytes (o, kvev_call_key (event->call), event->call->key_len);
  else if (strcmp (key, "seq_hashes") == 0 || strcmp (key, "block_hashes") == 0)
    assert_empty_array (o);
  else
    g_assert_not_reached ();
}

/* Every key of the table that applies, in order, nothing else, each
 * value of the right msgpack type and value. */
static void
assert_event_map (const msgpack_object *map, const KvevSettings *config, gint64 timestamp,
                  const KvevEvent *event)
{
  guint i;
  guint k = 0;

  g_assert_cmpint (map->type, ==, MSGPACK_OBJECT_MAP);
  for (i = 0; i < G_N_ELEMENTS (wire_table); i++)
    {
      char presence = wire_table[i].column[event->type];
      const msgpack_object_kv *kv;

      if (presence == '-' || (wire_table[i].legacy_only && !config->emit_legacy_compat))
        continue;
      g_assert_cmpuint (k, <, map->via.map.size);
      kv = &map->via.map.ptr[k++];
      assert_str (&kv->key, wire_table[i].key);
      if (presence == 'n')
        assert_nil (&kv->val);
      else
        assert_value (wire_table[i].key, &kv->val, config, timestamp, event);
    }
  g_assert_cmpuint (k, ==, map->via.map.size);
}

/* Encodes one event and returns its decoded map in @p. */
static const msgpack_object *
encode_one (Payload *p, char **buf, const KvevSettings *config, KvevEvent *event)
{
  gsize len;

  *buf = encode (config, TIMESTAMP, &event, 1, &len);
  payload_decode (p, *buf, len);
  g_assert_cmpint (p->timestamp, ==, TIMESTAMP);
  g_assert_cmpuint (p->n_maps, ==, 1);
  return &p->maps[0];
}

/* ---- the reference: packed key by key with msgpack-c ------------------- */

static RefContext
ref_context (const KvevSettings *config)
{
  RefContext context = {
    .backend_id = config->backend_id,
    .model_name = config->model_name,
    .block_size = config->block_size,
    .additional_salt = config->additional_salt,
    .lora_name = config->lora_name,
    .dp_rank = config->dp_rank,
    .legacy = config->emit_legacy_compat,
  };

  return context;
}

static void
ref_payload (msgpack_sbuffer *sbuf, const KvevSettings *config, gint64 timestamp,
             KvevEvent **events, guint n_events)
{
  RefContext context = ref_context (config);
  g_autofree RefEvent *specs = g_new0 (RefEvent, MAX (n_events, 1));
  guint i;

  G_STATIC_ASSERT ((int) REF_EVENT_STORED == (int) KVEV_EVENT_STORED);
  G_STATIC_ASSERT ((int) REF_EVENT_REMOVED == (int) KVEV_EVENT_REMOVED);
  G_STATIC_ASSERT ((int) REF_EVENT_CLEARED == (int) KVEV_EVENT_CLEARED);
  for (i = 0; i < n_events; i++)
    {
      const KvevEvent *event = events[i];
      const KvevCall *call = event->call;

      specs[i].type = (RefEventType) event->type;
      specs[i].medium = (KvevMedia) event->medium;
      specs[i].event_id = event->event_id;
      specs[i].tenant = kvev_call_tenant (call);
      specs[i].tenant_len = call->tenant_len;
      specs[i].key = kvev_call_key (call);
      specs[i].key_len = call->key_len;
      specs[i].group = kvev_call_group (call);
      specs[i].group_len = call->group_len;
    }
  ref_encode (sbuf, &context, timestamp, specs, n_events);
}

static void
assert_matches_reference (const KvevSettings *config, gint64 timestamp, KvevEvent **events,
                          guint n_events)
{
  msgpack_sbuffer sbuf;
  char *buf;
  gsize len;

  buf = encode (config, timestamp, events, n_events, &len);
  ref_payload (&sbuf, config, timestamp, events, n_events);
  g_assert_cmpmem (buf, len, sbuf.data, sbuf.size);
  msgpack_sbuffer_destroy (&sbuf);
  free (buf);
}

/* ---- tests ------------------------------------------------------------- */

static void
test_free_null (void)
{
  kvev_encoder_free (NULL);
}

static void
test_envelope (void)
{
  KvevSettings *config = test_settings_new (TRUE);
  KvevEvent *event = event_new (KVEV_EVENT_STORED, KVEV_MEDIA_CPU, 1, "t", "k", NULL);
  Payload p;
  char *buf;
  gsize len;

  buf = encode (config, TIMESTAMP, &event, 1, &len);
  /* fixarray of 3, then a uint64 timestamp: a 41-bit value. */
  g_assert_cmpuint (len, >, 10);
  g_assert_cmphex ((guchar) buf[0], ==, 0x93);
  g_assert_cmphex ((guchar) buf[1], ==, 0xcf);
  payload_decode (&p, buf, len);
  g_assert_cmpint (p.timestamp, ==, TIMESTAMP);
  g_assert_cmpuint (p.n_maps, ==, 1);
  g_assert_cmpuint (p.dp_rank, ==, 0);
  g_assert_cmpint (object_int (test_map_get (&p.maps[0], "timestamp")), ==, TIMESTAMP);
  payload_clear (&p);
  free (buf);
  g_free (event);
  test_settings_free (config);
}

static void
test_dp_rank (void)
{
  static const guint32 ranks[] = { 0, 3, 127, 128, 70000, G_MAXUINT32 };
  guint r;

  for (r = 0; r < G_N_ELEMENTS (ranks); r++)
    {
      KvevSettings *config = test_settings_new (r % 2 == 0);
      KvevEvent *events[3];
      Payload p;
      char *buf;
      gsize len;
      guint i;

      config->dp_rank = ranks[r];
      events[0] = event_new (KVEV_EVENT_STORED, KVEV_MEDIA_CPU, 1, NULL, "a", NULL);
      events[1] = event_new (KVEV_EVENT_REMOVED, KVEV_MEDIA_DISK, 2, NULL, "b", NULL);
      events[2] = event_new (KVEV_EVENT_CLEARED, KVEV_MEDIA_NONE, 3, NULL, NULL, NULL);
      buf = encode (config, TIMESTAMP, events, 3, &len);
      payload_decode (&p, buf, len);
      g_assert_cmpuint (p.dp_rank, ==, ranks[r]);
      g_assert_cmpuint (p.n_maps, ==, 3);
      for (i = 0; i < 3; i++)
        assert_uint (test_map_get (&p.maps[i], "dp_rank"), ranks[r]);
      payload_clear (&p);
      free (buf);
      free_events (events, 3);
      test_settings_free (config);
    }
}

typedef struct
{
  KvevEventType type;
  gboolean legacy;
} TypeCase;

static void
test_event_map (gconstpointer data)
{
  const TypeCase *tc = data;
  KvevSettings *config = test_settings_new (tc->legacy);
  KvevMedia medium = tc->type == KVEV_EVENT_CLEARED ? KVEV_MEDIA_NONE : KVEV_MEDIA_DISK;
  KvevEvent *event = event_new (tc->type, medium, 42, "tenant-a", "obj/0001", "group-7");
  const msgpack_object *map;
  Payload p;
  char *buf;

  map = encode_one (&p, &buf, config, event);
  assert_event_map (map, config, TIMESTAMP, event);
  payload_clear (&p);
  free (buf);
  g_free (event);
  test_settings_free (config);
}

/* The sizes, literally as kvevents(7) states them under "Event maps". */
static void
test_map_sizes (void)
{
  static const struct
  {
    KvevEventType type;
    gboolean legacy;
    guint size;
  } cases[] = {
    { KVEV_EVENT_STORED, TRUE, 20 },   { KVEV_EVENT_REMOVED, TRUE, 17 },
    { KVEV_EVENT_CLEARED, TRUE, 12 },  { KVEV_EVENT_STORED, FALSE, 17 },
    { KVEV_EVENT_REMOVED, FALSE, 15 }, { KVEV_EVENT_CLEARED, FALSE, 11 },
  };
  guint c;

  for (c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      KvevSettings *config = test_settings_new (cases[c].legacy);
      KvevEvent *event = event_new (
          cases[c].type, cases[c].type == KVEV_EVENT_CLEARED ? KVEV_MEDIA_NONE : KVEV_MEDIA_CPU, 1,
          NULL, "k", NULL);
      const msgpack_object *map;
      Payload p;
      char *buf;

      map = encode_one (&p, &buf, config, event);
      g_assert_cmpuint (map->via.map.size, ==, cases[c].size);
      payload_clear (&p);
      free (buf);
      g_free (event);
      test_settings_free (config);
    }
}

/* Keys that are nil in one event type and absent in another. */
static void
test_nil_vs_absent (void)
{
  KvevSettings *config = test_settings_new (TRUE);
  KvevEvent *events[3];
  Payload p;
  char *buf;
  gsize len;

  events[0] = event_new (KVEV_EVENT_STORED, KVEV_MEDIA_CPU, 1, NULL, "k", NULL);
  events[1] = event_new (KVEV_EVENT_REMOVED, KVEV_MEDIA_CPU, 2, NULL, "k", NULL);
  events[2] = event_new (KVEV_EVENT_CLEARED, KVEV_MEDIA_NONE, 3, NULL, NULL, NULL);
  buf = encode (config, TIMESTAMP, events, 3, &len);
  payload_decode (&p, buf, len);

  assert_nil (test_map_get (&p.maps[0], "base_block_idx"));
  assert_nil (test_map_get (&p.maps[0], "parent_hash"));
  assert_nil (test_map_get (&p.maps[0], "token_ids"));
  assert_nil (test_map_get (&p.maps[0], "parent_block_hash"));
  assert_nil (test_map_get (&p.maps[0], "group_id"));

  assert_nil (test_map_get (&p.maps[1], "base_block_idx"));
  g_assert_null (test_map_get (&p.maps[1], "parent_hash"));
  g_assert_null (test_map_get (&p.maps[1], "token_ids"));
  g_assert_null (test_map_get (&p.maps[1], "parent_block_hash"));
  assert_nil (test_map_get (&p.maps[1], "group_id"));

  assert_nil (test_map_get (&p.maps[2], "medium"));
  g_assert_null (test_map_get (&p.maps[2], "group_id"));
  g_assert_null (test_map_get (&p.maps[2], "object_key"));
  g_assert_null (test_map_get (&p.maps[2], "seq_hashes"));
  g_assert_null (test_map_get (&p.maps[2], "block_hashes"));
  g_assert_null (test_map_get (&p.maps[2], "base_block_idx"));
  g_assert_null (test_map_get (&p.maps[2], "parent_hash"));
  assert_str (test_map_get (&p.maps[2], "type"), "AllBlocksCleared");

  payload_clear (&p);
  free (buf);
  free_events (events, 3);
  test_settings_free (config);
}

static void
test_legacy_off_keys (void)
{
  KvevSettings *config = test_settings_new (FALSE);
  KvevEvent *event = event_new (KVEV_EVENT_STORED, KVEV_MEDIA_CPU, 1, NULL, "k", NULL);
  const msgpack_object *map;
  Payload p;
  char *buf;

  map = encode_one (&p, &buf, config, event);
  g_assert_null (test_map_get (map, "type"));
  g_assert_null (test_map_get (map, "block_hashes"));
  g_assert_null (test_map_get (map, "parent_block_hash"));
  assert_str (test_map_get (map, "event_type"), "stored");
  assert_empty_array (test_map_get (map, "seq_hashes"));
  payload_clear (&p);
  free (buf);
  g_free (event);
  test_settings_free (config);
}

static void
test_block_size (void)
{
  static const guint32 sizes[] = { 0, 1, 16, 256, 65536, G_MAXUINT32 };
  guint s;

  for (s = 0; s < G_N_ELEMENTS (sizes); s++)
    {
      KvevSettings *config = test_settings_new (TRUE);
      KvevEvent *event = event_new (KVEV_EVENT_REMOVED, KVEV_MEDIA_CPU, 1, NULL, "k", NULL);
      const msgpack_object *map;
      Payload p;
      char *buf;

      config->block_size = sizes[s];
      map = encode_one (&p, &buf, config, event);
      if (sizes[s] == 0)
        assert_nil (test_map_get (map, "block_size"));
      else
        assert_uint (test_map_get (map, "block_size"), sizes[s]);
      payload_clear (&p);
      free (buf);
      g_free (event);
      test_settings_free (config);
    }
}

static void
test_context_empty (void)
{
  guint variant;

  /* Empty and unset are both "not configured". */
  for (variant = 0; variant < 2; variant++)
    {
      KvevSettings *config = test_settings_new (TRUE);
      KvevEvent *event = event_new (KVEV_EVENT_STORED, KVEV_MEDIA_CPU, 1, NULL, "k", NULL);
      const msgpack_object *map;
      Payload p;
      char *buf;

      set_text (&config->model_name, variant ? "" : NULL);
      set_text (&config->additional_salt, variant ? "" : NULL);
      set_text (&config->lora_name, variant ? "" : NULL);
      map = encode_one (&p, &buf, config, event);
      assert_nil (test_map_get (map, "model_name"));
      assert_nil (test_map_get (map, "additional_salt"));
      assert_nil (test_map_get (map, "lora_name"));
      assert_str (test_map_get (map, "backend_id"), "mooncake-master-0");
      assert_event_map (map, config, TIMESTAMP, event);
      payload_clear (&p);
      free (buf);
      g_free (event);
      test_settings_free (config);
    }
}

static void
test_context_set (void)
{
  KvevSettings *config = test_settings_new (TRUE);
  KvevEvent *event = event_new (KVEV_EVENT_CLEARED, KVEV_MEDIA_NONE, 1, NULL, NULL, NULL);
  const msgpack_object *map;
  Payload p;
  char *buf;

  set_text (&config->model_name, "m");
  set_text (&config->additional_salt, "s\xc3\xa9l");
  set_text (&config->lora_name, "a-lora-name-longer-than-thirty-one-bytes");
  set_text (&config->backend_id, "b");
  map = encode_one (&p, &buf, config, event);
  assert_str (test_map_get (map, "model_name"), "m");
  assert_str (test_map_get (map, "additional_salt"), "s\xc3\xa9l");
  assert_str (test_map_get (map, "lora_name"), "a-lora-name-longer-than-thirty-one-bytes");
  assert_str (test_map_get (map, "backend_id"), "b");
  payload_clear (&p);
  free (buf);
  g_free (event);
  test_settings_free (config);
}

static void
test_tenant (void)
{
  KvevSettings *config = test_settings_new (TRUE);
  KvevEvent *events[4];
  Payload p;
  char *buf;
  gsize len;

  events[0] = event_new (KVEV_EVENT_STORED, KVEV_MEDIA_CPU, 1, NULL, "k", NULL);
  events[1] = event_new (KVEV_EVENT_CLEARED, KVEV_MEDIA_NONE, 2, NULL, NULL, NULL);
  events[2] = event_new (KVEV_EVENT_REMOVED, KVEV_MEDIA_CPU, 3, "acme", "k", NULL);
  events[3] = event_new (KVEV_EVENT_CLEARED, KVEV_MEDIA_NONE, 4, "acme", NULL, NULL);
  buf = encode (config, TIMESTAMP, events, 4, &len);
  payload_decode (&p, buf, len);
  assert_str (test_map_get (&p.maps[0], "tenant_id"), "default");
  assert_str (test_map_get (&p.maps[1], "tenant_id"), "default");
  assert_str (test_map_get (&p.maps[2], "tenant_id"), "acme");
  assert_str (test_map_get (&p.maps[3], "tenant_id"), "acme");
  payload_clear (&p);
  free (buf);
  free_events (events, 4);
  test_settings_free (config);
}

static void
test_group (void)
{
  KvevSettings *config = test_settings_new (FALSE);
  KvevEvent *events[4];
  Payload p;
  char *buf;
  gsize len;

  events[0] = event_new (KVEV_EVENT_STORED, KVEV_MEDIA_CPU, 1, NULL, "k", NULL);
  events[1] = event_new (KVEV_EVENT_STORED, KVEV_MEDIA_CPU, 2, NULL, "k", "g-1");
  events[2] = event_new (KVEV_EVENT_REMOVED, KVEV_MEDIA_DISK, 3, NULL, "k", NULL);
  events[3] = event_new (KVEV_EVENT_REMOVED, KVEV_MEDIA_DISK, 4, NULL, "k", "g-2");
  buf = encode (config, TIMESTAMP, events, 4, &len);
  payload_decode (&p, buf, len);
  assert_nil (test_map_get (&p.maps[0], "group_id"));
  assert_str (test_map_get (&p.maps[1], "group_id"), "g-1");
  assert_nil (test_map_get (&p.maps[2], "group_id"));
  assert_str (test_map_get (&p.maps[3], "group_id"), "g-2");
  payload_clear (&p);
  free (buf);
  free_events (events, 4);
  test_settings_free (config);
}

static void
test_medium (void)
{
  KvevSettings *config = test_settings_new (TRUE);
  KvevEvent *events[5];
  Payload p;
  char *buf;
  gsize len;

  events[0] = event_new (KVEV_EVENT_STORED, KVEV_MEDIA_CPU, 1, NULL, "k", NULL);
  events[1] = event_new (KVEV_EVENT_STORED, KVEV_MEDIA_DISK, 2, NULL, "k", NULL);
  events[2] = event_new (KVEV_EVENT_REMOVED, KVEV_MEDIA_CPU, 3, NULL, "k", NULL);
  events[3] = event_new (KVEV_EVENT_REMOVED, KVEV_MEDIA_DISK, 4, NULL, "k", NULL);
  events[4] = event_new (KVEV_EVENT_CLEARED, KVEV_MEDIA_NONE, 5, NULL, NULL, NULL);
  buf = encode (config, TIMESTAMP, events, 5, &len);
  payload_decode (&p, buf, len);
  assert_str (test_map_get (&p.maps[0], "medium"), "cpu");
  assert_str (test_map_get (&p.maps[1], "medium"), "disk");
  assert_str (test_map_get (&p.maps[2], "medium"), "cpu");
  assert_str (test_map_get (&p.maps[3], "medium"), "disk");
  assert_nil (test_map_get (&p.maps[4], "medium"));
  payload_clear (&p);
  free (buf);
  free_events (events, 5);
  test_settings_free (config);
}

static void
test_timestamp (void)
{
  static const gint64 stamps[]
      = { 0, 1, 127, 128, 65536, G_GINT64_CONSTANT (4294967296), TIMESTAMP, G_MAXINT64 };
  guint s;

  for (s = 0; s < G_N_ELEMENTS (stamps); s++)
    {
      KvevSettings *config = test_settings_new (s % 2 == 1);
      KvevEvent *events[3];
      Payload p;
      char *buf;
      gsize len;
      guint i;

      events[0] = event_new (KVEV_EVENT_STORED, KVEV_MEDIA_CPU, 1, NULL, "k", NULL);
      events[1] = event_new (KVEV_EVENT_REMOVED, KVEV_MEDIA_CPU, 2, NULL, "k", NULL);
      events[2] = event_new (KVEV_EVENT_CLEARED, KVEV_MEDIA_NONE, 3, NULL, NULL, NULL);
      buf = encode (config, stamps[s], events, 3, &len);
      payload_decode (&p, buf, len);
      g_assert_cmpint (p.timestamp, ==, stamps[s]);
      for (i = 0; i < 3; i++)
        g_assert_cmpint (object_int (test_map_get (&p.maps[i], "timestamp")), ==, stamps[s]);
      payload_clear (&p);
      free (buf);
      assert_matches_reference (config, stamps[s], events, 3);
      free_events (events, 3);
      test_settings_free (config);
    }
}

static void
test_event_id (void)
{
  static const guint64 ids[] = { 1,
                                 127,
                                 128,
                                 255,
                                 256,
                                 65535,
                                 65536,
                                 G_GUINT64_CONSTANT (4294967295),
                                 G_GUINT64_CONSTANT (4294967296),
                                 G_MAXUINT64 };
  KvevSettings *config = test_settings_new (TRUE);
  KvevEvent *events[G_N_ELEMENTS (ids)];
  Payload p;
  char *buf;
  gsize len;
  guint i;

  for (i = 0; i < G_N_ELEMENTS (ids); i++)
    events[i] = event_new (i % 3, i % 3 == KVEV_EVENT_CLEARED ? KVEV_MEDIA_NONE : KVEV_MEDIA_CPU,
                           ids[i], NULL, i % 3 == 2 ? NULL : "k", NULL);
  buf = encode (config, TIMESTAMP, events, G_N_ELEMENTS (ids), &len);
  payload_decode (&p, buf, len);
  g_assert_cmpuint (p.n_maps, ==, G_N_ELEMENTS (ids));
  for (i = 0; i < G_N_ELEMENTS (ids); i++)
    assert_uint (test_map_get (&p.maps[i], "event_id"), ids[i]);
  payload_clear (&p);
  free (buf);
  /* The most compact integer forms, byte for byte. */
  assert_matches_reference (config, TIMESTAMP, events, G_N_ELEMENTS (ids));
  free_events (events, G_N_ELEMENTS (ids));
  test_settings_free (config);
}

static void
test_key_embedded_nul (void)
{
  static const char key[] = "obj\0with\0nuls\0";
  KvevSettings *config = test_settings_new (TRUE);
  KvevEvent *event
      = event_new_len (KVEV_EVENT_STORED, KVEV_MEDIA_CPU, 1, NULL, 0, key, sizeof key - 1, NULL, 0);
  const msgpack_object *map;
  Payload p;
  char *buf;

  g_assert_true (kvev_call_is_utf8 (event->call));
  map = encode_one (&p, &buf, config, event);
  assert_str_len (test_map_get (map, "object_key"), key, sizeof key - 1);
  payload_clear (&p);
  free (buf);
  g_free (event);
  test_settings_free (config);
}

static void
test_non_utf8_key (void)
{
  static const char key[] = "obj\xff\xfe-\xc3(";
  KvevSettings *config = test_settings_new (TRUE);
  KvevEvent *event
      = event_new (KVEV_EVENT_REMOVED, KVEV_MEDIA_DISK, 1, "t\xc3\xa9nant", key, "grp");
  const msgpack_object *map;
  Payload p;
  char *buf;

  g_assert_false (kvev_call_is_utf8 (event->call));
  map = encode_one (&p, &buf, config, event);
  assert_bin (test_map_get (map, "object_key"), key, strlen (key));
  assert_str (test_map_get (map, "tenant_id"), "t\xc3\xa9nant");
  assert_str (test_map_get (map, "group_id"), "grp");
  payload_clear (&p);
  free (buf);
  g_free (event);
  test_settings_free (config);
}

static void
test_non_utf8_tenant (void)
{
  static const char tenant[] = "ten\x80nt";
  KvevSettings *config = test_settings_new (FALSE);
  KvevEvent *events[2];
  Payload p;
  char *buf;
  gsize len;

  events[0] = event_new (KVEV_EVENT_STORED, KVEV_MEDIA_CPU, 1, tenant, "key-\xe2\x82\xac", "grp");
  events[1] = event_new (KVEV_EVENT_CLEARED, KVEV_MEDIA_NONE, 2, tenant, NULL, NULL);
  g_assert_false (kvev_call_is_utf8 (events[0]->call));
  g_assert_false (kvev_call_is_utf8 (events[1]->call));
  buf = encode (config, TIMESTAMP, events, 2, &len);
  payload_decode (&p, buf, len);
  assert_bin (test_map_get (&p.maps[0], "tenant_id"), tenant, strlen (tenant));
  assert_str (test_map_get (&p.maps[0], "object_key"), "key-\xe2\x82\xac");
  assert_str (test_map_get (&p.maps[0], "group_id"), "grp");
  assert_bin (test_map_get (&p.maps[1], "tenant_id"), tenant, strlen (tenant));
  payload_clear (&p);
  free (buf);
  free_events (events, 2);
  test_settings_free (config);
}

static void
test_non_utf8_group (void)
{
  static const char group[] = "\xc0\x80group";
  KvevSettings *config = test_settings_new (TRUE);
  KvevEvent *event = event_new (KVEV_EVENT_STORED, KVEV_MEDIA_DISK, 1, "t", "k", group);
  const msgpack_object *map;
  Payload p;
  char *buf;

  g_assert_false (kvev_call_is_utf8 (event->call));
  map = encode_one (&p, &buf, config, event);
  assert_bin (test_map_get (map, "group_id"), group, strlen (group));
  assert_str (test_map_get (map, "tenant_id"), "t");
  assert_str (test_map_get (map, "object_key"), "k");
  payload_clear (&p);
  free (buf);
  g_free (event);
  test_settings_free (config);
}

static void
test_large_key (void)
{
  KvevSettings *config = test_settings_new (TRUE);
  char *key = g_malloc (KVEV_MAX_KEY_LEN);
  KvevEvent *events[2];
  Payload p;
  char *buf;
  gsize len;
  gsize i;

  /* ASCII with a multibyte character every 4 KiB, ending in one. */
  for (i = 0; i < KVEV_MAX_KEY_LEN; i++)
    key[i] = 'a' + i % 26;
  for (i = 4094; i + 2 <= KVEV_MAX_KEY_LEN; i += 4096)
    memcpy (key + i, "\xc3\xa9", 2);
  events[0] = event_new_len (KVEV_EVENT_STORED, KVEV_MEDIA_CPU, 1, NULL, 0, key, KVEV_MAX_KEY_LEN,
                             NULL, 0);
  /* The same bytes with one bad byte at the very end: bin. */
  key[KVEV_MAX_KEY_LEN - 1] = (char) 0xff;
  events[1] = event_new_len (KVEV_EVENT_REMOVED, KVEV_MEDIA_DISK, 2, NULL, 0, key, KVEV_MAX_KEY_LEN,
                             NULL, 0);
  g_assert_true (kvev_call_is_utf8 (events[0]->call));
  g_assert_false (kvev_call_is_utf8 (events[1]->call));

  buf = encode (config, TIMESTAMP, events, 2, &len);
  payload_decode (&p, buf, len);
  assert_str_len (test_map_get (&p.maps[0], "object_key"), kvev_call_key (events[0]->call),
                  KVEV_MAX_KEY_LEN);
  assert_bin (test_map_get (&p.maps[1], "object_key"), key, KVEV_MAX_KEY_LEN);
  assert_event_map (&p.maps[0], config, TIMESTAMP, events[0]);
  assert_event_map (&p.maps[1], config, TIMESTAMP, events[1]);
  payload_clear (&p);
  free (buf);
  assert_matches_reference (config, TIMESTAMP, events, 2);
  free_events (events, 2);
  g_free (key);
  test_settings_free (config);
}

static void
test_batch_64 (void)
{
  KvevSettings *config = test_settings_new (TRUE);
  KvevEvent *events[64];
  Payload p;
  char *buf;
  gsize len;
  guint i;

  for (i = 0; i < 64; i++)
    {
      KvevEventType type = i % 5 == 4 ? KVEV_EVENT_CLEARED : (KvevEventType) (i % 2);
      char *key = g_strdup_printf ("model/layer-%02u/block-%u", i, i * 7919);
      char *tenant = g_strdup_printf ("tenant-%u", i % 3);

      events[i] = event_new (type,
                             type == KVEV_EVENT_CLEARED ? KVEV_MEDIA_NONE
                             : i % 3                    ? KVEV_MEDIA_CPU
                                                        : KVEV_MEDIA_DISK,
                             /* increasing, with holes like dropped events */
                             100 + 3 * (guint64) i, i % 4 ? tenant : NULL,
                             type == KVEV_EVENT_CLEARED ? NULL : key, i % 2 ? "grp" : NULL);
      g_free (key);
      g_free (tenant);
    }
  buf = encode (config, TIMESTAMP, events, 64, &len);
  payload_decode (&p, buf, len);
  g_assert_cmpuint (p.n_maps, ==, 64);
  for (i = 0; i < 64; i++)
    {
      assert_uint (test_map_get (&p.maps[i], "event_id"), 100 + 3 * (guint64) i);
      assert_event_map (&p.maps[i], config, TIMESTAMP, events[i]);
    }
  payload_clear (&p);
  free (buf);
  assert_matches_reference (config, TIMESTAMP, events, 64);
  free_events (events, 64);
  test_settings_free (config);
}

/* One encoder, many batches: nothing of one batch leaks into the next. */
static void
test_reuse (void)
{
  KvevSettings *config = test_settings_new (TRUE);
  KvevEncoder *encoder = kvev_encoder_new (config);
  char *big = g_strnfill (100000, 'x');
  KvevEvent *small = event_new (KVEV_EVENT_STORED, KVEV_MEDIA_CPU, 1, NULL, "k", NULL);
  KvevEvent *large = event_new (KVEV_EVENT_REMOVED, KVEV_MEDIA_DISK, 2, NULL, big, NULL);
  KvevEvent *batch[] = { small, large, small };
  char *first;
  char *buf;
  gsize first_len;
  gsize len;
  guint round;

  first = encode_with (encoder, TIMESTAMP, &small, 1, &first_len);
  for (round = 0; round < 3; round++)
    {
      msgpack_sbuffer sbuf;

      buf = encode_with (encoder, TIMESTAMP + round, batch, 3, &len);
      ref_payload (&sbuf, config, TIMESTAMP + round, batch, 3);
      g_assert_cmpmem (buf, len, sbuf.data, sbuf.size);
      msgpack_sbuffer_destroy (&sbuf);
      free (buf);

      buf = encode_with (encoder, TIMESTAMP, &small, 1, &len);
      g_assert_cmpmem (buf, len, first, first_len);
      free (buf);
    }
  free (first);
  g_free (small);
  g_free (large);
  g_free (big);
  kvev_encoder_free (encoder);
  test_settings_free (config);
}

/* Lengths at each msgpack header boundary, str and bin. */
static void
test_reference_lengths (void)
{
  static const gsize lens[] = { 1, 31, 32, 255, 256, 65535, 65536 };
  KvevSettings *config = test_settings_new (FALSE);
  KvevEvent *events[3 * G_N_ELEMENTS (lens)];
  guint n = 0;
  guint i;

  config->dp_rank = 300;
  for (i = 0; i < G_N_ELEMENTS (lens); i++)
    {
      char *text = g_strnfill (lens[i], 'k');
      char *bad = g_strnfill (lens[i], 'b');

      bad[lens[i] - 1] = (char) 0xfe;
      events[n++] = event_new_len (KVEV_EVENT_STORED, KVEV_MEDIA_CPU, i + 1, text, lens[i], text,
                                   lens[i], text, lens[i]);
      events[n++] = event_new_len (KVEV_EVENT_REMOVED, KVEV_MEDIA_DISK, i + 100, bad, lens[i], bad,
                                   lens[i], bad, lens[i]);
      events[n++] = event_new_len (KVEV_EVENT_CLEARED, KVEV_MEDIA_NONE, i + 1000, bad, lens[i],
                                   NULL, 0, NULL, 0);
      g_free (text);
      g_free (bad);
    }
  /* more than 15 events: an array16 header */
  assert_matches_reference (config, TIMESTAMP, events, n);
  config->emit_legacy_compat = TRUE;
  assert_matches_reference (config, TIMESTAMP, events, n);
  free_events (events, n);
  test_settings_free (config);
}

/* The whole payload byte for byte against the key-by-key packer, in
 * every combination of type, medium, legacy and context. */
static void
test_reference_bytes (void)
{
  guint legacy;
  guint context;

  for (legacy = 0; legacy < 2; legacy++)
    for (context = 0; context < 2; context++)
      {
        KvevSettings *config = test_settings_new (legacy);
        KvevEvent *events[7];

        if (context)
          {
            set_text (&config->model_name, "");
            set_text (&config->additional_salt, NULL);
            set_text (&config->lora_name, "");
            config->block_size = 0;
            config->dp_rank = 5;
          }
        events[0] = event_new (KVEV_EVENT_STORED, KVEV_MEDIA_CPU, 1, "t1", "key-1", "g1");
        events[1] = event_new (KVEV_EVENT_STORED, KVEV_MEDIA_DISK, 2, NULL, "key-2", NULL);
        events[2] = event_new (KVEV_EVENT_REMOVED, KVEV_MEDIA_CPU, 3, "t\xff", "key-3", NULL);
        events[3]
            = event_new (KVEV_EVENT_REMOVED, KVEV_MEDIA_DISK, 4, NULL, "k\xe2\x82", "g\xc3\xa9");
        events[4] = event_new (KVEV_EVENT_CLEARED, KVEV_MEDIA_NONE, 5, NULL, NULL, NULL);
        events[5] = event_new (KVEV_EVENT_CLEARED, KVEV_MEDIA_NONE, 6, "t\xc3\xa9", NULL, NULL);
        events[6]
            = event_new_len (KVEV_EVENT_STORED, KVEV_MEDIA_CPU, 7, "a\0b", 3, "\0", 1, "\0\xff", 2);
        assert_matches_reference (config, TIMESTAMP, events, 7);
        assert_matches_reference (config, TIMESTAMP, events, 1);
        assert_matches_reference (config, 0, events + 4, 1);
        free_events (events, 7);
        test_settings_free (config);
      }
}

/* A bad byte, or a valid two-byte character, at every position of every
 * short length, in each string: each length takes its own copy path, and
 * a high bit anywhere must be seen. */
static void
test_reference_positions (void)
{
  KvevSettings *config = test_settings_new (TRUE);
  gsize len;

  for (len = 1; len <= 40; len++)
    {
      KvevEvent *events[4 * 40];
      gboolean utf8[4 * 40];
      guint n = 0;
      guint i;
      gsize at;

      for (at = 0; at < len; at++)
        {
          char *bad = g_strnfill (len, 'a');
          char *good = g_strnfill (len, 'a');

          bad[at] = (char) 0xff;
          utf8[n] = FALSE;
          events[n]
              = event_new_len (KVEV_EVENT_STORED, KVEV_MEDIA_CPU, n + 1, "t", 1, bad, len, "g", 1);
          n++;
          utf8[n] = FALSE;
          events[n] = event_new_len (KVEV_EVENT_REMOVED, KVEV_MEDIA_DISK, n + 1, bad, len, "k", 1,
                                     NULL, 0);
          n++;
          utf8[n] = FALSE;
          events[n] = event_new_len (KVEV_EVENT_STORED, KVEV_MEDIA_DISK, n + 1, NULL, 0, "k", 1,
                                     bad, len);
          n++;
          if (at + 1 < len)
            {
              memcpy (good + at, "\xc3\xa9", 2);
              utf8[n] = TRUE;
              events[n] = event_new_len (KVEV_EVENT_STORED, KVEV_MEDIA_CPU, n + 1, good, len, good,
                                         len, good, len);
              n++;
            }
          g_free (bad);
          g_free (good);
        }
      for (i = 0; i < n; i++)
        g_assert_cmpint (kvev_call_is_utf8 (events[i]->call), ==, utf8[i]);
      assert_matches_reference (config, TIMESTAMP, events, n);
      free_events (events, n);
    }
  test_settings_free (config);
}

/* One hand-checked payload, so the reference itself is pinned. */
static void
test_reference_known (void)
{
  static const char expected[] = "\x93\x07\x91\x8b"
                                 "\xa8"
                                 "event_id"
                                 "\x09"
                                 "\xa9"
                                 "timestamp"
                                 "\x07"
                                 "\xaa"
                                 "event_type"
                                 "\xa7"
                                 "cleared"
                                 "\xaa"
                                 "model_name"
                                 "\xc0"
                                 "\xaa"
                                 "block_size"
                                 "\xcd\x01\x00"
                                 "\xaf"
                                 "additional_salt"
                                 "\xc0"
                                 "\xa9"
                                 "lora_name"
                                 "\xa1"
                                 "L"
                                 "\xa9"
                                 "tenant_id"
                                 "\xa7"
                                 "default"
                                 "\xaa"
                                 "backend_id"
                                 "\xa1"
                                 "b"
                                 "\xa6"
                                 "medium"
                                 "\xc0"
                                 "\xa7"
                                 "dp_rank"
                                 "\x02"
                                 "\x02";
  KvevSettings *config = test_settings_new (FALSE);
  KvevEvent *event = event_new (KVEV_EVENT_CLEARED, KVEV_MEDIA_NONE, 9, NULL, NULL, NULL);
  char *buf;
  gsize len;

  set_text (&config->model_name, NULL);
  set_text (&config->additional_salt, "");
  set_text (&config->lora_name, "L");
  set_text (&config->backend_id, "b");
  config->block_size = 256;
  config->dp_rank = 2;
  buf = encode (config, 7, &event, 1, &len);
  g_assert_cmpmem (buf, len, expected, sizeof expected - 1);
  free (buf);
  assert_matches_reference (config, 7, &event, 1);
  g_free (event);
  test_settings_free (config);
}

static void
test_preconditions (void)
{
  KvevSettings *config = test_settings_new (TRUE);
  KvevEncoder *encoder = kvev_encoder_new (config);
  KvevEvent *event = event_new (KVEV_EVENT_STORED, KVEV_MEDIA_CPU, 1, NULL, "k", NULL);
  gsize len = 0;

  g_test_expect_message (G_LOG_DOMAIN, G_LOG_LEVEL_CRITICAL, "*events*");
  g_assert_null (kvev_encode_batch (encoder, TIMESTAMP, NULL, 1, &len));
  g_test_assert_expected_messages ();

  event->medium = KVEV_MEDIA_ALL;
  g_test_expect_message (G_LOG_DOMAIN, G_LOG_LEVEL_CRITICAL, "*medium*");
  g_assert_null (kvev_encode_batch (encoder, TIMESTAMP, event, 1, &len));
  g_test_assert_expected_messages ();

  event->medium = KVEV_MEDIA_CPU;
  event->type = 3;
  g_test_expect_message (G_LOG_DOMAIN, G_LOG_LEVEL_CRITICAL, "*type*");
  g_assert_null (kvev_encode_batch (encoder, TIMESTAMP, event, 1, &len));
  g_test_assert_expected_messages ();

  g_free (event);
  kvev_encoder_free (encoder);
  test_settings_free (config);
}

/* ---- kvev_call_is_utf8 ------------------------------------------------- */

typedef struct
{
  const char *bytes;
  gsize len;
  gboolean utf8;
} Utf8Case;

#define U8(literal, valid)                                                                         \
  {                                                                                                \
    literal, sizeof literal - 1, valid                                                             \
  }

static void
check_utf8_cases (const Utf8Case *cases, guint n_cases)
{
  guint c;

  for (c = 0; c < n_cases; c++)
    {
      /* Each string alone in each position, and after ASCII prefixes of
       * every alignment so both the word scan and the tail are hit. */
      guint prefix;

      for (prefix = 0; prefix <= 17; prefix++)
        {
          GString *s = g_string_new (NULL);
          KvevEvent *event;
          guint pos;

          g_string_append_len (s, "0123456789abcdefgh", prefix);
          g_string_append_len (s, cases[c].bytes, cases[c].len);
          for (pos = 0; pos < 3; pos++)
            {
              const char *strs[3] = { "tenant", "k", NULL };
              gsize lens[3] = { 6, 1, 0 };

              strs[pos] = s->str;
              lens[pos] = s->len;
              event = event_new_len (KVEV_EVENT_STORED, KVEV_MEDIA_CPU, 1, strs[0], lens[0],
                                     strs[1], lens[1], strs[2], lens[2]);
              if (kvev_call_is_utf8 (event->call) != cases[c].utf8)
                g_error ("case %u (prefix %u, string %u): expected %s", c, prefix, pos,
                         cases[c].utf8 ? "UTF-8" : "not UTF-8");
              g_free (event);
            }
          g_string_free (s, TRUE);
        }
    }
}

static void
test_utf8_ascii (void)
{
  static const Utf8Case cases[] = {
    U8 ("", TRUE),
    U8 ("a", TRUE),
    U8 ("hello", TRUE),
    U8 ("exactly8", TRUE),
    U8 ("model/layer-00/block-000000000000000000000000000000000000", TRUE),
    U8 ("\x7f\x01\x1f ~", TRUE),
  };

  check_utf8_cases (cases, G_N_ELEMENTS (cases));
}

static void
test_utf8_multibyte (void)
{
  static const Utf8Case cases[] = {
    U8 ("caf\xc3\xa9", TRUE),
    U8 ("\xc2\x80", TRUE),
    U8 ("\xdf\xbf", TRUE),
    U8 ("\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e", TRUE),
    U8 ("\xe0\xa0\x80", TRUE),
    U8 ("\xef\xbf\xbf", TRUE), /* U+FFFF: a noncharacter, still UTF-8 */
    U8 ("\xf0\x9f\x98\x80", TRUE),
    U8 ("\xf4\x8f\xbf\xbf", TRUE), /* U+10FFFF */
    U8 ("ascii then \xc3\xa9 then ascii again, long enough", TRUE),
  };

  check_utf8_cases (cases, G_N_ELEMENTS (cases));
}

static void
test_utf8_embedded_nul (void)
{
  static const Utf8Case cases[] = {
    U8 ("\0", TRUE),
    U8 ("a\0b", TRUE),
    U8 ("\0\0\0\0\0\0\0\0\0", TRUE),
    U8 ("\xc3\xa9\0\xc3\xa9", TRUE),
    U8 ("\0\xf0\x9f\x98\x80\0", TRUE),
    U8 ("\xc3\xa9\0\xff", FALSE),
    U8 ("\xc3\0\xa9", FALSE), /* a NUL inside a sequence */
  };

  check_utf8_cases (cases, G_N_ELEMENTS (cases));
}

static void
test_utf8_invalid_byte (void)
{
  static const Utf8Case cases[] = {
    U8 ("\xff", FALSE),
    U8 ("\xfe", FALSE),
    U8 ("abc\x80", FALSE),
    U8 ("\x80", FALSE), /* a lone continuation byte */
    U8 ("\xbf", FALSE),
    U8 ("\xc3\xa9\xa9", FALSE),
    U8 ("\xf5\x80\x80\x80", FALSE),
    U8 ("\xf4\x90\x80\x80", FALSE), /* above U+10FFFF */
    U8 ("\xf8\x88\x80\x80\x80", FALSE),
    U8 ("ascii for a while, then \xff", FALSE),
  };

  check_utf8_cases (cases, G_N_ELEMENTS (cases));
}

static void
test_utf8_overlong (void)
{
  static const Utf8Case cases[] = {
    U8 ("\xc0\x80", FALSE), /* modified UTF-8's NUL */
    U8 ("\xc0\xaf", FALSE),     U8 ("\xc1\xbf", FALSE),         U8 ("\xe0\x80\xaf", FALSE),
    U8 ("\xe0\x9f\xbf", FALSE), U8 ("\xf0\x80\x80\xaf", FALSE), U8 ("\xf0\x8f\xbf\xbf", FALSE),
  };

  check_utf8_cases (cases, G_N_ELEMENTS (cases));
}

static void
test_utf8_truncated (void)
{
  static const Utf8Case cases[] = {
    U8 ("\xc3", FALSE),
    U8 ("\xe6\x97", FALSE),
    U8 ("\xf0\x9f\x98", FALSE),
    U8 ("\xf0\x9f", FALSE),
    U8 ("abc\xe6\x97", FALSE),
    U8 ("\xe6\x97"
        "a",
        FALSE),
    U8 ("\xc3\xa9\xc3", FALSE),
  };

  check_utf8_cases (cases, G_N_ELEMENTS (cases));
}

static void
test_utf8_surrogate (void)
{
  static const Utf8Case cases[] = {
    U8 ("\xed\xa0\x80", FALSE),             /* U+D800 */
    U8 ("\xed\xbf\xbf", FALSE),             /* U+DFFF */
    U8 ("\xed\xa0\xbd\xed\xb8\x80", FALSE), /* CESU-8 of U+1F600 */
    U8 ("\xed\x9f\xbf", TRUE),              /* U+D7FF, just below */
    U8 ("\xee\x80\x80", TRUE),              /* U+E000, just above */
  };

  check_utf8_cases (cases, G_N_ELEMENTS (cases));
}

static void
test_utf8_event (void)
{
  KvevEvent *event;

  /* Empty strings are the wire defaults, and fine. */
  event = event_new_len (KVEV_EVENT_CLEARED, KVEV_MEDIA_NONE, 1, NULL, 0, NULL, 0, NULL, 0);
  g_assert_true (kvev_call_is_utf8 (event->call));
  g_free (event);

  /* Strings are judged apart: a sequence split across tenant and key
   * is two invalid strings, not one valid one. */
  event = event_new_len (KVEV_EVENT_STORED, KVEV_MEDIA_CPU, 1, "t\xc3", 2, "\xa9k", 2, NULL, 0);
  g_assert_false (kvev_call_is_utf8 (event->call));
  g_free (event);

  event = event_new_len (KVEV_EVENT_STORED, KVEV_MEDIA_CPU, 1, "t\xc3\xa9", 3, "k\xe2\x82\xac", 4,
                         "\xf0\x9f\x98\x80", 4);
  g_assert_true (kvev_call_is_utf8 (event->call));
  g_free (event);
}

int
main (int argc, char **argv)
{
  static const TypeCase type_cases[] = {
    { KVEV_EVENT_STORED, TRUE },   { KVEV_EVENT_STORED, FALSE }, { KVEV_EVENT_REMOVED, TRUE },
    { KVEV_EVENT_REMOVED, FALSE }, { KVEV_EVENT_CLEARED, TRUE }, { KVEV_EVENT_CLEARED, FALSE },
  };
  guint i;

  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/kvevents/encode/free-null", test_free_null);
  g_test_add_func ("/kvevents/encode/envelope", test_envelope);
  g_test_add_func ("/kvevents/encode/dp-rank", test_dp_rank);
  for (i = 0; i < G_N_ELEMENTS (type_cases); i++)
    {
      char *path = g_strdup_printf ("/kvevents/encode/map/%s/%s", type_names[type_cases[i].type],
                                    type_cases[i].legacy ? "legacy" : "no-legacy");

      g_test_add_data_func (path, &type_cases[i], test_event_map);
      g_free (path);
    }
  g_test_add_func ("/kvevents/encode/map-sizes", test_map_sizes);
  g_test_add_func ("/kvevents/encode/nil-vs-absent", test_nil_vs_absent);
  g_test_add_func ("/kvevents/encode/legacy-off-keys", test_legacy_off_keys);
  g_test_add_func ("/kvevents/encode/block-size", test_block_size);
  g_test_add_func ("/kvevents/encode/context/empty", test_context_empty);
  g_test_add_func ("/kvevents/encode/context/set", test_context_set);
  g_test_add_func ("/kvevents/encode/tenant", test_tenant);
  g_test_add_func ("/kvevents/encode/group", test_group);
  g_test_add_func ("/kvevents/encode/medium", test_medium);
  g_test_add_func ("/kvevents/encode/timestamp", test_timestamp);
  g_test_add_func ("/kvevents/encode/event-id", test_event_id);
  g_test_add_func ("/kvevents/encode/key/embedded-nul", test_key_embedded_nul);
  g_test_add_func ("/kvevents/encode/key/large", test_large_key);
  g_test_add_func ("/kvevents/encode/non-utf8/key", test_non_utf8_key);
  g_test_add_func ("/kvevents/encode/non-utf8/tenant", test_non_utf8_tenant);
  g_test_add_func ("/kvevents/encode/non-utf8/group", test_non_utf8_group);
  g_test_add_func ("/kvevents/encode/batch-64", test_batch_64);
  g_test_add_func ("/kvevents/encode/reuse", test_reuse);
  g_test_add_func ("/kvevents/encode/reference/known", test_reference_known);
  g_test_add_func ("/kvevents/encode/reference/bytes", test_reference_bytes);
  g_test_add_func ("/kvevents/encode/reference/lengths", test_reference_lengths);
  g_test_add_func ("/kvevents/encode/reference/positions", test_reference_positions);
  g_test_add_func ("/kvevents/encode/preconditions", test_preconditions);
  g_test_add_func ("/kvevents/encode/utf8/ascii", test_utf8_ascii);
  g_test_add_func ("/kvevents/encode/utf8/multibyte", test_utf8_multibyte);
  g_test_add_func ("/kvevents/encode/utf8/embedded-nul", test_utf8_embedded_nul);
  g_test_add_func ("/kvevents/encode/utf8/invalid-byte", test_utf8_invalid_byte);
  g_test_add_func ("/kvevents/encode/utf8/overlong", test_utf8_overlong);
  g_test_add_func ("/kvevents/encode/utf8/truncated", test_utf8_truncated);
  g_test_add_func ("/kvevents/encode/utf8/surrogate", test_utf8_surrogate);
  g_test_add_func ("/kvevents/encode/utf8/event", test_utf8_event);

  return g_test_run ();
}
