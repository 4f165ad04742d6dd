/* bootstrap.c: the bootstrap of kvevents(7) SNAPSHOTS for one publisher,
 * and the failover rule between publishers of one backend (see
 * kvevents-subscriber.h).
 *
 * A live message is delivered at once while nothing is held; a gap, a
 * restart or the first message of a publisher with snapshots holds it
 * and every later one until the replay or snapshot asked for ends, and
 * the held messages then go through the same path again, in order.
 * Everything a message is checked for is checked before it is held, so a
 * held message is never refused later.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "internal.h"

#include "decode.h"
#include "replay-client.h"
#include "snapshot-client.h"
#include "subscriber.h"

#include <inttypes.h>
#include <string.h>
#include <zmq.h>

struct _KvevSubHeld
{
  zmq_msg_t parts[3];
  guint64 sequence;
  gsize bytes;
};

typedef enum
{
  LIVE_DELIVERED,
  LIVE_HOLD, /* keep it at the head of held: a replay or snapshot comes first */
} LiveResult;

typedef enum
{
  REPLAY_COMPLETE,  /* every missing message came */
  REPLAY_END,       /* the end marker came first */
  REPLAY_REACHED,   /* it went past the live message held */
  REPLAY_FOREIGN,   /* it came from another publisher_id */
  REPLAY_TIMEOUT,   /* nothing came in time */
  REPLAY_MALFORMED, /* a reply the protocol does not allow */
  REPLAY_ABANDONED, /* the held messages went past their bound */
} ReplayEnd;

static void release_held (KvevSubSource *source);

/* Keeps a part's bytes past the read: moved into a message of the heap. */
static zmq_msg_t *
keep_part (zmq_msg_t *part)
{
  zmq_msg_t *kept = g_new (zmq_msg_t, 1);

  zmq_msg_init (kept);
  zmq_msg_move (kept, part);
  return kept;
}

static void
chunk_free (gpointer data)
{
  zmq_msg_close (data);
  g_free (data);
}

static void
frames_of (zmq_msg_t *parts, guint n, KvevFrame *frames)
{
  guint i;

  for (i = 0; i < n; i++)
    {
      frames[i].data = zmq_msg_data (&parts[i]);
      frames[i].size = zmq_msg_size (&parts[i]);
    }
}

static gboolean
source_busy (const KvevSubSource *source)
{
  return source->replaying || source->snapshotting;
}

static gboolean
value_has_bytes (const KvevValue *value)
{
  return value->type == KVEV_VALUE_STR || value->type == KVEV_VALUE_BIN;
}

static gboolean
same_publisher_id (const GByteArray *known, const KvevValue *value)
{
  return known->len == value->len && memcmp (known->data, value->data, value->len) == 0;
}

static void
held_free (KvevSubHeld *held)
{
  guint i;

  for (i = 0; i < 3; i++)
    zmq_msg_close (&held->parts[i]);
  g_free (held);
}

static void
update_held_counts (KvevSubSource *source)
{
  source->counts[KVEV_SUBSCRIBER_STAT_HELD_MESSAGES] = source->held.length;
  source->counts[KVEV_SUBSCRIBER_STAT_HELD_BYTES] = source->held_bytes;
}

static void
drop_held (KvevSubSource *source)
{
  KvevSubHeld *held;

  while ((held = g_queue_pop_head (&source->held)) != NULL)
    held_free (held);
  source->held_bytes = 0;
  update_held_counts (source);
}

static void
snapshot_clear (KvevSubSource *source)
{
  if (source->snapshot_header_msg != NULL)
    {
      zmq_msg_close (source->snapshot_header_msg);
      g_clear_pointer (&source->snapshot_header_msg, g_free);
    }
  if (source->chunks != NULL)
    g_ptr_array_set_size (source->chunks, 0);
  source->snapshot_bytes = 0;
  source->snapshot_events = 0;
  source->snapshot_objects = 0;
  memset (&source->header, 0, sizeof source->header);
}

void
kvev_sub_source_clear_state (KvevSubSource *source)
{
  drop_held (source);
  snapshot_clear (source);
  g_clear_pointer (&source->chunks, g_ptr_array_unref);
  g_clear_pointer (&source->publisher_id, g_byte_array_unref);
}

/* What nothing will make up for: counted lost, or left for the snapshot
 * that a publisher with snapshots takes next. */
static void
account_loss (KvevSubSource *source, guint64 lost, KvevSubscriberReason reason, const char *why)
{
  if (lost == 0)
    return;
  if (source->snapshot_socket != NULL && !source->superseded)
    {
      source->pending_loss += lost;
      source->snapshot_wanted = TRUE;
      kvev_sub_set_state (source, KVEV_SUBSCRIBER_RECOVERING, reason, 0,
                          _ ("%" PRIu64 " messages missed (%s): a snapshot is asked for"), lost,
                          why);
    }
  else
    {
      source->counts[KVEV_SUBSCRIBER_STAT_LOST] += lost;
      kvev_sub_set_state (
          source, source->superseded ? KVEV_SUBSCRIBER_SUPERSEDED : KVEV_SUBSCRIBER_LOST, reason,
          lost, _ ("%" PRIu64 " messages lost (%s): nothing can recover them"), lost, why);
    }
}

/* The backend an event or a snapshot is about, among those a snapshot
 * replaced; NULL when none did. */
static KvevSubBackend *
find_backend (KvevSubscriber *subscriber, const KvevValue *backend_id, gboolean has_dp_rank,
              guint64 dp_rank)
{
  guint i;

  if (!value_has_bytes (backend_id))
    return NULL;
  for (i = 0; i < subscriber->backends->len; i++)
    {
      KvevSubBackend *backend = g_ptr_array_index (subscriber->backends, i);

      if (backend->type == backend_id->type && backend->backend_id->len == backend_id->len
          && memcmp (backend->backend_id->data, backend_id->data, backend_id->len) == 0
          && (!backend->has_dp_rank || !has_dp_rank || backend->dp_rank == dp_rank))
        return backend;
    }
  return NULL;
}

/* The failover rule, for one event of source: TRUE when a snapshot
 * replaced its backend after this endpoint's own last bootstrap, or,
 * for a replayed one, after the replay was asked for. */
static gboolean
event_is_stale (KvevSubSource *source, const KvevSubscriberEvent *event, gboolean *by_request)
{
  KvevSubscriber *subscriber = source->subscriber;
  KvevSubBackend *backend;
  gboolean has_rank = event->has_dp_rank;
  guint64 rank = event->dp_rank;

  *by_request = FALSE;
  if (subscriber->backends->len == 0)
    return FALSE;
  if (!has_rank)
    has_rank = kvev_value_get_uint (&event->batch_dp_rank, &rank);
  backend = find_backend (subscriber, &event->backend_id, has_rank, rank);
  if (backend == NULL)
    return FALSE;
  if (event->origin == KVEV_ORIGIN_REPLAY && backend->replaced_at > source->replay_asked_at)
    *by_request = TRUE;
  if (backend->replaced_at > source->bootstrap_clock && backend->replaced_by != source->index)
    {
      if (!source->superseded)
        {
          source->superseded = TRUE;
          kvev_sub_set_state (
              source, KVEV_SUBSCRIBER_SUPERSEDED, KVEV_SUBSCRIBER_REASON_SUPERSEDED, 0,
              _ ("a snapshot from another endpoint replaced its backend: its events are no "
                 "longer delivered until a new publisher there is bootstrapped"));
        }
      return TRUE;
    }
  return *by_request;
}

static void
track_event_id (KvevSubSource *source, guint64 sequence, guint64 event_id)
{
  if (source->have_event_id && event_id > source->last_event_id + 1)
    {
      guint64 lost = event_id - source->last_event_id - 1;

      source->counts[KVEV_SUBSCRIBER_STAT_LOST_EVENTS] += lost;
      kvev_sub_notice (source, KVEV_NOTICE_EVENT_ID_HOLE, TRUE, sequence,
                       _ ("message %" PRIu64 ": event_id jumped from %" PRIu64 " to %" PRIu64
                          ": %" PRIu64 " events lost"),
                       sequence, source->last_event_id, event_id, lost);
    }
  source->have_event_id = TRUE;
  source->last_event_id = event_id;
}

/* Delivers the events of one checked message or chunk, in order. */
static void
deliver (KvevSubSource *source, const KvevFrame *frames, guint n_frames, const KvevBatch *batch,
         KvevEventOrigin origin, gboolean has_sequence, guint64 sequence)
{
  KvevSubscriber *subscriber = source->subscriber;
  KvevSubscriberEvent *event = &subscriber->event;
  gboolean stale_answer = FALSE;
  gsize pos = batch->events_pos;
  KvevEventError error;
  guint i;

  if (origin != KVEV_ORIGIN_SNAPSHOT)
    source->counts[KVEV_SUBSCRIBER_STAT_MESSAGES]++;
  if (batch->n_events == 0)
    {
      if (origin != KVEV_ORIGIN_SNAPSHOT)
        source->counts[KVEV_SUBSCRIBER_STAT_HEARTBEATS]++;
      return;
    }
  event->origin = origin;
  event->publisher_index = source->index;
  event->endpoint = source->endpoint;
  event->has_sequence = has_sequence;
  event->sequence = has_sequence ? sequence : 0;
  event->n_events = batch->n_events;
  event->batch_timestamp = batch->timestamp;
  event->batch_dp_rank = batch->dp_rank;
  event->frames = frames;
  event->n_frames = n_frames;

  for (i = 0; kvev_batch_decode_next (batch, &pos, event, &error); i++)
    {
      gboolean by_request;

      event->index = i;
      if (origin != KVEV_ORIGIN_SNAPSHOT && event->has_event_id)
        track_event_id (source, sequence, event->event_id);
      if (error != KVEV_EVENT_DECODED)
        {
          source->counts[KVEV_SUBSCRIBER_STAT_DECODE_ERRORS]++;
          kvev_sub_notice (source, KVEV_NOTICE_BAD_EVENT, has_sequence, sequence,
                           _ ("message %" PRIu64 ", event %u: %s; skipped"), sequence, i + 1,
                           kvev_event_error_message (error));
          continue;
        }
      if (origin != KVEV_ORIGIN_SNAPSHOT)
        {
          if (source->have_barrier && event->has_event_id && event->event_id <= source->barrier)
            {
              source->counts[KVEV_SUBSCRIBER_STAT_SUPERSEDED_EVENTS]++;
              continue;
            }
          if (event_is_stale (source, event, &by_request))
            {
              source->counts[KVEV_SUBSCRIBER_STAT_STALE_EVENTS]++;
              stale_answer |= by_request;
              continue;
            }
        }
      else
        source->counts[KVEV_SUBSCRIBER_STAT_SNAPSHOT_EVENTS]++;
      source->counts[KVEV_SUBSCRIBER_STAT_EVENTS]++;
      if (subscriber->event_func != NULL)
        subscriber->event_func (subscriber, event, subscriber->event_data);
    }
  if (stale_answer)
    {
      source->counts[KVEV_SUBSCRIBER_STAT_STALE_ANSWERS]++;
      kvev_sub_notice (source, KVEV_NOTICE_STALE, has_sequence, sequence,
                       _ ("replayed message %" PRIu64 " dropped: a snapshot replaced its backend "
                          "after the replay was asked for"),
                       sequence);
    }
}

/* A new instance of the publisher: what was known of it is out of date. */
static void
restart (KvevSubSource *source, KvevSubscriberReason reason, const char *message)
{
  KvevSubscriber *subscriber = source->subscriber;

  source->counts[KVEV_SUBSCRIBER_STAT_RESTARTS]++;
  kvev_sub_notice (source, KVEV_NOTICE_RESTART, FALSE, 0, "%s", message);
  source->have_sequence = FALSE;
  source->have_event_id = FALSE;
  source->have_barrier = FALSE;
  /* A new instance there is the one thing that bootstraps a superseded
   * endpoint again. */
  source->superseded = FALSE;
  if (source->snapshot_socket != NULL)
    {
      source->snapshot_wanted = TRUE;
      source->snapshot_failures_in_row = 0;
      source->snapshot_retry_at = 0;
      kvev_sub_set_state (source, KVEV_SUBSCRIBER_RECOVERING, reason, 0, "%s", message);
    }
  else
    {
      /* Followed afresh from here: the newest start wins, as a snapshot
       * would. */
      source->bootstrap_clock = ++subscriber->clock;
      kvev_sub_set_state (source, KVEV_SUBSCRIBER_LOST, reason, 0, "%s", message);
    }
}

static gboolean
start_replay (KvevSubSource *source, guint64 from, guint64 until)
{
  KvevSubscriber *subscriber = source->subscriber;

  if (!kvev_sub_source_request_replay (source, from))
    {
      kvev_sub_notice (source, KVEV_NOTICE_REPLAY, FALSE, 0, _ ("cannot ask %s for a replay: %s"),
                       source->replay_endpoint, zmq_strerror (zmq_errno ()));
      return FALSE;
    }
  source->counts[KVEV_SUBSCRIBER_STAT_REPLAY_REQUESTS]++;
  source->replaying = TRUE;
  source->replay_from = from;
  source->replay_until = until;
  source->replay_recovered = 0;
  source->replay_asked_at = ++subscriber->clock;
  source->replay_deadline = g_get_monotonic_time ()
                            + subscriber->options[KVEV_SUBSCRIBER_OPTION_REPLAY_TIMEOUT_MS] * 1000;
  kvev_sub_set_state (source, KVEV_SUBSCRIBER_RECOVERING, KVEV_SUBSCRIBER_REASON_GAP, 0,
                      _ ("sequence jumped from %" PRIu64 " to %" PRIu64 ": asking %s for a replay"),
                      from - 1, until, source->replay_endpoint);
  return TRUE;
}

/* One checked live message, in stream order. */
static LiveResult
process_live (KvevSubSource *source, const KvevFrame *frames, const KvevBatch *batch,
              guint64 sequence)
{
  if (value_has_bytes (&batch->publisher_id))
    {
      if (source->publisher_id != NULL
          && !same_publisher_id (source->publisher_id, &batch->publisher_id))
        {
          g_autofree char *message = g_strdup_printf (
              _ ("publisher_id changed at message %" PRIu64 ": the publisher restarted"), sequence);

          restart (source, KVEV_SUBSCRIBER_REASON_NEW_PUBLISHER_ID, message);
        }
      if (source->publisher_id == NULL)
        source->publisher_id = g_byte_array_new ();
      g_byte_array_set_size (source->publisher_id, 0);
      g_byte_array_append (source->publisher_id, (const guint8 *) batch->publisher_id.data,
                           (guint) batch->publisher_id.len);
    }
  if (source->have_sequence && sequence <= source->last_sequence)
    {
      g_autofree char *message = g_strdup_printf (
          _ ("sequence went back from %" PRIu64 " to %" PRIu64 ": the publisher restarted"),
          source->last_sequence, sequence);

      restart (source, KVEV_SUBSCRIBER_REASON_SEQUENCE_BACK, message);
    }
  if (!source->started)
    {
      source->started = TRUE;
      if (source->snapshot_socket != NULL)
        source->snapshot_wanted = TRUE;
      else
        kvev_sub_set_state (source, KVEV_SUBSCRIBER_FOLLOWING, KVEV_SUBSCRIBER_REASON_JOINED, 0,
                            _ ("following %s from message %" PRIu64
                               "; without a snapshot, what came before is not known"),
                            source->endpoint, sequence);
    }
  if (source->snapshot_wanted)
    return LIVE_HOLD;

  if (source->have_sequence && sequence > source->last_sequence + 1)
    {
      guint64 from = source->last_sequence + 1, missing = sequence - from;

      source->counts[KVEV_SUBSCRIBER_STAT_GAPS]++;
      kvev_sub_notice (
          source, KVEV_NOTICE_GAP, TRUE, sequence,
          _ ("sequence jumped from %" PRIu64 " to %" PRIu64 ": %" PRIu64 " numbers skipped"),
          source->last_sequence, sequence, missing);
      /* An endpoint another one superseded asks nothing: its old events
       * are not delivered anyway. */
      if (!source->superseded && source->replay_socket != NULL
          && start_replay (source, from, sequence))
        return LIVE_HOLD;
      account_loss (source, missing, KVEV_SUBSCRIBER_REASON_GAP, _ ("a sequence gap"));
      /* Accounted for: the message held is no gap when it comes back. */
      source->last_sequence = sequence - 1;
      if (source->snapshot_wanted)
        return LIVE_HOLD;
    }
  source->have_sequence = TRUE;
  source->last_sequence = sequence;
  deliver (source, frames, 3, batch, KVEV_ORIGIN_LIVE, TRUE, sequence);
  return LIVE_DELIVERED;
}

static void
snapshot_failed (KvevSubSource *source, const char *why)
{
  /* Tried again later, more and more rarely: a master that has just
   * started may not have set its snapshot function yet, and one whose
   * walk failed may succeed the next time. */
  gint64 delay_ms = MIN (KVEV_SUB_SNAPSHOT_RETRY_MS << MIN (source->snapshot_failures_in_row, 5),
                         KVEV_SUB_SNAPSHOT_RETRY_MAX_MS);

  source->snapshotting = FALSE;
  snapshot_clear (source);
  source->counts[KVEV_SUBSCRIBER_STAT_SNAPSHOT_FAILURES]++;
  source->snapshot_failures_in_row++;
  source->snapshot_retry_at = g_get_monotonic_time () + delay_ms * 1000;
  kvev_sub_source_reset_dealer (source, FALSE);
  kvev_sub_notice (source, KVEV_NOTICE_SNAPSHOT_FAILED, FALSE, 0,
                   _ ("no snapshot from %s: %s; asking again in %" PRId64 " ms"),
                   source->snapshot_endpoint, why, delay_ms);
  kvev_sub_set_state (source, KVEV_SUBSCRIBER_RECOVERING, KVEV_SUBSCRIBER_REASON_SNAPSHOT_FAILED, 0,
                      _ ("no snapshot from %s: %s"), source->snapshot_endpoint, why);
}

static void
start_snapshot (KvevSubSource *source)
{
  KvevSubscriber *subscriber = source->subscriber;

  source->snapshot_wanted = FALSE;
  if (!kvev_sub_source_request_snapshot (source))
    {
      snapshot_failed (source, zmq_strerror (zmq_errno ()));
      return;
    }
  source->snapshotting = TRUE;
  source->snapshot_asked_at = ++subscriber->clock;
  source->snapshot_deadline
      = g_get_monotonic_time ()
        + subscriber->options[KVEV_SUBSCRIBER_OPTION_SNAPSHOT_TIMEOUT_MS] * 1000;
  if (source->chunks == NULL)
    source->chunks = g_ptr_array_new_with_free_func (chunk_free);
  snapshot_clear (source);
  if (source->state != KVEV_SUBSCRIBER_RECOVERING)
    kvev_sub_set_state (source, KVEV_SUBSCRIBER_RECOVERING, KVEV_SUBSCRIBER_REASON_JOINED, 0,
                        _ ("asking %s for a snapshot"), source->snapshot_endpoint);
}

static void
replay_finish (KvevSubSource *source, ReplayEnd end)
{
  guint64 lost = source->replay_until - source->replay_from - source->replay_recovered;
  static const char *const why[] = {
    N_ ("complete"),
    N_ ("the end marker came first: no longer in the replay buffer, or events the publisher "
        "dropped"),
    N_ ("it went past the message held"),
    N_ ("it came from another publisher_id"),
    N_ ("it timed out"),
    N_ ("it sent a reply the protocol does not allow"),
    N_ ("the held messages went past their bound"),
  };

  source->replaying = FALSE;
  if (end == REPLAY_TIMEOUT || end == REPLAY_MALFORMED)
    source->counts[KVEV_SUBSCRIBER_STAT_REPLAY_FAILURES]++;
  /* A reply goes on to the newest message the buffer holds: the rest of
   * one ended early is refused by closing the socket, so that a late
   * answer is not taken for the next one's. */
  if (end != REPLAY_END)
    kvev_sub_source_reset_dealer (source, TRUE);
  kvev_sub_notice (source, KVEV_NOTICE_REPLAY, TRUE, source->replay_until,
                   _ ("replay of %" PRIu64 " to %" PRIu64 " from %s: %" PRIu64
                      " recovered, %" PRIu64 " missing (%s)"),
                   source->replay_from, source->replay_until - 1, source->replay_endpoint,
                   source->replay_recovered, lost, _ (why[end]));
  source->have_sequence = TRUE;
  source->last_sequence = source->replay_until - 1;
  if (lost > 0)
    account_loss (source, lost, KVEV_SUBSCRIBER_REASON_REPLAY_INCOMPLETE, _ (why[end]));
  else if (!source->superseded)
    kvev_sub_set_state (source, KVEV_SUBSCRIBER_FOLLOWING, KVEV_SUBSCRIBER_REASON_REPLAY, 0,
                        _ ("replay brought every missing message"));
  if (end != REPLAY_ABANDONED)
    release_held (source);
}

/* The bound of kvevents-subscriber.h: everything held goes, counted lost,
 * and a new snapshot is asked for after the usual backoff. */
static void
hold_overflow (KvevSubSource *source)
{
  guint64 dropped = source->held.length;
  KvevSubHeld *last = g_queue_peek_tail (&source->held);

  source->counts[KVEV_SUBSCRIBER_STAT_HOLD_OVERFLOWS]++;
  if (source->replaying)
    replay_finish (source, REPLAY_ABANDONED);
  if (last != NULL && last->sequence > source->last_sequence)
    {
      source->have_sequence = TRUE;
      source->last_sequence = last->sequence;
    }
  drop_held (source);
  if (source->snapshotting)
    snapshot_failed (source, _ ("the messages held meanwhile went past their bound"));
  account_loss (source, dropped, KVEV_SUBSCRIBER_REASON_HOLD_LIMIT,
                _ ("the held messages went past their bound"));
  /* The retry's backoff, not at once: a snapshot slower than the stream
   * would otherwise overflow again and again. */
  if (source->snapshot_wanted && source->snapshot_retry_at != 0)
    source->snapshot_wanted = FALSE;
}

static void
hold (KvevSubSource *source, zmq_msg_t *parts, guint64 sequence, gboolean at_head)
{
  KvevSubscriber *subscriber = source->subscriber;
  KvevSubHeld *held = g_new (KvevSubHeld, 1);
  guint i;

  held->sequence = sequence;
  held->bytes = 0;
  for (i = 0; i < 3; i++)
    {
      zmq_msg_init (&held->parts[i]);
      zmq_msg_move (&held->parts[i], &parts[i]);
      held->bytes += zmq_msg_size (&held->parts[i]);
    }
  source->held_bytes += held->bytes;
  if (at_head)
    g_queue_push_head (&source->held, held);
  else
    g_queue_push_tail (&source->held, held);
  update_held_counts (source);
  if ((gint64) source->held.length > subscriber->options[KVEV_SUBSCRIBER_OPTION_HOLD_MAX_MESSAGES]
      || (gint64) source->held_bytes > subscriber->options[KVEV_SUBSCRIBER_OPTION_HOLD_MAX_BYTES])
    hold_overflow (source);
}

static void
release_held (KvevSubSource *source)
{
  for (;;)
    {
      KvevSubHeld *held;
      KvevFrame frames[3];
      KvevBatch batch;

      if (source->snapshot_wanted && !source_busy (source))
        start_snapshot (source);
      if (source_busy (source) || g_queue_is_empty (&source->held))
        return;
      held = g_queue_pop_head (&source->held);
      source->held_bytes -= held->bytes;
      update_held_counts (source);
      frames_of (held->parts, 3, frames);
      /* Checked when it came: it parses now. */
      kvev_batch_parse (&batch, frames[2].data, frames[2].size);
      /* A message is held again only when a replay or snapshot has just
       * been asked for, or is wanted and starts on the next turn, whose
       * failure leaves nothing wanted: no turn repeats the one before. */
      if (process_live (source, frames, &batch, held->sequence) == LIVE_HOLD)
        {
          source->held_bytes += held->bytes;
          g_queue_push_head (&source->held, held);
          update_held_counts (source);
          continue;
        }
      held_free (held);
    }
}

/* A message the protocol does not allow on the live socket: counted, and
 * the socket connects again, as kvevents(7) SUBSCRIBERS asks.  What it
 * held is lost with it, and shows as a gap after the reconnection. */
static void
broken_stream (KvevSubSource *source, gboolean has_sequence, guint64 sequence, const char *why)
{
  source->counts[KVEV_SUBSCRIBER_STAT_DECODE_ERRORS]++;
  kvev_sub_notice (source, KVEV_NOTICE_MALFORMED_MESSAGE, has_sequence, sequence,
                   _ ("message skipped: %s; connecting again"), why);
  kvev_sub_source_reconnect (source);
}

void
kvev_sub_take_live (KvevSubSource *source, void *parts_pointer, guint n_parts)
{
  KvevSubscriber *subscriber = source->subscriber;
  zmq_msg_t *parts = parts_pointer;
  KvevFrame frames[3];
  KvevPayloadError error;
  KvevBatch batch;
  guint64 sequence_be, sequence;

  if (source->state == KVEV_SUBSCRIBER_SILENT)
    kvev_sub_set_state (source, source->state_before_silence, KVEV_SUBSCRIBER_REASON_NONE, 0,
                        _ ("messages come again"));
  if (n_parts != 3)
    {
      g_autofree char *why = g_strdup_printf (_ ("expected 3 frames, got %u"), n_parts);

      broken_stream (source, FALSE, 0, why);
      return;
    }
  frames_of (parts, 3, frames);
  if (frames[1].size != sizeof sequence_be)
    {
      g_autofree char *why = g_strdup_printf (_ ("the sequence frame has %zu bytes instead of 8"),
                                              (size_t) frames[1].size);

      broken_stream (source, FALSE, 0, why);
      return;
    }
  memcpy (&sequence_be, frames[1].data, sizeof sequence_be);
  sequence = GUINT64_FROM_BE (sequence_be);
  error = kvev_batch_parse (&batch, frames[2].data, frames[2].size);
  if (subscriber->test_drop_source == (gint) source->index && subscriber->test_drop_count > 0)
    {
      if (subscriber->test_drop_skip == 0)
        {
          subscriber->test_drop_count--;
          return;
        }
      if (error == KVEV_PAYLOAD_OK && batch.n_events > 0)
        subscriber->test_drop_skip--;
    }
  if (error != KVEV_PAYLOAD_OK)
    {
      broken_stream (source, TRUE, sequence, kvev_payload_error_message (error));
      return;
    }
  if (source_busy (source) || !g_queue_is_empty (&source->held))
    {
      hold (source, parts, sequence, FALSE);
      return;
    }
  if (process_live (source, frames, &batch, sequence) == LIVE_HOLD)
    {
      hold (source, parts, sequence, TRUE);
      release_held (source);
    }
}

static gboolean
topic_wanted (const KvevSubSource *source, const KvevFrame *topic)
{
  gsize len = strlen (source->topic);

  return topic->size >= len && (len == 0 || memcmp (topic->data, source->topic, len) == 0);
}

void
kvev_sub_take_replay (KvevSubSource *source, void *parts_pointer, guint n_parts)
{
  KvevSubscriber *subscriber = source->subscriber;
  zmq_msg_t *parts = parts_pointer;
  KvevFrame frames[4], message[3];
  KvevBatch batch;
  guint64 sequence = 0;
  KvevReplayReply reply;

  /* An answer nobody asked for: the socket is made anew after every
   * request given up on, so only a peer that lies sends one. */
  if (!source->replaying)
    return;
  if (n_parts > 4)
    {
      source->counts[KVEV_SUBSCRIBER_STAT_DECODE_ERRORS]++;
      replay_finish (source, REPLAY_MALFORMED);
      return;
    }
  frames_of (parts, n_parts, frames);
  source->replay_deadline = g_get_monotonic_time ()
                            + subscriber->options[KVEV_SUBSCRIBER_OPTION_REPLAY_TIMEOUT_MS] * 1000;
  reply = kvev_replay_reply_parse (frames, n_parts, message, &sequence);
  if (reply == KVEV_REPLAY_END)
    {
      replay_finish (source, REPLAY_END);
      return;
    }
  if (reply == KVEV_REPLAY_MALFORMED
      || kvev_batch_parse (&batch, message[2].data, message[2].size) != KVEV_PAYLOAD_OK)
    {
      source->counts[KVEV_SUBSCRIBER_STAT_DECODE_ERRORS]++;
      replay_finish (source, REPLAY_MALFORMED);
      return;
    }
  if (sequence <= source->last_sequence)
    return;
  if (sequence >= source->replay_until)
    {
      replay_finish (source, REPLAY_REACHED);
      return;
    }
  if (value_has_bytes (&batch.publisher_id) && source->publisher_id != NULL
      && !same_publisher_id (source->publisher_id, &batch.publisher_id))
    {
      replay_finish (source, REPLAY_FOREIGN);
      return;
    }
  source->replay_recovered++;
  source->counts[KVEV_SUBSCRIBER_STAT_RECOVERED_BY_REPLAY]++;
  source->last_sequence = sequence;
  /* A SUB socket filters by topic; a replay sends every topic. */
  if (topic_wanted (source, &message[0]))
    deliver (source, message, 3, &batch, KVEV_ORIGIN_REPLAY, TRUE, sequence);
  if (source->replaying && sequence == source->replay_until - 1)
    replay_finish (source, REPLAY_COMPLETE);
}

/* Checks one chunk as kvevents(7) SNAPSHOTS describes it, and counts its
 * objects (an object's tiers are together in one chunk). */
static gboolean
check_chunk (KvevSubSource *source, const KvevFrame *body, const char **why)
{
  KvevSubscriberEvent *event = &source->subscriber->event;
  KvevValue last_key = { 0 }, last_tenant = { 0 };
  KvevEventError error;
  KvevBatch batch;
  gsize pos;
  guint i;

  if (kvev_batch_parse (&batch, body->data, body->size) != KVEV_PAYLOAD_OK)
    {
      *why = _ ("a chunk is not a payload [timestamp, events, dp_rank]");
      return FALSE;
    }
  pos = batch.events_pos;
  for (i = 0; kvev_batch_decode_next (&batch, &pos, event, &error); i++)
    {
      if (error != KVEV_EVENT_DECODED || event->tagged || event->kind != KVEV_KIND_STORED
          || !value_has_bytes (&event->object_key)
          || !kvev_value_bytes_equal (&event->backend_id, &source->header.backend_id))
        {
          *why = _ ("a chunk holds an event that is not a stored event of the snapshot's backend");
          return FALSE;
        }
      if (i == 0 || !kvev_value_bytes_equal (&event->object_key, &last_key)
          || !kvev_value_bytes_equal (&event->tenant_id, &last_tenant))
        source->snapshot_objects++;
      last_key = event->object_key;
      last_tenant = event->tenant_id;
      source->snapshot_events++;
    }
  return TRUE;
}

static void
snapshot_apply (KvevSubSource *source, guint64 objects)
{
  KvevSubscriber *subscriber = source->subscriber;
  KvevSubBackend *backend;
  KvevReset reset = { 0 };
  guint i;

  source->snapshotting = FALSE;
  backend = find_backend (subscriber, &source->header.backend_id, source->header.has_dp_rank,
                          source->header.dp_rank);
  /* The failover rule: a replacement since this request was made wins. */
  if (backend != NULL && backend->replaced_at > source->snapshot_asked_at)
    {
      source->counts[KVEV_SUBSCRIBER_STAT_STALE_ANSWERS]++;
      kvev_sub_notice (source, KVEV_NOTICE_STALE, FALSE, 0,
                       _ ("snapshot from %s dropped: another endpoint's snapshot replaced its "
                          "backend after it was asked for"),
                       source->snapshot_endpoint);
      snapshot_clear (source);
      source->superseded = TRUE;
      source->snapshot_failures_in_row = 0;
      kvev_sub_set_state (source, KVEV_SUBSCRIBER_SUPERSEDED, KVEV_SUBSCRIBER_REASON_SUPERSEDED, 0,
                          _ ("another endpoint's snapshot replaced its backend"));
      release_held (source);
      return;
    }
  if (backend == NULL)
    {
      backend = g_new0 (KvevSubBackend, 1);
      backend->type = source->header.backend_id.type;
      backend->backend_id = g_byte_array_new ();
      g_byte_array_append (backend->backend_id, (const guint8 *) source->header.backend_id.data,
                           (guint) source->header.backend_id.len);
      backend->has_dp_rank = source->header.has_dp_rank;
      backend->dp_rank = source->header.dp_rank;
      g_ptr_array_add (subscriber->backends, backend);
    }
  backend->replaced_at = ++subscriber->clock;
  backend->replaced_by = source->index;
  source->bootstrap_clock = backend->replaced_at;
  source->superseded = FALSE;
  source->have_barrier = TRUE;
  source->barrier = source->header.barrier_event_id;

  source->counts[KVEV_SUBSCRIBER_STAT_SNAPSHOTS]++;
  source->counts[KVEV_SUBSCRIBER_STAT_RESETS]++;
  reset.publisher_index = source->index;
  reset.endpoint = source->endpoint;
  reset.backend_id = source->header.backend_id;
  reset.has_dp_rank = source->header.has_dp_rank;
  reset.dp_rank = source->header.dp_rank;
  reset.publisher_id = source->header.publisher_id;
  reset.barrier_event_id = source->header.barrier_event_id;
  reset.objects = objects;
  reset.n_events = source->snapshot_events;
  if (subscriber->reset_func != NULL)
    subscriber->reset_func (subscriber, &reset, subscriber->reset_data);
  for (i = 0; i < source->chunks->len; i++)
    {
      zmq_msg_t *chunk = g_ptr_array_index (source->chunks, i);
      KvevFrame frame;
      KvevBatch batch;

      frames_of (chunk, 1, &frame);
      kvev_batch_parse (&batch, frame.data, frame.size);
      deliver (source, &frame, 1, &batch, KVEV_ORIGIN_SNAPSHOT, FALSE, 0);
    }
  source->counts[KVEV_SUBSCRIBER_STAT_RECOVERED_BY_SNAPSHOT] += source->pending_loss;
  source->pending_loss = 0;
  kvev_sub_notice (
      source, KVEV_NOTICE_SNAPSHOT, FALSE, 0,
      _ ("snapshot from %s: %" PRIu64 " objects, %" PRIu64 " entries, barrier event_id %" PRIu64),
      source->snapshot_endpoint, objects, source->snapshot_events, source->header.barrier_event_id);
  snapshot_clear (source);
  source->snapshot_failures_in_row = 0;
  source->snapshot_retry_at = 0;
  kvev_sub_set_state (source, KVEV_SUBSCRIBER_FOLLOWING, KVEV_SUBSCRIBER_REASON_SNAPSHOT, 0,
                      _ ("snapshot applied; following"));
  release_held (source);
}

void
kvev_sub_take_snapshot (KvevSubSource *source, void *parts_pointer, guint n_parts)
{
  KvevSubscriber *subscriber = source->subscriber;
  zmq_msg_t *parts = parts_pointer;
  KvevFrame frames[4], body;
  KvevSnapshotReply reply;
  const char *why = NULL;
  guint64 objects;

  if (!source->snapshotting)
    return;
  source->snapshot_deadline
      = g_get_monotonic_time ()
        + subscriber->options[KVEV_SUBSCRIBER_OPTION_SNAPSHOT_TIMEOUT_MS] * 1000;
  if (n_parts > 4)
    reply = KVEV_SNAPSHOT_MALFORMED;
  else
    {
      frames_of (parts, n_parts, frames);
      reply = kvev_snapshot_reply_parse (frames, n_parts, &body);
    }

  switch (reply)
    {
    case KVEV_SNAPSHOT_HEADER:
      if (source->snapshot_header_msg == NULL)
        {
          KvevFrame kept;

          source->snapshot_header_msg = keep_part (&parts[2]);
          frames_of (source->snapshot_header_msg, 1, &kept);
          if (kvev_snapshot_header_parse (&kept, &source->header))
            return;
          why = _ ("its header is not a map with barrier_event_id and backend_id");
        }
      else
        why = _ ("it sent a second header");
      break;
    case KVEV_SNAPSHOT_CHUNK:
      if (source->snapshot_header_msg == NULL)
        why = _ ("a chunk came before the header");
      else if (source->snapshot_bytes + body.size
               > (guint64) subscriber->options[KVEV_SUBSCRIBER_OPTION_SNAPSHOT_MAX_BYTES])
        why = _ ("it is larger than the bound of one snapshot");
      else if (check_chunk (source, &body, &why))
        {
          source->snapshot_bytes += body.size;
          g_ptr_array_add (source->chunks, keep_part (&parts[2]));
          return;
        }
      break;
    case KVEV_SNAPSHOT_END:
      if (source->snapshot_header_msg == NULL)
        why = _ ("the end came before the header");
      else if (!kvev_snapshot_end_parse (&body, &objects))
        why = _ ("its end is not a map with objects");
      else if (objects != source->snapshot_objects)
        why = _ ("its end counts other objects than it sent");
      else
        {
          snapshot_apply (source, objects);
          return;
        }
      break;
    case KVEV_SNAPSHOT_ERROR:
      {
        g_autofree char *text = kvev_snapshot_error_parse (&body);
        g_autofree char *reason = g_strdup_printf (_ ("it could not make one: %s"),
                                                   text != NULL ? text : _ ("no reason given"));

        snapshot_failed (source, reason);
        release_held (source);
        return;
      }
    case KVEV_SNAPSHOT_MALFORMED:
    default:
      why = _ ("it sent a reply that is not [\"\", header, map], [\"\", chunk, payload], "
               "[\"\", end, map] or [\"\", error, map]");
      break;
    }
  source->counts[KVEV_SUBSCRIBER_STAT_DECODE_ERRORS]++;
  snapshot_failed (source, why);
  release_held (source);
}

gint64
kvev_sub_check_timers (KvevSubSource *source, gint64 now, gint64 wait_ms)
{
  KvevSubscriber *subscriber = source->subscriber;
  gint64 heartbeat_ms = subscriber->options[KVEV_SUBSCRIBER_OPTION_HEARTBEAT_MS];
  gint64 silence_us = heartbeat_ms * 3000;

#define SOONER(at)                                                                                 \
  (wait_ms = wait_ms < 0 ? MAX (((at) -now) / 1000 + 1, 0)                                         \
                         : MIN (wait_ms, MAX (((at) -now) / 1000 + 1, 0)))
  if (source->replaying && now >= source->replay_deadline)
    replay_finish (source, REPLAY_TIMEOUT);
  if (source->replaying)
    SOONER (source->replay_deadline);
  if (source->snapshotting && now >= source->snapshot_deadline)
    {
      snapshot_failed (source, _ ("it sent nothing in time"));
      release_held (source);
    }
  if (source->snapshotting)
    SOONER (source->snapshot_deadline);
  if (source->snapshot_retry_at != 0 && now >= source->snapshot_retry_at)
    {
      source->snapshot_retry_at = 0;
      if (source->snapshot_socket != NULL && !source->superseded)
        source->snapshot_wanted = TRUE;
      release_held (source);
    }
  if (source->snapshot_retry_at != 0)
    SOONER (source->snapshot_retry_at);
  if (heartbeat_ms > 0 && source->state != KVEV_SUBSCRIBER_SILENT)
    {
      if (now - source->last_arrival >= silence_us)
        {
          source->counts[KVEV_SUBSCRIBER_STAT_SILENCES]++;
          source->state_before_silence = source->state;
          kvev_sub_set_state (source, KVEV_SUBSCRIBER_SILENT, KVEV_SUBSCRIBER_REASON_SILENCE, 0,
                              _ ("nothing came for %" PRId64
                                 " ms, 3 heartbeat intervals: is the publisher running?"),
                              silence_us / 1000);
        }
      else
        SOONER (source->last_arrival + silence_us);
    }
#undef SOONER
  return wait_ms;
}
