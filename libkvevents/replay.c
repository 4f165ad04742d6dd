/* replay.c: the replay buffer and its thread; see replay.h.
 *
 * The protocol is vLLM's (vllm/distributed/kv_events.py): a request is
 * [identity, "", start] with start a big-endian unsigned 64-bit sequence;
 * the answer is every buffered message from start on, each as
 * [identity, "", topic, sequence, payload] like the live ones, then
 * [identity, "", "", 0xFFFFFFFFFFFFFFFF, ""].  A start older than the
 * buffer begins with its oldest message.  Sequences the live stream
 * skipped (events the queue dropped) are skipped here too.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "replay.h"

#include "counter.h"
#include "service.h"

#include <string.h>

/* Messages copied out of the buffer at a time: the lock is the worker's
 * too, and a whole buffer at once would hold it for milliseconds. */
#define CHUNK 64

/* Replies may run ahead of kv_events_replay_rate_bytes by this share of
 * a second's worth: a short replay goes out at once. */
#define BURST_SECONDS 0.125

/* Frames a request may have; one more and it is malformed. */
#define REQUEST_FRAMES 3

typedef struct
{
  guint64 sequence;
  zmq_msg_t message;
} Entry;

struct _KvevReplay
{
  const KvevSettings *settings;
  KvevService *service;

  /* A ring that grows up to settings->replay_buffer_messages, under lock. */
  GMutex lock;
  Entry *entries;
  gsize capacity;
  gsize first;
  gsize length;
  guint64 bytes;

  KvevReplayCounts counts; /* thread-safe through kvev_counter_*() */

  /* The thread's own: bytes it may still send at once, as of refilled. */
  double credit;
  gint64 refilled; /* monotonic, µs */
};

static Entry *
entry_at (KvevReplay *replay, gsize i)
{
  return &replay->entries[(replay->first + i) % replay->capacity];
}

static void
drop_oldest_locked (KvevReplay *replay)
{
  Entry *oldest = entry_at (replay, 0);

  replay->bytes -= zmq_msg_size (&oldest->message);
  zmq_msg_close (&oldest->message);
  replay->first = (replay->first + 1) % replay->capacity;
  replay->length--;
}

static void
grow_locked (KvevReplay *replay)
{
  gsize capacity = MIN (MAX (replay->capacity * 2, 64), replay->settings->replay_buffer_messages);
  Entry *entries = g_new (Entry, capacity);
  gsize i;

  for (i = 0; i < replay->length; i++)
    {
      entries[i].sequence = entry_at (replay, i)->sequence;
      zmq_msg_init (&entries[i].message);
      zmq_msg_move (&entries[i].message, &entry_at (replay, i)->message);
    }
  g_free (replay->entries);
  replay->entries = entries;
  replay->capacity = capacity;
  replay->first = 0;
}

void
kvev_replay_keep (KvevReplay *replay, guint64 sequence, zmq_msg_t *message, gboolean heartbeat)
{
  const KvevSettings *settings = replay->settings;
  gsize size = zmq_msg_size (message);
  Entry *entry;

  g_mutex_lock (&replay->lock);
  /* A message larger than the whole budget is not kept: a replay shows
   * its sequence missing, as a loss. */
  while (replay->length > 0
         && (replay->length >= settings->replay_buffer_messages
             || replay->bytes + size > settings->replay_buffer_bytes))
    drop_oldest_locked (replay);
  if (size <= settings->replay_buffer_bytes)
    {
      if (replay->length == replay->capacity)
        grow_locked (replay);
      entry = entry_at (replay, replay->length);
      entry->sequence = sequence;
      zmq_msg_init (&entry->message);
      zmq_msg_move (&entry->message, message);
      replay->length++;
      replay->bytes += size;
    }
  kvev_counter_set (&replay->counts.buffered_messages, replay->length);
  kvev_counter_set (&replay->counts.buffered_bytes, replay->bytes);
  g_mutex_unlock (&replay->lock);
}

/* The index of the first entry with a sequence of at least start. */
static gsize
find_locked (KvevReplay *replay, guint64 start)
{
  gsize low = 0, high = replay->length;

  while (low < high)
    {
      gsize middle = low + (high - low) / 2;

      if (entry_at (replay, middle)->sequence < start)
        low = middle + 1;
      else
        high = middle;
    }
  return low;
}

/* The newest buffered sequence; FALSE when the buffer is empty. */
static gboolean
newest_sequence (KvevReplay *replay, guint64 *newest)
{
  gboolean any;

  g_mutex_lock (&replay->lock);
  any = replay->length > 0;
  if (any)
    *newest = entry_at (replay, replay->length - 1)->sequence;
  g_mutex_unlock (&replay->lock);
  return any;
}

/* Copies out up to CHUNK messages from start to until; returns how many. */
static guint
copy_chunk (KvevReplay *replay, guint64 start, guint64 until, Entry *out)
{
  gsize i, n = 0;

  g_mutex_lock (&replay->lock);
  for (i = find_locked (replay, start);
       i < replay->length && n < CHUNK && entry_at (replay, i)->sequence <= until; i++, n++)
    {
      out[n].sequence = entry_at (replay, i)->sequence;
      zmq_msg_init (&out[n].message);
      zmq_msg_copy (&out[n].message, &entry_at (replay, i)->message);
    }
  g_mutex_unlock (&replay->lock);
  return (guint) n;
}

/* Holds the thread back while replies have gone out faster than
 * kv_events_replay_rate_bytes.  FALSE when kvev_replay_stop() came
 * meanwhile. */
static gboolean
pace (KvevReplay *replay, gsize bytes)
{
  double rate = replay->settings->replay_rate_bytes;
  gint64 now = g_get_monotonic_time ();

  if (rate == 0)
    return TRUE;
  replay->credit = MIN (replay->credit + (double) (now - replay->refilled) * rate / G_USEC_PER_SEC,
                        rate * BURST_SECONDS);
  replay->refilled = now;
  replay->credit -= (double) bytes;
  return replay->credit >= 0
         || kvev_service_wait (replay->service, (long) (-replay->credit * 1000 / rate) + 1);
}

static gboolean
send_reply (KvevReplay *replay, zmq_msg_t *identity, const void *topic, gsize topic_len,
            guint64 sequence, zmq_msg_t *payload)
{
  void *socket = kvev_service_socket (replay->service);
  guint64 sequence_be = GUINT64_TO_BE (sequence);

  if (!kvev_service_send_identity (replay->service, identity))
    return FALSE;
  zmq_send (socket, "", 0, ZMQ_SNDMORE);
  zmq_send (socket, topic, topic_len, ZMQ_SNDMORE);
  zmq_send (socket, &sequence_be, sizeof sequence_be, ZMQ_SNDMORE);
  if (payload != NULL)
    zmq_msg_send (payload, socket, 0);
  else
    zmq_send (socket, "", 0, 0);
  return TRUE;
}

static void
answer (KvevReplay *replay, zmq_msg_t *identity, guint64 start)
{
  const KvevSettings *settings = replay->settings;
  Entry chunk[CHUNK];
  gboolean sending = TRUE;
  guint64 until = 0;
  guint n, i;

  kvev_counter_add (&replay->counts.requests, 1);
  /* The answer ends at what was buffered when the request came: the
   * messages after it reach the subscriber live, and a reply that chased
   * the head could never end while the publisher outpaces the reader. */
  if (!newest_sequence (replay, &until))
    start = G_MAXUINT64;
  while (sending && start <= until && (n = copy_chunk (replay, start, until, chunk)) > 0)
    {
      for (i = 0; i < n; i++)
        {
          gsize size = zmq_msg_size (&chunk[i].message);

          if (sending
              && (sending = send_reply (replay, identity, settings->topic, settings->topic_len,
                                        chunk[i].sequence, &chunk[i].message)))
            {
              kvev_counter_add (&replay->counts.messages, 1);
              sending = pace (replay, size);
            }
          zmq_msg_close (&chunk[i].message);
        }
      start = chunk[n - 1].sequence + 1;
    }
  if (sending)
    send_reply (replay, identity, "", 0, G_MAXUINT64, NULL);
}

/* Answers a well-formed request: [identity, "", start]. */
static void
serve_request (KvevService *service, zmq_msg_t *frames, guint n_frames, gpointer data)
{
  KvevReplay *replay = data;
  guint64 start_be;

  if (n_frames != REQUEST_FRAMES || zmq_msg_size (&frames[1]) != 0
      || zmq_msg_size (&frames[2]) != sizeof start_be)
    {
      kvev_counter_add (&replay->counts.malformed_requests, 1);
      return;
    }
  memcpy (&start_be, zmq_msg_data (&frames[2]), sizeof start_be);
  answer (replay, &frames[0], GUINT64_FROM_BE (start_be));
}

KvevReplay *
kvev_replay_start (const KvevSettings *settings, void *context, void *socket, GError **error)
{
  KvevReplay *replay = g_new0 (KvevReplay, 1);

  replay->settings = settings;
  g_mutex_init (&replay->lock);
  if (!kvev_service_start (&replay->service, "kvev-replay", context, socket, REQUEST_FRAMES,
                           serve_request, replay, error))
    {
      g_prefix_error (error, _ ("Cannot start replay: "));
      g_mutex_clear (&replay->lock);
      g_free (replay);
      return NULL;
    }
  return replay;
}

void
kvev_replay_counts (const KvevReplay *replay, KvevReplayCounts *counts)
{
  counts->requests = kvev_counter_get (&replay->counts.requests);
  counts->malformed_requests = kvev_counter_get (&replay->counts.malformed_requests);
  counts->messages = kvev_counter_get (&replay->counts.messages);
  counts->buffered_messages = kvev_counter_get (&replay->counts.buffered_messages);
  counts->buffered_bytes = kvev_counter_get (&replay->counts.buffered_bytes);
}

void
kvev_replay_stop (KvevReplay *replay)
{
  if (replay == NULL)
    return;
  kvev_service_stop (replay->service);
  while (replay->length > 0)
    drop_oldest_locked (replay);
  g_free (replay->entries);
  g_mutex_clear (&replay->lock);
  g_free (replay);
}
