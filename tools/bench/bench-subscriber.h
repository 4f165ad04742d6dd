/* bench-subscriber.h: the subscriber process the end-to-end and latency
 * sections measure through (kvevents-bench started again with
 * --subscriber ENDPOINT..., bench-subscriber.c), and the line protocol
 * bench-net.c drives it with.
 *
 * It connects one SUB socket to every endpoint (the publisher's and the
 * raw ZeroMQ baseline's) and decodes every message with msgpack-c.  It
 * reads commands on its standard input and answers on its standard
 * output, a line each:
 *
 *   parent -> subscriber   "S <phase>"   start counting a phase
 *                          "Q"           quit
 *   subscriber -> parent   "A <phase>"   counting, produce now
 *                          "P <probe>"   a probe event arrived
 *                          BENCH_SUB_REPORT_FORMAT, a phase's end marker
 *                                        arrived: what it counted
 *                          "M <kib>"     its peak RSS, before it quits
 *
 * Markers and probes are events whose object key starts with
 * BENCH_MARKER_PREFIX; every other event is data.  A probe's key is
 * BENCH_PROBE_PREFIX and its number; an end marker's BENCH_END_PREFIX,
 * the phase, '/', and the time the producers stopped (CLOCK_MONOTONIC
 * ns), so that the report can say what arrived by then.  A data key that
 * starts with BENCH_STAMP_PREFIX carries its publish time in the same
 * clock, read just before the publish call, and the subscriber reads
 * that clock when the message arrives: the latency.
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEV_BENCH_SUBSCRIBER_H
#define KVEV_BENCH_SUBSCRIBER_H

#include <glib.h>

G_BEGIN_DECLS

#define BENCH_MARKER_PREFIX "__bench_"
#define BENCH_PROBE_PREFIX "__bench_probe__/"
#define BENCH_END_PREFIX "__bench_end__/"
#define BENCH_STAMP_PREFIX "t="

/* "R <phase> <received> <received_by_stop> <first_ns> <last_ns> <bad>
 * <latency samples> <p50_ns> <p99_ns> <p999_ns> <max_ns>", for printf ()
 * and sscanf () alike; -1 for a time or quantile that has no sample. */
#define BENCH_SUB_REPORT_FORMAT                                                                    \
  "R %u %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT " %" G_GINT64_FORMAT " %" G_GINT64_FORMAT        \
  " %" G_GUINT64_FORMAT " %u %" G_GINT64_FORMAT " %" G_GINT64_FORMAT " %" G_GINT64_FORMAT          \
  " %" G_GINT64_FORMAT

/* Runs the subscriber on endpoints until "Q" or the end of its input;
 * returns the exit status. */
int bench_subscriber_main (char **endpoints);

G_END_DECLS

#endif /* KVEV_BENCH_SUBSCRIBER_H */
