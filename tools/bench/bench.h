/* bench.h: what the parts of kvevents-bench share.
 *
 * Every figure is measured once per run, and every figure that has a
 * baseline is measured in the same run as that baseline, right after it,
 * so that its ratio compares two numbers taken under the same conditions.
 * Absolute numbers are only comparable within one run of the program.
 *
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEV_BENCH_H
#define KVEV_BENCH_H

#include <glib.h>
#include <kvevents/kvevents.h>

G_BEGIN_DECLS

/* ---- settings ---------------------------------------------------------- */

typedef struct
{
  guint runs;        /* repetitions of every figure */
  guint duration_ms; /* how long one measurement of one figure lasts */
  guint key_len;     /* object key length in bytes */
  double capacity;   /* events/s the latency loads are shares of; 0: measure */
  gboolean smoke;    /* every section tiny, for the test suite */
  gboolean progress; /* progress lines on stderr */
  char *self;        /* this program, to start subscribers and children */
  char *tmp_dir;     /* for ipc:// endpoints */
} BenchSettings;

/* ---- time -------------------------------------------------------------- */

/* CLOCK_MONOTONIC in nanoseconds: comparable between processes on one
 * machine, which the end-to-end latency relies on. */
gint64 bench_now_ns (void);

/* ---- results ----------------------------------------------------------- */

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

/* The peak RSS of this process image in KiB (VmHWM), -1 when unknown. */
long bench_peak_rss_kib (void);

/* The 1-minute load average, NAN when unknown. */
double bench_load_average (void);

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

/* Summaries of a set of per-run numbers; NAN when there are none. */
double bench_median (const GArray *values);
double bench_min (const GArray *values);
double bench_max (const GArray *values);
double bench_sum (const GArray *values);

void bench_report_add_target (BenchReport *report, const char *id, const char *label, double value,
                              BenchOp op, double limit, const char *unit, const char *basis);
void bench_report_print_table (const BenchReport *report);
char *bench_report_to_json (const BenchReport *report);
void bench_report_free (BenchReport *report);

/* A progress line on stderr, when the settings ask for it. */
void bench_progress (const BenchSettings *settings, const char *format, ...) G_GNUC_PRINTF (2, 3);

/* ---- workload ---------------------------------------------------------- */

#define BENCH_TENANT "tenant-a"
#define BENCH_KEY_RING 4096

/* BENCH_KEY_RING distinct object keys of key_len bytes each, back to
 * back, as a Store's keys look: printable, one per object. */
char *bench_make_keys (guint key_len, guint n);
/* The i-th of those keys, written to key (not NUL-terminated). */
void bench_fill_key (char *key, guint key_len, guint64 i);

/* A publisher configuration: enabled, bound to endpoint, with a context
 * like a real master's. */
KvevConfig *bench_config_new (const char *endpoint, guint32 queue_capacity, gboolean legacy);

/* Errors of the benchmark itself, for people; code 0. */
GQuark bench_error_quark (void);

/* A one-line error and FALSE for people; the caller exits. */
gboolean bench_fail (GError **error, const char *format, ...) G_GNUC_PRINTF (2, 3);

/* ---- library internals (bench-internal.c) ------------------------------ */

/* The worker-hold test seam and the queue depth of a publisher. */
void bench_publisher_hold (KvevPublisher *publisher, gboolean hold);
guint64 bench_publisher_queue_depth (KvevPublisher *publisher);

typedef enum
{
  BENCH_EVENT_STORED,
  BENCH_EVENT_REMOVED,
  BENCH_EVENT_CLEARED,
} BenchEventType;

/* One event as the encoders see it. */
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

/* A library encoder for a configuration, with a batch of events built
 * from specs the way the publisher builds them. */
typedef struct _BenchBatch BenchBatch;

BenchBatch *bench_batch_new (const KvevConfig *config, const BenchEventSpec *specs, guint n_events);
/* kvev_encode_batch() of the whole batch: a malloc()ed payload. */
char *bench_batch_encode (BenchBatch *batch, gint64 timestamp_ms, gsize *len);
void bench_batch_free (BenchBatch *batch);
/* The cost of kvev_encoder_new() + kvev_encoder_free(), once a publisher. */
double bench_encoder_new_ns (const KvevConfig *config, guint iterations);

/* ---- sections ---------------------------------------------------------- */

gboolean bench_hot (BenchReport *report, const BenchSettings *settings, GError **error);
gboolean bench_encode (BenchReport *report, const BenchSettings *settings, GError **error);
gboolean bench_memory (BenchReport *report, const BenchSettings *settings, GError **error);
/* End to end and latency share the subscriber; latency needs the
 * capacity that end to end measures, and measures it itself otherwise. */
gboolean bench_net (BenchReport *report, const BenchSettings *settings, gboolean e2e,
                    gboolean latency, GError **error);

/* The processes kvevents-bench starts of itself. */
int bench_subscriber_main (char **endpoints);
int bench_memory_child_main (const char *kind, guint n_events, guint key_len);

G_END_DECLS

#endif /* KVEV_BENCH_H */
