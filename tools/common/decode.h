/* decode.h: one received ZeroMQ message turned into printable events.
 *
 * Kept apart from kvevents-sub's command line so that a fuzz target can
 * feed it arbitrary frames.  It reads only inside the buffers it is given,
 * bounds its recursion, allocates in proportion to its input and never
 * aborts on bad input: every problem comes back as a message.
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVT_DECODE_H
#define KVT_DECODE_H

#include <glib.h>

G_BEGIN_DECLS

/* What an event says, whichever engine sent it. */
typedef enum
{
  KVT_EVENT_STORED,
  KVT_EVENT_REMOVED,
  KVT_EVENT_CLEARED,
} KvtEventKind;

#define KVT_N_EVENT_KINDS (KVT_EVENT_CLEARED + 1)

/* "stored", "removed" or "cleared". */
const char *kvt_event_kind_name (KvtEventKind kind);

typedef enum
{
  KVT_FORMAT_JSON, /* one JSON object a line */
  KVT_FORMAT_TEXT, /* aligned columns, then key=value for every field */
} KvtFormat;

typedef struct
{
  const void *data;
  gsize size;
} KvtFrame;

typedef struct
{
  KvtEventKind kind;
  gboolean has_event_id; /* the RFC #1527 maps carry one; vLLM's do not */
  guint64 event_id;
  char *line;         /* the rendered event, without a newline; NULL if skipped */
  char *error;        /* why the event was skipped (translated), or NULL; a
                       * skipped event keeps the event_id it carried, if any */
  char *publisher_id; /* its publisher_id as JSON (kvevents(7), PUBLISHER
                       * IDENTITY), or NULL when the map has none */
  /* What the event is about, each as JSON, for a subscriber that keeps the
   * state: backend_id and tenant_id, or both NULL when a map lacks one
   * (and for vLLM's tagged events); object_key and medium, or NULL. */
  char *backend_id;
  char *tenant_id;
  char *object_key;
  char *medium;
  /* Set by a reader that keeps the state, never by the decoder: what the
   * event says is already out of date there. */
  gboolean superseded;
} KvtEvent;

typedef struct
{
  /* The transport sequence, when the frames got that far. */
  gboolean has_sequence;
  guint64 sequence;
  /* Why the whole message was skipped (translated), or NULL. */
  char *error;
  /* Every event (KvtEvent *), decoded or skipped, in message order: a
   * skipped one still arrived, and counts where it stood.  None at all is a
   * heartbeat. */
  GPtrArray *events;
  /* The publisher_id of its first event that has one, or NULL. */
  const char *publisher_id;
} KvtMessage;

/* Decodes one message.  A wire message is three frames: topic, 8-byte
 * big-endian sequence, msgpack payload [timestamp, [events], dp_rank].
 * Events are RFC #1527 maps (keyed by "event_type", or by the legacy
 * "type"), or vLLM/SGLang tagged events: arrays whose first element is
 * "BlockStored", "BlockRemoved" or "AllBlocksCleared".  endpoint, when not
 * NULL, is shown in every line.  Never returns NULL; free with
 * kvt_message_free (). */
KvtMessage *kvt_decode_message (const KvtFrame *frames, gsize n_frames, KvtFormat format,
                                const char *endpoint);

/* Decodes one chunk of a snapshot (kvevents(7), SNAPSHOTS): a payload
 * as in a live message, shown with "snapshot": true where a live one
 * shows its sequence.  Never NULL; free with kvt_message_free (). */
KvtMessage *kvt_decode_snapshot_chunk (const void *payload, gsize len, KvtFormat format,
                                       const char *endpoint);

/* A msgpack map (a snapshot's header or end) as its str keys and each
 * value as JSON; NULL when data is not exactly one map.  Free with
 * g_hash_table_unref (). */
GHashTable *kvt_decode_map (const void *data, gsize len);

void kvt_message_free (KvtMessage *message);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (KvtMessage, kvt_message_free)

G_END_DECLS

#endif /* KVT_DECODE_H */
