/* bench-report.h: the figures kvevents-bench collects, by section, the
 * targets they are held to, and their two renderings: a table for people
 * and one JSON object for comparing runs across commits.
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEV_BENCH_REPORT_H
#define KVEV_BENCH_REPORT_H

#include "bench-util.h"

G_BEGIN_DECLS

typedef struct _BenchFigure BenchFigure;
typedef struct _BenchSection BenchSection;
typedef struct _BenchReport BenchReport;

struct _BenchFigure
{
  char *id;              /* stable, for JSON and comparisons across commits */
  char *label;           /* for people, translated */
  const char *unit;      /* "ns/call", "events/s", ... */
  GArray *values;        /* double, one per run */
  BenchFigure *baseline; /* (nullable) measured in the same runs */
  GArray *ratios;        /* double: values[r] / baseline->values[r] */
  GPtrArray *extras;     /* BenchExtra: other numbers, one per run */
  char *note;            /* (nullable) shown beside the figure */
};

typedef struct
{
  char *name;
  GArray *values; /* double */
} BenchExtra;

struct _BenchSection
{
  const char *id;     /* "hot", "encode", "e2e", "memory", "latency" */
  char *title;        /* translated */
  GPtrArray *figures; /* BenchFigure, in measurement order */
  GPtrArray *info;    /* BenchExtra: numbers about the section as a whole */
};

typedef enum
{
  BENCH_AT_MOST,
  BENCH_AT_LEAST,
} BenchOp;

typedef struct
{
  const char *id;
  char *label;  /* translated */
  double value; /* NAN when it could not be measured */
  BenchOp op;
  double limit;
  const char *unit; /* "x" for a ratio */
  char *basis;      /* what value is, translated */
} BenchTarget;

struct _BenchReport
{
  GPtrArray *sections; /* BenchSection */
  GPtrArray *targets;  /* BenchTarget */
  const BenchSettings *settings;
  gint64 started_ns;
  gint64 subscriber_peak_rss_kib;
  double load_at_start; /* 1-minute load average; NAN when unknown */
};

BenchSection *bench_report_add_section (BenchReport *report, const char *id, const char *title);
BenchSection *bench_report_find_section (const BenchReport *report, const char *id);
BenchFigure *bench_section_add_figure (BenchSection *section, const char *id, const char *label,
                                       const char *unit, BenchFigure *baseline);
BenchFigure *bench_report_find_figure (const BenchReport *report, const char *section_id,
                                       const char *figure_id);
/* Records the value of the current run; when the figure has a baseline,
 * the baseline's value for the same run must be recorded already. */
void bench_figure_add (BenchFigure *figure, double value);
void bench_figure_add_extra (BenchFigure *figure, const char *name, double value);
/* Takes note (transfer full). */
void bench_figure_set_note (BenchFigure *figure, char *note);
const BenchExtra *bench_figure_find_extra (const BenchFigure *figure, const char *name);
void bench_section_set_info (BenchSection *section, const char *name, double value);
void bench_section_add_info (BenchSection *section, const char *name, double value);
double bench_section_get_info (const BenchSection *section, const char *name);

void bench_report_add_target (BenchReport *report, const char *id, const char *label, double value,
                              BenchOp op, double limit, const char *unit, const char *basis);
void bench_report_print_table (const BenchReport *report);
char *bench_report_to_json (const BenchReport *report);
void bench_report_free (BenchReport *report);

G_END_DECLS

#endif /* KVEV_BENCH_REPORT_H */
