/* encode.h: msgpack encoding of events and batches (RFC #1527 maps).
 * Not installed.  Built only with the transport.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEVENTS_ENCODE_H
#define KVEVENTS_ENCODE_H

#include "call.h"
#include "config/settings.h"

G_BEGIN_DECLS

/* The fixed publisher context (backend id, model, block size, salt, LoRA,
 * dp rank, every key name and the legacy aliases) pre-encoded once from a
 * publisher's settings.  It lives as long as the publisher and is never
 * persisted.  An encoder is used by one thread at a time (the worker). */
typedef struct _KvevEncoder KvevEncoder;

KvevEncoder *kvev_encoder_new (const KvevSettings *settings);
void kvev_encoder_free (KvevEncoder *encoder);

/* The payload of a batch takes at most kvev_encode_batch_bound() plus
 * kvev_encode_event_bound() of each of its events: what the worker sums
 * to keep a message under the send budget's limit. */
gsize kvev_encode_batch_bound (const KvevEncoder *encoder);
gsize kvev_encode_event_bound (const KvevEncoder *encoder, const KvevEvent *event);

/* Encodes [timestamp_ms, [n_events maps], dp_rank]; with no event, the
 * heartbeat [timestamp_ms, [], dp_rank].  Every event map's
 * "timestamp" is timestamp_ms.  Returns a buffer allocated with malloc()
 * (ownership passes to the caller: free() it, or hand it to ZeroMQ with
 * free() as the free function) and its length in *len. */
char *kvev_encode_batch (KvevEncoder *encoder, gint64 timestamp_ms, const KvevEvent *events,
                         guint n_events, gsize *len);

G_END_DECLS

#endif /* KVEVENTS_ENCODE_H */
