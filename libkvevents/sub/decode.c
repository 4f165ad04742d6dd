/* decode.c: payloads into KvevSubscriberEvent; see decode.h.
 *
 * Two walks of a payload: one that checks it whole (base/mpread.c bounds
 * its depth and refuses counts larger than the bytes left), and one per
 * event that fills the caller's structure.  The second walk cannot fail,
 * so delivering never stops half-way through a message.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "internal.h"

#include "decode.h"

#include <string.h>

/* Reads one whole value into out, raw bytes included.  Only on bytes
 * already checked, except in kvev_map_lookup (), which checks first. */
static gboolean
read_value (KvevMpReader *reader, KvevValue *out)
{
  gsize start = reader->pos;
  KvevMpItem item;

  if (!kvev_mp_read_item (reader, &item))
    return FALSE;
  memset (out, 0, sizeof *out);
  switch (item.type)
    {
    case KVEV_MP_NIL:
      out->type = KVEV_VALUE_NIL;
      break;
    case KVEV_MP_BOOL:
      out->type = KVEV_VALUE_BOOL;
      out->uint_value = item.boolean;
      break;
    case KVEV_MP_UINT:
      out->type = KVEV_VALUE_UINT;
      out->uint_value = item.uint_value;
      out->int_value = item.uint_value <= G_MAXINT64 ? (gint64) item.uint_value : G_MAXINT64;
      break;
    case KVEV_MP_INT:
      /* msgpack-c and Python pack a non-negative int as uint, but int 8-64
       * may hold one too. */
      if (item.int_value >= 0)
        {
          out->type = KVEV_VALUE_UINT;
          out->uint_value = (guint64) item.int_value;
        }
      else
        out->type = KVEV_VALUE_INT;
      out->int_value = item.int_value;
      break;
    case KVEV_MP_FLOAT:
      out->type = KVEV_VALUE_FLOAT;
      out->float_value = item.float_value;
      break;
    case KVEV_MP_STR:
    case KVEV_MP_BIN:
    case KVEV_MP_EXT:
      out->type = item.type == KVEV_MP_STR   ? KVEV_VALUE_STR
                  : item.type == KVEV_MP_BIN ? KVEV_VALUE_BIN
                                             : KVEV_VALUE_EXT;
      out->data = item.bytes;
      out->len = item.size;
      out->int_value = item.ext_type;
      break;
    case KVEV_MP_ARRAY:
    case KVEV_MP_MAP:
      out->type = item.type == KVEV_MP_MAP ? KVEV_VALUE_MAP : KVEV_VALUE_ARRAY;
      out->len = item.size;
      if (!kvev_mp_skip_elements (reader, &item, 1))
        return FALSE;
      break;
    default:
      return FALSE;
    }
  out->raw = reader->data + start;
  out->raw_len = reader->pos - start;
  return TRUE;
}

/* The members of KvevSubscriberEvent that a key fills, or NULL for a key the
 * structure does not name. */
static KvevValue *
member_of (KvevSubscriberEvent *event, const char *key, gsize len)
{
#define IS(name) (len == sizeof (name) - 1 && memcmp (key, name, sizeof (name) - 1) == 0)
  switch (len)
    {
    case 4:
      return IS ("type") ? &event->type : NULL;
    case 6:
      return IS ("medium") ? &event->medium : NULL;
    case 7:
      return IS ("dp_rank") ? &event->dp_rank_value : NULL;
    case 8:
      return IS ("event_id") ? &event->event_id_value : IS ("group_id") ? &event->group_id : NULL;
    case 9:
      return IS ("timestamp")   ? &event->timestamp_value
             : IS ("tenant_id") ? &event->tenant_id
             : IS ("lora_name") ? &event->lora_name
             : IS ("token_ids") ? &event->token_ids
                                : NULL;
    case 10:
      return IS ("event_type")   ? &event->event_type
             : IS ("model_name") ? &event->model_name
             : IS ("block_size") ? &event->block_size_value
             : IS ("backend_id") ? &event->backend_id
             : IS ("object_key") ? &event->object_key
             : IS ("seq_hashes") ? &event->seq_hashes
                                 : NULL;
    case 11:
      return IS ("parent_hash") ? &event->parent_hash : NULL;
    case 12:
      return IS ("block_hashes")   ? &event->block_hashes
             : IS ("publisher_id") ? &event->publisher_id
                                   : NULL;
    case 14:
      return IS ("base_block_idx") ? &event->base_block_idx : NULL;
    case 15:
      return IS ("additional_salt") ? &event->additional_salt : NULL;
    case 17:
      return IS ("parent_block_hash") ? &event->parent_block_hash : NULL;
    default:
      return NULL;
    }
#undef IS
}

static gboolean
value_is_str (const KvevValue *value, const char *text)
{
  gsize len = strlen (text);

  return value->type == KVEV_VALUE_STR && value->len == len && memcmp (value->data, text, len) == 0;
}

gboolean
kvev_value_get_uint (const KvevValue *value, guint64 *out)
{
  if (value->type != KVEV_VALUE_UINT)
    return FALSE;
  *out = value->uint_value;
  return TRUE;
}

gboolean
kvev_value_bytes_equal (const KvevValue *a, const KvevValue *b)
{
  gboolean a_bytes = a->type == KVEV_VALUE_STR || a->type == KVEV_VALUE_BIN;
  gboolean b_bytes = b->type == KVEV_VALUE_STR || b->type == KVEV_VALUE_BIN;

  if (!a_bytes || !b_bytes)
    return !a_bytes && !b_bytes;
  return a->type == b->type && a->len == b->len && memcmp (a->data, b->data, a->len) == 0;
}

/* event_type is the RFC's name; type is the legacy alias and what a
 * type-keyed vLLM map carries, and the tag of a positional event. */
static gboolean
kind_of (const KvevValue *value, gboolean tag, KvevEventKind *kind)
{
  if (value_is_str (value, tag ? "BlockStored" : "stored"))
    *kind = KVEV_KIND_STORED;
  else if (value_is_str (value, tag ? "BlockRemoved" : "removed"))
    *kind = KVEV_KIND_REMOVED;
  else if (value_is_str (value, tag ? "AllBlocksCleared" : "cleared"))
    *kind = KVEV_KIND_CLEARED;
  else
    return FALSE;
  return TRUE;
}

/* Forgets what the previous event filled; the message's members stay.
 * Only the types: the other members of an absent value mean nothing, and
 * clearing the whole structure for every event cost a tenth of the
 * subscriber's time. */
static void
clear_event (KvevSubscriberEvent *event)
{
  KvevValue *value;

  event->tagged = FALSE;
  event->has_event_id = FALSE;
  event->has_timestamp = FALSE;
  event->has_dp_rank = FALSE;
  event->has_block_size = FALSE;
  event->event_id = 0;
  event->timestamp = 0;
  event->dp_rank = 0;
  event->block_size = 0;
  for (value = &event->event_id_value; value <= &event->publisher_id; value++)
    value->type = KVEV_VALUE_ABSENT;
}

/* Decodes the value that starts bytes (checked already, ending at most
 * len bytes on) and says how many bytes it took: the caller walks a
 * batch once, not once to find each event and again to decode it. */
static KvevEventError
decode_at (KvevSubscriberEvent *event, const guint8 *bytes, gsize len, gsize *consumed)
{
  KvevEventError result = KVEV_EVENT_NOT_AN_EVENT;
  KvevMpReader reader;
  KvevMpItem item;
  guint64 i;

  clear_event (event);
  event->raw = bytes;
  kvev_mp_reader_init (&reader, bytes, len);
  if (!kvev_mp_read_item (&reader, &item))
    goto skip;

  if (item.type == KVEV_MP_ARRAY)
    {
      KvevValue tag;

      event->tagged = TRUE;
      if (item.size == 0 || !read_value (&reader, &tag) || tag.type != KVEV_VALUE_STR)
        {
          result = KVEV_EVENT_UNTAGGED_ARRAY;
          goto skip;
        }
      event->type = tag;
      result = kind_of (&tag, TRUE, &event->kind) ? KVEV_EVENT_DECODED : KVEV_EVENT_UNKNOWN_TYPE;
      for (i = 1; i < item.size; i++)
        if (!kvev_mp_skip (&reader, 1))
          goto skip;
      *consumed = reader.pos;
      event->raw_len = reader.pos;
      return result;
    }
  if (item.type != KVEV_MP_MAP)
    goto skip;

  for (i = 0; i < item.size; i++)
    {
      KvevMpItem key;
      KvevValue *member = NULL;
      KvevValue ignored;

      if (!kvev_mp_read_item (&reader, &key))
        goto skip;
      if (key.type == KVEV_MP_STR)
        member = member_of (event, key.bytes, key.size);
      else if ((key.type == KVEV_MP_ARRAY || key.type == KVEV_MP_MAP)
               && !kvev_mp_skip_elements (&reader, &key, 1))
        goto skip;
      /* The first of a repeated key counts. */
      if (member != NULL && member->type != KVEV_VALUE_ABSENT)
        member = NULL;
      if (!read_value (&reader, member != NULL ? member : &ignored))
        goto skip;
    }
  *consumed = reader.pos;
  event->raw_len = reader.pos;

  event->has_event_id = kvev_value_get_uint (&event->event_id_value, &event->event_id);
  event->has_dp_rank = kvev_value_get_uint (&event->dp_rank_value, &event->dp_rank);
  event->has_block_size = kvev_value_get_uint (&event->block_size_value, &event->block_size);
  if (event->timestamp_value.type == KVEV_VALUE_UINT
      || event->timestamp_value.type == KVEV_VALUE_INT)
    {
      event->has_timestamp = TRUE;
      event->timestamp = event->timestamp_value.int_value;
    }
  if (event->event_type.type != KVEV_VALUE_ABSENT)
    return kind_of (&event->event_type, FALSE, &event->kind) ? KVEV_EVENT_DECODED
                                                             : KVEV_EVENT_UNKNOWN_TYPE;
  if (event->type.type != KVEV_VALUE_ABSENT)
    return kind_of (&event->type, TRUE, &event->kind) ? KVEV_EVENT_DECODED
                                                      : KVEV_EVENT_UNKNOWN_TYPE;
  return KVEV_EVENT_NO_TYPE;

skip:
  /* What it could not decode still has an end, past which the next event
   * begins. */
  kvev_mp_reader_init (&reader, bytes, len);
  kvev_mp_skip (&reader, 1);
  *consumed = reader.pos;
  event->raw_len = reader.pos;
  return result;
}

KvevEventError
kvev_event_decode (KvevSubscriberEvent *event, const guint8 *bytes, gsize len)
{
  gsize consumed;

  return decode_at (event, bytes, len, &consumed);
}

gboolean
kvev_batch_decode_next (const KvevBatch *batch, gsize *pos, KvevSubscriberEvent *event,
                        KvevEventError *error)
{
  gsize consumed = 0;

  if (*pos >= batch->events_end)
    return FALSE;
  *error = decode_at (event, batch->payload + *pos, batch->events_end - *pos, &consumed);
  /* Never stuck: a checked event takes at least one byte. */
  *pos += MAX (consumed, 1);
  return TRUE;
}

static KvevPayloadError
status_error (const KvevMpReader *reader)
{
  switch (reader->status)
    {
    case KVEV_MP_TOO_DEEP:
      return KVEV_PAYLOAD_TOO_DEEP;
    case KVEV_MP_INVALID:
      return KVEV_PAYLOAD_RESERVED_BYTE;
    case KVEV_MP_OK:
    case KVEV_MP_TRUNCATED:
    default:
      return KVEV_PAYLOAD_TRUNCATED;
    }
}

/* The publisher_id of the event that starts at pos, when it is a map. */
static void
find_publisher_id (KvevMpReader *reader, KvevValue *out)
{
  KvevMpItem item;
  guint64 i;

  if (!kvev_mp_read_item (reader, &item) || item.type != KVEV_MP_MAP)
    return;
  for (i = 0; i < item.size; i++)
    {
      KvevMpItem key;
      KvevValue value;

      if (!kvev_mp_read_item (reader, &key))
        return;
      if (!kvev_mp_skip_elements (reader, &key, 1))
        return;
      if (!read_value (reader, &value))
        return;
      if (kvev_mp_is_str (&key, "publisher_id"))
        {
          *out = value;
          return;
        }
    }
}

/* One walk: the batch's items in place, each event checked whole as it
 * is passed, so that a message is refused before any of it is delivered
 * without being walked twice. */
KvevPayloadError
kvev_batch_parse (KvevBatch *batch, const void *payload, gsize len)
{
  KvevMpReader reader;
  KvevMpItem array, events;
  gsize i;

  memset (batch, 0, sizeof *batch);
  if (payload == NULL)
    len = 0;
  batch->payload = payload;
  batch->len = len;

  kvev_mp_reader_init (&reader, payload, len);
  if (!kvev_mp_read_item (&reader, &array))
    return status_error (&reader);
  if (array.type != KVEV_MP_ARRAY || array.size < 2 || array.size > 3)
    return KVEV_PAYLOAD_NOT_A_BATCH;
  if (!read_value (&reader, &batch->timestamp))
    return status_error (&reader);
  if (batch->timestamp.type != KVEV_VALUE_UINT && batch->timestamp.type != KVEV_VALUE_INT
      && batch->timestamp.type != KVEV_VALUE_FLOAT)
    return KVEV_PAYLOAD_BAD_TIMESTAMP;
  if (!kvev_mp_read_item (&reader, &events))
    return status_error (&reader);
  if (events.type != KVEV_MP_ARRAY || events.size > G_MAXUINT)
    return KVEV_PAYLOAD_BAD_EVENT_LIST;
  batch->events_pos = reader.pos;
  batch->n_events = (guint) events.size;
  for (i = 0; i < events.size; i++)
    if (!kvev_mp_skip (&reader, 2))
      return status_error (&reader);
  batch->events_end = reader.pos;
  /* vLLM leaves a None rank out (msgspec omit_defaults) or sends nil. */
  if (array.size == 3)
    {
      if (!read_value (&reader, &batch->dp_rank))
        return status_error (&reader);
      if (batch->dp_rank.type != KVEV_VALUE_UINT && batch->dp_rank.type != KVEV_VALUE_INT
          && batch->dp_rank.type != KVEV_VALUE_NIL)
        return KVEV_PAYLOAD_BAD_DP_RANK;
    }
  if (reader.pos != len)
    return KVEV_PAYLOAD_TRAILING_BYTES;
  if (events.size > 0)
    {
      kvev_mp_reader_init (&reader, payload, batch->events_end);
      reader.pos = batch->events_pos;
      find_publisher_id (&reader, &batch->publisher_id);
    }
  return KVEV_PAYLOAD_OK;
}

gboolean
kvev_batch_next (const KvevBatch *batch, gsize *pos, const guint8 **event, gsize *len)
{
  KvevMpReader reader;
  gsize start = *pos;

  if (start >= batch->events_end)
    return FALSE;
  kvev_mp_reader_init (&reader, batch->payload, batch->len);
  reader.pos = start;
  if (!kvev_mp_skip (&reader, 1))
    return FALSE;
  *event = batch->payload + start;
  *len = reader.pos - start;
  *pos = reader.pos;
  return TRUE;
}

gboolean
kvev_map_lookup (const void *data, gsize len, const char *const *names, KvevValue *values,
                 guint n_names)
{
  KvevMpReader reader;
  KvevMpItem map;
  guint64 i;
  guint j;

  for (j = 0; j < n_names; j++)
    memset (&values[j], 0, sizeof values[j]);
  if (data == NULL)
    len = 0;
  kvev_mp_reader_init (&reader, data, len);
  if (!kvev_mp_skip (&reader, 0) || reader.pos != len)
    return FALSE;
  kvev_mp_reader_init (&reader, data, len);
  kvev_mp_read_item (&reader, &map);
  if (map.type != KVEV_MP_MAP)
    return FALSE;
  for (i = 0; i < map.size; i++)
    {
      KvevMpItem key;
      KvevValue value;

      kvev_mp_read_item (&reader, &key);
      kvev_mp_skip_elements (&reader, &key, 1);
      read_value (&reader, &value);
      for (j = 0; j < n_names; j++)
        if (kvev_mp_is_str (&key, names[j]) && values[j].type == KVEV_VALUE_ABSENT)
          values[j] = value;
    }
  return TRUE;
}

const char *
kvev_payload_error_message (KvevPayloadError error)
{
  switch (error)
    {
    case KVEV_PAYLOAD_OK:
      return "";
    case KVEV_PAYLOAD_TOO_DEEP:
      return _ ("the payload is not msgpack: it is nested too deeply");
    case KVEV_PAYLOAD_RESERVED_BYTE:
      return _ ("the payload is not msgpack: it uses the reserved byte 0xc1");
    case KVEV_PAYLOAD_TRAILING_BYTES:
      return _ ("bytes follow the payload");
    case KVEV_PAYLOAD_NOT_A_BATCH:
      return _ ("the payload is not an array [timestamp, events, dp_rank]");
    case KVEV_PAYLOAD_BAD_TIMESTAMP:
      return _ ("the batch timestamp is not a number");
    case KVEV_PAYLOAD_BAD_EVENT_LIST:
      return _ ("the batch's event list is not an array");
    case KVEV_PAYLOAD_BAD_DP_RANK:
      return _ ("the batch's dp_rank is not an integer");
    case KVEV_PAYLOAD_TRUNCATED:
    default:
      return _ ("the payload is not msgpack: it ends before its last element");
    }
}

const char *
kvev_event_error_message (KvevEventError error)
{
  switch (error)
    {
    case KVEV_EVENT_DECODED:
      return "";
    case KVEV_EVENT_NO_TYPE:
      return _ ("the event has neither event_type nor type");
    case KVEV_EVENT_UNKNOWN_TYPE:
      return _ ("the event has an unknown event type");
    case KVEV_EVENT_UNTAGGED_ARRAY:
      return _ ("the event is an array without a type tag");
    case KVEV_EVENT_NOT_AN_EVENT:
    default:
      return _ ("the event is neither a map nor a tagged array");
    }
}

const char *
kvev_event_kind_name (KvevEventKind kind)
{
  switch (kind)
    {
    case KVEV_KIND_STORED:
      return "stored";
    case KVEV_KIND_REMOVED:
      return "removed";
    case KVEV_KIND_CLEARED:
      return "cleared";
    default:
      return "unknown";
    }
}
