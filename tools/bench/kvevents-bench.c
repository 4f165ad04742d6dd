/* kvevents-bench: how much the publisher costs the master that calls it,
 * and how much it delivers, each figure next to a baseline measured in
 * the same run, measured on the library it is linked with: the shipped,
 * installed libkvevents, through its public API alone.  What only the
 * testing build can show (the worker held, the encoder alone) is
 * kvevents-bench-internal's.  See kvevents-bench(1).
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include "bench-main.h"
#include "bench-memory-child.h"
#include "bench-sections.h"

#include <string.h>
#include <glib/gi18n.h>

enum
{
  HOT,
  E2E,
  LATENCY,
  LOSS,
  FANOUT,
  SCALING,
  MEMORY,
  SNAPSHOT,
};

static const char *const sections[]
    = { "hot", "e2e", "latency", "loss", "fanout", "scaling", "memory", "snapshot", NULL };
static const char *const internal_sections[] = { "encode", NULL };

static gboolean
run (BenchReport *report, const BenchSettings *settings, const gboolean *selected, GError **error)
{
  return (!selected[HOT] || bench_hot (report, settings, error))
         && (!(selected[E2E] || selected[LATENCY])
             || bench_net (report, settings, selected[E2E], selected[LATENCY], error))
         && (!selected[LOSS] || bench_loss (report, settings, error))
         && (!selected[FANOUT] || bench_fanout (report, settings, error))
         && (!selected[SCALING] || bench_scaling (report, settings, error))
         && (!selected[MEMORY] || bench_memory (report, settings, error))
         && (!selected[SNAPSHOT] || bench_snapshot (report, settings, error));
}

static int
child (const char *kind, guint n_events, guint key_len, const char *tmp_dir)
{
  if (strcmp (kind, "snapshot") == 0)
    return bench_snapshot_child_main (n_events, key_len, tmp_dir);
  if (strcmp (kind, "replay_hostile") == 0)
    return bench_replay_hostile_child_main (n_events, key_len, tmp_dir);
  return bench_memory_child_main (kind, n_events, key_len, tmp_dir);
}

int
main (int argc, char **argv)
{
  const BenchProgram program = {
    .name = "kvevents-bench",
    .summary = N_ ("Measure libkvevents, as installed, against baselines taken in the same run: "
                   "the cost of a publish call, end-to-end throughput, publish-to-receipt "
                   "latency, uncounted loss, fan-out, scaling with key size and batch size, the "
                   "memory of a replay buffer, and snapshots."),
    .only = N_ ("Run only these sections: hot,e2e,latency,loss,fanout,scaling,memory,snapshot"),
    .sections = sections,
    .elsewhere = internal_sections,
    .elsewhere_reason = N_ ("it needs the testing build of the library, which an installed "
                            "libkvevents does not have; kvevents-bench-internal measures it in a "
                            "build tree (make bench)"),
    .capacity = TRUE,
    .hold = NULL,
    .run = run,
    .child = child,
  };

  return bench_main (&program, argc, argv);
}
