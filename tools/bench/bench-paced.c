/* bench-paced.c: a producer at a steady rate, every event timed; see
 * bench-paced.h.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include "bench-paced.h"
#include "bench-subscriber.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

#define BATCH_EVENTS BENCH_BATCH_EVENTS

typedef struct
{
  char *data;
  gsize len;
  gsize key_offsets[BATCH_EVENTS];
} StampedPayload;

/* stamped[n] holds n timed events, whose keys' digits are rewritten with
 * the send time. */
struct _BenchStamped
{
  StampedPayload payloads[BATCH_EVENTS + 1]; /* [0] unused */
};

#define STAMP_DIGITS 20

/* The stamp as exactly STAMP_DIGITS decimal digits.  Not printf: the
 * paced producer writes one per event, on the CPUs it measures, and a
 * master has no such cost at its call sites. */
static void
put_stamp (char *digits, gint64 stamp)
{
  guint64 value = (guint64) MAX (stamp, 0);
  guint i;

  for (i = STAMP_DIGITS; i > 0; i--)
    {
      digits[i - 1] = (char) ('0' + value % 10);
      value /= 10;
    }
}

#define STAMP_AT (sizeof BENCH_STAMP_PREFIX - 1)

/* BENCH_STAMP_PREFIX, 20 digits, "/", then padding: the key of a timed
 * event. */
static void
format_stamped_key (char *key, guint key_len, gint64 stamp)
{
  memset (key, 'x', key_len);
  memcpy (key, BENCH_STAMP_PREFIX, STAMP_AT);
  put_stamp (key + STAMP_AT, stamp);
  key[STAMP_AT + STAMP_DIGITS] = '/';
}

/* n timed events in one raw message, every key stamped with the time
 * read just before.  ZeroMQ copies the payload, which is rewritten for
 * the next message while the I/O thread may still be sending this one. */
static void
send_raw_stamped (BenchStamped *stamped, BenchSource *source, guint n, gint64 stamp)
{
  StampedPayload *payload = &stamped->payloads[n];
  guint i;

  for (i = 0; i < n; i++)
    put_stamp (payload->data + payload->key_offsets[i] + STAMP_AT, stamp);
  bench_source_send_raw (source, payload->data, payload->len, ZMQ_DONTWAIT);
}

BenchStamped *
bench_stamped_new (const BenchWire *wire, guint key_len)
{
  BenchStamped *stamped = g_new0 (BenchStamped, 1);
  g_autofree char *key = NULL;
  guint i, n;

  key_len = MAX (key_len, STAMP_AT + STAMP_DIGITS + 1);
  key = g_malloc (key_len);
  format_stamped_key (key, key_len, 0);
  for (n = 1; n <= BATCH_EVENTS; n++)
    {
      StampedPayload *payload = &stamped->payloads[n];
      const char *at;

      payload->data = bench_wire_encode (wire, g_get_real_time () / 1000, BENCH_RAW_FIRST_EVENT_ID,
                                         key, key_len, 1, n, &payload->len);
      /* The keys, in order: nothing else in a payload holds one. */
      i = 0;
      for (at = payload->data; i < n && at + key_len <= payload->data + payload->len; at++)
        if (memcmp (at, key, key_len) == 0)
          {
            payload->key_offsets[i++] = (gsize) (at - payload->data);
            at += key_len - 1;
          }
      g_assert (i == n);
    }
  return stamped;
}

void
bench_stamped_free (BenchStamped *stamped)
{
  guint n;

  for (n = 1; n <= BATCH_EVENTS; n++)
    free (stamped->payloads[n].data);
  g_free (stamped);
}

/* Events at a steady rate, each key carrying the time read just before
 * it is handed over.  Sleeps whenever it is ahead, as a master does
 * other work between calls, and never spins: at rates whose interval is
 * shorter than a wake-up a spinning producer would hold a whole CPU, and
 * on a small machine the figure would measure that instead of the
 * publisher.  Late wake-ups make it send what fell due in a burst.  One
 * clock read per event serves as both its stamp and the pacing check.
 *
 * On the raw socket the producer batches what fell due itself, up to
 * BATCH_EVENTS a message, and sends it with no thread in between: the
 * floor that ZeroMQ, the loopback and the scheduler set at this rate and
 * about the publisher's message rate.  One event a message would instead
 * measure ZeroMQ's per-message ceiling, which 50 % of the publisher's
 * capacity exceeds. */
void
bench_produce_paced (BenchNet *net, BenchSource *source, gint64 t_end, BenchPhaseResult *r,
                     gpointer data)
{
  const BenchPace *pace = data;
  double rate = pace->rate;
  guint key_len = MAX (net->key_len, STAMP_AT + STAMP_DIGITS + 1);
  g_autofree char *key = g_malloc (key_len);
  double interval_ns = 1e9 / rate;
  gint64 t0 = bench_now_ns ();
  guint64 sent = 0;
  gint64 now;

  format_stamped_key (key, key_len, 0);
  while ((now = bench_now_ns ()) < t_end)
    {
      gint64 next = t0 + (gint64) ((double) sent * interval_ns);

      if (now >= next && source->publisher != NULL)
        {
          put_stamp (key + STAMP_AT, now);
          kvev_publish_stored (source->publisher, BENCH_TENANT, key, key_len, NULL, KVEV_MEDIA_CPU);
          sent++;
        }
      else if (now >= next)
        {
          guint64 due = (guint64) ((double) (now - t0) / interval_ns) + 1 - sent;
          guint n = (guint) MIN (MAX (due, 1), BATCH_EVENTS);

          send_raw_stamped (pace->stamped, source, n, now);
          sent += n;
          r->messages++;
        }
      else
        {
          struct timespec ts = { (time_t) (MIN (next, t_end) / 1000000000),
                                 (long) (MIN (next, t_end) % 1000000000) };

          clock_nanosleep (CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
        }
    }
  r->offered = sent;
  r->t_stop = now;
}
