/* bench-stats.h: summaries of kvevents-bench's samples: the per-run
 * values of a figure, and the latencies a subscriber measures.
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEV_BENCH_STATS_H
#define KVEV_BENCH_STATS_H

#include <glib.h>

G_BEGIN_DECLS

/* Of a GArray of double; NAN when there are none (or values is NULL). */
double bench_median (const GArray *values);
double bench_min (const GArray *values);
double bench_max (const GArray *values);
double bench_sum (const GArray *values);

/* Sorts a GArray of gint64 nanoseconds, for bench_percentile_ns (). */
void bench_sort_ns (GArray *samples);
/* The q-quantile (0 < q <= 1) of sorted samples, the nearest rank; -1
 * when there are none. */
gint64 bench_percentile_ns (const GArray *sorted, double q);

G_END_DECLS

#endif /* KVEV_BENCH_STATS_H */
