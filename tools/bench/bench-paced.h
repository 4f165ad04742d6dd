/* bench-paced.h: a producer at a steady rate whose every event carries
 * its publish time in its key (BENCH_STAMP_PREFIX, bench-subscriber.h),
 * through a publisher or, batched by the producer, through a raw socket.
 * The latency section (bench-net.c) times events with it, and the loss
 * section (bench-loss.c) drives eight subscribers at a rate the fast ones
 * can take.
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEV_BENCH_PACED_H
#define KVEV_BENCH_PACED_H

#include "bench-phase.h"

G_BEGIN_DECLS

/* A raw socket's payloads for it: batches of 1 to BENCH_BATCH_EVENTS
 * timed events, keys of key_len bytes (at least the stamp's), encoded as
 * wire (the raw source's) says. */
typedef struct _BenchStamped BenchStamped;

BenchStamped *bench_stamped_new (const BenchWire *wire, guint key_len);
void bench_stamped_free (BenchStamped *stamped);

typedef struct
{
  double rate;           /* events/s */
  BenchStamped *stamped; /* for a raw source; NULL will do for a publisher */
} BenchPace;

/* A BenchProduceFunc; data is a BenchPace. */
void bench_produce_paced (BenchNet *net, BenchSource *source, gint64 t_end, BenchPhaseResult *r,
                          gpointer data);

G_END_DECLS

#endif /* KVEV_BENCH_PACED_H */
