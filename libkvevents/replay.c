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
#include "replay-buffer.h"
#include "service.h"

#include <string.h>

/* Replies may run ahead of kv_events_replay_rate_bytes by this share of
 * a second's worth: a short replay goes out at once. */
#define BURST_SECONDS 0.125

/* Frames a request may have; one more and it is malformed. */
#define REQUEST_FRAMES 3

struct _KvevReplay
{
  const KvevSettings *settings;
  KvevService *service;

  KvevReplayBuffer *buffer;

  KvevReplayCounts counts; /* thread-safe through kvev_counter_*() */

  /* The thread's own: bytes it may still send at once, as of refilled. */
  double credit;
  gint64 refilled; /* monotonic, µs */
};

void
kvev_replay_keep (KvevReplay *replay, guint64 sequence, zmq_msg_t *message, gboolean heartbeat)
{
  kvev_replay_buffer_keep (replay->buffer, sequence, message, heartbeat);
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
  gboolean sending = TRUE;
  guint64 until = 0, sequence;
  zmq_msg_t payload;

  kvev_counter_add (&replay->counts.requests, 1);
  /* The answer ends at what was buffered when the request came: the
   * messages after it reach the subscriber live, and a reply that chased
   * the head could never end while the publisher outpaces the reader. */
  if (!kvev_replay_buffer_newest (replay->buffer, &until))
    start = G_MAXUINT64;
  while (sending && start <= until
         && kvev_replay_buffer_get (replay->buffer, start, until, &sequence, &payload))
    {
      gsize size = zmq_msg_size (&payload);

      sending
          = send_reply (replay, identity, settings->topic, settings->topic_len, sequence, &payload);
      zmq_msg_close (&payload);
      if (sending)
        {
          kvev_counter_add (&replay->counts.messages, 1);
          sending = pace (replay, size);
        }
      start = sequence + 1;
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
  replay->buffer
      = kvev_replay_buffer_new (settings->replay_buffer_messages, settings->replay_buffer_bytes);
  if (!kvev_service_start (&replay->service, "kvev-replay", context, socket, REQUEST_FRAMES,
                           serve_request, replay, error))
    {
      g_prefix_error (error, _ ("Cannot start replay: "));
      kvev_replay_buffer_free (replay->buffer);
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
  kvev_replay_buffer_counts (replay->buffer, &counts->buffered_messages, &counts->buffered_bytes);
}

void
kvev_replay_stop (KvevReplay *replay)
{
  if (replay == NULL)
    return;
  kvev_service_stop (replay->service);
  kvev_replay_buffer_free (replay->buffer);
  g_free (replay);
}
