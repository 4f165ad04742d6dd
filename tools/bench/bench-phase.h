/* bench-phase.h: what the sections that measure through subscriber
 * processes share (end to end and latency, bench-net.c; loss,
 * bench-loss.c; fan-out, bench-fanout.c; scaling, bench-scaling.c): the
 * subscriber processes (bench-subscriber.h), the sockets they listen to,
 * and a phase: every subscriber counting, producers sending for a while,
 * then an end marker until every subscriber has reported.
 *
 * A source is either a publisher or a raw ZeroMQ socket that sends
 * pre-encoded payloads of the same size and event count (the baseline).
 * Before anything is measured each source is probed until an event sent
 * through it reaches every subscriber, so the slow joiner loses nothing
 * that counts.  A phase ends with an end-marker event, repeated until the
 * reports arrive (a socket at its high-water mark drops messages, markers
 * included, or refuses them).
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEV_BENCH_PHASE_H
#define KVEV_BENCH_PHASE_H

#include "bench-report.h"
#include "bench-wire.h"

G_BEGIN_DECLS

#define BENCH_BATCH_EVENTS 64
#define BENCH_QUEUE_CAPACITY 65536
#define BENCH_MAX_SUBS 32

typedef struct _BenchSub BenchSub;

/* Something the subscribers listen to: a publisher, or a raw socket. */
typedef struct
{
  KvevPublisher *publisher; /* NULL for a raw socket */
  void *raw;
  /* A raw XPUB socket with ZMQ_XPUB_NODROP: its sender waits for a full
   * pipe, as the publisher's worker does, where a PUB socket drops. */
  gboolean nodrop;
  guint64 raw_sequence;
  BenchWire *wire; /* a raw socket's: its markers' encoding */
  char *endpoint;
} BenchSource;

/* What one subscriber counted in a phase (BENCH_SUB_REPORT_FORMAT). */
typedef struct
{
  guint64 received;
  guint64 received_by_stop;
  guint64 bytes_by_stop;
  gint64 first_ns;
  gint64 last_ns;
  guint64 bad;
  guint n_latencies;
  gint64 p50;
  gint64 p99;
  gint64 p999;
  gint64 max;
} BenchSubReport;

typedef struct
{
  guint64 offered; /* events the producers handed over */
  gint64 t0;
  gint64 t_stop; /* when the producers stopped */
  gint64 t_done; /* when the last report arrived */
  /* The publisher's counters over the phase, read once it drained. */
  guint64 queue_dropped;        /* KVEV_STAT_DROPPED_EVENTS */
  guint64 hwm_dropped_events;   /* KVEV_STAT_HWM_DROPPED_EVENTS */
  guint64 hwm_dropped_messages; /* KVEV_STAT_HWM_DROPPED_MESSAGES */
  guint64 messages;             /* the publisher's, or the raw sender's */
  guint64 published_events;     /* KVEV_STAT_PUBLISHED_EVENTS */
  guint64 raw_unsent;           /* raw messages a waiting send gave up on */
  /* The process's CPU from the start to the last report, but the
   * producers' and the driving thread's: the publisher's worker and
   * ZeroMQ's I/O threads, or the raw socket's I/O threads. */
  gint64 publisher_cpu_ns;
  gint64 producer_cpu_ns; /* the producers' own threads */
  gboolean publisher;     /* measured through a publisher */
  guint n_subs;
  BenchSubReport sub[BENCH_MAX_SUBS];
  /* Between the start and the finish. */
  guint id;
  guint64 stats_before[5];
  gint64 cpu_before;
  gint64 thread_cpu_before;
} BenchPhaseResult;

/* The subscribers, and the payload raw sources send. */
typedef struct
{
  const BenchSettings *settings;
  BenchSub *subs[BENCH_MAX_SUBS];
  guint n_subs;
  guint phase;
  guint probe;
  const char *keys; /* key_ring keys of key_len bytes, back to back */
  guint key_len;
  guint key_ring;
  char *payload; /* payload_events events, pre-encoded; malloc()ed */
  gsize payload_len;
  guint payload_events;
} BenchNet;

/* Starts n subscriber processes, each connected to every endpoint
 * (NULL-terminated); rcvhwm 0 leaves their ZMQ_RCVHWM alone. */
gboolean bench_net_spawn (BenchNet *net, const char *const *endpoints, guint n, int rcvhwm,
                          GError **error);
/* Tells every subscriber to quit, and keeps the largest peak RSS they
 * reported in report's. */
void bench_net_finish (BenchNet *net, BenchReport *report);
/* A command line ("H ...\n", "L ...\n") to subscriber i. */
gboolean bench_net_tell (BenchNet *net, guint i, const char *line, GError **error);

/* Sends probes through source until every subscriber has one. */
gboolean bench_probe (BenchNet *net, BenchSource *source, GError **error);

/* kv_events_send_hwm of config: the raw sockets get the same. */
int bench_config_hwm (const KvevConfig *config);

/* A publisher bound as config says. */
gboolean bench_source_open_publisher (BenchSource *source, const KvevConfig *config,
                                      GError **error);
/* A raw socket in context, set up as the publisher sets up its own: a
 * PUB that drops at hwm, or an XPUB with ZMQ_XPUB_NODROP whose sender
 * waits; its events are encoded as a publisher of config sends them
 * (bench-wire.h), which source->wire keeps. */
gboolean bench_source_open_raw (BenchSource *source, void *context, const char *endpoint, int hwm,
                                gboolean nodrop, const KvevConfig *config, GError **error);
void bench_source_close (BenchSource *source);

/* The event id of the first event of a raw payload. */
#define BENCH_RAW_FIRST_EVENT_ID 1000000

/* The raw sources' payload: n_events stored events of net's keys in
 * turn, as wire (a raw source's) encodes them. */
void bench_net_make_payload (BenchNet *net, const BenchWire *wire, guint n_events);

/* Three frames through a raw source, as the publisher sends a message;
 * FALSE when the socket refused the first one (nothing went). */
gboolean bench_source_send_raw (BenchSource *source, const char *payload, gsize len, int flags);

/* What a phase's producers do until t_end, filling r->offered and
 * r->t_stop. */
typedef void (*BenchProduceFunc) (BenchNet *net, BenchSource *source, gint64 t_end,
                                  BenchPhaseResult *r, gpointer data);

/* The producers bench_phase_run_flat () runs on a publisher: data is
 * their number, 1 or 2, as GUINT_TO_POINTER (). */
void bench_produce_flat_out (BenchNet *net, BenchSource *source, gint64 t_end, BenchPhaseResult *r,
                             gpointer data);

/* A phase in three steps, for a caller that acts between them: every
 * subscriber counting; the producers; the drain and the reports. */
gboolean bench_phase_start (BenchNet *net, BenchSource *source, BenchPhaseResult *r,
                            GError **error);
void bench_phase_produce (BenchNet *net, BenchSource *source, BenchProduceFunc produce,
                          gpointer data, guint duration_ms, BenchPhaseResult *r);
gboolean bench_phase_finish (BenchNet *net, BenchSource *source, BenchPhaseResult *r,
                             GError **error);
/* All three. */
gboolean bench_phase_run (BenchNet *net, BenchSource *source, BenchProduceFunc produce,
                          gpointer data, guint duration_ms, BenchPhaseResult *r, GError **error);
/* As fast as the source takes it: producers threads calling
 * kvev_publish_stored, or the raw payload sent without a copy. */
gboolean bench_phase_run_flat (BenchNet *net, BenchSource *source, guint producers,
                               guint duration_ms, BenchPhaseResult *r, GError **error);

/* Subscriber i's events/s up to the producers' stop; all of them. */
double bench_phase_events_per_s (const BenchPhaseResult *r, guint i);
double bench_phase_total_events_per_s (const BenchPhaseResult *r);
/* Events the publisher counted as lost: dropped by its queue (or in a
 * failed send), and in messages ZeroMQ dropped for a full pipe. */
guint64 bench_phase_counted_drops (const BenchPhaseResult *r);
/* What subscriber i lost that no counter says: offered - received -
 * counted drops.  0 is the target; below 0 when a message dropped for
 * another subscriber reached this one. */
gint64 bench_phase_uncounted (const BenchPhaseResult *r, guint i);

/* A flat-out phase of one subscriber as a figure: its events/s, what was
 * offered, received and dropped, and for a publisher its loss
 * accounting. */
void bench_figure_add_flat (BenchFigure *figure, const BenchPhaseResult *r);
/* "offered 2.88M/s, 0% dropped", and for a publisher the uncounted loss
 * of every run. */
char *bench_flat_note (const BenchFigure *figure);
/* label, then every run's value, to note. */
void bench_note_runs (GString *note, const char *label, const GArray *values);

G_END_DECLS

#endif /* KVEV_BENCH_PHASE_H */
