/* kvevents-bench-internal: the figures of kvevents-bench(1) that only the
 * library's testing build can give, linked with it
 * (libkvevents-testing.la): the publish call with the worker held and
 * with the queue full, which hold the worker through the queue's seam;
 * the encoder alone against msgpack-c key by key; and the bytes a queued
 * event takes, measured with the worker held.  It measures that copy of
 * the sources, not an installed library, and lives only in the build
 * tree: `make bench` runs it after kvevents-bench.
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include "bench-internal.h"
#include "bench-main.h"
#include "bench-memory-child.h"
#include "bench-sections.h"

#include <glib/gi18n.h>

enum
{
  HOT,
  ENCODE,
  MEMORY,
};

static const char *const sections[] = { "hot", "encode", "memory", NULL };
static const char *const shipped_sections[]
    = { "e2e", "latency", "loss", "fanout", "scaling", "snapshot", NULL };

static gboolean
run (BenchReport *report, const BenchSettings *settings, const gboolean *selected, GError **error)
{
  return (!selected[HOT] || bench_hot_held (report, settings, error))
         && (!selected[ENCODE] || bench_encode (report, settings, error))
         && (!selected[MEMORY] || bench_memory_queue (report, settings, error));
}

static int
child (const char *kind, guint n_events, guint key_len, const char *tmp_dir)
{
  return bench_memory_queue_child_main (kind, n_events, key_len, bench_publisher_hold);
}

int
main (int argc, char **argv)
{
  const BenchProgram program = {
    .name = "kvevents-bench-internal",
    .summary = N_ ("Measure what only the testing build of libkvevents can show, against "
                   "baselines taken in the same run: the publish call with the worker held and "
                   "with the queue full, encoding, and the memory per queued event."),
    .only = N_ ("Run only these sections: hot,encode,memory"),
    .sections = sections,
    .elsewhere = shipped_sections,
    .elsewhere_reason = N_ ("kvevents-bench measures it, through the shipped library alone"),
    .capacity = FALSE,
    .hold = bench_publisher_hold,
    .run = run,
    .child = child,
  };

  return bench_main (&program, argc, argv);
}
