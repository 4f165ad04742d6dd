/* bench-util.h: what every part of kvevents-bench uses: the settings of
 * a run, the clock, the workload's keys and publisher configuration,
 * errors and progress lines, and what the process knows of itself.
 *
 * Every figure is measured once per run, and every figure that has a
 * baseline is measured in the same run as that baseline, right after it,
 * so that its ratio compares two numbers taken under the same conditions.
 * Absolute numbers are only comparable within one run of the program.
 *
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEV_BENCH_UTIL_H
#define KVEV_BENCH_UTIL_H

#include <glib.h>
#include <kvevents/kvevents.h>

G_BEGIN_DECLS

/* The worker-hold seam of the library's testing build (kvev_queue_hold):
 * while held, the worker takes nothing from the queue.  The shipped
 * library has no such call, so kvevents-bench-internal, which links the
 * testing build, hands it in, and kvevents-bench has none. */
typedef void (*BenchHoldFunc) (KvevPublisher *publisher, gboolean hold);

typedef struct
{
  const char *tool;   /* the program's name, for the report */
  guint runs;         /* repetitions of every figure */
  guint duration_ms;  /* how long one measurement of one figure lasts */
  guint key_len;      /* object key length in bytes */
  double capacity;    /* events/s the latency loads are shares of; 0: measure */
  gboolean smoke;     /* every section tiny, for the test suite */
  gboolean progress;  /* progress lines on stderr */
  char *self;         /* this program, to start subscribers and children */
  char *tmp_dir;      /* for ipc:// endpoints */
  BenchHoldFunc hold; /* NULL in kvevents-bench */
} BenchSettings;

/* CLOCK_MONOTONIC in nanoseconds: comparable between processes on one
 * machine, which the end-to-end latency relies on. */
gint64 bench_now_ns (void);

/* CLOCK_THREAD_CPUTIME_ID in nanoseconds: the CPU the calling thread ran
 * for. */
gint64 bench_thread_cpu_ns (void);

#define BENCH_TENANT "tenant-a"
#define BENCH_KEY_RING 4096

/* n distinct object keys of key_len bytes each, back to back, as a
 * Store's keys look: printable, one per object. */
char *bench_make_keys (guint key_len, guint n);
/* The i-th of those keys, written to key (not NUL-terminated). */
void bench_fill_key (char *key, guint key_len, guint64 i);

/* A publisher configuration: enabled, bound to endpoint, with a context
 * like a real master's. */
KvevConfig *bench_config_new (const char *endpoint, guint32 queue_capacity, gboolean legacy);

/* The events queued in publisher now (KVEV_STAT_QUEUE_DEPTH). */
guint64 bench_queue_depth (KvevPublisher *publisher);

/* Waits until publisher handed everything queued to ZeroMQ; FALSE with
 * error set when that took over 30 s. */
gboolean bench_publisher_drain (KvevPublisher *publisher, GError **error);

/* Errors of the benchmark itself, for people; code 0. */
GQuark bench_error_quark (void);

/* A one-line error and FALSE for people; the caller exits. */
gboolean bench_fail (GError **error, const char *format, ...) G_GNUC_PRINTF (2, 3);

/* A progress line on stderr, when the settings ask for it. */
void bench_progress (const BenchSettings *settings, const char *format, ...) G_GNUC_PRINTF (2, 3);

/* The resident set of this process now in bytes (/proc/self/statm), -1
 * when unknown. */
gint64 bench_rss_bytes (void);

/* The peak RSS of this process image in KiB (VmHWM), -1 when unknown. */
long bench_peak_rss_kib (void);

/* The 1-minute load average, NAN when unknown. */
double bench_load_average (void);

G_END_DECLS

#endif /* KVEV_BENCH_UTIL_H */
