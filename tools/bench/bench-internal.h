/* bench-internal.h: the only part of kvevents-bench-internal that
 * reaches into the library, through its testing build
 * (libkvevents-testing.la): the worker-hold seam of the queue and the
 * encoder.  Kept to one file so that the library's private headers (and
 * their gettext macro for the library's own messages) stay out of the
 * rest of the program, and out of kvevents-bench, which links the
 * shipped library and shares every other file.
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEV_BENCH_INTERNAL_H
#define KVEV_BENCH_INTERNAL_H

#include "bench-util.h"
#include "reference-encode.h"

G_BEGIN_DECLS

/* The worker-hold seam, a BenchHoldFunc for BenchSettings.hold. */
void bench_publisher_hold (KvevPublisher *publisher, gboolean hold);

/* A library encoder for a configuration, with a batch of events built
 * from specs the way the publisher builds them. */
typedef struct _BenchBatch BenchBatch;

BenchBatch *bench_batch_new (const KvevConfig *config, const RefEvent *specs, guint n_events);
/* kvev_encode_batch() of the whole batch: a malloc()ed payload. */
char *bench_batch_encode (BenchBatch *batch, gint64 timestamp_ms, gsize *len);
void bench_batch_free (BenchBatch *batch);
/* The cost in ns of kvev_encoder_new() + kvev_encoder_free(), which a
 * publisher pays once. */
double bench_encoder_new_ns (const KvevConfig *config, guint iterations);

G_END_DECLS

#endif /* KVEV_BENCH_INTERNAL_H */
