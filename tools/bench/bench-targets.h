/* bench-targets.h: what the project holds kvevents-bench's figures to
 * (README, "Benchmark", lists them): each target a ratio to its baseline
 * or an absolute bound, added to the report once the sections ran, with
 * whether it holds.
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEV_BENCH_TARGETS_H
#define KVEV_BENCH_TARGETS_H

#include "bench-report.h"

G_BEGIN_DECLS

/* Adds the targets of every section the report has. */
void bench_add_targets (BenchReport *report);

G_END_DECLS

#endif /* KVEV_BENCH_TARGETS_H */
