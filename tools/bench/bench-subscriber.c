/* bench-subscriber.c: the subscriber process of the end-to-end and
 * latency sections; see bench-subscriber.h for what it does and the
 * protocol it speaks.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include "bench-subscriber.h"
#include "bench-stats.h"
#include "bench-util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <glib/gi18n.h>
#include <msgpack.h>
#include <zmq.h>

typedef struct
{
  gint64 ns;
  guint n;
  gsize bytes; /* the payload the n data events came in */
} Arrival;

typedef struct
{
  gboolean active;
  guint id;
  guint64 received;
  guint64 bad;
  GArray *arrivals;  /* Arrival */
  GArray *latencies; /* gint64 ns */
  /* "H": the stall the next phase gets, ms after its start and ms long,
   * and the one this phase has, in CLOCK_MONOTONIC ns (0: none). */
  gint64 next_hold_after_ms;
  gint64 next_hold_for_ms;
  gint64 hold_start_ns;
  gint64 hold_end_ns;
  /* "L": the sleep after every message. */
  gulong slow_us;
} SubPhase;

static void reply (const char *format, ...) G_GNUC_PRINTF (1, 2);

static void
reply (const char *format, ...)
{
  va_list args;
  char *line;
  gsize len, done = 0;

  va_start (args, format);
  line = g_strdup_vprintf (format, args);
  va_end (args);
  len = strlen (line);
  while (done < len)
    {
      ssize_t n = write (STDOUT_FILENO, line + done, len - done);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        exit (1); /* the parent is gone */
      done += (gsize) n;
    }
  g_free (line);
}

static void
phase_finish (SubPhase *phase, gint64 t_stop)
{
  guint64 by_stop = 0, bytes_by_stop = 0;
  gint64 first = -1, last = -1;
  guint i;

  for (i = 0; i < phase->arrivals->len; i++)
    {
      const Arrival *arrival = &g_array_index (phase->arrivals, Arrival, i);

      if (arrival->ns <= t_stop)
        {
          by_stop += arrival->n;
          bytes_by_stop += arrival->bytes;
        }
      if (first < 0)
        first = arrival->ns;
      last = arrival->ns;
    }
  bench_sort_ns (phase->latencies);
  reply (BENCH_SUB_REPORT_FORMAT "\n", phase->id, phase->received, by_stop, bytes_by_stop, first,
         last, phase->bad, phase->latencies->len, bench_percentile_ns (phase->latencies, 0.50),
         bench_percentile_ns (phase->latencies, 0.99),
         bench_percentile_ns (phase->latencies, 0.999),
         phase->latencies->len > 0
             ? g_array_index (phase->latencies, gint64, phase->latencies->len - 1)
             : -1);
  phase->active = FALSE;
}

static gboolean
parse_int64 (const char *p, gsize len, gint64 *value)
{
  gint64 v = 0;
  gsize i;

  for (i = 0; i < len && p[i] >= '0' && p[i] <= '9'; i++)
    v = v * 10 + (p[i] - '0');
  *value = v;
  return i > 0;
}

static const msgpack_object *
map_get (const msgpack_object *map, const char *key, gsize key_len)
{
  guint32 i;

  for (i = 0; i < map->via.map.size; i++)
    {
      const msgpack_object *k = &map->via.map.ptr[i].key;

      if (k->type == MSGPACK_OBJECT_STR && k->via.str.size == key_len
          && memcmp (k->via.str.ptr, key, key_len) == 0)
        return &map->via.map.ptr[i].val;
    }
  return NULL;
}

/* Whether the len bytes at key start with prefix, and a non-empty rest,
 * which *rest and *rest_len then point to. */
static gboolean
strip_prefix (const char *key, gsize len, const char *prefix, const char **rest, gsize *rest_len)
{
  gsize prefix_len = strlen (prefix);

  if (len <= prefix_len || memcmp (key, prefix, prefix_len) != 0)
    return FALSE;
  *rest = key + prefix_len;
  *rest_len = len - prefix_len;
  return TRUE;
}

/* One event's key says what it is. */
static void
handle_event (SubPhase *phase, const msgpack_object *event, gint64 now, gsize size, guint *n_data)
{
  const msgpack_object *key;
  const char *k, *rest;
  gsize len, rest_len;

  if (event->type != MSGPACK_OBJECT_MAP
      || (key = map_get (event, "object_key", strlen ("object_key"))) == NULL
      || (key->type != MSGPACK_OBJECT_STR && key->type != MSGPACK_OBJECT_BIN))
    {
      /* cleared has no key; nothing here sends it. */
      if (phase->active)
        phase->bad++;
      return;
    }
  k = key->type == MSGPACK_OBJECT_STR ? key->via.str.ptr : key->via.bin.ptr;
  len = key->type == MSGPACK_OBJECT_STR ? key->via.str.size : key->via.bin.size;

  if (strip_prefix (k, len, BENCH_MARKER_PREFIX, &rest, &rest_len))
    {
      gint64 id, t_stop;
      const char *slash;

      if (strip_prefix (k, len, BENCH_PROBE_PREFIX, &rest, &rest_len)
          && parse_int64 (rest, rest_len, &id))
        reply ("P %" G_GINT64_FORMAT "\n", id);
      else if (strip_prefix (k, len, BENCH_END_PREFIX, &rest, &rest_len)
               && parse_int64 (rest, rest_len, &id)
               && (slash = memchr (rest, '/', rest_len)) != NULL
               && parse_int64 (slash + 1, (gsize) (k + len - slash - 1), &t_stop) && phase->active
               && (guint) id == phase->id)
        {
          if (*n_data > 0)
            {
              Arrival arrival = { now, *n_data, size };

              g_array_append_val (phase->arrivals, arrival);
              *n_data = 0;
            }
          phase_finish (phase, t_stop);
        }
      return;
    }

  if (!phase->active)
    return;
  phase->received++;
  (*n_data)++;
  if (strip_prefix (k, len, BENCH_STAMP_PREFIX, &rest, &rest_len))
    {
      gint64 sent;

      if (parse_int64 (rest, rest_len, &sent))
        {
          gint64 latency = now - sent;

          g_array_append_val (phase->latencies, latency);
        }
    }
}

static void
handle_payload (SubPhase *phase, msgpack_unpacked *unpacked, const char *data, gsize size)
{
  gint64 now = bench_now_ns ();
  const msgpack_object *root;
  const msgpack_object *events;
  size_t offset = 0;
  guint n_data = 0;
  guint32 i;

  if (msgpack_unpack_next (unpacked, data, size, &offset) != MSGPACK_UNPACK_SUCCESS
      || (root = &unpacked->data)->type != MSGPACK_OBJECT_ARRAY || root->via.array.size != 3
      || (events = &root->via.array.ptr[1])->type != MSGPACK_OBJECT_ARRAY)
    {
      if (phase->active)
        phase->bad++;
      return;
    }
  for (i = 0; i < events->via.array.size; i++)
    handle_event (phase, &events->via.array.ptr[i], now, size, &n_data);
  if (n_data > 0 && phase->active)
    {
      Arrival arrival = { now, n_data, size };

      g_array_append_val (phase->arrivals, arrival);
    }
}

/* Receives one three-frame message; FALSE when none is waiting. */
static gboolean
receive_one (void *socket, SubPhase *phase, msgpack_unpacked *unpacked)
{
  zmq_msg_t part;
  guint parts = 0;
  gboolean more = TRUE;
  gboolean handled = FALSE;

  while (more)
    {
      zmq_msg_init (&part);
      if (zmq_msg_recv (&part, socket, parts == 0 ? ZMQ_DONTWAIT : 0) < 0)
        {
          zmq_msg_close (&part);
          return FALSE;
        }
      parts++;
      more = zmq_msg_more (&part);
      if (parts == 3 && !more)
        {
          handle_payload (phase, unpacked, zmq_msg_data (&part), zmq_msg_size (&part));
          handled = TRUE;
        }
      zmq_msg_close (&part);
    }
  if (!handled && phase->active)
    phase->bad++;
  return TRUE;
}

static void
phase_start (SubPhase *phase, guint id)
{
  phase->active = TRUE;
  phase->id = id;
  phase->received = 0;
  phase->bad = 0;
  g_array_set_size (phase->arrivals, 0);
  g_array_set_size (phase->latencies, 0);
  phase->hold_start_ns = phase->hold_end_ns = 0;
  if (phase->next_hold_for_ms > 0)
    {
      phase->hold_start_ns = bench_now_ns () + phase->next_hold_after_ms * 1000000;
      phase->hold_end_ns = phase->hold_start_ns + phase->next_hold_for_ms * 1000000;
    }
  phase->next_hold_after_ms = phase->next_hold_for_ms = 0;
  reply ("A %u\n", id);
}

/* Returns FALSE when told to quit or the parent went away. */
static gboolean
read_commands (GString *input, SubPhase *phase)
{
  char chunk[256];
  ssize_t n;
  char *newline;

  n = read (STDIN_FILENO, chunk, sizeof chunk);
  if (n < 0 && errno == EINTR)
    return TRUE;
  if (n <= 0)
    return FALSE;
  g_string_append_len (input, chunk, n);
  while ((newline = memchr (input->str, '\n', input->len)) != NULL)
    {
      gsize line_len = (gsize) (newline - input->str);
      unsigned int id, after_ms, for_ms;
      unsigned long us;

      *newline = '\0';
      if (input->str[0] == 'Q')
        {
          reply ("M %ld\n", bench_peak_rss_kib ());
          return FALSE;
        }
      if (sscanf (input->str, "S %u", &id) == 1)
        phase_start (phase, id);
      else if (sscanf (input->str, "H %u %u", &after_ms, &for_ms) == 2)
        {
          phase->next_hold_after_ms = after_ms;
          phase->next_hold_for_ms = for_ms;
        }
      else if (sscanf (input->str, "L %lu", &us) == 1)
        phase->slow_us = us;
      g_string_erase (input, 0, (gssize) line_len + 1);
    }
  return TRUE;
}

/* How long the main loop may wait in zmq_poll (), in ms, and whether it
 * reads the socket meanwhile: not during a stall, and before one only
 * until it starts. */
static long
poll_plan (const SubPhase *phase, gboolean *read_socket)
{
  gint64 now = bench_now_ns ();

  *read_socket = TRUE;
  if (phase->hold_end_ns == 0 || now >= phase->hold_end_ns)
    return -1;
  if (now < phase->hold_start_ns)
    return (long) ((phase->hold_start_ns - now) / 1000000) + 1;
  *read_socket = FALSE;
  return (long) ((phase->hold_end_ns - now) / 1000000) + 1;
}

int
bench_subscriber_main (char **endpoints, int rcvhwm)
{
  void *context = zmq_ctx_new ();
  void *socket = zmq_socket (context, ZMQ_SUB);
  SubPhase phase = { 0 };
  msgpack_unpacked unpacked;
  GString *input = g_string_new (NULL);
  int zero = 0;
  gboolean running = TRUE;
  guint i;

  zmq_setsockopt (socket, ZMQ_LINGER, &zero, sizeof zero);
  if (rcvhwm > 0)
    zmq_setsockopt (socket, ZMQ_RCVHWM, &rcvhwm, sizeof rcvhwm);
  zmq_setsockopt (socket, ZMQ_SUBSCRIBE, "", 0);
  for (i = 0; endpoints[i] != NULL; i++)
    if (zmq_connect (socket, endpoints[i]) != 0)
      {
        g_printerr (_ ("kvevents-bench: cannot connect to %s: %s\n"), endpoints[i],
                    zmq_strerror (zmq_errno ()));
        return 1;
      }
  phase.arrivals = g_array_new (FALSE, FALSE, sizeof (Arrival));
  phase.latencies = g_array_new (FALSE, FALSE, sizeof (gint64));
  msgpack_unpacked_init (&unpacked);

  while (running)
    {
      zmq_pollitem_t items[2] = {
        { NULL, STDIN_FILENO, ZMQ_POLLIN, 0 },
        { socket, 0, ZMQ_POLLIN, 0 },
      };
      gboolean read_socket;
      long timeout_ms = poll_plan (&phase, &read_socket);

      if (zmq_poll (items, read_socket ? 2 : 1, timeout_ms) < 0)
        {
          if (zmq_errno () == EINTR)
            continue;
          break;
        }
      if (items[0].revents & (ZMQ_POLLIN | ZMQ_POLLERR))
        running = read_commands (input, &phase);
      /* A slow subscriber takes one message a turn, so that it still
       * hears "L 0" and "Q" between its sleeps. */
      if (read_socket && (items[1].revents & ZMQ_POLLIN))
        for (i = 0; i < (phase.slow_us > 0 ? 1 : 1024) && receive_one (socket, &phase, &unpacked);
             i++)
          if (phase.slow_us > 0)
            g_usleep (phase.slow_us);
    }

  msgpack_unpacked_destroy (&unpacked);
  g_array_unref (phase.arrivals);
  g_array_unref (phase.latencies);
  g_string_free (input, TRUE);
  zmq_close (socket);
  zmq_ctx_term (context);
  return 0;
}
