/* bench-wire.h: the payloads the raw ZeroMQ baselines send, made of the
 * bytes the library itself sends.
 *
 * A baseline is only a baseline if it sends what the publisher sends:
 * the same event maps, key for key and byte for byte.  Rather than an
 * encoder of its own, which would have to follow the library's wire
 * format by hand and could drift from an installed library of another
 * version, kvevents-bench asks the library it runs with: a publisher of
 * the configuration at hand publishes one stored event to a SUB socket
 * of the benchmark's, and that message's map is the template of every
 * event a raw socket sends, with only its event id, timestamp and object
 * key replaced.  The maps are then repacked with msgpack-c, whose packer
 * writes every value in its shortest form, as the library does
 * (kvevents(7), "WIRE FORMAT"), so a payload is the one the publisher
 * would send for those events.
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEV_BENCH_WIRE_H
#define KVEV_BENCH_WIRE_H

#include <glib.h>
#include <kvevents/kvevents.h>

G_BEGIN_DECLS

typedef struct _BenchWire BenchWire;

/* The template of config's stored cpu events of tenant BENCH_TENANT and
 * no group, captured from a publisher of config bound to a loopback
 * port of its own; NULL with error set when no event arrived. */
BenchWire *bench_wire_capture (const KvevConfig *config, GError **error);
void bench_wire_free (BenchWire *wire);

/* The payload of n_events of those events, event ids first_event_id on,
 * the i-th with the key keys + key_len * (i % key_ring), which must be
 * UTF-8 (the benchmark's keys are printable); malloc()ed, for free (). */
char *bench_wire_encode (const BenchWire *wire, gint64 timestamp_ms, guint64 first_event_id,
                         const char *keys, gsize key_len, guint key_ring, guint n_events,
                         gsize *len);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (BenchWire, bench_wire_free)

G_END_DECLS

#endif /* KVEV_BENCH_WIRE_H */
