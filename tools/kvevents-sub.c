/* kvevents-sub: subscribe to KV-cache event streams and print every event.
 *
 * Reads the RFC #1527 maps libkvevents sends and the tagged events of
 * vLLM and SGLang, watches each endpoint's transport sequence and
 * event_id for loss, fills the gaps from a replay endpoint when it has
 * one (kvevents-sub(1), REPLAY), and ends with a summary.  The decoding
 * lives in decode.c, the replay protocol in replay-client.c; this file is
 * the command line, the sockets and the order of the stream.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>

#ifdef HAVE_ZMQ
#include <zmq.h>
#endif

#include <kvevents/kvevents.h>

#include "decode.h"
#include <base/endpoint-syntax.h>
#include "kvtool.h"
#include "replay-client.h"
#include "snapshot-client.h"
#include "state.h"
#include <base/secret.h>
#include "socket.h"
#include <base/z85.h>

typedef struct
{
  guint64 messages;
  guint64 malformed_messages;
  guint64 events;
  guint64 by_kind[KVT_N_EVENT_KINDS];
  guint64 bad_events;
  guint64 heartbeats; /* messages with an empty event list */
  guint64 heartbeat_silences;
  guint64 sequence_gaps;
  guint64 skipped_sequence_numbers;
  guint64 replay_requests;
  guint64 replay_failures; /* timed out, or answered with a malformed reply */
  guint64 recovered_messages;
  guint64 lost_messages; /* skipped numbers that no replay filled */
  guint64 restarts;
  guint64 event_id_holes;
  guint64 lost_events;
  guint64 event_id_backwards;
  guint64 snapshots;         /* taken whole */
  guint64 snapshot_failures; /* refused, failed, malformed or timed out */
  guint64 snapshot_events;
  guint64 superseded_events; /* live ones a snapshot already held, or replaced */
} Summary;

/* Why a replay ended. */
typedef enum
{
  REPLAY_COMPLETE,  /* every missing message came */
  REPLAY_END,       /* the end marker came first */
  REPLAY_REACHED,   /* it went past the live message already held */
  REPLAY_FOREIGN,   /* it came from another publisher_id */
  REPLAY_TIMEOUT,   /* nothing came for --replay-timeout-ms */
  REPLAY_MALFORMED, /* a reply of another shape came */
  REPLAY_STOPPED,   /* kvevents-sub stopped first */
} ReplayEnd;

/* One endpoint, on a socket of its own: sequences and event ids belong to
 * one publisher, and several publishers' would interleave on one socket. */
typedef struct
{
  char *endpoint;
  void *socket;
  void *monitor;
  gboolean ever_connected;
  guint connections;
  guint16 handshake_failure; /* the one reported since a handshake last succeeded, or 0 */
  gboolean have_sequence;
  guint64 last_sequence; /* the last one printed, or accounted as lost */
  gboolean have_event_id;
  guint64 last_event_id;
  char *publisher_id; /* as JSON, the last one seen; NULL before */

  /* --replay-endpoint: a DEALER, or NULL. */
  char *replay_endpoint;
  void *replay_socket;
  /* A replay in flight asks for [replay_from, replay_until); the live
   * messages that arrive meanwhile wait in held, in order, the first being
   * the one that showed the gap. */
  gboolean replaying;
  guint64 replay_from;
  guint64 replay_until;
  guint64 replay_recovered;
  gint64 replay_deadline; /* monotonic, µs */
  GQueue held;

  /* --snapshot-endpoint: a DEALER, or NULL.  A snapshot is wanted before
   * the first live message is taken, and again when messages were lost
   * for good or the publisher restarted; while it runs, live messages wait
   * in held.  The live events at or below its barrier are in it. */
  char *snapshot_endpoint;
  void *snapshot_socket;
  gboolean snapshot_wanted;
  gboolean snapshotting;
  gint64 snapshot_deadline; /* monotonic, µs */
  gint64 snapshot_retry_at; /* after a failure, monotonic µs; 0: none */
  guint snapshot_failed_in_row;
  KvtState *incoming;     /* the snapshot's entries so far */
  char *incoming_backend; /* as JSON, from its header */
  guint64 incoming_barrier;
  gboolean have_barrier;
  guint64 barrier;

  /* --heartbeat-ms. */
  gint64 last_arrival; /* monotonic, µs */
  gboolean silence_reported;
  guint64 arrived; /* live messages, for --test-drop-percent */
} Source;

typedef struct
{
  /* Options. */
  char **endpoints;
  char **topics;
  KvtFormat format;
  gint64 count;
  gint timeout_ms;
  gboolean quiet;
  gboolean strict;
  gboolean until_disconnect;
  gint rcvhwm;
  char *summary_json;
  char **replay_endpoints;
  gint replay_timeout_ms;
  gboolean publisher_id;
  gint heartbeat_ms;
  char **snapshot_endpoints;
  gint snapshot_timeout_ms;
  char *state_path;
  /* For the tests: drop this share of live messages on purpose. */
  gdouble test_drop_percent;
  gint64 test_drop_seed;
  GRand *test_drop;

  /* CURVE, with the keys in binary, when --curve-server-key is given. */
  gboolean curve;
  guint8 curve_server_key[KVEV_KEY_BYTES];
  guint8 curve_public_key[KVEV_KEY_BYTES];
  guint8 curve_secret_key[KVEV_KEY_BYTES];

  /* Progress. */
  void *context;
  Summary summary;
  GPtrArray *sources;
  guint64 counted;        /* what --count counts: events and skipped entries */
  KvtState *state;        /* with --state */
  gboolean replay_closed; /* at the end: a gap is lost at once */
} Sub;

static volatile sig_atomic_t stop_signal = 0;
static volatile sig_atomic_t state_signal = 0;

static void
on_stop_signal (int signum)
{
  stop_signal = signum;
}

static void
on_state_signal (int signum)
{
  state_signal = signum;
}

/* Once a stop signal has come and writing to stdout has failed, nothing
 * more is written: the signal cut short a write that stdout's reader was
 * not taking, and any further write could block the exit again. */
static gboolean
output_abandoned (void)
{
  return stop_signal != 0 && ferror (stdout);
}

/* What stdout still buffers goes nowhere: exit() would try to write it
 * again, and block again on a reader that takes nothing. */
static void
discard_output (void)
{
  int null = open ("/dev/null", O_WRONLY);

  if (null >= 0)
    {
      dup2 (null, STDOUT_FILENO);
      close (null);
    }
}

static gboolean
count_reached (const Sub *sub)
{
  return sub->count > 0 && sub->counted >= (guint64) sub->count;
}

/* A report about one endpoint's stream, on stderr, unless --quiet. */
static void report (const Sub *sub, const Source *source, const char *format, ...)
    G_GNUC_PRINTF (3, 4);

static void
report (const Sub *sub, const Source *source, const char *format, ...)
{
  g_autofree char *text = NULL;
  va_list args;

  if (sub->quiet)
    return;
  va_start (args, format);
  text = g_strdup_vprintf (format, args);
  va_end (args);
  if (sub->sources->len > 1)
    g_printerr ("%s: %s: %s\n", g_get_prgname (), source->endpoint, text);
  else
    g_printerr ("%s: %s\n", g_get_prgname (), text);
}

static void
track_sequence (Sub *sub, Source *source, guint64 sequence)
{
  if (source->have_sequence && sequence > source->last_sequence)
    {
      guint64 missing = sequence - source->last_sequence - 1;

      /* The wire cannot say which: the publisher reserves a number for
       * every event its full queue dropped, and a failed send or a
       * subscriber's full pipe loses a whole message. */
      if (missing > 0)
        {
          sub->summary.sequence_gaps++;
          sub->summary.skipped_sequence_numbers += missing;
          sub->summary.lost_messages += missing;
          report (sub, source,
                  g_dngettext (KVT_GETTEXT_PACKAGE,
                               "sequence jumped from %" PRIu64 " to %" PRIu64 ": %" PRIu64
                               " number skipped (a lost message or an event the publisher dropped)",
                               "sequence jumped from %" PRIu64 " to %" PRIu64 ": %" PRIu64
                               " numbers skipped (lost messages or events the publisher dropped)",
                               (gulong) MIN (missing, G_MAXULONG)),
                  source->last_sequence, sequence, missing);
        }
    }
  else if (source->have_sequence)
    {
      sub->summary.restarts++;
      report (sub, source,
              _ ("sequence went back from %" PRIu64 " to %" PRIu64 ": the publisher restarted"),
              source->last_sequence, sequence);
      /* A new publisher numbers its events from 1 again, and has an
       * instance id of its own: its first one is no second restart. */
      source->have_event_id = FALSE;
      source->have_barrier = FALSE;
      g_clear_pointer (&source->publisher_id, g_free);
    }
  source->have_sequence = TRUE;
  source->last_sequence = sequence;
}

/* The publisher_id of a live message.  With --publisher-id a new one is a
 * restart whatever the sequence does (kvevents(7), PUBLISHER IDENTITY):
 * the new publisher numbers its messages and events afresh, so nothing
 * before its first message is a gap. */
static void
track_publisher (Sub *sub, Source *source, const KvtMessage *message)
{
  if (message->publisher_id == NULL || g_strcmp0 (source->publisher_id, message->publisher_id) == 0)
    return;
  if (source->publisher_id != NULL && sub->publisher_id)
    {
      sub->summary.restarts++;
      report (sub, source, _ ("publisher_id changed from %s to %s: the publisher restarted"),
              source->publisher_id, message->publisher_id);
      source->have_sequence = FALSE;
      source->have_event_id = FALSE;
      source->have_barrier = FALSE;
    }
  g_free (source->publisher_id);
  source->publisher_id = g_strdup (message->publisher_id);
}

static void
track_event_id (Sub *sub, Source *source, guint64 sequence, guint64 event_id)
{
  if (source->have_event_id && event_id > source->last_event_id)
    {
      guint64 lost = event_id - source->last_event_id - 1;

      if (lost > 0)
        {
          sub->summary.event_id_holes++;
          sub->summary.lost_events += lost;
          report (sub, source,
                  g_dngettext (KVT_GETTEXT_PACKAGE,
                               "message %" PRIu64 ": event_id jumped from %" PRIu64 " to %" PRIu64
                               ": %" PRIu64 " event lost",
                               "message %" PRIu64 ": event_id jumped from %" PRIu64 " to %" PRIu64
                               ": %" PRIu64 " events lost",
                               (gulong) MIN (lost, G_MAXULONG)),
                  sequence, source->last_event_id, event_id, lost);
        }
    }
  else if (source->have_event_id)
    {
      sub->summary.event_id_backwards++;
      report (sub, source,
              _ ("message %" PRIu64 ": event_id went back from %" PRIu64 " to %" PRIu64), sequence,
              source->last_event_id, event_id);
    }
  source->have_event_id = TRUE;
  source->last_event_id = event_id;
}

static void
print_event (const Sub *sub, const KvtEvent *event)
{
  if (!sub->quiet && !output_abandoned ())
    {
      fputs (event->line, stdout);
      putc ('\n', stdout);
    }
}

/* Counts and prints one message, in stream order. */
static void
emit_message (Sub *sub, Source *source, const KvtMessage *message)
{
  guint i;

  sub->summary.messages++;
  if (message->error != NULL)
    {
      sub->summary.malformed_messages++;
      sub->counted++;
      if (message->has_sequence)
        report (sub, source, _ ("message %" PRIu64 " skipped: %s"), message->sequence,
                message->error);
      else
        report (sub, source, _ ("message skipped: %s"), message->error);
      return;
    }
  /* kvevents(7), HEARTBEATS: a message with no event keeps the sequence
   * going while the publisher has nothing to say. */
  if (message->events->len == 0)
    {
      sub->summary.heartbeats++;
      return;
    }

  /* In message order, skipped events included: --count stops where the
   * stream says, and a skipped event that carried an event_id arrived,
   * so the next one's is no hole. */
  for (i = 0; i < message->events->len && !count_reached (sub); i++)
    {
      const KvtEvent *event = g_ptr_array_index (message->events, i);

      if (event->has_event_id)
        track_event_id (sub, source, message->sequence, event->event_id);
      if (event->superseded
          || (source->have_barrier && event->has_event_id && event->event_id <= source->barrier))
        {
          sub->summary.superseded_events++;
          continue;
        }
      sub->counted++;
      if (event->error != NULL)
        {
          sub->summary.bad_events++;
          report (sub, source, _ ("message %" PRIu64 ": %s; skipped"), message->sequence,
                  event->error);
          continue;
        }
      sub->summary.events++;
      sub->summary.by_kind[event->kind]++;
      if (sub->state != NULL)
        kvt_state_apply (sub->state, event);
      print_event (sub, event);
    }
}

#ifdef HAVE_ZMQ
static gboolean replay_start (Sub *sub, Source *source, KvtMessage *message);
static void release_held (Sub *sub, Source *source);
#endif

/* A live message, in the order it came: printed now, or, when it shows a
 * gap that replay can fill, held until the replay ends.  Takes message. */
static void
take_live (Sub *sub, Source *source, KvtMessage *message)
{
  guint64 lost = sub->summary.lost_messages, restarts = sub->summary.restarts;

  track_publisher (sub, source, message);
#ifdef HAVE_ZMQ
  if (message->has_sequence && source->have_sequence && message->sequence > source->last_sequence
      && message->sequence - source->last_sequence > 1 && source->replay_socket != NULL
      && !sub->replay_closed && replay_start (sub, source, message))
    return;
#endif
  if (message->has_sequence)
    track_sequence (sub, source, message->sequence);
  emit_message (sub, source, message);
  kvt_message_free (message);
  /* What the stream lost for good, or a new publisher's state, only a
   * snapshot brings back. */
  if (sub->summary.lost_messages > lost || sub->summary.restarts > restarts)
    source->snapshot_wanted = source->snapshot_socket != NULL;
}

/* A gap that replay filled whole is no problem: nothing was lost. */
static guint64
problems (const Summary *summary)
{
  return summary->malformed_messages + summary->bad_events + summary->lost_messages
         + summary->restarts + summary->event_id_holes + summary->event_id_backwards;
}

static void
print_summary (const Summary *summary)
{
  g_printerr (_ ("%s: summary\n"), g_get_prgname ());
  g_printerr (_ ("  messages:        %" PRIu64 " (%" PRIu64 " malformed)\n"), summary->messages,
              summary->malformed_messages);
  g_printerr (_ ("  events:          %" PRIu64 " (stored %" PRIu64 ", removed %" PRIu64
                 ", cleared %" PRIu64 ")\n"),
              summary->events, summary->by_kind[KVT_EVENT_STORED],
              summary->by_kind[KVT_EVENT_REMOVED], summary->by_kind[KVT_EVENT_CLEARED]);
  g_printerr (_ ("  heartbeats:      %" PRIu64 " (%" PRIu64 " silences)\n"), summary->heartbeats,
              summary->heartbeat_silences);
  g_printerr (_ ("  sequence gaps:   %" PRIu64 " (%" PRIu64 " numbers skipped)\n"),
              summary->sequence_gaps, summary->skipped_sequence_numbers);
  g_printerr (_ ("  replay:          %" PRIu64 " messages recovered in %" PRIu64
                 " requests (%" PRIu64 " failed)\n"),
              summary->recovered_messages, summary->replay_requests, summary->replay_failures);
  g_printerr (_ ("  lost:            %" PRIu64 " sequence numbers not recovered\n"),
              summary->lost_messages);
  g_printerr (_ ("  snapshots:       %" PRIu64 " (%" PRIu64 " failed), %" PRIu64 " events; %" PRIu64
                 " live events already in one\n"),
              summary->snapshots, summary->snapshot_failures, summary->snapshot_events,
              summary->superseded_events);
  g_printerr (_ ("  restarts:        %" PRIu64 "\n"), summary->restarts);
  g_printerr (
      _ ("  event_id holes:  %" PRIu64 " (%" PRIu64 " events lost, %" PRIu64 " times backwards)\n"),
      summary->event_id_holes, summary->lost_events, summary->event_id_backwards);
  g_printerr (_ ("  decode errors:   %" PRIu64 " (%" PRIu64 " messages, %" PRIu64 " events)\n"),
              summary->malformed_messages + summary->bad_events, summary->malformed_messages,
              summary->bad_events);
}

static gboolean
write_summary_json (const Summary *summary, const char *path, GError **error)
{
  g_autoptr (GString) json = g_string_new ("{");

#define FIELD(name, value)                                                                         \
  g_string_append_printf (json, "%s\"%s\": %" PRIu64, json->len > 1 ? ", " : "", name,             \
                          (guint64) (value))
  FIELD ("messages", summary->messages);
  FIELD ("malformed_messages", summary->malformed_messages);
  FIELD ("events", summary->events);
  FIELD ("stored", summary->by_kind[KVT_EVENT_STORED]);
  FIELD ("removed", summary->by_kind[KVT_EVENT_REMOVED]);
  FIELD ("cleared", summary->by_kind[KVT_EVENT_CLEARED]);
  FIELD ("bad_events", summary->bad_events);
  FIELD ("decode_errors", summary->malformed_messages + summary->bad_events);
  FIELD ("heartbeats", summary->heartbeats);
  FIELD ("heartbeat_silences", summary->heartbeat_silences);
  FIELD ("sequence_gaps", summary->sequence_gaps);
  FIELD ("skipped_sequence_numbers", summary->skipped_sequence_numbers);
  FIELD ("replay_requests", summary->replay_requests);
  FIELD ("replay_failures", summary->replay_failures);
  FIELD ("recovered_messages", summary->recovered_messages);
  FIELD ("lost_messages", summary->lost_messages);
  FIELD ("restarts", summary->restarts);
  FIELD ("event_id_holes", summary->event_id_holes);
  FIELD ("lost_events", summary->lost_events);
  FIELD ("event_id_backwards", summary->event_id_backwards);
  FIELD ("snapshots", summary->snapshots);
  FIELD ("snapshot_failures", summary->snapshot_failures);
  FIELD ("snapshot_events", summary->snapshot_events);
  FIELD ("superseded_events", summary->superseded_events);
#undef FIELD
  g_string_append (json, "}\n");

  return kvt_write_in_place (path, json, error);
}

/* --state, at the end and on SIGUSR1. */
static gboolean
write_state (const Sub *sub)
{
  g_autoptr (GError) error = NULL;

  if (sub->state == NULL || kvt_state_write (sub->state, sub->state_path, &error))
    return TRUE;
  g_printerr ("%s: %s\n", g_get_prgname (), error->message);
  return FALSE;
}

#ifdef HAVE_ZMQ

static void
source_close (Source *source)
{
  /* The monitor stops before its socket closes: an event the closing
   * socket still reported to a closed monitor leaked its address frame
   * (LeakSanitizer, now and then, under load). */
  if (source->monitor != NULL && source->socket != NULL)
    zmq_socket_monitor (source->socket, NULL, 0);
  if (source->monitor != NULL)
    zmq_close (source->monitor);
  if (source->socket != NULL)
    zmq_close (source->socket);
  if (source->replay_socket != NULL)
    zmq_close (source->replay_socket);
  if (source->snapshot_socket != NULL)
    zmq_close (source->snapshot_socket);
  source->monitor = source->socket = source->replay_socket = source->snapshot_socket = NULL;
}

/* A socket of type for endpoint, with the options every one of
 * kvevents-sub's has; not connected yet, so that the caller can set what
 * must come before. */
static void *
socket_new (Sub *sub, int type, const char *endpoint, GError **error)
{
  void *socket;

  if (!kvev_connect_endpoint_is_valid (endpoint))
    {
      g_set_error (error, KVT_ERROR, KVT_ERROR_USAGE,
                   _ ("Cannot connect to %s: a tcp:// endpoint needs a PORT from 1 to 65535 "
                      "(and an IPv6 host its closing bracket)"),
                   endpoint);
      return NULL;
    }
  socket = zmq_socket (sub->context, type);
  if (socket == NULL)
    {
      g_set_error (error, KVT_ERROR, KVT_ERROR_FAILED, _ ("Cannot create a %s socket: %s"),
                   type == ZMQ_SUB ? "SUB" : "DEALER", zmq_strerror (zmq_errno ()));
      return NULL;
    }
  if (!kvt_socket_set_int (socket, ZMQ_LINGER, "ZMQ_LINGER", 0, error)
      /* Without it a tcp://[v6 address] endpoint never connects, and
       * ZeroMQ says nothing. */
      || !kvt_socket_set_int (socket, ZMQ_IPV6, "ZMQ_IPV6", kvev_endpoint_is_ipv6 (endpoint),
                              error))
    goto fail;
  /* The server key makes the socket a CURVE client; like every option
   * that shapes the handshake, it is set before connecting.  The replay
   * socket has the live one's keys (kvevents(7), REPLAY). */
  if (sub->curve
      && (zmq_setsockopt (socket, ZMQ_CURVE_SERVERKEY, sub->curve_server_key, KVEV_KEY_BYTES) != 0
          || zmq_setsockopt (socket, ZMQ_CURVE_PUBLICKEY, sub->curve_public_key, KVEV_KEY_BYTES)
                 != 0
          || zmq_setsockopt (socket, ZMQ_CURVE_SECRETKEY, sub->curve_secret_key, KVEV_KEY_BYTES)
                 != 0))
    {
      g_set_error (error, KVT_ERROR, KVT_ERROR_FAILED, _ ("Cannot set the CURVE keys: %s"),
                   zmq_strerror (zmq_errno ()));
      goto fail;
    }
  return socket;

fail:
  zmq_close (socket);
  return NULL;
}

static gboolean
socket_connect (void *socket, const char *endpoint, GError **error)
{
  int failure;

  if (zmq_connect (socket, endpoint) == 0)
    return TRUE;
  failure = zmq_errno ();
  /* An endpoint ZeroMQ cannot parse, or whose transport it lacks, is a
   * wrong command line, as kvevents-pub says of its own. */
  g_set_error (error, KVT_ERROR,
               failure == EINVAL || failure == EPROTONOSUPPORT || failure == ENOCOMPATPROTO
                   ? KVT_ERROR_USAGE
                   : KVT_ERROR_FAILED,
               _ ("Cannot connect to %s: %s"), endpoint, zmq_strerror (failure));
  return FALSE;
}

/* A DEALER that asks a replay or snapshot endpoint; ZeroMQ connects it in
 * the background, and queues a request until it is. */
static gboolean
dealer_open (Sub *sub, const char *endpoint, void **dealer, GError **error)
{
  void *socket = socket_new (sub, ZMQ_DEALER, endpoint, error);

  if (socket == NULL)
    return FALSE;
  if (!socket_connect (socket, endpoint, error))
    {
      zmq_close (socket);
      return FALSE;
    }
  *dealer = socket;
  return TRUE;
}

/* A request given up on: what it still sends would be taken for the
 * answer to the next one, so the socket is made anew. */
static void
dealer_reset (Sub *sub, Source *source, const char *endpoint, void **dealer)
{
  g_autoptr (GError) error = NULL;

  zmq_close (*dealer);
  *dealer = NULL;
  if (!dealer_open (sub, endpoint, dealer, &error))
    report (sub, source, _ ("no more requests to %s: %s"), endpoint, error->message);
}

static gboolean
source_open (Sub *sub, Source *source, guint index, GError **error)
{
  source->socket = socket_new (sub, ZMQ_SUB, source->endpoint, error);
  if (source->socket == NULL
      || !kvt_socket_set_int (source->socket, ZMQ_RCVHWM, "ZMQ_RCVHWM", sub->rcvhwm, error))
    return FALSE;

  if (sub->topics == NULL)
    zmq_setsockopt (source->socket, ZMQ_SUBSCRIBE, "", 0);
  else
    for (char **topic = sub->topics; *topic != NULL; topic++)
      zmq_setsockopt (source->socket, ZMQ_SUBSCRIBE, *topic, strlen (*topic));

  /* --until-disconnect watches the connection through a monitor: the
   * publisher closing is the one end of stream a SUB socket can see.  With
   * CURVE the monitor also tells a refused handshake, which would
   * otherwise look like a publisher with nothing to say. */
  if (sub->until_disconnect || sub->curve)
    {
      g_autofree char *address = g_strdup_printf ("inproc://kvevents-sub-monitor-%u", index);
      int events = ZMQ_EVENT_CONNECTED | ZMQ_EVENT_DISCONNECTED;

      if (sub->curve)
        events |= ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL
                  | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH;
      if (zmq_socket_monitor (source->socket, address, events) != 0
          || (source->monitor = zmq_socket (sub->context, ZMQ_PAIR)) == NULL
          || zmq_connect (source->monitor, address) != 0)
        {
          g_set_error (error, KVT_ERROR, KVT_ERROR_FAILED,
                       _ ("Cannot watch the connection to %s: %s"), source->endpoint,
                       zmq_strerror (zmq_errno ()));
          return FALSE;
        }
    }

  if (!socket_connect (source->socket, source->endpoint, error)
      || (source->replay_endpoint != NULL
          && !dealer_open (sub, source->replay_endpoint, &source->replay_socket, error))
      || (source->snapshot_endpoint != NULL
          && !dealer_open (sub, source->snapshot_endpoint, &source->snapshot_socket, error)))
    return FALSE;
  /* The first live message is taken after a snapshot. */
  source->snapshot_wanted = source->snapshot_socket != NULL;
  /* ZeroMQ connects in the background, and retries until the publisher is
   * there: this says the subscription stands, not that it is served. */
  if (!sub->quiet)
    g_printerr (_ ("%s: subscribed to %s\n"), g_get_prgname (), source->endpoint);
  return TRUE;
}

/* Asks the replay endpoint for what is missing before message, which then
 * waits at the head of held.  FALSE when the request could not be sent:
 * the gap is then lost at once. */
static gboolean
replay_start (Sub *sub, Source *source, KvtMessage *message)
{
  guint64 from = source->last_sequence + 1;

  if (!kvt_replay_client_request (source->replay_socket, from))
    {
      report (sub, source, _ ("cannot ask %s for a replay: %s"), source->replay_endpoint,
              zmq_strerror (zmq_errno ()));
      return FALSE;
    }
  sub->summary.replay_requests++;
  sub->summary.sequence_gaps++;
  sub->summary.skipped_sequence_numbers += message->sequence - from;
  source->replaying = TRUE;
  source->replay_from = from;
  source->replay_until = message->sequence;
  source->replay_recovered = 0;
  source->replay_deadline = g_get_monotonic_time () + (gint64) sub->replay_timeout_ms * 1000;
  g_queue_push_head (&source->held, message);
  return TRUE;
}

/* What stayed lost of a replay that ended as end says. */
static void
report_replay_loss (Sub *sub, Source *source, ReplayEnd end, guint64 lost)
{
  guint64 from = source->replay_from - 1, until = source->replay_until;
  guint64 missing = until - from - 1;
  gulong n = (gulong) MIN (lost, G_MAXULONG);

  switch (end)
    {
    case REPLAY_FOREIGN:
      report (sub, source,
              g_dngettext (KVT_GETTEXT_PACKAGE,
                           "sequence jumped from %" PRIu64 " to %" PRIu64
                           ": the replay came from another publisher_id; %" PRIu64 " number lost",
                           "sequence jumped from %" PRIu64 " to %" PRIu64
                           ": the replay came from another publisher_id; %" PRIu64 " numbers lost",
                           n),
              from, until, lost);
      break;
    case REPLAY_TIMEOUT:
      report (sub, source,
              g_dngettext (KVT_GETTEXT_PACKAGE,
                           "sequence jumped from %" PRIu64 " to %" PRIu64
                           ": %s did not answer the replay within %d ms; %" PRIu64 " of %" PRIu64
                           " missing number lost",
                           "sequence jumped from %" PRIu64 " to %" PRIu64
                           ": %s did not answer the replay within %d ms; %" PRIu64 " of %" PRIu64
                           " missing numbers lost",
                           n),
              from, until, source->replay_endpoint, sub->replay_timeout_ms, lost, missing);
      break;
    case REPLAY_MALFORMED:
      report (sub, source,
              g_dngettext (KVT_GETTEXT_PACKAGE,
                           "sequence jumped from %" PRIu64 " to %" PRIu64
                           ": %s sent a replay reply that is not [\"\", topic, sequence, "
                           "payload]; %" PRIu64 " of %" PRIu64 " missing number lost",
                           "sequence jumped from %" PRIu64 " to %" PRIu64
                           ": %s sent a replay reply that is not [\"\", topic, sequence, "
                           "payload]; %" PRIu64 " of %" PRIu64 " missing numbers lost",
                           n),
              from, until, source->replay_endpoint, lost, missing);
      break;
    case REPLAY_STOPPED:
      report (sub, source,
              g_dngettext (KVT_GETTEXT_PACKAGE,
                           "sequence jumped from %" PRIu64 " to %" PRIu64
                           ": stopped before the replay ended; %" PRIu64 " of %" PRIu64
                           " missing number lost",
                           "sequence jumped from %" PRIu64 " to %" PRIu64
                           ": stopped before the replay ended; %" PRIu64 " of %" PRIu64
                           " missing numbers lost",
                           n),
              from, until, lost, missing);
      break;
    case REPLAY_COMPLETE:
    case REPLAY_END:
    case REPLAY_REACHED:
    default:
      report (sub, source,
              g_dngettext (KVT_GETTEXT_PACKAGE,
                           "sequence jumped from %" PRIu64 " to %" PRIu64
                           ": replay recovered %" PRIu64 " of %" PRIu64 " missing; %" PRIu64
                           " number lost (no longer in the replay buffer, or an event the "
                           "publisher dropped)",
                           "sequence jumped from %" PRIu64 " to %" PRIu64
                           ": replay recovered %" PRIu64 " of %" PRIu64 " missing; %" PRIu64
                           " numbers lost (no longer in the replay buffer, or events the "
                           "publisher dropped)",
                           n),
              from, until, source->replay_recovered, missing, lost);
      break;
    }
}

/* Ends the replay in flight: whatever it did not fill is lost, and the
 * live messages held meanwhile follow in order. */
static void
replay_finish (Sub *sub, Source *source, ReplayEnd end)
{
  guint64 lost = source->replay_until - source->replay_from - source->replay_recovered;

  source->replaying = FALSE;
  if (end == REPLAY_TIMEOUT || end == REPLAY_MALFORMED)
    sub->summary.replay_failures++;
  /* A reply goes on to the newest message it holds, and a publisher
   * waits for a reader that does not take it: the rest of a reply ended
   * early is refused by closing the socket, so that the publisher serves
   * the next request at once, and a late answer cannot be taken for the
   * next one. */
  if (end != REPLAY_END)
    dealer_reset (sub, source, source->replay_endpoint, &source->replay_socket);
  if (lost > 0)
    {
      sub->summary.lost_messages += lost;
      report_replay_loss (sub, source, end, lost);
      source->snapshot_wanted = source->snapshot_socket != NULL;
    }
  source->have_sequence = TRUE;
  source->last_sequence = source->replay_until - 1;
  release_held (sub, source);
}

static gboolean
topic_wanted (const Sub *sub, const KvtFrame *topic)
{
  if (sub->topics == NULL)
    return TRUE;
  for (char **prefix = sub->topics; *prefix != NULL; prefix++)
    {
      gsize len = strlen (*prefix);

      if (topic->size >= len && memcmp (topic->data, *prefix, len) == 0)
        return TRUE;
    }
  return FALSE;
}

/* One replayed message: printed when it is one that is missing, in order;
 * the replay ends at the last missing one or at the live message held. */
static void
replay_take (Sub *sub, Source *source, const KvtFrame frames[3])
{
  const char *label = sub->sources->len > 1 ? source->endpoint : NULL;
  g_autoptr (KvtMessage) message = kvt_decode_message (frames, 3, sub->format, label);

  if (message->sequence <= source->last_sequence)
    return;
  if (message->sequence >= source->replay_until)
    {
      replay_finish (sub, source, REPLAY_REACHED);
      return;
    }
  if (message->publisher_id != NULL && source->publisher_id != NULL
      && strcmp (message->publisher_id, source->publisher_id) != 0)
    {
      replay_finish (sub, source, REPLAY_FOREIGN);
      return;
    }
  source->replay_recovered++;
  sub->summary.recovered_messages++;
  source->last_sequence = message->sequence;
  /* A SUB socket filters by topic; a replay sends all of them. */
  if (topic_wanted (sub, &frames[0]))
    emit_message (sub, source, message);
  if (message->sequence == source->replay_until - 1)
    replay_finish (sub, source, REPLAY_COMPLETE);
}

/* The first retry of a snapshot that failed, and the longest wait. */
#define SNAPSHOT_RETRY_MS G_GINT64_CONSTANT (1000)
#define SNAPSHOT_RETRY_MAX_MS G_GINT64_CONSTANT (30000)

/* Live messages wait while a replay or a snapshot runs. */
static gboolean
source_busy (const Source *source)
{
  return source->replaying || source->snapshotting;
}

static void
snapshot_start (Sub *sub, Source *source)
{
  source->snapshot_wanted = FALSE;
  if (!kvt_snapshot_client_request (source->snapshot_socket))
    {
      sub->summary.snapshot_failures++;
      report (sub, source, _ ("cannot ask %s for a snapshot: %s"), source->snapshot_endpoint,
              zmq_strerror (zmq_errno ()));
      return;
    }
  source->snapshotting = TRUE;
  source->snapshot_deadline = g_get_monotonic_time () + (gint64) sub->snapshot_timeout_ms * 1000;
  g_clear_pointer (&source->incoming_backend, g_free);
  source->incoming = kvt_state_new ();
}

/* The held messages of the other endpoints arrived before source's
 * snapshot took the place of backend: what their events say of it is
 * already out of date, as what those endpoints said before was replaced
 * with it.  A master that failed over to another endpoint leaves such
 * messages behind while its own snapshot is asked for in vain. */
static void
supersede_held (Sub *sub, const Source *source, const char *backend)
{
  guint i;

  for (i = 0; i < sub->sources->len; i++)
    {
      Source *other = g_ptr_array_index (sub->sources, i);
      GList *link;

      if (other == source)
        continue;
      for (link = other->held.head; link != NULL; link = link->next)
        {
          KvtMessage *message = link->data;
          guint j;

          for (j = 0; message->events != NULL && j < message->events->len; j++)
            {
              KvtEvent *event = g_ptr_array_index (message->events, j);

              if (event->backend_id != NULL && strcmp (event->backend_id, backend) == 0)
                event->superseded = TRUE;
            }
        }
    }
}

/* A snapshot that came whole takes the place of what was known of its
 * backend, and the live events at or below its barrier are dropped as
 * already in it; one that did not leaves the state as it was. */
static void
snapshot_finish (Sub *sub, Source *source, gboolean whole)
{
  source->snapshotting = FALSE;
  if (whole)
    {
      sub->summary.snapshots++;
      source->have_barrier = TRUE;
      source->barrier = source->incoming_barrier;
      if (sub->state != NULL)
        kvt_state_replace_backend (sub->state, source->incoming_backend, source->incoming);
      supersede_held (sub, source, source->incoming_backend);
    }
  else
    {
      /* Tried again later, more and more rarely: a master that has just
       * started may not have set its snapshot function yet, and one whose
       * walk failed may succeed the next time. */
      gint64 delay_ms = MIN (SNAPSHOT_RETRY_MS << MIN (source->snapshot_failed_in_row, 5),
                             SNAPSHOT_RETRY_MAX_MS);

      sub->summary.snapshot_failures++;
      source->snapshot_failed_in_row++;
      source->snapshot_retry_at = g_get_monotonic_time () + delay_ms * 1000;
      dealer_reset (sub, source, source->snapshot_endpoint, &source->snapshot_socket);
    }
  if (whole)
    {
      source->snapshot_failed_in_row = 0;
      source->snapshot_retry_at = 0;
    }
  g_clear_pointer (&source->incoming, kvt_state_free);
  g_clear_pointer (&source->incoming_backend, g_free);
}

/* The live messages held, in order, until a replay or snapshot starts. */
static void
release_held (Sub *sub, Source *source)
{
  for (;;)
    {
      if (source->snapshot_wanted && !source_busy (source) && !sub->replay_closed)
        snapshot_start (sub, source);
      if (source_busy (source) || g_queue_is_empty (&source->held))
        return;
      take_live (sub, source, g_queue_pop_head (&source->held));
    }
}

/* A JSON value of a header map as a number. */
static gboolean
member_uint (GHashTable *members, const char *name, guint64 *value)
{
  const char *text = g_hash_table_lookup (members, name);

  return text != NULL && g_ascii_string_to_unsigned (text, 10, 0, G_MAXUINT64, value, NULL);
}

static gboolean
snapshot_header (Source *source, const KvtFrame *body)
{
  g_autoptr (GHashTable) members = kvt_decode_map (body->data, body->size);
  const char *backend = members != NULL ? g_hash_table_lookup (members, "backend_id") : NULL;

  if (backend == NULL || backend[0] != '"'
      || !member_uint (members, "barrier_event_id", &source->incoming_barrier))
    return FALSE;
  source->incoming_backend = g_strdup (backend);
  return TRUE;
}

static gboolean
snapshot_chunk (Sub *sub, Source *source, const KvtFrame *body)
{
  const char *label = sub->sources->len > 1 ? source->endpoint : NULL;
  g_autoptr (KvtMessage) chunk
      = kvt_decode_snapshot_chunk (body->data, body->size, sub->format, label);
  guint i;

  if (chunk->error != NULL)
    {
      report (sub, source, _ ("a chunk of the snapshot from %s is unusable: %s"),
              source->snapshot_endpoint, chunk->error);
      return FALSE;
    }
  for (i = 0; i < chunk->events->len; i++)
    {
      const KvtEvent *event = g_ptr_array_index (chunk->events, i);

      if (event->error != NULL || event->kind != KVT_EVENT_STORED
          || !kvt_state_apply (source->incoming, event))
        {
          report (sub, source, _ ("an event of the snapshot from %s is unusable: %s"),
                  source->snapshot_endpoint,
                  event->error != NULL ? event->error : _ ("not a stored event of an object"));
          return FALSE;
        }
      sub->summary.snapshot_events++;
      print_event (sub, event);
    }
  return TRUE;
}

static void
read_snapshot (Sub *sub, Source *source)
{
  g_autoptr (GArray) parts = kvt_parts_new ();
  guint taken = 0;

  while (source->snapshot_socket != NULL && taken++ < 256)
    {
      KvtFrame body;
      KvtSnapshotReply reply = kvt_snapshot_client_receive (source->snapshot_socket, parts, &body);
      g_autoptr (GHashTable) members = NULL;

      if (reply == KVT_SNAPSHOT_NOTHING)
        break;
      /* An answer nobody asked for. */
      if (!source->snapshotting)
        continue;
      source->snapshot_deadline
          = g_get_monotonic_time () + (gint64) sub->snapshot_timeout_ms * 1000;
      if (reply == KVT_SNAPSHOT_HEADER && source->incoming_backend == NULL
          && snapshot_header (source, &body))
        continue;
      if (reply == KVT_SNAPSHOT_CHUNK && source->incoming_backend != NULL)
        {
          if (!snapshot_chunk (sub, source, &body))
            snapshot_finish (sub, source, FALSE);
          continue;
        }
      if (reply == KVT_SNAPSHOT_END && source->incoming_backend != NULL)
        {
          report (sub, source, _ ("snapshot from %s: %u entries, barrier event_id %" PRIu64),
                  source->snapshot_endpoint, kvt_state_size (source->incoming),
                  source->incoming_barrier);
          snapshot_finish (sub, source, TRUE);
        }
      else if (reply == KVT_SNAPSHOT_ERROR)
        {
          const char *text;
          g_autofree char *reason = NULL;

          members = kvt_decode_map (body.data, body.size);
          text = members != NULL ? g_hash_table_lookup (members, "message") : NULL;
          /* The message as it was sent: a JSON string without its quotes. */
          if (text != NULL && text[0] == '"' && strlen (text) >= 2)
            reason = g_strndup (text + 1, strlen (text) - 2);
          report (sub, source, _ ("%s could not make a snapshot: %s"), source->snapshot_endpoint,
                  reason != NULL ? reason
                  : text != NULL ? text
                                 : _ ("no reason given"));
          snapshot_finish (sub, source, FALSE);
        }
      else
        {
          report (
              sub, source,
              _ ("%s sent a snapshot reply that is not [\"\", header, map], "
                 "[\"\", chunk, payload], [\"\", end, map] or [\"\", error, map] in that order"),
              source->snapshot_endpoint);
          snapshot_finish (sub, source, FALSE);
        }
      release_held (sub, source);
    }
  kvt_parts_clear (parts);
}

static void
read_replay (Sub *sub, Source *source)
{
  g_autoptr (GArray) parts = kvt_parts_new ();
  guint taken = 0;

  while (source->replay_socket != NULL && taken++ < 256 && !count_reached (sub))
    {
      KvtFrame frames[3];
      KvtReplayReply reply = kvt_replay_client_receive (source->replay_socket, parts, frames);

      if (reply == KVT_REPLAY_NOTHING)
        break;
      /* An answer nobody asked for. */
      if (!source->replaying)
        continue;
      source->replay_deadline = g_get_monotonic_time () + (gint64) sub->replay_timeout_ms * 1000;
      if (reply == KVT_REPLAY_END)
        replay_finish (sub, source, REPLAY_END);
      else if (reply == KVT_REPLAY_MALFORMED)
        replay_finish (sub, source, REPLAY_MALFORMED);
      else
        replay_take (sub, source, frames);
    }
  kvt_parts_clear (parts);
}

/* Receives one whole message without waiting.  FALSE when there was none. */
static gboolean
receive_one (Sub *sub, Source *source)
{
  g_autoptr (GArray) parts = kvt_parts_new ();
  g_autofree KvtFrame *frames = NULL;
  const char *label = sub->sources->len > 1 ? source->endpoint : NULL;
  KvtMessage *message;
  guint i;

  if (!kvt_socket_receive_parts (source->socket, parts))
    return FALSE;
  source->last_arrival = g_get_monotonic_time ();
  source->silence_reported = FALSE;
  /* Never an endpoint's first message: a loss before it cannot be seen,
   * by kvevents-sub or by any subscriber. */
  if (sub->test_drop != NULL && source->arrived++ > 0
      && g_rand_double (sub->test_drop) * 100 < sub->test_drop_percent)
    {
      kvt_parts_clear (parts);
      return TRUE;
    }
  frames = g_new (KvtFrame, parts->len);
  for (i = 0; i < parts->len; i++)
    {
      zmq_msg_t *part = &g_array_index (parts, zmq_msg_t, i);

      frames[i].data = zmq_msg_data (part);
      frames[i].size = zmq_msg_size (part);
    }
  message = kvt_decode_message (frames, parts->len, sub->format, label);
  kvt_parts_clear (parts);
  g_queue_push_tail (&source->held, message);
  release_held (sub, source);
  return TRUE;
}

/* A failed CURVE handshake, once until one succeeds: ZeroMQ retries
 * every tenth of a second.  A connection lost in the handshake (a
 * publisher that is closing, or one that could not read the hello made
 * for another server key) is superseded by what the publisher said. */
static void
report_handshake_failure (Sub *sub, Source *source, guint16 code, guint32 value)
{
  if (source->handshake_failure == code
      || (source->handshake_failure != 0
          && source->handshake_failure != ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL))
    return;
  source->handshake_failure = code;
  if (code == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH)
    report (sub, source,
            _ ("the publisher refused this subscriber's CURVE key (status %u): is its public key "
               "in the publisher's allowed-clients file?"),
            (unsigned) value);
  else if (code == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL)
    report (sub, source,
            _ ("the CURVE handshake failed (protocol error 0x%x): does the publisher use CURVE?"),
            (unsigned) value);
  else
    report (sub, source,
            _ ("the connection was lost in the CURVE handshake: is --curve-server-key the "
               "publisher's public key?"));
}

static void
read_monitor (Sub *sub, Source *source)
{
  /* With CURVE a connection counts once its handshake succeeded: a
   * refused one is connected and disconnected too. */
  guint16 up = sub->curve ? ZMQ_EVENT_HANDSHAKE_SUCCEEDED : ZMQ_EVENT_CONNECTED;

  for (;;)
    {
      zmq_msg_t event, address;
      guint16 code = 0;
      guint32 value = 0;

      zmq_msg_init (&event);
      if (zmq_msg_recv (&event, source->monitor, ZMQ_DONTWAIT) < 0)
        {
          zmq_msg_close (&event);
          return;
        }
      /* Frame 1: a 16-bit event in host order, then a 32-bit value;
       * frame 2: the endpoint. */
      if (zmq_msg_size (&event) >= sizeof code + sizeof value)
        {
          memcpy (&code, zmq_msg_data (&event), sizeof code);
          memcpy (&value, (const char *) zmq_msg_data (&event) + sizeof code, sizeof value);
        }
      if (zmq_msg_more (&event))
        {
          zmq_msg_init (&address);
          zmq_msg_recv (&address, source->monitor, 0);
          zmq_msg_close (&address);
        }
      zmq_msg_close (&event);

      if (code == up)
        {
          source->ever_connected = TRUE;
          source->connections++;
          source->handshake_failure = 0;
        }
      else if (code == ZMQ_EVENT_DISCONNECTED && source->connections > 0)
        source->connections--;
      else if (code == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL
               || code == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL
               || code == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH)
        report_handshake_failure (sub, source, code, value);
    }
}

static gboolean
all_disconnected (const Sub *sub)
{
  guint i;

  for (i = 0; i < sub->sources->len; i++)
    {
      const Source *source = g_ptr_array_index (sub->sources, i);

      if (!source->ever_connected || source->connections > 0)
        return FALSE;
    }
  return TRUE;
}

/* Takes what the sockets already hold.  A publisher's last messages are
 * in its socket's pipe before its disconnection is reported, so after the
 * report they are all here. */
static void
drain (Sub *sub)
{
  guint i;

  for (i = 0; i < sub->sources->len && !count_reached (sub); i++)
    while (!count_reached (sub) && receive_one (sub, g_ptr_array_index (sub->sources, i)))
      ;
}

static gboolean
any_busy (const Sub *sub)
{
  guint i;

  for (i = 0; i < sub->sources->len; i++)
    if (source_busy (g_ptr_array_index (sub->sources, i)))
      return TRUE;
  return FALSE;
}

/* Timeouts that do not wait for a message: a replay that stopped
 * answering, and a publisher silent for 3 heartbeat intervals.  Returns
 * how long the next one may still take, in ms, at most wait_ms. */
static long
check_timers (Sub *sub, long wait_ms)
{
  gint64 now = g_get_monotonic_time ();
  guint i;

  for (i = 0; i < sub->sources->len; i++)
    {
      Source *source = g_ptr_array_index (sub->sources, i);
      gint64 silence_us = (gint64) sub->heartbeat_ms * 3000;

      if (source->replaying && now >= source->replay_deadline)
        replay_finish (sub, source, REPLAY_TIMEOUT);
      if (source->replaying)
        wait_ms = MIN (wait_ms, (long) ((source->replay_deadline - now) / 1000 + 1));
      if (source->snapshotting && now >= source->snapshot_deadline)
        {
          report (sub, source, _ ("%s did not answer the snapshot within %d ms"),
                  source->snapshot_endpoint, sub->snapshot_timeout_ms);
          snapshot_finish (sub, source, FALSE);
          release_held (sub, source);
        }
      if (source->snapshotting)
        wait_ms = MIN (wait_ms, (long) ((source->snapshot_deadline - now) / 1000 + 1));
      if (source->snapshot_retry_at != 0 && now >= source->snapshot_retry_at)
        {
          source->snapshot_retry_at = 0;
          source->snapshot_wanted = source->snapshot_socket != NULL;
          release_held (sub, source);
        }
      if (source->snapshot_retry_at != 0)
        wait_ms = MIN (wait_ms, (long) ((source->snapshot_retry_at - now) / 1000 + 1));
      if (sub->heartbeat_ms > 0 && !source->silence_reported)
        {
          if (now - source->last_arrival >= silence_us)
            {
              source->silence_reported = TRUE;
              sub->summary.heartbeat_silences++;
              report (sub, source,
                      _ ("nothing came for %" PRId64
                         " ms, 3 intervals of --heartbeat-ms, not even a heartbeat: is the "
                         "publisher running, with kv_events_heartbeat_ms?"),
                      silence_us / 1000);
            }
          else
            wait_ms = MIN (wait_ms, (long) ((source->last_arrival + silence_us - now) / 1000 + 1));
        }
    }
  return wait_ms;
}

/* At the end: a replay still in flight has lost what it did not bring,
 * and the messages it held follow (unless --count was reached: they are
 * not wanted then). */
static void
finish_replays (Sub *sub)
{
  guint i;

  sub->replay_closed = TRUE;
  for (i = 0; i < sub->sources->len; i++)
    {
      Source *source = g_ptr_array_index (sub->sources, i);

      if (source->replaying && !count_reached (sub) && stop_signal == 0)
        replay_finish (sub, source, REPLAY_STOPPED);
      source->replaying = FALSE;
      if (source->snapshotting)
        {
          report (sub, source, _ ("stopped before the snapshot from %s ended"),
                  source->snapshot_endpoint);
          snapshot_finish (sub, source, FALSE);
        }
      g_queue_clear_full (&source->held, (GDestroyNotify) kvt_message_free);
    }
}

/* The sockets a source polls: live, monitor, replay, snapshot. */
#define ITEMS 4

static gboolean
run (Sub *sub, GError **error)
{
  /* The sockets of source i are items[ITEMS * i] on: live, monitor,
   * replay, snapshot.
   * An item without a socket would be polled as file descriptor 0, and a
   * closed pipe on standard input would then never stop being ready, so
   * the absent ones are left out and item_of says where each one is. */
  g_autofree zmq_pollitem_t *items = NULL;
  g_autofree guint *item_of = NULL;
  gint64 deadline = -1;
  gboolean ok = TRUE;
  guint i;

  sub->context = zmq_ctx_new ();
  if (sub->context == NULL)
    {
      g_set_error (error, KVT_ERROR, KVT_ERROR_FAILED, _ ("Cannot create a ZeroMQ context: %s"),
                   zmq_strerror (zmq_errno ()));
      return FALSE;
    }

  items = g_new0 (zmq_pollitem_t, sub->sources->len * ITEMS);
  item_of = g_new (guint, sub->sources->len * ITEMS);
  for (i = 0; i < sub->sources->len && ok; i++)
    {
      Source *source = g_ptr_array_index (sub->sources, i);

      ok = source_open (sub, source, i, error);
      source->last_arrival = g_get_monotonic_time ();
    }

  if (sub->timeout_ms > 0)
    deadline = g_get_monotonic_time () + (gint64) sub->timeout_ms * 1000;

  /* Once the output has failed, receiving more would only lose more. */
  while (ok && stop_signal == 0 && !count_reached (sub) && !ferror (stdout))
    {
      long wait_ms = 250; /* how often a signal that interrupted nothing is noticed */
      guint n_items = 0;
      int rc;

      /* A replay or snapshot in flight may still answer for a publisher
       * that closed: its reply was sent before. */
      if (sub->until_disconnect && all_disconnected (sub))
        {
          drain (sub);
          if (!any_busy (sub))
            break;
        }
      if (deadline >= 0)
        {
          gint64 left_ms = (deadline - g_get_monotonic_time ()) / 1000;

          if (left_ms <= 0)
            break;
          wait_ms = (long) MIN (wait_ms, left_ms);
        }
      wait_ms = check_timers (sub, wait_ms);

      /* Made anew each time: a replay socket is replaced after a failure. */
      for (i = 0; i < sub->sources->len * ITEMS; i++)
        {
          Source *source = g_ptr_array_index (sub->sources, i / ITEMS);
          void *socket = i % ITEMS == 0   ? source->socket
                         : i % ITEMS == 1 ? source->monitor
                         : i % ITEMS == 2 ? source->replay_socket
                                          : source->snapshot_socket;

          item_of[i] = G_MAXUINT;
          if (socket == NULL)
            continue;
          item_of[i] = n_items;
          items[n_items].socket = socket;
          items[n_items].events = ZMQ_POLLIN;
          items[n_items].revents = 0;
          n_items++;
        }

      rc = zmq_poll (items, (int) n_items, wait_ms);
      if (rc < 0 && zmq_errno () != EINTR)
        {
          g_set_error (error, KVT_ERROR, KVT_ERROR_FAILED, _ ("Cannot wait for messages: %s"),
                       zmq_strerror (zmq_errno ()));
          ok = FALSE;
        }
      for (i = 0; rc > 0 && i < sub->sources->len; i++)
        {
          Source *source = g_ptr_array_index (sub->sources, i);
          guint live = item_of[ITEMS * i], monitor = item_of[ITEMS * i + 1];
          guint replay = item_of[ITEMS * i + 2], snapshot = item_of[ITEMS * i + 3];
          guint taken = 0;

          /* A bounded run per socket keeps one busy publisher from
           * starving the others. */
          if (live != G_MAXUINT && (items[live].revents & ZMQ_POLLIN))
            while (taken < 256 && stop_signal == 0 && !ferror (stdout) && !count_reached (sub)
                   && receive_one (sub, source))
              taken++;
          if (taken > 0 && sub->timeout_ms > 0)
            deadline = g_get_monotonic_time () + (gint64) sub->timeout_ms * 1000;
          if (monitor != G_MAXUINT && (items[monitor].revents & ZMQ_POLLIN))
            read_monitor (sub, source);
          if (replay != G_MAXUINT && (items[replay].revents & ZMQ_POLLIN))
            read_replay (sub, source);
          if (snapshot != G_MAXUINT && (items[snapshot].revents & ZMQ_POLLIN))
            read_snapshot (sub, source);
        }
      if (!output_abandoned ())
        fflush (stdout);
      if (state_signal != 0)
        {
          state_signal = 0;
          write_state (sub);
        }
    }
  finish_replays (sub);

  for (i = 0; i < sub->sources->len; i++)
    source_close (g_ptr_array_index (sub->sources, i));
  zmq_ctx_term (sub->context);
  sub->context = NULL;
  return ok;
}

/* Reads the subscriber's secret key from path, as kvevents-keygen writes
 * it, into z85 (KVEV_Z85_KEY_LEN + 1 bytes) and key. */
static gboolean
read_secret_key (const Sub *sub, const char *path, char *z85, guint8 key[KVEV_KEY_BYTES],
                 GError **error)
{
  char *contents = NULL;
  gsize length = 0;
  gboolean ok;
  GStatBuf st;

  if (!g_file_get_contents (path, &contents, &length, error))
    {
      g_prefix_error (error, "--curve-secret-key-file: ");
      return FALSE;
    }
  /* The publisher refuses such a file; a subscriber's key is as much a
   * secret, but the file is already read: a warning is enough. */
  if (!sub->quiet && g_stat (path, &st) == 0 && (st.st_mode & (S_IRWXG | S_IRWXO)) != 0)
    g_printerr (_ ("%s: warning: --curve-secret-key-file \"%s\" is accessible by group or others "
                   "(mode %04o); it holds a secret key: chmod 600 it\n"),
                g_get_prgname (), path, (unsigned) (st.st_mode & 07777));

  g_strstrip (contents);
  ok = kvev_z85_decode_key (contents, key);
  if (ok)
    memcpy (z85, contents, KVEV_Z85_KEY_LEN + 1);
  else
    g_set_error (error, KVT_ERROR, KVT_ERROR_FAILED,
                 _ ("--curve-secret-key-file \"%s\" does not hold a Z85 secret key "
                    "(40 characters)"),
                 path);
  kvev_secret_wipe (contents, length);
  g_free (contents);
  return ok;
}

/* Checks and decodes the CURVE options into sub: the server's public
 * key, this subscriber's secret key from its file, and its public key,
 * given or derived from the secret one. */
static gboolean
load_curve_keys (Sub *sub, const char *server_key, const char *secret_key_file,
                 const char *public_key, GError **error)
{
  g_autofree char *server = g_strstrip (g_strdup (server_key));
  char secret_z85[KVEV_Z85_KEY_LEN + 1] = "";
  char derived_z85[KVEV_Z85_KEY_LEN + 1] = "";
  gboolean ok = FALSE;

  if (!kvev_z85_decode_key (server, sub->curve_server_key))
    {
      g_autofree char *shown = g_strescape (server, NULL);

      g_set_error (error, KVT_ERROR, KVT_ERROR_FAILED,
                   _ ("--curve-server-key \"%s\" is not a Z85 public key (40 characters)"), shown);
      return FALSE;
    }
  if (!read_secret_key (sub, secret_key_file, secret_z85, sub->curve_secret_key, error))
    return FALSE;

  if (zmq_curve_public (derived_z85, secret_z85) != 0)
    g_set_error (error, KVT_ERROR, KVT_ERROR_FAILED, _ ("Cannot derive the public key: %s"),
                 zmq_strerror (zmq_errno ()));
  else if (public_key == NULL)
    ok = kvev_z85_decode_key (derived_z85, sub->curve_public_key);
  else
    {
      g_autofree char *given = g_strstrip (g_strdup (public_key));

      if (!kvev_z85_decode_key (given, sub->curve_public_key))
        {
          g_autofree char *shown = g_strescape (given, NULL);

          g_set_error (error, KVT_ERROR, KVT_ERROR_FAILED,
                       _ ("--curve-public-key \"%s\" is not a Z85 public key (40 characters)"),
                       shown);
        }
      else if (strcmp (given, derived_z85) != 0)
        g_set_error (error, KVT_ERROR, KVT_ERROR_FAILED,
                     _ ("--curve-public-key is not the public key of the secret key in \"%s\""),
                     secret_key_file);
      else
        ok = TRUE;
    }
  kvev_secret_wipe (secret_z85, sizeof secret_z85);
  if (!ok)
    kvev_secret_wipe (sub->curve_secret_key, sizeof sub->curve_secret_key);
  return ok;
}

#else /* !HAVE_ZMQ */

static gboolean
run (Sub *sub, GError **error)
{
  /* The decoding stays compiled, so this build checks it too. */
  (void) take_live;
  g_set_error (error, KVT_ERROR, KVT_ERROR_FAILED,
               _ ("This kvevents-sub was built without ZeroMQ and cannot subscribe"));
  return FALSE;
}

#endif /* HAVE_ZMQ */

/* What main () leaves when it returns, early or not. */
static void
sub_clear (Sub *sub)
{
  g_strfreev (sub->endpoints);
  g_strfreev (sub->topics);
  g_strfreev (sub->replay_endpoints);
  g_strfreev (sub->snapshot_endpoints);
  g_free (sub->state_path);
  g_clear_pointer (&sub->state, kvt_state_free);
  g_free (sub->summary_json);
  g_clear_pointer (&sub->test_drop, g_rand_free);
#ifdef HAVE_ZMQ
  kvev_secret_wipe (sub->curve_secret_key, sizeof sub->curve_secret_key);
#endif
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Sub, sub_clear)

static void
source_free (gpointer data)
{
  Source *source = data;

  g_free (source->endpoint);
  g_free (source->replay_endpoint);
  g_free (source->snapshot_endpoint);
  g_free (source->incoming_backend);
  kvt_state_free (source->incoming);
  g_free (source->publisher_id);
  g_queue_clear_full (&source->held, (GDestroyNotify) kvt_message_free);
  g_free (source);
}

/* An option given for each --endpoint, in order, or not at all. */
static gboolean
one_for_each_endpoint (const Sub *sub, const char *option, char **values)
{
  if (values == NULL || g_strv_length (values) == g_strv_length (sub->endpoints))
    return TRUE;
  g_printerr (_ ("%s: %s is given %u times for %u --endpoint: give one for each, in order (an "
                 "empty one for none)\n"),
              g_get_prgname (), option, g_strv_length (values), g_strv_length (sub->endpoints));
  return FALSE;
}

int
main (int argc, char **argv)
{
  g_auto (Sub) sub = { 0 };
  g_autofree char *format = NULL;
  g_autofree char *curve_server_key = NULL;
  g_autofree char *curve_secret_key_file = NULL;
  g_autofree char *curve_public_key = NULL;
  g_autoptr (GOptionContext) context = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) sources = g_ptr_array_new_with_free_func (source_free);
  gboolean version = FALSE, ok, flushed;
  struct sigaction action = { 0 };
  int status = KVT_EXIT_OK;
  const GOptionEntry entries[] = {
    { "endpoint", 'e', 0, G_OPTION_ARG_STRING_ARRAY, &sub.endpoints,
      N_ ("Connect to ENDPOINT (tcp://HOST:PORT, ipc://PATH); repeat for several"),
      N_ ("ENDPOINT") },
    { "topic", 't', 0, G_OPTION_ARG_STRING_ARRAY, &sub.topics,
      N_ ("Receive only messages whose topic starts with PREFIX; repeatable (default: all)"),
      N_ ("PREFIX") },
    { "format", 'f', 0, G_OPTION_ARG_STRING, &format,
      N_ ("Print events as json (one object a line, the default) or text"), N_ ("FORMAT") },
    { "count", 'n', 0, G_OPTION_ARG_INT64, &sub.count,
      N_ ("Exit after N events (a skipped message or event counts as one)"), N_ ("N") },
    { "timeout-ms", 'T', 0, G_OPTION_ARG_INT, &sub.timeout_ms,
      N_ ("Exit after T milliseconds without a message"), N_ ("T") },
    { "until-disconnect", 0, 0, G_OPTION_ARG_NONE, &sub.until_disconnect,
      N_ ("Exit once every endpoint has connected and then disconnected (its publisher "
          "closed)"),
      NULL },
    { "quiet", 'q', 0, G_OPTION_ARG_NONE, &sub.quiet, N_ ("Print only the summary"), NULL },
    { "strict", 0, 0, G_OPTION_ARG_NONE, &sub.strict,
      N_ ("Exit with status 1 if anything was lost, malformed or out of order"), NULL },
    { "rcvhwm", 0, 0, G_OPTION_ARG_INT, &sub.rcvhwm,
      N_ ("Messages queued per endpoint before ZeroMQ drops (default 1000; 0: no limit)"),
      N_ ("N") },
    { "summary-json", 0, 0, G_OPTION_ARG_FILENAME, &sub.summary_json,
      N_ ("Also write the summary as JSON to FILE"), N_ ("FILE") },
    { "replay-endpoint", 'r', 0, G_OPTION_ARG_STRING_ARRAY, &sub.replay_endpoints,
      N_ ("Fill sequence gaps from this replay ENDPOINT, one for each --endpoint in order "
          "(empty: none)"),
      N_ ("ENDPOINT") },
    { "replay-timeout-ms", 0, 0, G_OPTION_ARG_INT, &sub.replay_timeout_ms,
      N_ ("Give up on a replay that sends nothing for T milliseconds (default 5000)"), N_ ("T") },
    { "snapshot-endpoint", 0, 0, G_OPTION_ARG_STRING_ARRAY, &sub.snapshot_endpoints,
      N_ ("Take a snapshot from this ENDPOINT before the first event, and again after a loss "
          "or a restart, one for each --endpoint in order (empty: none)"),
      N_ ("ENDPOINT") },
    { "snapshot-timeout-ms", 0, 0, G_OPTION_ARG_INT, &sub.snapshot_timeout_ms,
      N_ ("Give up on a snapshot that sends nothing for T milliseconds (default 30000)"),
      N_ ("T") },
    { "state", 0, 0, G_OPTION_ARG_FILENAME, &sub.state_path,
      N_ ("Keep the availability the events describe and write it to FILE, one JSON object "
          "an entry, at the end and on SIGUSR1"),
      N_ ("FILE") },
    { "publisher-id", 0, 0, G_OPTION_ARG_NONE, &sub.publisher_id,
      N_ ("Take a new publisher_id in the events for a restart, even when the sequence goes on"),
      NULL },
    { "heartbeat-ms", 0, 0, G_OPTION_ARG_INT, &sub.heartbeat_ms,
      N_ ("Warn when nothing, not even a heartbeat, came for 3 times MS milliseconds"), N_ ("MS") },
    /* For the tests only (kvevents-sub(1), TESTING): a loss they can
     * reproduce. */
    { "test-drop-percent", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_DOUBLE, &sub.test_drop_percent,
      NULL, NULL },
    { "test-drop-seed", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_INT64, &sub.test_drop_seed, NULL,
      NULL },
    { "curve-server-key", 0, 0, G_OPTION_ARG_STRING, &curve_server_key,
      N_ ("Subscribe with CURVE to publishers whose public key is KEY (40 Z85 characters)"),
      N_ ("KEY") },
    { "curve-secret-key-file", 0, 0, G_OPTION_ARG_FILENAME, &curve_secret_key_file,
      N_ ("Read this subscriber's CURVE secret key from FILE, as kvevents-keygen writes it"),
      N_ ("FILE") },
    { "curve-public-key", 0, 0, G_OPTION_ARG_STRING, &curve_public_key,
      N_ ("This subscriber's CURVE public key (default: derived from the secret key)"),
      N_ ("KEY") },
    { "version", 'V', 0, G_OPTION_ARG_NONE, &version, N_ ("Print the version and exit"), NULL },
    { NULL },
  };

  /* First, so that a signal is never the default death, with no
   * summary.  No SA_RESTART: it must interrupt the wait for messages. */
  action.sa_handler = on_stop_signal;
  sigemptyset (&action.sa_mask);
  sigaction (SIGINT, &action, NULL);
  sigaction (SIGTERM, &action, NULL);
  action.sa_handler = on_state_signal;
  sigaction (SIGUSR1, &action, NULL);
  /* A closed standard output ends the subscription like any failed
   * write, with the summary and status 1, not with a silent death. */
  signal (SIGPIPE, SIG_IGN);

  kvt_init_i18n ();
  g_set_prgname ("kvevents-sub");
  sub.rcvhwm = 1000;
  sub.replay_timeout_ms = 5000;
  sub.snapshot_timeout_ms = 30000;

  context = g_option_context_new (NULL);
  g_option_context_set_translation_domain (context, KVT_GETTEXT_PACKAGE);
  g_option_context_set_summary (
      context, N_ ("Subscribe to KV-cache event streams (libkvevents, vLLM, SGLang) and print\n"
                   "every event, watching the transport sequence and event_id for loss."));
  g_option_context_add_main_entries (context, entries, KVT_GETTEXT_PACKAGE);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("%s: %s\n", g_get_prgname (), error->message);
      return KVT_EXIT_USAGE;
    }
  if (version)
    {
      g_print ("kvevents-sub (%s) %s\n", PACKAGE_NAME, kvev_version ());
      return KVT_EXIT_OK;
    }
  if (argc > 1)
    {
      g_printerr (_ ("%s: unexpected argument \"%s\"\n"), g_get_prgname (), argv[1]);
      return KVT_EXIT_USAGE;
    }
  if (sub.endpoints == NULL || sub.endpoints[0] == NULL)
    {
      g_printerr (_ ("%s: no --endpoint given\n"), g_get_prgname ());
      return KVT_EXIT_USAGE;
    }
  if (format == NULL || g_strcmp0 (format, "json") == 0)
    sub.format = KVT_FORMAT_JSON;
  else if (g_strcmp0 (format, "text") == 0)
    sub.format = KVT_FORMAT_TEXT;
  else
    {
      g_printerr (_ ("%s: unknown --format \"%s\": expected json or text\n"), g_get_prgname (),
                  format);
      return KVT_EXIT_USAGE;
    }
  if (sub.count < 0 || sub.timeout_ms < 0 || sub.rcvhwm < 0)
    {
      g_printerr (_ ("%s: --count, --timeout-ms and --rcvhwm take a number of at least 0\n"),
                  g_get_prgname ());
      return KVT_EXIT_USAGE;
    }
  if (sub.heartbeat_ms < 0 || sub.replay_timeout_ms < 1 || sub.snapshot_timeout_ms < 1)
    {
      g_printerr (_ ("%s: --heartbeat-ms takes a number of at least 0, --replay-timeout-ms and "
                     "--snapshot-timeout-ms one of at least 1\n"),
                  g_get_prgname ());
      return KVT_EXIT_USAGE;
    }
  if (!(sub.test_drop_percent >= 0 && sub.test_drop_percent <= 100))
    {
      g_printerr (_ ("%s: --test-drop-percent takes a number from 0 to 100\n"), g_get_prgname ());
      return KVT_EXIT_USAGE;
    }
  if (!one_for_each_endpoint (&sub, "--replay-endpoint", sub.replay_endpoints)
      || !one_for_each_endpoint (&sub, "--snapshot-endpoint", sub.snapshot_endpoints))
    return KVT_EXIT_USAGE;
  if (sub.state_path != NULL)
    sub.state = kvt_state_new ();
  if (sub.test_drop_percent > 0)
    sub.test_drop = g_rand_new_with_seed ((guint32) sub.test_drop_seed);
  if ((curve_server_key == NULL) != (curve_secret_key_file == NULL))
    {
      g_printerr (_ ("%s: --curve-server-key and --curve-secret-key-file go together: give both "
                     "or neither\n"),
                  g_get_prgname ());
      return KVT_EXIT_USAGE;
    }
  if (curve_public_key != NULL && curve_server_key == NULL)
    {
      g_printerr (_ ("%s: --curve-public-key needs --curve-server-key and "
                     "--curve-secret-key-file\n"),
                  g_get_prgname ());
      return KVT_EXIT_USAGE;
    }
  if (curve_server_key != NULL)
    {
#ifdef HAVE_ZMQ
      if (!zmq_has ("curve"))
        {
          g_printerr (_ ("%s: this ZeroMQ library was built without CURVE support\n"),
                      g_get_prgname ());
          return KVT_EXIT_FAILURE;
        }
      if (!load_curve_keys (&sub, curve_server_key, curve_secret_key_file, curve_public_key,
                            &error))
        {
          g_printerr ("%s: %s\n", g_get_prgname (), error->message);
          return KVT_EXIT_USAGE;
        }
#endif
      /* Without ZeroMQ, run () says it cannot subscribe at all. */
      sub.curve = TRUE;
    }

  for (guint i = 0; sub.endpoints[i] != NULL; i++)
    {
      Source *source = g_new0 (Source, 1);

      source->endpoint = g_strdup (sub.endpoints[i]);
      if (sub.replay_endpoints != NULL && sub.replay_endpoints[i][0] != '\0')
        source->replay_endpoint = g_strdup (sub.replay_endpoints[i]);
      if (sub.snapshot_endpoints != NULL && sub.snapshot_endpoints[i][0] != '\0')
        source->snapshot_endpoint = g_strdup (sub.snapshot_endpoints[i]);
      g_queue_init (&source->held);
      g_ptr_array_add (sources, source);
    }
  sub.sources = sources;

  ok = run (&sub, &error);
  if (!ok)
    {
      g_printerr ("%s: %s\n", g_get_prgname (), error->message);
      status
          = g_error_matches (error, KVT_ERROR, KVT_ERROR_USAGE) ? KVT_EXIT_USAGE : KVT_EXIT_FAILURE;
      g_clear_error (&error);
    }

  /* A flush that blocks after a stop signal is ended by the next one. */
  flushed = output_abandoned () || (fflush (stdout) == 0 && !ferror (stdout));
  if (output_abandoned ())
    {
      g_printerr (_ ("%s: stopped while the output was blocked; the last events were not "
                     "written\n"),
                  g_get_prgname ());
      status = KVT_EXIT_FAILURE;
    }
  else if (!flushed)
    {
      g_printerr (_ ("%s: cannot write the events: %s\n"), g_get_prgname (), g_strerror (errno));
      status = KVT_EXIT_FAILURE;
    }
  if (ferror (stdout))
    discard_output ();
  print_summary (&sub.summary);
  if (sub.summary_json != NULL && !write_summary_json (&sub.summary, sub.summary_json, &error))
    {
      g_printerr ("%s: %s\n", g_get_prgname (), error->message);
      status = KVT_EXIT_FAILURE;
    }
  if (!write_state (&sub))
    status = KVT_EXIT_FAILURE;
  if (sub.strict && problems (&sub.summary) > 0 && status == KVT_EXIT_OK)
    status = KVT_EXIT_FAILURE;

  return status;
}
