/* decode.h: a payload of the live stream, a replay or a snapshot chunk
 * turned into KvevSubscriberEvent structures, in place: nothing is allocated and
 * every string points into the payload.  The whole payload is checked
 * first, so a message is delivered whole or not at all; the check bounds
 * its nesting and never aborts: every problem comes back as a code the
 * caller counts.  Transport-free, for the fuzz target.
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEVENTS_SUB_DECODE_H
#define KVEVENTS_SUB_DECODE_H

#include "internal.h"
#include <base/mpread.h>

G_BEGIN_DECLS

/* Why a payload is refused whole. */
typedef enum
{
  KVEV_PAYLOAD_OK = 0,
  KVEV_PAYLOAD_TRUNCATED = 1,
  KVEV_PAYLOAD_RESERVED_BYTE = 2,
  KVEV_PAYLOAD_TOO_DEEP = 3,
  KVEV_PAYLOAD_TRAILING_BYTES = 4,
  KVEV_PAYLOAD_NOT_A_BATCH = 5,
  KVEV_PAYLOAD_BAD_TIMESTAMP = 6,
  KVEV_PAYLOAD_BAD_EVENT_LIST = 7,
  KVEV_PAYLOAD_BAD_DP_RANK = 8,
} KvevPayloadError;

/* Why one event of a good payload is skipped. */
typedef enum
{
  KVEV_EVENT_DECODED = 0,
  KVEV_EVENT_NO_TYPE = 1,
  KVEV_EVENT_UNKNOWN_TYPE = 2,
  KVEV_EVENT_UNTAGGED_ARRAY = 3,
  KVEV_EVENT_NOT_AN_EVENT = 4,
} KvevEventError;

/* A checked payload [timestamp, [events], dp_rank]. */
typedef struct
{
  const guint8 *payload;
  gsize len;
  KvevValue timestamp;
  KvevValue dp_rank; /* absent when vLLM left it out */
  gsize events_pos;  /* where the first event starts */
  gsize events_end;  /* where the last one ends */
  guint n_events;
  /* The publisher_id of the first event, when it is a map that has one:
   * what tells a restart, read before any event is delivered. */
  KvevValue publisher_id;
} KvevBatch;

KvevPayloadError kvev_batch_parse (KvevBatch *batch, const void *payload, gsize len);

/* The next event of batch, from *pos (batch->events_pos at first); FALSE
 * after the last. */
gboolean kvev_batch_next (const KvevBatch *batch, gsize *pos, const guint8 **event, gsize *len);

/* Fills event's own members (kind, tagged, the map's keys, raw) from one
 * event that kvev_batch_parse () checked; the message's members are the
 * caller's and are left as they are. */
KvevEventError kvev_event_decode (KvevSubscriberEvent *event, const guint8 *bytes, gsize len);

/* Decodes the next event of batch from *pos (batch->events_pos at first)
 * into event, as kvev_event_decode () does, and moves *pos past it, in
 * one walk; FALSE after the last. */
gboolean kvev_batch_decode_next (const KvevBatch *batch, gsize *pos, KvevSubscriberEvent *event,
                                 KvevEventError *error);

/* Looks names up in data, which must be exactly one msgpack map: values[i]
 * is the first value of key names[i], or absent.  FALSE when data is not
 * one map. */
gboolean kvev_map_lookup (const void *data, gsize len, const char *const *names, KvevValue *values,
                          guint n_names);

/* An integer that is not negative. */
gboolean kvev_value_get_uint (const KvevValue *value, guint64 *out);

/* Whether two values are the same str or bin bytes (an absent one is
 * equal to nothing). */
gboolean kvev_value_bytes_equal (const KvevValue *a, const KvevValue *b);

/* The messages, translated, for a notice. */
const char *kvev_payload_error_message (KvevPayloadError error);
const char *kvev_event_error_message (KvevEventError error);

G_END_DECLS

#endif /* KVEVENTS_SUB_DECODE_H */
