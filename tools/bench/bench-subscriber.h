/* bench-subscriber.h: the subscriber process the end-to-end and latency
 * sections measure through (kvevents-bench started again with
 * --subscriber ENDPOINT..., bench-subscriber.c), and the line protocol
 * bench-phase.c drives it with.
 *
 * It connects one SUB socket to every endpoint (the publisher's and the
 * raw ZeroMQ baseline's) and decodes every message with msgpack-c.  It
 * reads commands on its standard input and answers on its standard
 * output, a line each:
 *
 *   parent -> subscriber   "S <phase>"   start counting a phase
 *                          "H <after> <for>"
 *                                        in the next phase, stop reading
 *                                        <after> ms after its start, for
 *                                        <for> ms: a subscriber that stalls
 *                          "L <us>"      from now on, sleep <us> after every
 *                                        message (0: full speed again): a
 *                                        slow subscriber
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

/* "R <phase> <received> <received_by_stop> <bytes_by_stop> <first_ns>
 * <last_ns> <bad> <latency samples> <p50_ns> <p99_ns> <p999_ns> <max_ns>",
 * for printf () and sscanf () alike; -1 for a time or quantile that has
 * no sample.  bytes_by_stop counts the payloads of the messages with data
 * in them that arrived by the producers' stop. */
#define BENCH_SUB_REPORT_FORMAT                                                                    \
  "R %u %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT " %" G_GINT64_FORMAT       \
  " %" G_GINT64_FORMAT " %" G_GUINT64_FORMAT " %u %" G_GINT64_FORMAT " %" G_GINT64_FORMAT          \
  " %" G_GINT64_FORMAT " %" G_GINT64_FORMAT

/* Runs the subscriber on endpoints until "Q" or the end of its input;
 * returns the exit status.  rcvhwm, when not 0, is its socket's
 * ZMQ_RCVHWM: with large messages or many subscribers on one machine, the
 * default 1000 messages would hold too much memory, or take seconds to
 * read after a phase. */
int bench_subscriber_main (char **endpoints, int rcvhwm);

G_END_DECLS

#endif /* KVEV_BENCH_SUBSCRIBER_H */
