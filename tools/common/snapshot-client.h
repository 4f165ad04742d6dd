/* snapshot-client.h: the subscriber's side of the snapshot protocol
 * (kvevents(7), SNAPSHOTS), on a DEALER socket the caller connects.  Only
 * in a build with the transport.  Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVT_SNAPSHOT_CLIENT_H
#define KVT_SNAPSHOT_CLIENT_H

#include <glib.h>

#include "decode.h"

G_BEGIN_DECLS

/* Asks for a snapshot: ["", "snapshot"] from a DEALER.  FALSE when ZeroMQ
 * refused the request (zmq_errno () says why). */
gboolean kvt_snapshot_client_request (void *dealer);

typedef enum
{
  KVT_SNAPSHOT_NOTHING,   /* no reply was waiting */
  KVT_SNAPSHOT_HEADER,    /* the barrier and whose state it is */
  KVT_SNAPSHOT_CHUNK,     /* a payload of stored events */
  KVT_SNAPSHOT_END,       /* the snapshot is whole */
  KVT_SNAPSHOT_ERROR,     /* the publisher could not make it */
  KVT_SNAPSHOT_MALFORMED, /* a reply of another shape */
} KvtSnapshotReply;

/* Takes one whole reply without waiting.  parts is emptied first and keeps
 * the reply's frames; body then points into them: the header's, end's or
 * error's msgpack map, or the chunk's payload. */
KvtSnapshotReply kvt_snapshot_client_receive (void *dealer, GArray *parts, KvtFrame *body);

G_END_DECLS

#endif /* KVT_SNAPSHOT_CLIENT_H */
