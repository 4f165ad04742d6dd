/* snapshot-client.c: the snapshot protocol from the subscriber's side;
 * see snapshot-client.h.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "internal.h"

#include "decode.h"
#include "snapshot-client.h"

#include <string.h>

static gboolean
frame_is (const KvevFrame *frame, const char *text)
{
  gsize len = strlen (text);

  return frame->size == len && (len == 0 || memcmp (frame->data, text, len) == 0);
}

KvevSnapshotReply
kvev_snapshot_reply_parse (const KvevFrame *parts, guint n_parts, KvevFrame *body)
{
  static const struct
  {
    const char *kind;
    KvevSnapshotReply reply;
  } kinds[] = {
    { "header", KVEV_SNAPSHOT_HEADER },
    { "chunk", KVEV_SNAPSHOT_CHUNK },
    { "end", KVEV_SNAPSHOT_END },
    { "error", KVEV_SNAPSHOT_ERROR },
  };
  guint i;

  if (n_parts != 3 || parts[0].size != 0)
    return KVEV_SNAPSHOT_MALFORMED;
  *body = parts[2];
  for (i = 0; i < G_N_ELEMENTS (kinds); i++)
    if (frame_is (&parts[1], kinds[i].kind))
      return kinds[i].reply;
  return KVEV_SNAPSHOT_MALFORMED;
}

gboolean
kvev_snapshot_header_parse (const KvevFrame *body, KvevSnapshotHeader *header)
{
  static const char *const names[]
      = { "barrier_event_id", "backend_id", "dp_rank", "publisher_id" };
  KvevValue values[G_N_ELEMENTS (names)];

  memset (header, 0, sizeof *header);
  if (!kvev_map_lookup (body->data, body->size, names, values, G_N_ELEMENTS (names))
      || !kvev_value_get_uint (&values[0], &header->barrier_event_id)
      || (values[1].type != KVEV_VALUE_STR && values[1].type != KVEV_VALUE_BIN))
    return FALSE;
  header->backend_id = values[1];
  header->has_dp_rank = kvev_value_get_uint (&values[2], &header->dp_rank);
  if (values[3].type == KVEV_VALUE_STR || values[3].type == KVEV_VALUE_BIN)
    header->publisher_id = values[3];
  return TRUE;
}

gboolean
kvev_snapshot_end_parse (const KvevFrame *body, guint64 *objects)
{
  static const char *const names[] = { "objects" };
  KvevValue value;

  return kvev_map_lookup (body->data, body->size, names, &value, 1)
         && kvev_value_get_uint (&value, objects);
}

char *
kvev_snapshot_error_parse (const KvevFrame *body)
{
  static const char *const names[] = { "message" };
  g_autofree char *text = NULL;
  KvevValue value;

  if (!kvev_map_lookup (body->data, body->size, names, &value, 1) || value.type != KVEV_VALUE_STR)
    return NULL;
  text = g_strndup (value.data, value.len);
  return kvev_escape_for_message (text);
}
