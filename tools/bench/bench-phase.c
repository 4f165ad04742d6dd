/* bench-phase.c: the subscriber processes, the sources they listen to,
 * and the phases measured through them; see bench-phase.h.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include "bench-phase.h"
#include "bench-stats.h"
#include "bench-subscriber.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <glib/gi18n.h>
#include <zmq.h>

#define REPLY_TIMEOUT_MS 60000
/* How long a waiting raw send may wait for a full pipe before it gives
 * up on the message: only a subscriber that went away takes that long. */
#define RAW_SEND_TIMEOUT_MS 5000

struct _BenchSub
{
  GPid pid;
  int to_child;
  int from_child;
  GString *buffer;
};

/* ---- the subscriber processes ------------------------------------------ */

static gboolean
sub_send (BenchSub *sub, const char *line, GError **error)
{
  gsize len = strlen (line), done = 0;

  while (done < len)
    {
      ssize_t n = write (sub->to_child, line + done, len - done);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return bench_fail (error, _ ("The subscriber process went away"));
      done += (gsize) n;
    }
  return TRUE;
}

/* The next whole line it sent, or NULL. */
static char *
sub_take_line (BenchSub *sub)
{
  char *newline = memchr (sub->buffer->str, '\n', sub->buffer->len);
  gsize len;
  char *line;

  if (newline == NULL)
    return NULL;
  len = (gsize) (newline - sub->buffer->str);
  line = g_strndup (sub->buffer->str, len);
  g_string_erase (sub->buffer, 0, (gssize) len + 1);
  return line;
}

static gboolean
sub_read (BenchSub *sub, GError **error)
{
  char chunk[4096];
  ssize_t n;

  do
    n = read (sub->from_child, chunk, sizeof chunk);
  while (n < 0 && errno == EINTR);
  if (n <= 0)
    return bench_fail (error, _ ("The subscriber process went away"));
  g_string_append_len (sub->buffer, chunk, n);
  return TRUE;
}

/* Whether line is the one subscriber i was waited for, which it may
 * record. */
typedef gboolean (*LineFunc) (const char *line, guint i, gpointer data);

/* Reads from every subscriber whose done[] is unset, for up to
 * timeout_ms, until each has sent a line accept takes; lines it does not
 * take are dropped.  FALSE with error set when a subscriber went away;
 * the caller sees in done[] who answered. */
static gboolean
subs_wait (BenchNet *net, gboolean *done, LineFunc accept, gpointer data, gint timeout_ms,
           GError **error)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) timeout_ms * 1000;

  for (;;)
    {
      struct pollfd pfds[BENCH_MAX_SUBS];
      guint who[BENCH_MAX_SUBS];
      guint n = 0, i;
      gint64 left;

      for (i = 0; i < net->n_subs; i++)
        {
          char *line;

          while (!done[i] && (line = sub_take_line (net->subs[i])) != NULL)
            {
              done[i] = accept (line, i, data);
              g_free (line);
            }
          if (!done[i])
            {
              pfds[n] = (struct pollfd){ net->subs[i]->from_child, POLLIN, 0 };
              who[n++] = i;
            }
        }
      left = (deadline - g_get_monotonic_time ()) / 1000;
      if (n == 0 || left <= 0)
        return TRUE;
      if (poll (pfds, n, (int) left) < 0)
        {
          if (errno == EINTR)
            continue;
          return bench_fail (error, "poll: %s", g_strerror (errno));
        }
      for (i = 0; i < n; i++)
        if ((pfds[i].revents & (POLLIN | POLLHUP | POLLERR))
            && !sub_read (net->subs[who[i]], error))
          return FALSE;
    }
}

static gboolean
all_done (const BenchNet *net, const gboolean *done)
{
  guint i;

  for (i = 0; i < net->n_subs; i++)
    if (!done[i])
      return FALSE;
  return TRUE;
}

gboolean
bench_net_spawn (BenchNet *net, const char *const *endpoints, guint n, int rcvhwm, GError **error)
{
  g_autoptr (GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  guint i;

  g_assert (n <= BENCH_MAX_SUBS && net->n_subs == 0);
  g_ptr_array_add (argv, g_strdup (net->settings->self));
  for (i = 0; endpoints[i] != NULL; i++)
    {
      g_ptr_array_add (argv, g_strdup ("--subscriber"));
      g_ptr_array_add (argv, g_strdup (endpoints[i]));
    }
  if (rcvhwm > 0)
    g_ptr_array_add (argv, g_strdup_printf ("--subscriber-rcvhwm=%d", rcvhwm));
  g_ptr_array_add (argv, NULL);
  signal (SIGPIPE, SIG_IGN);
  for (i = 0; i < n; i++)
    {
      BenchSub *sub = g_new0 (BenchSub, 1);

      if (!g_spawn_async_with_pipes (NULL, (char **) argv->pdata, NULL, G_SPAWN_DO_NOT_REAP_CHILD,
                                     NULL, NULL, &sub->pid, &sub->to_child, &sub->from_child, NULL,
                                     error))
        {
          g_free (sub);
          return FALSE;
        }
      sub->buffer = g_string_new (NULL);
      net->subs[net->n_subs++] = sub;
    }
  return TRUE;
}

static gboolean
accept_peak (const char *line, guint i, gpointer data)
{
  gint64 *peak_kib = data;

  if (line[0] != 'M')
    return FALSE;
  peak_kib[i] = g_ascii_strtoll (line + 1, NULL, 10);
  return TRUE;
}

/* The subscribers' peak RSS is what they report when told to quit: their
 * rusage would include the image they were forked from.  They quit on Q
 * or on the closed pipe; one that does neither (stopped, or stuck) must
 * not keep the bench from ending and reporting. */
void
bench_net_finish (BenchNet *net, BenchReport *report)
{
  gboolean done[BENCH_MAX_SUBS] = { FALSE };
  gint64 peak_kib[BENCH_MAX_SUBS] = { 0 };
  gint64 deadline, largest = 0;
  GError *ignored = NULL;
  guint i;

  for (i = 0; i < net->n_subs; i++)
    done[i] = !sub_send (net->subs[i], "Q\n", NULL);
  subs_wait (net, done, accept_peak, peak_kib, 10000, &ignored);
  g_clear_error (&ignored);
  deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
  for (i = 0; i < net->n_subs; i++)
    {
      BenchSub *sub = net->subs[i];
      pid_t reaped;
      int status;

      close (sub->to_child);
      close (sub->from_child);
      while ((reaped = waitpid (sub->pid, &status, WNOHANG)) == 0
             && g_get_monotonic_time () < deadline)
        g_usleep (10000);
      if (reaped == 0)
        {
          kill (sub->pid, SIGKILL);
          while (waitpid (sub->pid, &status, 0) < 0 && errno == EINTR)
            ;
        }
      g_spawn_close_pid (sub->pid);
      g_string_free (sub->buffer, TRUE);
      g_free (sub);
      net->subs[i] = NULL;
      largest = MAX (largest, peak_kib[i]);
    }
  net->n_subs = 0;
  report->subscriber_peak_rss_kib = MAX (report->subscriber_peak_rss_kib, largest);
}

gboolean
bench_net_tell (BenchNet *net, guint i, const char *line, GError **error)
{
  return sub_send (net->subs[i], line, error);
}

/* ---- the sources ------------------------------------------------------- */

int
bench_config_hwm (const KvevConfig *config)
{
  g_autofree char *text = kvev_config_get (config, "kv_events_send_hwm");

  return (int) g_ascii_strtoll (text, NULL, 10);
}

gboolean
bench_source_open_publisher (BenchSource *source, const KvevConfig *config, GError **error)
{
  memset (source, 0, sizeof *source);
  source->publisher = kvev_publisher_new (config, error);
  if (source->publisher == NULL)
    return FALSE;
  source->endpoint = g_strdup (kvev_publisher_get_endpoint (source->publisher));
  return TRUE;
}

gboolean
bench_source_open_raw (BenchSource *source, void *context, const char *endpoint, int hwm,
                       gboolean nodrop, const KvevConfig *config, GError **error)
{
  int zero = 0, one = 1, timeout_ms = RAW_SEND_TIMEOUT_MS;
  char bound[1024];
  size_t bound_len = sizeof bound;

  memset (source, 0, sizeof *source);
  source->wire = bench_wire_capture (config, error);
  if (source->wire == NULL)
    return FALSE;
  source->nodrop = nodrop;
  source->raw = zmq_socket (context, nodrop ? ZMQ_XPUB : ZMQ_PUB);
  if (source->raw == NULL || zmq_setsockopt (source->raw, ZMQ_SNDHWM, &hwm, sizeof hwm) != 0
      || zmq_setsockopt (source->raw, ZMQ_LINGER, &zero, sizeof zero) != 0
      || (nodrop
          && (zmq_setsockopt (source->raw, ZMQ_XPUB_NODROP, &one, sizeof one) != 0
              || zmq_setsockopt (source->raw, ZMQ_SNDTIMEO, &timeout_ms, sizeof timeout_ms) != 0))
      || zmq_bind (source->raw, endpoint) != 0
      || zmq_getsockopt (source->raw, ZMQ_LAST_ENDPOINT, bound, &bound_len) != 0)
    return bench_fail (error, _ ("Cannot set up the raw ZeroMQ socket on %s: %s"), endpoint,
                       zmq_strerror (zmq_errno ()));
  source->endpoint = g_strndup (bound, bound_len);
  return TRUE;
}

void
bench_source_close (BenchSource *source)
{
  g_clear_pointer (&source->publisher, kvev_publisher_free);
  g_clear_pointer (&source->wire, bench_wire_free);
  if (source->raw != NULL)
    zmq_close (source->raw);
  g_free (source->endpoint);
  memset (source, 0, sizeof *source);
}

/* The payload frame without a copy when it outlives the socket (the
 * pre-encoded payloads), copied otherwise.  A waiting send can still give
 * up in the middle of a message only when the subscriber went away. */
static gboolean
raw_send (BenchSource *source, const char *payload, gsize len, int flags, gboolean copy)
{
  guint64 sequence_be = GUINT64_TO_BE (source->raw_sequence);
  zmq_msg_t message;

  if (zmq_send (source->raw, "", 0, ZMQ_SNDMORE | flags) < 0)
    return FALSE;
  source->raw_sequence++;
  zmq_send (source->raw, &sequence_be, sizeof sequence_be, ZMQ_SNDMORE | flags);
  if (copy)
    return zmq_send (source->raw, payload, len, flags) >= 0;
  zmq_msg_init_data (&message, (void *) payload, len, NULL, NULL);
  if (zmq_msg_send (&message, source->raw, flags) >= 0)
    return TRUE;
  zmq_msg_close (&message);
  return FALSE;
}

gboolean
bench_source_send_raw (BenchSource *source, const char *payload, gsize len, int flags)
{
  return raw_send (source, payload, len, flags, TRUE);
}

/* One event with this key through the source, as the data goes. */
static void
source_marker (BenchSource *source, const char *key)
{
  char *payload;
  gsize len;

  if (source->publisher != NULL)
    {
      kvev_publish_stored (source->publisher, BENCH_TENANT, key, -1, NULL, KVEV_MEDIA_CPU);
      return;
    }
  payload = bench_wire_encode (source->wire, g_get_real_time () / 1000, 1, key, strlen (key), 1, 1,
                               &len);
  raw_send (source, payload, len, ZMQ_DONTWAIT, TRUE);
  free (payload);
}

void
bench_net_make_payload (BenchNet *net, const BenchWire *wire, guint n_events)
{
  free (net->payload);
  net->payload
      = bench_wire_encode (wire, g_get_real_time () / 1000, BENCH_RAW_FIRST_EVENT_ID, net->keys,
                           net->key_len, net->key_ring, n_events, &net->payload_len);
  net->payload_events = n_events;
}

typedef struct
{
  guint first;
} ProbeWait;

static gboolean
accept_probe (const char *line, guint i, gpointer data)
{
  const ProbeWait *wait = data;
  unsigned int n;

  return sscanf (line, "P %u", &n) == 1 && n >= wait->first;
}

gboolean
bench_probe (BenchNet *net, BenchSource *source, GError **error)
{
  gint64 deadline = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;
  gboolean done[BENCH_MAX_SUBS] = { FALSE };
  ProbeWait wait = { net->probe + 1 };

  while (g_get_monotonic_time () < deadline)
    {
      g_autofree char *key = g_strdup_printf (BENCH_PROBE_PREFIX "%u", ++net->probe);

      source_marker (source, key);
      if (!subs_wait (net, done, accept_probe, &wait, 20, error))
        return FALSE;
      if (all_done (net, done))
        return TRUE;
    }
  return bench_fail (error, _ ("The subscriber never received from %s"), source->endpoint);
}

/* ---- producers --------------------------------------------------------- */

static gint64
process_cpu_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (gint64) ts.tv_sec * G_GINT64_CONSTANT (1000000000) + ts.tv_nsec;
}

typedef struct
{
  BenchNet *net;
  BenchSource *source;
  guint index;
  gint64 t_end;
  guint64 calls;
  gint64 stopped;
  gint64 cpu_ns;
} FlatOut;

static gpointer
flat_out_main (gpointer data)
{
  FlatOut *f = data;
  KvevPublisher *publisher = f->source->publisher;
  gsize key_len = f->net->key_len;
  guint key_ring = f->net->key_ring;
  const char *keys = f->net->keys;
  guint64 i = (guint64) f->index * (key_ring / 2);
  gint64 cpu_start = bench_thread_cpu_ns ();
  gint64 now;

  do
    {
      guint j;

      for (j = 0; j < 256; j++, i++)
        kvev_publish_stored (publisher, BENCH_TENANT, keys + key_len * (i % key_ring),
                             (gssize) key_len, NULL, KVEV_MEDIA_CPU);
      f->calls += 256;
    }
  while ((now = bench_now_ns ()) < f->t_end);
  f->stopped = now;
  f->cpu_ns = bench_thread_cpu_ns () - cpu_start;
  return NULL;
}

void
bench_produce_flat_out (BenchNet *net, BenchSource *source, gint64 t_end, BenchPhaseResult *r,
                        gpointer data)
{
  guint producers = GPOINTER_TO_UINT (data);
  FlatOut flat[2];
  GThread *threads[2];
  guint i;

  g_assert (producers >= 1 && producers <= G_N_ELEMENTS (flat));
  for (i = 0; i < producers; i++)
    {
      flat[i] = (FlatOut){ net, source, i, t_end, 0, 0, 0 };
      threads[i] = g_thread_new ("bench-producer", flat_out_main, &flat[i]);
    }
  for (i = 0; i < producers; i++)
    {
      g_thread_join (threads[i]);
      r->offered += flat[i].calls;
      r->t_stop = MAX (r->t_stop, flat[i].stopped);
      r->producer_cpu_ns += flat[i].cpu_ns;
    }
}

/* The baseline: the pre-encoded payload, no copy, as fast as ZeroMQ
 * takes it; a PUB socket drops what a full pipe cannot take, an XPUB
 * with ZMQ_XPUB_NODROP makes the send wait. */
static void
produce_raw (BenchNet *net, BenchSource *source, gint64 t_end, BenchPhaseResult *r, gpointer data)
{
  int flags = source->nodrop ? 0 : ZMQ_DONTWAIT;
  guint64 messages = 0;
  gint64 now;

  do
    {
      guint j;

      for (j = 0; j < 8; j++)
        {
          if (!raw_send (source, net->payload, net->payload_len, flags, FALSE) && source->nodrop)
            r->raw_unsent++;
          messages++;
        }
    }
  while ((now = bench_now_ns ()) < t_end);
  r->messages = messages;
  r->offered = (messages - r->raw_unsent) * net->payload_events;
  r->t_stop = now;
}

/* ---- phases ------------------------------------------------------------ */

typedef struct
{
  const char *prefix;
  BenchPhaseResult *r;
  char *bad_line; /* a report that did not parse */
} ReportWait;

static gboolean
accept_prefixed (const char *line, const char *prefix)
{
  gsize len = strlen (prefix);

  return strncmp (line, prefix, len) == 0 && (line[len] == ' ' || line[len] == '\0');
}

static gboolean
accept_ack (const char *line, guint i, gpointer data)
{
  return accept_prefixed (line, ((ReportWait *) data)->prefix);
}

static gboolean
accept_report (const char *line, guint i, gpointer data)
{
  ReportWait *wait = data;
  BenchSubReport *s = &wait->r->sub[i];
  unsigned int got_id;

  if (!accept_prefixed (line, wait->prefix))
    return FALSE;
  if (sscanf (line, BENCH_SUB_REPORT_FORMAT, &got_id, &s->received, &s->received_by_stop,
              &s->bytes_by_stop, &s->first_ns, &s->last_ns, &s->bad, &s->n_latencies, &s->p50,
              &s->p99, &s->p999, &s->max)
          != 12
      && wait->bad_line == NULL)
    wait->bad_line = g_strdup (line);
  return TRUE;
}

/* The publisher's counters a phase reads, in BenchPhaseResult's order. */
static const KvevStat phase_stats[] = {
  KVEV_STAT_DROPPED_EVENTS,    KVEV_STAT_HWM_DROPPED_EVENTS, KVEV_STAT_HWM_DROPPED_MESSAGES,
  KVEV_STAT_PUBLISHED_BATCHES, KVEV_STAT_PUBLISHED_EVENTS,
};

static void
read_stats (BenchSource *source, guint64 *values)
{
  guint i;

  for (i = 0; i < G_N_ELEMENTS (phase_stats); i++)
    values[i] = kvev_publisher_stat (source->publisher, phase_stats[i]);
}

gboolean
bench_phase_start (BenchNet *net, BenchSource *source, BenchPhaseResult *r, GError **error)
{
  guint id = ++net->phase;
  g_autofree char *start = g_strdup_printf ("S %u\n", id);
  g_autofree char *ack = g_strdup_printf ("A %u", id);
  gboolean done[BENCH_MAX_SUBS] = { FALSE };
  ReportWait wait = { ack, r, NULL };
  guint i;

  memset (r, 0, sizeof *r);
  r->id = id;
  r->n_subs = net->n_subs;
  for (i = 0; i < net->n_subs; i++)
    if (!sub_send (net->subs[i], start, error))
      return FALSE;
  if (!subs_wait (net, done, accept_ack, &wait, REPLY_TIMEOUT_MS, error))
    return FALSE;
  if (!all_done (net, done))
    return bench_fail (error, _ ("The subscriber did not answer"));
  if (source->publisher != NULL)
    read_stats (source, r->stats_before);
  r->cpu_before = process_cpu_ns ();
  r->thread_cpu_before = bench_thread_cpu_ns ();
  return TRUE;
}

void
bench_phase_produce (BenchNet *net, BenchSource *source, BenchProduceFunc produce, gpointer data,
                     guint duration_ms, BenchPhaseResult *r)
{
  r->t0 = bench_now_ns ();
  produce (net, source, r->t0 + (gint64) duration_ms * 1000000, r, data);
}

gboolean
bench_phase_finish (BenchNet *net, BenchSource *source, BenchPhaseResult *r, GError **error)
{
  g_autofree char *prefix = g_strdup_printf ("R %u", r->id);
  g_autofree char *end_key = NULL;
  gboolean done[BENCH_MAX_SUBS] = { FALSE };
  ReportWait wait = { prefix, r, NULL };
  guint64 after[G_N_ELEMENTS (phase_stats)];
  gint64 deadline;

  r->publisher = source->publisher != NULL;
  if (r->publisher)
    {
      if (!kvev_publisher_flush (source->publisher, REPLY_TIMEOUT_MS))
        return bench_fail (error, _ ("The publisher did not drain its queue"));
      /* Before the markers, which are events too. */
      read_stats (source, after);
      r->queue_dropped = after[0] - r->stats_before[0];
      r->hwm_dropped_events = after[1] - r->stats_before[1];
      r->hwm_dropped_messages = after[2] - r->stats_before[2];
      r->messages = after[3] - r->stats_before[3];
      r->published_events = after[4] - r->stats_before[4];
    }

  /* Markers may meet a full socket too: repeat until every report. */
  end_key = g_strdup_printf (BENCH_END_PREFIX "%u/%" G_GINT64_FORMAT, r->id, r->t_stop);
  deadline = g_get_monotonic_time () + (gint64) REPLY_TIMEOUT_MS * 1000;
  while (!all_done (net, done) && g_get_monotonic_time () < deadline)
    {
      source_marker (source, end_key);
      if (!subs_wait (net, done, accept_report, &wait, 50, error))
        {
          g_free (wait.bad_line);
          return FALSE;
        }
    }
  r->t_done = bench_now_ns ();
  r->publisher_cpu_ns = process_cpu_ns () - r->cpu_before
                        - (bench_thread_cpu_ns () - r->thread_cpu_before) - r->producer_cpu_ns;
  if (wait.bad_line != NULL)
    {
      bench_fail (error, _ ("Unexpected report from the subscriber: %s"), wait.bad_line);
      g_free (wait.bad_line);
      return FALSE;
    }
  if (!all_done (net, done))
    return bench_fail (error, _ ("The subscriber did not report phase %u"), r->id);
  return TRUE;
}

gboolean
bench_phase_run (BenchNet *net, BenchSource *source, BenchProduceFunc produce, gpointer data,
                 guint duration_ms, BenchPhaseResult *r, GError **error)
{
  if (!bench_phase_start (net, source, r, error))
    return FALSE;
  bench_phase_produce (net, source, produce, data, duration_ms, r);
  return bench_phase_finish (net, source, r, error);
}

gboolean
bench_phase_run_flat (BenchNet *net, BenchSource *source, guint producers, guint duration_ms,
                      BenchPhaseResult *r, GError **error)
{
  return bench_phase_run (net, source,
                          source->publisher != NULL ? bench_produce_flat_out : produce_raw,
                          GUINT_TO_POINTER (producers), duration_ms, r, error);
}

/* ---- results ----------------------------------------------------------- */

double
bench_phase_events_per_s (const BenchPhaseResult *r, guint i)
{
  return (double) r->sub[i].received_by_stop * 1e9 / (double) MAX (r->t_stop - r->t0, 1);
}

double
bench_phase_total_events_per_s (const BenchPhaseResult *r)
{
  double total = 0;
  guint i;

  for (i = 0; i < r->n_subs; i++)
    total += bench_phase_events_per_s (r, i);
  return total;
}

guint64
bench_phase_counted_drops (const BenchPhaseResult *r)
{
  return r->queue_dropped + r->hwm_dropped_events;
}

gint64
bench_phase_uncounted (const BenchPhaseResult *r, guint i)
{
  return (gint64) r->offered - (gint64) r->sub[i].received - (gint64) bench_phase_counted_drops (r);
}

void
bench_figure_add_flat (BenchFigure *figure, const BenchPhaseResult *r)
{
  const BenchSubReport *s = &r->sub[0];
  double dropped = r->offered > s->received ? (double) (r->offered - s->received) : 0;

  bench_figure_add (figure, bench_phase_events_per_s (r, 0));
  bench_figure_add_extra (figure, "offered_per_s",
                          (double) r->offered * 1e9 / (double) MAX (r->t_stop - r->t0, 1));
  bench_figure_add_extra (figure, "offered", (double) r->offered);
  bench_figure_add_extra (figure, "received", (double) s->received);
  bench_figure_add_extra (figure, "dropped", dropped);
  bench_figure_add_extra (figure, "drop_fraction",
                          r->offered > 0 ? dropped / (double) r->offered : 0);
  bench_figure_add_extra (figure, "queue_dropped", (double) r->queue_dropped);
  bench_figure_add_extra (figure, "bad_messages", (double) s->bad);
  bench_figure_add_extra (figure, "bytes_per_s",
                          (double) s->bytes_by_stop * 1e9 / (double) MAX (r->t_stop - r->t0, 1));
  if (r->publisher)
    {
      bench_figure_add_extra (figure, "hwm_dropped_events", (double) r->hwm_dropped_events);
      bench_figure_add_extra (figure, "hwm_dropped_messages", (double) r->hwm_dropped_messages);
      bench_figure_add_extra (figure, "uncounted_loss", (double) bench_phase_uncounted (r, 0));
    }
}

char *
bench_flat_note (const BenchFigure *figure)
{
  const BenchExtra *loss = bench_figure_find_extra (figure, "uncounted_loss");
  GString *note = g_string_new (NULL);

  g_string_printf (note, _ ("offered %.2fM/s, %.0f%% dropped"),
                   bench_median (bench_figure_find_extra (figure, "offered_per_s")->values) / 1e6,
                   100 * bench_median (bench_figure_find_extra (figure, "drop_fraction")->values));
  if (loss != NULL)
    /* TRANSLATORS: followed by one number per run. */
    bench_note_runs (note, _ ("; uncounted loss by run:"), loss->values);
  return g_string_free (note, FALSE);
}

void
bench_note_runs (GString *note, const char *label, const GArray *values)
{
  guint i;

  g_string_append (note, label);
  for (i = 0; i < values->len; i++)
    g_string_append_printf (note, " %.0f", g_array_index (values, double, i));
}
