/* encode.c: events as RFC #1527 msgpack maps, in the layout kvevents(7)
 * gives under WIRE FORMAT.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "internal.h"
#include "encode.h"
#include <base/utf8.h>

#include <msgpack.h>
#include <stdlib.h>
#include <string.h>

/* Most of an event map never changes for the life of a publisher: the
 * keys, the event type names, the configured context, the constant nils
 * and empty arrays.  The encoder packs all of that once, as runs of bytes
 * that sit between the few values an event brings (event_id, timestamp,
 * tenant, medium, group, key); encoding an event is then copying a few
 * runs around those values.  For one event type the map is laid out as:
 *
 *   head          map header, "event_id"
 *                 event_id
 *   stamp+context "timestamp" and its value, then "event_type" ...
 *                 "tenant_id" (joined once per batch, see prepare_batch())
 *                 tenant
 *   tail[m][g]    "backend_id" ... "group_id", for medium m; without a
 *                 group (g = 0) it goes on with nil and "object_key".
 *                 For cleared, the end of the map.
 *                 group, then the "object_key" run (only when g = 1)
 *                 key
 *   rest          "seq_hashes" ... the end of the map
 *
 * The output is sized from per-type bounds before any byte is written,
 * so it is written once, straight into the buffer that ZeroMQ takes. */

/* A run of constant bytes, at an offset of the block it belongs to. */
typedef struct
{
  gsize offset;
  gsize len;
} KvevRun;

typedef struct
{
  KvevRun head;
  KvevRun context;
  KvevRun tail[2][2]; /* [medium: cpu, disk][has a group]; see above */
  KvevRun rest;
  KvevRun stamped; /* in encoder->scratch: stamp and context, per batch */
  /* The most bytes one event of this type takes, its strings' bytes
   * aside. */
  gsize bound;
} KvevTypeRuns;

struct _KvevEncoder
{
  KvevTypeRuns types[KVEV_EVENT_CLEARED + 1];
  KvevRun stamp_key;
  KvevRun obj_key;
  KvevRun default_tenant;
  KvevRun trailer; /* the payload's dp_rank */
  char *block;     /* every run above, from msgpack_sbuffer (malloc) */
  char *scratch;   /* the stamped runs of the current batch */
};

/* A msgpack uint64 / int64 takes 9 bytes at most; a str32, bin32 or
 * array32 header 5. */
#define MAX_INT_LEN 9
#define MAX_HEADER_LEN 5

/* put_run() copies in moves of this size; see there. */
#define RUN_CHUNK 32

static const char *const event_type_names[] = { "stored", "removed", "cleared" };
static const char *const legacy_type_names[]
    = { "BlockStored", "BlockRemoved", "AllBlocksCleared" };

/* ---- building the runs, once per encoder ------------------------------- */

/* A packer on a growing sbuffer that counts keys, so that each map header
 * can be checked against the keys that followed it. */
typedef struct
{
  msgpack_sbuffer sbuf;
  msgpack_packer pk;
  guint n_keys;
} Builder;

static int
builder_write (void *data, const char *buf, size_t len)
{
  /* Like every GLib allocation, running out of memory here aborts: an
   * encoder missing half its runs would send garbage. */
  if (msgpack_sbuffer_write (data, buf, len) != 0)
    g_error ("%s: failed to allocate %" G_GSIZE_FORMAT " bytes", G_STRLOC, (gsize) len);
  return 0;
}

static void
run_begin (Builder *b, KvevRun *run)
{
  run->offset = b->sbuf.size;
}

static void
run_end (Builder *b, KvevRun *run)
{
  run->len = b->sbuf.size - run->offset;
}

static void
pack_text (msgpack_packer *pk, const char *text)
{
  size_t n = strlen (text);

  msgpack_pack_str (pk, n);
  msgpack_pack_str_body (pk, text, n);
}

static void
pack_key (Builder *b, const char *key)
{
  b->n_keys++;
  pack_text (&b->pk, key);
}

/* Context strings from the configuration: empty means "not set". */
static void
pack_text_or_nil (msgpack_packer *pk, const char *text)
{
  if (text == NULL || *text == '\0')
    msgpack_pack_nil (pk);
  else
    pack_text (pk, text);
}

static guint
map_size (KvevEventType type, gboolean legacy)
{
  switch (type)
    {
    case KVEV_EVENT_STORED:
      return legacy ? 20 : 17;
    case KVEV_EVENT_REMOVED:
      return legacy ? 17 : 15;
    case KVEV_EVENT_CLEARED:
    default:
      return legacy ? 12 : 11;
    }
}

static void
build_tail (Builder *b, const KvevSettings *settings, KvevEventType type, guint medium,
            gboolean group, KvevRun *run)
{
  msgpack_packer *pk = &b->pk;
  gboolean keyed = type != KVEV_EVENT_CLEARED;

  run_begin (b, run);
  pack_key (b, "backend_id");
  /* A valid enabled configuration always has one; an empty str keeps
   * the map well-formed for one that is not. */
  pack_text (pk, settings->backend_id ? settings->backend_id : "");
  pack_key (b, "medium");
  if (keyed)
    pack_text (pk, medium == 0 ? "cpu" : "disk");
  else
    msgpack_pack_nil (pk); /* every tier */
  pack_key (b, "dp_rank");
  msgpack_pack_uint32 (pk, settings->dp_rank);
  if (keyed)
    {
      pack_key (b, "group_id");
      if (!group)
        {
          msgpack_pack_nil (pk);
          pack_key (b, "object_key");
        }
    }
  run_end (b, run);
}

static void
pack_publisher_id (Builder *b, const KvevSettings *settings)
{
  pack_key (b, "publisher_id");
  pack_text (&b->pk, settings->instance_id_hex);
}

static void
build_type (Builder *b, const KvevSettings *settings, KvevEventType type, KvevTypeRuns *runs)
{
  msgpack_packer *pk = &b->pk;
  gboolean legacy = settings->emit_legacy_compat;
  gboolean keyed = type != KVEV_EVENT_CLEARED;
  /* kv_events_emit_publisher_id adds one key, the last. */
  guint size = map_size (type, legacy) + (settings->emit_publisher_id ? 1 : 0);
  guint n_keys;

  b->n_keys = 0;
  run_begin (b, &runs->head);
  msgpack_pack_map (pk, size);
  pack_key (b, "event_id");
  run_end (b, &runs->head);

  b->n_keys++; /* "timestamp", packed per batch */

  run_begin (b, &runs->context);
  pack_key (b, "event_type");
  pack_text (pk, event_type_names[type]);
  if (legacy)
    {
      pack_key (b, "type");
      pack_text (pk, legacy_type_names[type]);
    }
  pack_key (b, "model_name");
  pack_text_or_nil (pk, settings->model_name);
  pack_key (b, "block_size");
  if (settings->block_size == 0)
    msgpack_pack_nil (pk);
  else
    msgpack_pack_uint32 (pk, settings->block_size);
  pack_key (b, "additional_salt");
  pack_text_or_nil (pk, settings->additional_salt);
  pack_key (b, "lora_name");
  pack_text_or_nil (pk, settings->lora_name);
  pack_key (b, "tenant_id");
  run_end (b, &runs->context);

  /* One variant per medium and group presence rather than packing
   * "cpu"/"disk" and the nil group per event.  The keys are counted in
   * the variant without a group, which has them all. */
  n_keys = b->n_keys;
  build_tail (b, settings, type, 0, TRUE, &runs->tail[0][1]);
  build_tail (b, settings, type, 1, TRUE, &runs->tail[1][1]);
  build_tail (b, settings, type, 1, FALSE, &runs->tail[1][0]);
  b->n_keys = n_keys;
  build_tail (b, settings, type, 0, FALSE, &runs->tail[0][0]);

  if (keyed)
    {
      run_begin (b, &runs->rest);
      pack_key (b, "seq_hashes");
      msgpack_pack_array (pk, 0);
      if (legacy)
        {
          pack_key (b, "block_hashes");
          msgpack_pack_array (pk, 0);
        }
      pack_key (b, "base_block_idx");
      msgpack_pack_nil (pk);
      if (type == KVEV_EVENT_STORED)
        {
          pack_key (b, "parent_hash");
          msgpack_pack_nil (pk);
          pack_key (b, "token_ids");
          msgpack_pack_nil (pk);
          if (legacy)
            {
              pack_key (b, "parent_block_hash");
              msgpack_pack_nil (pk);
            }
        }
      if (settings->emit_publisher_id)
        pack_publisher_id (b, settings);
      run_end (b, &runs->rest);
    }
  else if (settings->emit_publisher_id)
    {
      /* The tail ends a cleared map; the rest is then only the id. */
      run_begin (b, &runs->rest);
      pack_publisher_id (b, settings);
      run_end (b, &runs->rest);
    }
  else
    {
      runs->rest.offset = runs->rest.len = 0;
    }

  /* The header counts the keys of kvevents(7)'s event maps; a key added or
   * dropped above without it would make every reader misparse. */
  g_assert (b->n_keys == size);
}

/**
 * kvev_encoder_new:
 * @settings: a publisher's settings; only read here, and not kept.
 *
 * Returns: (transfer full): the pre-encoded context of @settings.  Free with
 *   kvev_encoder_free().
 */
KvevEncoder *
kvev_encoder_new (const KvevSettings *settings)
{
  static const char pad[RUN_CHUNK] = { 0 };
  KvevEncoder *encoder;
  Builder b;
  gsize scratch_size = 0;
  guint t;

  g_return_val_if_fail (settings != NULL, NULL);

  encoder = g_new0 (KvevEncoder, 1);
  msgpack_sbuffer_init (&b.sbuf);
  msgpack_packer_init (&b.pk, &b.sbuf, builder_write);
  b.n_keys = 0;

  for (t = KVEV_EVENT_STORED; t <= KVEV_EVENT_CLEARED; t++)
    build_type (&b, settings, (KvevEventType) t, &encoder->types[t]);

  run_begin (&b, &encoder->stamp_key);
  pack_text (&b.pk, "timestamp");
  run_end (&b, &encoder->stamp_key);
  run_begin (&b, &encoder->obj_key);
  pack_text (&b.pk, "object_key");
  run_end (&b, &encoder->obj_key);
  run_begin (&b, &encoder->default_tenant);
  pack_text (&b.pk, "default");
  run_end (&b, &encoder->default_tenant);
  run_begin (&b, &encoder->trailer);
  msgpack_pack_uint32 (&b.pk, settings->dp_rank);
  run_end (&b, &encoder->trailer);

  /* put_run() reads whole chunks: pad the last run. */
  builder_write (&b.sbuf, pad, sizeof pad);

  for (t = KVEV_EVENT_STORED; t <= KVEV_EVENT_CLEARED; t++)
    {
      KvevTypeRuns *runs = &encoder->types[t];
      gsize tail = 0;
      guint m;
      guint g;

      for (m = 0; m < 2; m++)
        for (g = 0; g < 2; g++)
          tail = MAX (tail, runs->tail[m][g].len);

      /* One slot per type in the scratch; prepare_batch() fills it. */
      runs->stamped.offset = scratch_size;
      runs->stamped.len = 0;
      scratch_size += encoder->stamp_key.len + MAX_INT_LEN + runs->context.len;

      runs->bound = runs->head.len + MAX_INT_LEN + encoder->stamp_key.len + MAX_INT_LEN
                    + runs->context.len + MAX (MAX_HEADER_LEN, encoder->default_tenant.len) + tail
                    + MAX_HEADER_LEN + encoder->obj_key.len + MAX_HEADER_LEN + runs->rest.len;
    }
  /* Room for put_run()'s overshoot while filling it, and its padding. */
  encoder->scratch = g_malloc0 (scratch_size + 2 * RUN_CHUNK);

  /* The sbuffer's data came from malloc(); keep it as the block. */
  encoder->block = msgpack_sbuffer_release (&b.sbuf);
  msgpack_sbuffer_destroy (&b.sbuf);
  return encoder;
}

void
kvev_encoder_free (KvevEncoder *encoder)
{
  if (encoder == NULL)
    return;
  free (encoder->block);
  g_free (encoder->scratch);
  g_free (encoder);
}

/* ---- encoding, per batch ----------------------------------------------- */

/* The output cursor, for msgpack-c's packer.  The buffer is sized before
 * any byte is written, so writes need no checks and never fail. */
typedef struct
{
  char *pos;
} Cursor;

static int
cursor_write (void *data, const char *buf, size_t len)
{
  Cursor *cursor = data;

  memcpy (cursor->pos, buf, len);
  cursor->pos += len;
  return 0;
}

/* Each helper below packs through a packer of its own, local and with a
 * known callback, so the compiler inlines msgpack-c's pack functions
 * down to direct stores whether or not the helper itself is inlined. */
static inline char *
put_uint (char *pos, guint64 value)
{
  Cursor cursor = { pos };
  msgpack_packer pk;

  msgpack_packer_init (&pk, &cursor, cursor_write);
  msgpack_pack_uint64 (&pk, value);
  return cursor.pos;
}

static inline char *
put_int (char *pos, gint64 value)
{
  Cursor cursor = { pos };
  msgpack_packer pk;

  msgpack_packer_init (&pk, &cursor, cursor_write);
  msgpack_pack_int64 (&pk, value);
  return cursor.pos;
}

static inline char *
put_array (char *pos, guint n)
{
  Cursor cursor = { pos };
  msgpack_packer pk;

  msgpack_packer_init (&pk, &cursor, cursor_write);
  msgpack_pack_array (&pk, n);
  return cursor.pos;
}

/* Copies a constant run in RUN_CHUNK-byte moves rather than a memcpy()
 * call: runs are short, and a call per run was most of an event's cost.
 * It reads up to RUN_CHUNK - 1 bytes past the run (blocks are padded) and
 * writes as far past it (buffers have that slack); whatever is written
 * next overwrites them. */
static inline char *
put_run (char *pos, const char *base, KvevRun run)
{
  const char *src = base + run.offset;
  gsize i;

  for (i = 0; i < run.len; i += RUN_CHUNK)
    memcpy (pos + i, src + i, RUN_CHUNK);
  return pos + run.len;
}

/* Strings from the call travel byte for byte: str when they are UTF-8,
 * bin otherwise, so a strict reader is never handed a bad str.  The
 * worker has checked the call once: a string of a call found UTF-8 is a
 * str at once (check FALSE); in a call that is not, each string is tested
 * for ASCII as it is copied, and only one with a high bit set is
 * validated, from the copy.  The header goes in last, once the type is
 * known: str and bin headers have the same size except below 32 bytes,
 * where bin takes one more. */
static inline char *
put_bytes (char *pos, const char *s, gsize len, gboolean check)
{
  gsize header = len < 32 ? 1 : len < 256 ? 2 : len < 65536 ? 3 : 5;
  char *body = pos + header;
  guint64 high = 0;
  Cursor cursor = { pos };
  msgpack_packer pk;

  if (len >= 2 * sizeof (guint64))
    {
      guint64 w0;
      guint64 w1;
      gsize i;

      for (i = 0; i + 2 * sizeof w0 <= len; i += 2 * sizeof w0)
        {
          memcpy (&w0, s + i, sizeof w0);
          memcpy (&w1, s + i + sizeof w0, sizeof w1);
          memcpy (body + i, &w0, sizeof w0);
          memcpy (body + i + sizeof w0, &w1, sizeof w1);
          high |= w0 | w1;
        }
      /* The last 16 bytes again, overlapping: no byte loop for the tail
       * and no read past the string.  Shorter strings below do the
       * same with two words. */
      memcpy (&w0, s + len - 2 * sizeof w0, sizeof w0);
      memcpy (&w1, s + len - sizeof w1, sizeof w1);
      memcpy (body + len - 2 * sizeof w0, &w0, sizeof w0);
      memcpy (body + len - sizeof w1, &w1, sizeof w1);
      high |= w0 | w1;
    }
  else if (len >= sizeof (guint64))
    {
      guint64 w0;
      guint64 w1;

      memcpy (&w0, s, sizeof w0);
      memcpy (&w1, s + len - sizeof w1, sizeof w1);
      memcpy (body, &w0, sizeof w0);
      memcpy (body + len - sizeof w1, &w1, sizeof w1);
      high = w0 | w1;
    }
  else if (len >= sizeof (guint32))
    {
      guint32 w0;
      guint32 w1;

      memcpy (&w0, s, sizeof w0);
      memcpy (&w1, s + len - sizeof w1, sizeof w1);
      memcpy (body, &w0, sizeof w0);
      memcpy (body + len - sizeof w1, &w1, sizeof w1);
      high = w0 | w1;
    }
  else
    {
      gsize i;

      for (i = 0; i < len; i++)
        {
          body[i] = s[i];
          high |= (guchar) s[i];
        }
    }

  msgpack_packer_init (&pk, &cursor, cursor_write);
  if (!check || (high & G_GUINT64_CONSTANT (0x8080808080808080)) == 0
      || kvev_bytes_are_utf8 (body, len))
    {
      msgpack_pack_str (&pk, len);
    }
  else
    {
      if (header == 1)
        {
          memmove (body + 1, body, len);
          body++;
        }
      msgpack_pack_bin (&pk, len);
    }
  return body + len;
}

/* Joins "timestamp", its value and each needed type's context into one
 * run, so an event copies one run there instead of two. */
static void
prepare_batch (KvevEncoder *encoder, gint64 timestamp_ms, guint types)
{
  guint t;

  for (t = KVEV_EVENT_STORED; t <= KVEV_EVENT_CLEARED; t++)
    {
      KvevTypeRuns *runs = &encoder->types[t];
      char *start = encoder->scratch + runs->stamped.offset;
      char *pos;

      if (!(types & (1u << t)))
        continue;
      /* In type order, so the overshoot of one slot lands in the next
       * before that one is written. */
      pos = put_run (start, encoder->block, encoder->stamp_key);
      pos = put_int (pos, timestamp_ms);
      pos = put_run (pos, encoder->block, runs->context);
      runs->stamped.len = (gsize) (pos - start);
    }
}

gsize
kvev_encode_batch_bound (const KvevEncoder *encoder)
{
  return 1 + MAX_INT_LEN + MAX_HEADER_LEN + encoder->trailer.len + RUN_CHUNK;
}

gsize
kvev_encode_event_bound (const KvevEncoder *encoder, const KvevEvent *event)
{
  const KvevCall *call = event->call;

  return encoder->types[event->type].bound + call->tenant_len + call->key_len + call->group_len;
}

/**
 * kvev_encode_batch:
 *
 * See encode.h.  Not thread-safe on one @encoder.
 */
char *
kvev_encode_batch (KvevEncoder *encoder, gint64 timestamp_ms, const KvevEvent *events,
                   guint n_events, gsize *len)
{
  const char *block;
  const char *scratch;
  guint64 bound;
  guint types = 0;
  gboolean joined;
  char *buf;
  char *pos;
  guint i;

  g_return_val_if_fail (encoder != NULL, NULL);
  g_return_val_if_fail (n_events == 0 || events != NULL, NULL);
  g_return_val_if_fail (len != NULL, NULL);

  /* Size first, so the payload is written once, straight into the
   * buffer handed to ZeroMQ: no growth, no copy. */
  bound = kvev_encode_batch_bound (encoder);
  for (i = 0; i < n_events; i++)
    {
      const KvevEvent *event = &events[i];

      g_return_val_if_fail (event->call != NULL, NULL);
      g_return_val_if_fail (event->type <= KVEV_EVENT_CLEARED, NULL);
      g_return_val_if_fail (event->type == KVEV_EVENT_CLEARED || event->medium == KVEV_MEDIA_CPU
                                || event->medium == KVEV_MEDIA_DISK,
                            NULL);
      types |= 1u << event->type;
      bound += kvev_encode_event_bound (encoder, event);
    }
  if (bound > G_MAXSIZE)
    g_error ("%s: a batch of %u events is too large to encode", G_STRLOC, n_events);

  /* malloc(), not g_malloc(): ZeroMQ or the caller frees it with free(). */
  buf = malloc ((gsize) bound);
  if (buf == NULL)
    g_error ("%s: failed to allocate %" G_GUINT64_FORMAT " bytes", G_STRLOC, bound);

  /* Joining costs a copy per type present and saves one per event, so
   * a batch of one copies the two runs itself instead. */
  joined = n_events > 1;
  if (joined)
    prepare_batch (encoder, timestamp_ms, types);
  block = encoder->block;
  scratch = encoder->scratch;

  pos = put_array (buf, 3);
  pos = put_int (pos, timestamp_ms);
  pos = put_array (pos, n_events);

  for (i = 0; i < n_events; i++)
    {
      const KvevEvent *event = &events[i];
      const KvevCall *call = event->call;
      const KvevTypeRuns *runs = &encoder->types[event->type];
      gboolean disk = event->medium == KVEV_MEDIA_DISK;

      pos = put_run (pos, block, runs->head);
      pos = put_uint (pos, event->event_id);
      if (joined)
        {
          pos = put_run (pos, scratch, runs->stamped);
        }
      else
        {
          pos = put_run (pos, block, encoder->stamp_key);
          pos = put_int (pos, timestamp_ms);
          pos = put_run (pos, block, runs->context);
        }

      if (call->tenant_len > 0)
        pos = put_bytes (pos, kvev_call_tenant (call), call->tenant_len, event->not_utf8);
      else
        pos = put_run (pos, block, encoder->default_tenant);

      if (event->type == KVEV_EVENT_CLEARED)
        {
          pos = put_run (pos, block, runs->tail[0][0]);
          pos = put_run (pos, block, runs->rest);
          continue;
        }

      if (call->group_len > 0)
        {
          pos = put_run (pos, block, runs->tail[disk][1]);
          pos = put_bytes (pos, kvev_call_group (call), call->group_len, event->not_utf8);
          pos = put_run (pos, block, encoder->obj_key);
        }
      else
        {
          pos = put_run (pos, block, runs->tail[disk][0]);
        }
      /* An empty key is never queued (the publisher skips keyless
       * events); should one arrive it is an empty str, not absent. */
      pos = put_bytes (pos, kvev_call_key (call), call->key_len, event->not_utf8);
      pos = put_run (pos, block, runs->rest);
    }

  pos = put_run (pos, block, encoder->trailer);

  *len = (gsize) (pos - buf);
  g_assert (*len + RUN_CHUNK <= bound);
  return buf;
}
