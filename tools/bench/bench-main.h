/* bench-main.h: a run of kvevents-bench or kvevents-bench-internal: the
 * command line both take, the settings, the sections the program
 * measures, the processes it starts of itself, and the report.
 *
 * The two programs share every section's code and differ in the library
 * they link: kvevents-bench the shipped libkvevents.so, through the
 * public API alone, and kvevents-bench-internal the testing build, whose
 * seams (the worker hold, the encoder) some figures need.  Each knows
 * the other's sections, so that asking it for one says which program
 * measures it instead of calling the name unknown.
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEV_BENCH_MAIN_H
#define KVEV_BENCH_MAIN_H

#include "bench-report.h"

G_BEGIN_DECLS

/* Runs the sections selected[i] names (program->sections[i]), in the
 * program's own order; FALSE with error set when the run cannot go on. */
typedef gboolean (*BenchRunFunc) (BenchReport *report, const BenchSettings *settings,
                                  const gboolean *selected, GError **error);

/* The process --memory-child kind is; returns its exit status. */
typedef int (*BenchChildFunc) (const char *kind, guint n_events, guint key_len,
                               const char *tmp_dir);

typedef struct
{
  const char *name; /* for messages and the report */
  /* Messages, marked with N_ (): GOption and bench_main () translate
   * them.  --help's summary and --only's help. */
  const char *summary;
  const char *only;
  /* Its sections, NULL-terminated, as --only names them. */
  const char *const *sections;
  /* The other program's, NULL-terminated, and why this one does not
   * measure them, which --only says when it names one. */
  const char *const *elsewhere;
  const char *elsewhere_reason;
  gboolean capacity; /* takes --capacity (the latency section) */
  BenchHoldFunc hold;
  BenchRunFunc run;
  BenchChildFunc child;
} BenchProgram;

/* The program's main (); returns the exit status. */
int bench_main (const BenchProgram *program, int argc, char **argv);

G_END_DECLS

#endif /* KVEV_BENCH_MAIN_H */
