/* stats.h: the statistics, named and formatted for a status page (JSON)
 * and for Prometheus (OpenMetrics text).
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEVENTS_STATS_H
#define KVEVENTS_STATS_H

#include "internal.h"

G_BEGIN_DECLS

#define KVEV_N_STATS (KVEV_STAT_HWM_DROPPED_EVENTS + 1)

/* One reading of every statistic, and what tells this publisher apart on
 * a page of several. */
typedef struct
{
  gboolean enabled;
  const char *instance_id;
  const char *endpoint; /* NULL when disabled */
  const char *backend_id;
  guint32 dp_rank;
  gboolean sent_any; /* whether last_sequence names a message yet */
  guint64 values[KVEV_N_STATS];
} KvevStatsReading;

/* Both return a string to g_free().  They use malloc alone (through
 * g_malloc), no GString: a forked child formats its inherited copy's
 * zeros while GLib's slice allocator may be locked (kvevents(7), THE
 * MASTER'S PROCESS). */
char *kvev_stats_format_json (const KvevStatsReading *reading);
char *kvev_stats_format_openmetrics (const KvevStatsReading *reading);

G_END_DECLS

#endif /* KVEVENTS_STATS_H */
