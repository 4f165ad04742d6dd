/* bench-event.h: one event as kvevents-bench's encoders see it: the
 * library's (through bench-internal.h) and the key-by-key baseline
 * (bench-baseline.h).
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEV_BENCH_EVENT_H
#define KVEV_BENCH_EVENT_H

#include <glib.h>
#include <kvevents/kvevents.h>

G_BEGIN_DECLS

/* The values of the library's own event types (checked where the two
 * meet, in bench-internal.c). */
typedef enum
{
  BENCH_EVENT_STORED,
  BENCH_EVENT_REMOVED,
  BENCH_EVENT_CLEARED,
} BenchEventType;

typedef struct
{
  BenchEventType type;
  KvevMedia medium; /* KVEV_MEDIA_NONE for cleared */
  guint64 event_id;
  const char *tenant; /* tenant_len 0: "default" */
  gsize tenant_len;
  const char *key;
  gsize key_len;
  const char *group; /* group_len 0: nil */
  gsize group_len;
} BenchEventSpec;

G_END_DECLS

#endif /* KVEV_BENCH_EVENT_H */
