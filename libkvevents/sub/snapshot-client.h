/* snapshot-client.h: the subscriber's side of the snapshot protocol
 * (kvevents(7), SNAPSHOTS) as bytes: the parser of one reply and of the
 * maps of its header, end and error.  Transport-free, for the fuzz
 * target; the sockets are source.c's.
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEVENTS_SUB_SNAPSHOT_CLIENT_H
#define KVEVENTS_SUB_SNAPSHOT_CLIENT_H

#include "internal.h"

G_BEGIN_DECLS

/* The request's second frame, after the empty delimiter. */
#define KVEV_SNAPSHOT_REQUEST "snapshot"

typedef enum
{
  KVEV_SNAPSHOT_HEADER = 0,    /* the barrier and whose state it is */
  KVEV_SNAPSHOT_CHUNK = 1,     /* a payload of stored events */
  KVEV_SNAPSHOT_END = 2,       /* the snapshot is whole */
  KVEV_SNAPSHOT_ERROR = 3,     /* the publisher could not make it */
  KVEV_SNAPSHOT_MALFORMED = 4, /* a reply of another shape */
} KvevSnapshotReply;

/* Parses one whole reply ["", kind, body] as the DEALER received it;
 * body then points into parts. */
KvevSnapshotReply kvev_snapshot_reply_parse (const KvevFrame *parts, guint n_parts,
                                             KvevFrame *body);

typedef struct
{
  guint64 barrier_event_id;
  KvevValue backend_id; /* a str or a bin, never absent */
  gboolean has_dp_rank;
  guint64 dp_rank;
  KvevValue publisher_id; /* may be absent */
} KvevSnapshotHeader;

/* The header's map; FALSE when it is not a map with a barrier_event_id
 * that is an integer and a backend_id that is a str or bin.  What header
 * points to lives in body. */
gboolean kvev_snapshot_header_parse (const KvevFrame *body, KvevSnapshotHeader *header);

/* The end's {"objects": N}. */
gboolean kvev_snapshot_end_parse (const KvevFrame *body, guint64 *objects);

/* The error's message, escaped for a log (kvev_escape_for_message ()),
 * or NULL when the map has none.  Free with g_free (). */
char *kvev_snapshot_error_parse (const KvevFrame *body);

G_END_DECLS

#endif /* KVEVENTS_SUB_SNAPSHOT_CLIENT_H */
