/* decode.c: one received ZeroMQ message turned into printable events.
 *
 * The msgpack reader of base/mpread.c rather than msgpack-c's unpacker: it
 * never allocates ahead of the bytes it has seen, bounds its recursion and
 * needs nothing but GLib, so kvevents-sub and the fuzz target build the
 * same way with or without the transport.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include "decode.h"
#include "kvtool.h"
#include <base/mpread.h>
#include <base/utf8.h>

#include <inttypes.h>
#include <math.h>
#include <string.h>
#include <glib/gi18n.h>

/* Deeper nesting is refused: a few bytes of [[[[... would otherwise
 * exhaust the stack.  Real events nest three or four levels. */
#define MAX_DEPTH KVEV_MP_MAX_DEPTH

static void
append_double (GString *out, double value)
{
  char buffer[G_ASCII_DTOSTR_BUF_SIZE];

  /* JSON has no NaN or infinities; a string keeps them readable. */
  if (isnan (value))
    g_string_append (out, "\"NaN\"");
  else if (isinf (value))
    g_string_append (out, value > 0 ? "\"Infinity\"" : "\"-Infinity\"");
  else
    g_string_append (out, g_ascii_dtostr (buffer, sizeof buffer, value));
}

static gboolean render_value (KvevMpReader *reader, GString *out, guint depth);

/* JSON wants string keys: a str key is used as it is; any other key is
 * written as JSON and that text becomes the key. */
static gboolean render_key (KvevMpReader *reader, const KvevMpItem *key, GString *out, guint depth);

/* Appends item, whose header kvev_mp_read_item () has read, as JSON; with out
 * NULL it only walks past it.  Reads the elements of containers. */
static gboolean
render_item (KvevMpReader *reader, const KvevMpItem *item, GString *out, guint depth)
{
  gsize i;

  if (depth > MAX_DEPTH)
    return kvev_mp_fail (reader, KVEV_MP_TOO_DEEP);

  switch (item->type)
    {
    case KVEV_MP_NIL:
      if (out != NULL)
        g_string_append (out, "null");
      return TRUE;
    case KVEV_MP_BOOL:
      if (out != NULL)
        g_string_append (out, item->boolean ? "true" : "false");
      return TRUE;
    case KVEV_MP_UINT:
      if (out != NULL)
        g_string_append_printf (out, "%" PRIu64, item->uint_value);
      return TRUE;
    case KVEV_MP_INT:
      if (out != NULL)
        g_string_append_printf (out, "%" PRId64, item->int_value);
      return TRUE;
    case KVEV_MP_FLOAT:
      if (out != NULL)
        append_double (out, item->float_value);
      return TRUE;
    case KVEV_MP_STR:
    case KVEV_MP_BIN:
      if (out != NULL)
        kvt_json_append_bytes (out, item->bytes, item->size, item->type == KVEV_MP_STR);
      return TRUE;
    case KVEV_MP_EXT:
      if (out != NULL)
        {
          g_string_append_printf (out, "{\"ext\": %d, \"hex\": \"", item->ext_type);
          kvt_append_hex (out, item->bytes, item->size);
          g_string_append (out, "\"}");
        }
      return TRUE;
    case KVEV_MP_ARRAY:
      if (out != NULL)
        g_string_append_c (out, '[');
      for (i = 0; i < item->size; i++)
        {
          if (out != NULL && i > 0)
            g_string_append (out, ", ");
          if (!render_value (reader, out, depth + 1))
            return FALSE;
        }
      if (out != NULL)
        g_string_append_c (out, ']');
      return TRUE;
    case KVEV_MP_MAP:
      if (out != NULL)
        g_string_append_c (out, '{');
      for (i = 0; i < item->size; i++)
        {
          KvevMpItem key;

          if (out != NULL && i > 0)
            g_string_append (out, ", ");
          if (!kvev_mp_read_item (reader, &key) || !render_key (reader, &key, out, depth + 1))
            return FALSE;
          if (out != NULL)
            g_string_append (out, ": ");
          if (!render_value (reader, out, depth + 1))
            return FALSE;
        }
      if (out != NULL)
        g_string_append_c (out, '}');
      return TRUE;
    default:
      g_assert_not_reached ();
    }
}

static gboolean
render_value (KvevMpReader *reader, GString *out, guint depth)
{
  KvevMpItem item;

  if (depth > MAX_DEPTH)
    return kvev_mp_fail (reader, KVEV_MP_TOO_DEEP);
  return kvev_mp_read_item (reader, &item) && render_item (reader, &item, out, depth);
}

/* Renders a key that is not a UTF-8 str.  A map or array key is named by
 * its kind and size, never spelt out: its text would be quoted as a
 * string, quoted again by the key around it, and so on, doubling the
 * output with every level of nesting. */
static gboolean
render_key_text (KvevMpReader *reader, const KvevMpItem *key, GString *text, guint depth)
{
  if (key->type == KVEV_MP_MAP || key->type == KVEV_MP_ARRAY)
    {
      gsize i, n = key->type == KVEV_MP_MAP ? key->size * 2 : key->size;

      for (i = 0; i < n; i++)
        if (!render_value (reader, NULL, depth + 1))
          return FALSE;
      if (text != NULL)
        g_string_append_printf (text, "<%s of %" G_GSIZE_FORMAT ">",
                                key->type == KVEV_MP_MAP ? "map" : "array", key->size);
      return TRUE;
    }
  return render_item (reader, key, text, depth);
}

static gboolean
render_key (KvevMpReader *reader, const KvevMpItem *key, GString *out, guint depth)
{
  g_autoptr (GString) text = NULL;

  if (key->type == KVEV_MP_STR && kvev_bytes_are_utf8 (key->bytes, key->size))
    {
      if (out != NULL)
        kvt_json_append_utf8 (out, key->bytes, key->size);
      return TRUE;
    }
  text = out != NULL ? g_string_new (NULL) : NULL;
  if (!render_key_text (reader, key, text, depth))
    return FALSE;
  /* What render_item () writes is ASCII or valid UTF-8. */
  if (out != NULL)
    kvt_json_append_utf8 (out, text->str, text->len);
  return TRUE;
}

/* Walks one whole value, returning where it ends. */
static gboolean
skip_value (KvevMpReader *reader)
{
  return render_value (reader, NULL, 0);
}

/* A key for the text format: bare when it is plain, JSON-quoted when it
 * holds anything that would blur the key=value layout. */
static void
append_text_key (GString *out, const char *key, gsize len)
{
  gboolean plain = len > 0;
  gsize i;

  for (i = 0; i < len && plain; i++)
    plain = g_ascii_isgraph (key[i]) && key[i] != '=' && key[i] != '"';
  if (plain)
    g_string_append_len (out, key, len);
  else
    kvt_json_append_bytes (out, key, len, TRUE);
}

/* Writes the fields of one event, in the order they came, either as the
 * members of a JSON object or as "key=value key=value". */
typedef struct
{
  KvtFormat format;
  GString *out;
  guint n_fields;
} FieldWriter;

static void
field_begin (FieldWriter *writer, const char *key, gsize len)
{
  if (writer->n_fields++ > 0)
    g_string_append (writer->out, writer->format == KVT_FORMAT_JSON ? ", " : " ");
  if (writer->format == KVT_FORMAT_JSON)
    {
      kvt_json_append_utf8 (writer->out, key, len);
      g_string_append (writer->out, ": ");
    }
  else
    {
      append_text_key (writer->out, key, len);
      g_string_append_c (writer->out, '=');
    }
}

static gboolean
write_map_fields (KvevMpReader *reader, gsize n_pairs, FieldWriter *writer)
{
  gsize i;

  for (i = 0; i < n_pairs; i++)
    {
      KvevMpItem key;

      if (!kvev_mp_read_item (reader, &key))
        return FALSE;
      if (key.type == KVEV_MP_STR && kvev_bytes_are_utf8 (key.bytes, key.size))
        field_begin (writer, key.bytes, key.size);
      else
        {
          g_autoptr (GString) text = g_string_new (NULL);

          if (!render_key_text (reader, &key, text, 1))
            return FALSE;
          field_begin (writer, text->str, text->len);
        }
      if (!render_value (reader, writer->out, 1))
        return FALSE;
    }
  return TRUE;
}

/* Position names of vLLM's tagged events (vllm/distributed/kv_events.py;
 * SGLang copies them).  Positions past the known ones are shown as
 * field_N, so a newer engine's additions still print. */
static const char *const stored_names[] = {
  "block_hashes", "parent_block_hash", "token_ids",  "block_size", "lora_id",
  "medium",       "lora_name",         "extra_keys", "group_idx",  NULL,
};
static const char *const removed_names[] = { "block_hashes", "medium", "group_idx", NULL };
static const char *const cleared_names[] = { "medium", NULL };

static gboolean
write_array_fields (KvevMpReader *reader, const KvevMpItem *tag, gsize n_elements,
                    const char *const *names, FieldWriter *writer)
{
  gsize i, n_names = 0;

  while (names[n_names] != NULL)
    n_names++;

  field_begin (writer, "type", strlen ("type"));
  render_item (reader, tag, writer->out, 1);
  for (i = 1; i < n_elements; i++)
    {
      if (i - 1 < n_names)
        field_begin (writer, names[i - 1], strlen (names[i - 1]));
      else
        {
          g_autofree char *name = g_strdup_printf ("field_%zu", i);

          field_begin (writer, name, strlen (name));
        }
      if (!render_value (reader, writer->out, 1))
        return FALSE;
    }
  return TRUE;
}

typedef struct
{
  KvtFormat format;
  const char *endpoint;
  const char *topic;
  gsize topic_len;
  guint64 sequence;
  gboolean snapshot; /* a snapshot's chunk, which has no sequence */
  GString *timestamp_json;
  GString *timestamp_text;
  GString *dp_rank_json; /* NULL when the batch has none */
} Batch;

static char *
describe_failure (const KvevMpReader *reader)
{
  switch (reader->status)
    {
    case KVEV_MP_TOO_DEEP:
      return g_strdup (_ ("the payload is not msgpack: it is nested too deeply"));
    case KVEV_MP_INVALID:
      return g_strdup (_ ("the payload is not msgpack: it uses the reserved byte 0xc1"));
    case KVEV_MP_TRUNCATED:
    case KVEV_MP_OK:
    default:
      return g_strdup (_ ("the payload is not msgpack: it ends before its last element"));
    }
}

/* A message's prefix, before the event's own fields. */
static void
begin_line (const Batch *batch, KvtEventKind kind, GString *line)
{
  if (batch->format == KVT_FORMAT_JSON)
    {
      g_string_append_c (line, '{');
      if (batch->endpoint != NULL)
        {
          g_string_append (line, "\"endpoint\": ");
          kvt_json_append_bytes (line, batch->endpoint, strlen (batch->endpoint), TRUE);
          g_string_append (line, ", ");
        }
      if (batch->topic_len > 0)
        {
          g_string_append (line, "\"topic\": ");
          kvt_json_append_bytes (line, batch->topic, batch->topic_len, TRUE);
          g_string_append (line, ", ");
        }
      if (batch->snapshot)
        g_string_append_printf (line, "\"snapshot\": true, \"timestamp\": %s, ",
                                batch->timestamp_json->str);
      else
        g_string_append_printf (line, "\"sequence\": %" PRIu64 ", \"timestamp\": %s, ",
                                batch->sequence, batch->timestamp_json->str);
      if (batch->dp_rank_json != NULL)
        g_string_append_printf (line, "\"dp_rank\": %s, ", batch->dp_rank_json->str);
      g_string_append_printf (line, "\"kind\": \"%s\", \"event\": {", kvt_event_kind_name (kind));
    }
  else
    {
      if (batch->endpoint != NULL)
        g_string_append_printf (line, "[%s] ", batch->endpoint);
      if (batch->topic_len > 0)
        {
          g_string_append (line, "topic=");
          kvt_json_append_bytes (line, batch->topic, batch->topic_len, TRUE);
          g_string_append_c (line, ' ');
        }
      if (batch->snapshot)
        g_string_append_printf (line, "%8s ", "snapshot");
      else
        g_string_append_printf (line, "%8" PRIu64 " ", batch->sequence);
      g_string_append_printf (line, "%-24s dp=%-3s %-7s ", batch->timestamp_text->str,
                              batch->dp_rank_json != NULL ? batch->dp_rank_json->str : "-",
                              kvt_event_kind_name (kind));
    }
}

static void
end_line (const Batch *batch, GString *line)
{
  if (batch->format == KVT_FORMAT_JSON)
    g_string_append (line, "}}");
}

static gboolean
kind_from_event_type (const KvevMpItem *value, KvtEventKind *kind)
{
  if (kvev_mp_is_str (value, "stored"))
    *kind = KVT_EVENT_STORED;
  else if (kvev_mp_is_str (value, "removed"))
    *kind = KVT_EVENT_REMOVED;
  else if (kvev_mp_is_str (value, "cleared"))
    *kind = KVT_EVENT_CLEARED;
  else
    return FALSE;
  return TRUE;
}

static gboolean
kind_from_tag (const KvevMpItem *value, KvtEventKind *kind, const char *const **names)
{
  if (kvev_mp_is_str (value, "BlockStored"))
    {
      *kind = KVT_EVENT_STORED;
      *names = stored_names;
    }
  else if (kvev_mp_is_str (value, "BlockRemoved"))
    {
      *kind = KVT_EVENT_REMOVED;
      *names = removed_names;
    }
  else if (kvev_mp_is_str (value, "AllBlocksCleared"))
    {
      *kind = KVT_EVENT_CLEARED;
      *names = cleared_names;
    }
  else
    return FALSE;
  return TRUE;
}

static char *
describe (const KvevMpItem *item)
{
  g_autoptr (GString) text = g_string_new (NULL);
  KvevMpReader empty;

  /* A container is not walked; a scalar reads nothing past itself. */
  if (item->type == KVEV_MP_ARRAY || item->type == KVEV_MP_MAP)
    return g_strdup (item->type == KVEV_MP_ARRAY ? "[...]" : "{...}");
  kvev_mp_reader_init (&empty, NULL, 0);
  render_item (&empty, item, text, 0);
  return g_string_free (g_steal_pointer (&text), FALSE);
}

/* An event that arrived but cannot be shown. */
static KvtEvent *
skipped_event (char *error, gboolean has_event_id, guint64 event_id)
{
  KvtEvent *event = g_new0 (KvtEvent, 1);

  event->error = error;
  event->has_event_id = has_event_id;
  event->event_id = event_id;
  return event;
}

/* The fields a subscriber keeping the state needs, in KvtEvent's order. */
enum
{
  STATE_BACKEND,
  STATE_TENANT,
  STATE_KEY,
  STATE_MEDIUM,
};

static const char *const state_names[] = { "backend_id", "tenant_id", "object_key", "medium" };

/* The index of key in state_names, or past its end. */
static guint
state_field (const KvevMpItem *key)
{
  guint i;

  for (i = 0; i < G_N_ELEMENTS (state_names); i++)
    if (kvev_mp_is_str (key, state_names[i]))
      break;
  return i;
}

/* Decodes the event that fills event_bytes (already known to be one
 * complete value).  Never NULL: an event that cannot be decoded comes
 * back skipped, with its error. */
static KvtEvent *
decode_event (const Batch *batch, const guint8 *event_bytes, gsize event_len, guint index)
{
  g_autoptr (GString) line = g_string_new (NULL);
  FieldWriter writer = { batch->format, line, 0 };
  KvtEvent *event;
  KvevMpReader reader;
  KvevMpItem item;
  KvtEventKind kind;

  /* The payload was checked whole before any event is decoded, so no read
   * below can fail: their results need no test. */
  kvev_mp_reader_init (&reader, event_bytes, event_len);
  kvev_mp_read_item (&reader, &item);

  if (item.type == KVEV_MP_MAP)
    {
      gsize body = reader.pos, i;
      gboolean have_event_type = FALSE, have_type = FALSE, has_event_id = FALSE;
      KvevMpItem event_type = { 0 }, type = { 0 };
      const char *const *names;
      guint64 event_id = 0;
      g_autoptr (GString) publisher_id = NULL;
      GString *state[G_N_ELEMENTS (state_names)] = { NULL };
      guint field;

      /* First pass: the fields that say what the event is. */
      for (i = 0; i < item.size; i++)
        {
          KvevMpItem key, value;

          kvev_mp_read_item (&reader, &key);
          if (kvev_mp_is_str (&key, "publisher_id") && publisher_id == NULL)
            {
              /* Kept as JSON, so that any value compares and prints. */
              publisher_id = g_string_new (NULL);
              render_value (&reader, publisher_id, 1);
            }
          else if ((field = state_field (&key)) < G_N_ELEMENTS (state) && state[field] == NULL)
            {
              state[field] = g_string_new (NULL);
              render_value (&reader, state[field], 1);
            }
          else if (kvev_mp_is_str (&key, "event_type") || kvev_mp_is_str (&key, "type")
                   || kvev_mp_is_str (&key, "event_id"))
            {
              kvev_mp_read_item (&reader, &value);
              if (kvev_mp_is_str (&key, "event_type"))
                {
                  event_type = value;
                  have_event_type = TRUE;
                }
              else if (kvev_mp_is_str (&key, "type"))
                {
                  type = value;
                  have_type = TRUE;
                }
              else
                has_event_id = kvev_mp_get_uint (&value, &event_id);
              render_item (&reader, &value, NULL, 1);
            }
          else
            {
              render_item (&reader, &key, NULL, 1);
              skip_value (&reader);
            }
        }

      /* event_type is the RFC's name; type is the legacy alias and what
       * a type-keyed vLLM map carries. */
      if (!have_event_type && !have_type)
        event = skipped_event (
            g_strdup_printf (_ ("event %u has neither event_type nor type"), index), has_event_id,
            event_id);
      else if (have_event_type ? !kind_from_event_type (&event_type, &kind)
                               : !kind_from_tag (&type, &kind, &names))
        {
          g_autofree char *shown = describe (have_event_type ? &event_type : &type);

          event = skipped_event (
              g_strdup_printf (_ ("event %u has an unknown event type %s"), index, shown),
              has_event_id, event_id);
        }
      else
        {
          reader.pos = body;
          begin_line (batch, kind, line);
          write_map_fields (&reader, item.size, &writer);
          end_line (batch, line);

          event = g_new0 (KvtEvent, 1);
          event->has_event_id = has_event_id;
          event->event_id = event_id;
          event->kind = kind;
          event->line = g_string_free (g_steal_pointer (&line), FALSE);
          if (state[STATE_BACKEND] != NULL && state[STATE_TENANT] != NULL)
            {
              event->backend_id = g_string_free (g_steal_pointer (&state[STATE_BACKEND]), FALSE);
              event->tenant_id = g_string_free (g_steal_pointer (&state[STATE_TENANT]), FALSE);
              if (state[STATE_KEY] != NULL)
                event->object_key = g_string_free (g_steal_pointer (&state[STATE_KEY]), FALSE);
              if (state[STATE_MEDIUM] != NULL)
                event->medium = g_string_free (g_steal_pointer (&state[STATE_MEDIUM]), FALSE);
            }
        }
      for (field = 0; field < G_N_ELEMENTS (state); field++)
        if (state[field] != NULL)
          g_string_free (state[field], TRUE);
      /* A skipped event still says which publisher sent it. */
      if (publisher_id != NULL)
        event->publisher_id = g_string_free (g_steal_pointer (&publisher_id), FALSE);
      return event;
    }
  else if (item.type == KVEV_MP_ARRAY)
    {
      const char *const *names = NULL;
      KvevMpItem tag;

      if (item.size == 0 || !kvev_mp_read_item (&reader, &tag) || tag.type != KVEV_MP_STR)
        return skipped_event (
            g_strdup_printf (_ ("event %u is an array without a type tag"), index), FALSE, 0);
      if (!kind_from_tag (&tag, &kind, &names))
        {
          g_autofree char *shown = describe (&tag);

          return skipped_event (
              g_strdup_printf (_ ("event %u has an unknown event type %s"), index, shown), FALSE,
              0);
        }
      begin_line (batch, kind, line);
      write_array_fields (&reader, &tag, item.size, names, &writer);
      end_line (batch, line);
      event = g_new0 (KvtEvent, 1);
    }
  else
    return skipped_event (
        g_strdup_printf (_ ("event %u is neither a map nor a tagged array"), index), FALSE, 0);

  event->kind = kind;
  event->line = g_string_free (g_steal_pointer (&line), FALSE);
  return event;
}

/* The batch timestamp for the text format: RFC publishers send integer
 * milliseconds, vLLM and SGLang float seconds. */
static void
format_timestamp (const KvevMpItem *item, GString *out)
{
  /* 9999-12-31T23:59:59.999Z: past it the year no longer has 4 digits. */
  const gint64 max_ms = G_GINT64_CONSTANT (253402300799999);
  g_autoptr (GDateTime) time = NULL;
  g_autofree char *seconds = NULL;
  KvevMpReader nothing;
  gint64 ms = -1;

  if (item->type == KVEV_MP_UINT && item->uint_value <= (guint64) max_ms)
    ms = (gint64) item->uint_value;
  else if (item->type == KVEV_MP_INT && item->int_value >= 0)
    ms = item->int_value;
  else if (item->type == KVEV_MP_FLOAT && item->float_value >= 0
           && item->float_value * 1000 <= (double) max_ms)
    ms = (gint64) (item->float_value * 1000);

  if (ms >= 0 && ms <= max_ms)
    time = g_date_time_new_from_unix_utc (ms / 1000);
  if (time == NULL)
    {
      /* A number: nothing past the item is read. */
      kvev_mp_reader_init (&nothing, NULL, 0);
      render_item (&nothing, item, out, 0);
      return;
    }
  seconds = g_date_time_format (time, "%Y-%m-%dT%H:%M:%S");
  g_string_append_printf (out, "%s.%03dZ", seconds, (int) (ms % 1000));
}

static void
decode_payload (KvtMessage *message, Batch *batch, const guint8 *payload, gsize len)
{
  g_autoptr (GString) timestamp_json = g_string_new (NULL);
  g_autoptr (GString) timestamp_text = g_string_new (NULL);
  g_autoptr (GString) dp_rank_json = NULL;
  KvevMpReader reader;
  KvevMpItem array, timestamp, events, dp_rank;
  gsize events_start, i;

  /* Check the whole payload first, so that a message is printed whole or
   * not at all. */
  kvev_mp_reader_init (&reader, payload, len);
  if (!skip_value (&reader))
    {
      message->error = describe_failure (&reader);
      return;
    }
  if (reader.pos != len)
    {
      gsize extra = len - reader.pos;

      message->error = g_strdup_printf (
          g_dngettext (KVT_GETTEXT_PACKAGE, "%zu byte follows the payload",
                       "%zu bytes follow the payload", (gulong) MIN (extra, G_MAXULONG)),
          extra);
      return;
    }

  kvev_mp_reader_init (&reader, payload, len);
  kvev_mp_read_item (&reader, &array);
  if (array.type != KVEV_MP_ARRAY || array.size < 2 || array.size > 3)
    {
      message->error = g_strdup (_ ("the payload is not an array [timestamp, events, dp_rank]"));
      return;
    }
  kvev_mp_read_item (&reader, &timestamp);
  if (!kvev_mp_is_number (&timestamp))
    {
      message->error = g_strdup (_ ("the batch timestamp is not a number"));
      return;
    }
  render_item (&reader, &timestamp, timestamp_json, 0);
  format_timestamp (&timestamp, timestamp_text);

  kvev_mp_read_item (&reader, &events);
  if (events.type != KVEV_MP_ARRAY)
    {
      message->error = g_strdup (_ ("the batch's event list is not an array"));
      return;
    }
  /* dp_rank follows the events but every line shows it: find it first. */
  events_start = reader.pos;
  for (i = 0; i < events.size; i++)
    skip_value (&reader);
  /* vLLM leaves a None rank out (msgspec omit_defaults) or sends nil. */
  if (array.size == 3)
    {
      kvev_mp_read_item (&reader, &dp_rank);
      if (dp_rank.type != KVEV_MP_UINT && dp_rank.type != KVEV_MP_INT
          && dp_rank.type != KVEV_MP_NIL)
        {
          message->error = g_strdup (_ ("the batch's dp_rank is not an integer"));
          return;
        }
      dp_rank_json = g_string_new (NULL);
      render_item (&reader, &dp_rank, dp_rank_json, 0);
    }

  batch->timestamp_json = timestamp_json;
  batch->timestamp_text = timestamp_text;
  batch->dp_rank_json = dp_rank_json;

  reader.pos = events_start;
  for (i = 0; i < events.size; i++)
    {
      gsize start = reader.pos;

      skip_value (&reader);
      /* People count events from 1. */
      KvtEvent *event = decode_event (batch, payload + start, reader.pos - start,
                                      (guint) MIN (i + 1, G_MAXUINT));

      g_ptr_array_add (message->events, event);
      if (message->publisher_id == NULL)
        message->publisher_id = event->publisher_id;
    }
}

static void
event_free (gpointer data)
{
  KvtEvent *event = data;

  g_free (event->line);
  g_free (event->error);
  g_free (event->publisher_id);
  g_free (event->backend_id);
  g_free (event->tenant_id);
  g_free (event->object_key);
  g_free (event->medium);
  g_free (event);
}

KvtMessage *
kvt_decode_message (const KvtFrame *frames, gsize n_frames, KvtFormat format, const char *endpoint)
{
  KvtMessage *message = g_new0 (KvtMessage, 1);
  Batch batch = { 0 };
  guint64 sequence_be;

  message->events = g_ptr_array_new_with_free_func (event_free);

  if (n_frames != 3)
    {
      message->error = g_strdup_printf (_ ("expected 3 frames, got %zu"), n_frames);
      return message;
    }
  if (frames[1].size != sizeof sequence_be)
    {
      message->error
          = g_strdup_printf (_ ("the sequence frame has %zu bytes instead of 8"), frames[1].size);
      return message;
    }
  memcpy (&sequence_be, frames[1].data, sizeof sequence_be);
  message->has_sequence = TRUE;
  message->sequence = GUINT64_FROM_BE (sequence_be);

  batch.format = format;
  batch.endpoint = endpoint;
  batch.topic = frames[0].data;
  batch.topic_len = frames[0].data != NULL ? frames[0].size : 0;
  batch.sequence = message->sequence;
  decode_payload (message, &batch, frames[2].data, frames[2].data != NULL ? frames[2].size : 0);
  return message;
}

KvtMessage *
kvt_decode_snapshot_chunk (const void *payload, gsize len, KvtFormat format, const char *endpoint)
{
  KvtMessage *message = g_new0 (KvtMessage, 1);
  Batch batch = { 0 };

  message->events = g_ptr_array_new_with_free_func (event_free);
  batch.format = format;
  batch.endpoint = endpoint;
  batch.snapshot = TRUE;
  decode_payload (message, &batch, payload, payload != NULL ? len : 0);
  return message;
}

GHashTable *
kvt_decode_map (const void *data, gsize len)
{
  g_autoptr (GHashTable) members = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  KvevMpReader reader;
  KvevMpItem map;
  gsize i;

  kvev_mp_reader_init (&reader, data, data != NULL ? len : 0);
  if (!skip_value (&reader) || reader.pos != len)
    return NULL;
  kvev_mp_reader_init (&reader, data, len);
  kvev_mp_read_item (&reader, &map);
  if (map.type != KVEV_MP_MAP)
    return NULL;
  for (i = 0; i < map.size; i++)
    {
      KvevMpItem key;
      GString *value = g_string_new (NULL);

      kvev_mp_read_item (&reader, &key);
      render_value (&reader, value, 1);
      /* The first of a repeated key counts, as for an event's fields. */
      if (key.type == KVEV_MP_STR && kvev_bytes_are_utf8 (key.bytes, key.size))
        {
          char *name = g_strndup ((const char *) key.bytes, key.size);

          if (!g_hash_table_contains (members, name))
            {
              g_hash_table_insert (members, name, g_string_free (value, FALSE));
              continue;
            }
          g_free (name);
        }
      g_string_free (value, TRUE);
    }
  return g_steal_pointer (&members);
}

void
kvt_message_free (KvtMessage *message)
{
  if (message == NULL)
    return;
  g_free (message->error);
  g_ptr_array_unref (message->events);
  g_free (message);
}

const char *
kvt_event_kind_name (KvtEventKind kind)
{
  switch (kind)
    {
    case KVT_EVENT_STORED:
      return "stored";
    case KVT_EVENT_REMOVED:
      return "removed";
    case KVT_EVENT_CLEARED:
      return "cleared";
    default:
      return "unknown";
    }
}
