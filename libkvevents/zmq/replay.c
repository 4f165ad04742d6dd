/* replay.c: the replay thread; see replay.h.
 *
 * The protocol is vLLM's (vllm/distributed/kv_events.py): a request is
 * [identity, "", start] with start a big-endian unsigned 64-bit sequence;
 * the answer is every buffered message from start on, each as
 * [identity, "", topic, sequence, payload] like the live ones, then
 * [identity, "", "", 0xFFFFFFFFFFFFFFFF, ""].  A start older than the
 * buffer begins with its oldest message.  Sequences the live stream
 * skipped (events the queue dropped) are skipped here too.
 *
 * The thread never waits for a reader: each peer has a cursor, every
 * send is ZMQ_DONTWAIT (the ROUTER's ZMQ_ROUTER_MANDATORY says EAGAIN
 * for a full pipe, EHOSTUNREACH for a peer gone), and the peers with a
 * reply take one message each in turn.  What replies leave in the
 * peers' pipes is counted in ledgers (ledger.h) until libzmq frees it,
 * and bounded per peer and in all; what they send is paced by
 * kv_events_replay_rate_bytes, all replies together.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "replay.h"

#include "counter.h"
#include "ledger.h"
#include "replay-buffer.h"
#include "service.h"

#include <errno.h>
#include <string.h>

/* Replies may run ahead of kv_events_replay_rate_bytes by this share of
 * a second's worth: a short replay goes out at once. */
#define BURST_SECONDS 0.125

/* Frames a request may have; one more and it is malformed. */
#define REQUEST_FRAMES 3

/* The requests of one peer held at once, the one being answered
 * included.  A second request while a reply goes on is a client that
 * saw another gap, or one that retries: it is queued and answered in
 * order, each from what was buffered when it was read, so that no
 * client loses what it asked for; a peer that asks more often than it
 * reads gets its requests beyond these counted in refused_requests and
 * never answered, so that it cannot make the master hold a queue. */
#define QUEUED_REQUESTS 4

/* The bytes of replies one peer's pipe may hold: this share of the
 * total, so that a few stalled peers leave room for the others. */
#define PEER_SHARE 8

/* A peer that neither took a message nor read one for this long loses
 * the rest of its reply. */
#define STALL_US (5 * G_USEC_PER_SEC)

/* When every peer with a reply is blocked, the thread looks again after
 * this long, doubling up to the most while none moves: a peer's reading
 * shows only in its ledger, which nothing wakes the thread for. */
#define BACKOFF_MIN_MS 1
#define BACKOFF_MAX_MS 50

/* The fewest peers remembered before the first sweep of those done. */
#define SWEEP_MIN 64

/* Messages one turn of the pump sends at most before the thread looks
 * at new requests and at kvev_replay_stop() again. */
#define MESSAGES_PER_TURN 1024

/* One request: the sequences from next to until, then the end marker.
 * until is the newest buffered when the request was read: the messages
 * after it reach the subscriber live, and a reply that chased the head
 * could never end while the publisher outpaces the reader. */
typedef struct
{
  guint64 next;
  guint64 until; /* next > until: only the end marker is left */
} Request;

typedef struct
{
  GBytes *identity;
  KvevLedger *ledger; /* the bytes of its replies libzmq still holds */
  Request requests[QUEUED_REQUESTS];
  guint n_requests;
  gboolean active;     /* in KvevReplay's active queue */
  gboolean stalled;    /* lost a reply: refused while its ledger holds bytes */
  gint64 progressed;   /* when it last took or read a message, monotonic µs */
  gsize progress_held; /* its ledger's bytes then */
} Peer;

struct _KvevReplay
{
  const KvevSettings *settings;
  KvevService *service;
  KvevReplayBuffer *buffer;

  KvevReplayCounts counts; /* thread-safe through kvev_counter_*() */

  /* The thread's own, but for total's bytes, which any thread reads. */
  KvevLedger *total;
  gsize total_bound;
  gsize peer_bound;
  GHashTable *peers; /* identity GBytes to Peer */
  guint sweep_at;    /* the table's size that calls for a sweep */
  GQueue active;     /* the peers with a request, in turn */
  long backoff_ms;
  /* Bytes replies may still send at once, as of refilled. */
  double credit;
  gint64 refilled; /* monotonic, µs */
};

static void
peer_free (gpointer data)
{
  Peer *peer = data;

  g_bytes_unref (peer->identity);
  kvev_ledger_unref (peer->ledger);
  g_free (peer);
}

void
kvev_replay_keep (KvevReplay *replay, guint64 sequence, zmq_msg_t *message, gboolean heartbeat)
{
  kvev_replay_buffer_keep (replay->buffer, sequence, message, heartbeat);
  /* Emptied by the move: closing it frees nothing. */
  zmq_msg_close (message);
}

/* Forgets the peers that have nothing to send and nothing in their
 * pipes, gone or done: a peer is remembered while its ledger holds
 * bytes, so that it is bounded across its requests, and a stalled one
 * stays refused.  Only once the table has doubled since the last sweep,
 * so that many peers cost each new one a constant share of a sweep. */
static void
sweep_peers (KvevReplay *replay)
{
  GHashTableIter iter;
  gpointer value;

  if (g_hash_table_size (replay->peers) < replay->sweep_at)
    return;
  g_hash_table_iter_init (&iter, replay->peers);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      Peer *peer = value;

      if (!peer->active && kvev_ledger_bytes (peer->ledger) == 0)
        g_hash_table_iter_remove (&iter);
    }
  replay->sweep_at = MAX (2 * g_hash_table_size (replay->peers), SWEEP_MIN);
}

static Peer *
find_peer (KvevReplay *replay, zmq_msg_t *identity)
{
  g_autoptr (GBytes) key = g_bytes_new_static (zmq_msg_data (identity), zmq_msg_size (identity));
  Peer *peer = g_hash_table_lookup (replay->peers, key);

  if (peer != NULL)
    return peer;
  sweep_peers (replay);
  peer = g_new0 (Peer, 1);
  peer->identity = g_bytes_new (zmq_msg_data (identity), zmq_msg_size (identity));
  peer->ledger = kvev_ledger_new (replay->total);
  g_hash_table_insert (replay->peers, peer->identity, peer);
  return peer;
}

/* Takes a well-formed request of peer's, or counts it refused. */
static void
take_request (KvevReplay *replay, Peer *peer, guint64 start)
{
  Request *request;
  guint64 newest;

  if (peer->stalled && kvev_ledger_bytes (peer->ledger) > 0)
    {
      kvev_counter_add (&replay->counts.refused_requests, 1);
      return;
    }
  peer->stalled = FALSE;
  if (peer->n_requests == QUEUED_REQUESTS)
    {
      kvev_counter_add (&replay->counts.refused_requests, 1);
      return;
    }
  kvev_counter_add (&replay->counts.requests, 1);
  request = &peer->requests[peer->n_requests++];
  if (kvev_replay_buffer_newest (replay->buffer, &newest))
    *request = (Request){ start, newest };
  else
    *request = (Request){ 1, 0 };
  if (!peer->active)
    {
      peer->active = TRUE;
      peer->progressed = g_get_monotonic_time ();
      peer->progress_held = kvev_ledger_bytes (peer->ledger);
      g_queue_push_tail (&replay->active, peer);
    }
}

/* Reads a request: [identity, "", start]. */
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
  take_request (replay, find_peer (replay, &frames[0]), GUINT64_FROM_BE (start_be));
}

/* Whether the bytes of one more message fit the bounds: always one for a
 * peer that holds none, so that a message larger than its share still
 * goes, and one when no peer holds any. */
static gboolean
fits (KvevReplay *replay, Peer *peer, gsize size)
{
  gsize total = kvev_ledger_bytes (replay->total);
  gsize held = kvev_ledger_bytes (peer->ledger);

  return (total == 0 || total + size <= replay->total_bound)
         && (held == 0 || held + size <= replay->peer_bound);
}

/* Sends [identity, "", topic, sequence, payload], payload counted in the
 * peer's ledger, or the end marker for a NULL payload, which it closes.
 * 0, or why not: EAGAIN for a full pipe, another errno for a peer gone. */
static int
send_reply (KvevReplay *replay, Peer *peer, guint64 sequence, zmq_msg_t *payload)
{
  const KvevSettings *settings = replay->settings;
  void *socket = kvev_service_socket (replay->service);
  guint64 sequence_be = GUINT64_TO_BE (sequence);
  gsize identity_len;
  gconstpointer identity = g_bytes_get_data (peer->identity, &identity_len);
  zmq_msg_t shared;
  int error = kvev_service_offer_identity (replay->service, identity, identity_len);

  if (error != 0)
    {
      if (payload != NULL)
        zmq_msg_close (payload);
      return error;
    }
  zmq_send (socket, "", 0, ZMQ_SNDMORE);
  if (payload == NULL)
    {
      zmq_send (socket, "", 0, ZMQ_SNDMORE);
      zmq_send (socket, &sequence_be, sizeof sequence_be, ZMQ_SNDMORE);
      zmq_send (socket, "", 0, 0);
      return 0;
    }
  zmq_send (socket, settings->topic, settings->topic_len, ZMQ_SNDMORE);
  zmq_send (socket, &sequence_be, sizeof sequence_be, ZMQ_SNDMORE);
  /* On a failure shared is empty: the multipart message must end. */
  kvev_ledger_init_shared (peer->ledger, &shared, payload);
  zmq_msg_close (payload);
  if (zmq_msg_send (&shared, socket, 0) < 0)
    zmq_msg_close (&shared);
  return 0;
}

typedef enum
{
  STEP_SENT,    /* a message or an end marker went */
  STEP_BLOCKED, /* its pipe or a bound is full */
  STEP_DONE,    /* no request left, or the peer is gone */
} Step;

/* One message of peer's first request, or its end marker. */
static Step
step (KvevReplay *replay, Peer *peer, gint64 now)
{
  Request *request = &peer->requests[0];
  zmq_msg_t payload;
  guint64 sequence;
  int error;

  if (request->next <= request->until)
    {
      /* Nothing left from next on: the buffer let the rest go. */
      if (!kvev_replay_buffer_get (replay->buffer, request->next, request->until, &sequence,
                                   &payload))
        request->next = request->until + 1;
      else
        {
          gsize size = zmq_msg_size (&payload);

          if (!fits (replay, peer, size))
            {
              zmq_msg_close (&payload);
              return STEP_BLOCKED;
            }
          error = send_reply (replay, peer, sequence, &payload);
          if (error == EAGAIN)
            return STEP_BLOCKED;
          if (error != 0)
            {
              peer->n_requests = 0;
              return STEP_DONE;
            }
          request->next = sequence + 1;
          kvev_counter_add (&replay->counts.messages, 1);
          replay->credit -= (double) size;
          peer->progressed = now;
          return STEP_SENT;
        }
    }
  error = send_reply (replay, peer, G_MAXUINT64, NULL);
  if (error == EAGAIN)
    return STEP_BLOCKED;
  peer->progressed = now;
  if (error != 0)
    peer->n_requests = 0;
  else
    memmove (&peer->requests[0], &peer->requests[1], --peer->n_requests * sizeof (Request));
  return peer->n_requests > 0 ? STEP_SENT : STEP_DONE;
}

/* Whether a blocked peer is still worth waiting for: it read something
 * within STALL_US.  Otherwise it loses the rest of its reply and the
 * requests it queued, and is refused until its ledger is at 0. */
static gboolean
still_waiting (KvevReplay *replay, Peer *peer, gint64 now)
{
  gsize held = kvev_ledger_bytes (peer->ledger);

  if (held < peer->progress_held)
    peer->progressed = now;
  peer->progress_held = held;
  if (now - peer->progressed <= STALL_US)
    return TRUE;
  kvev_counter_add (&replay->counts.abandoned_replies, 1);
  kvev_counter_add (&replay->counts.refused_requests, peer->n_requests - 1);
  peer->n_requests = 0;
  peer->stalled = TRUE;
  return FALSE;
}

static void
refill (KvevReplay *replay, gint64 now)
{
  double rate = replay->settings->replay_rate_bytes;

  if (rate == 0)
    return;
  replay->credit = MIN (replay->credit + (double) (now - replay->refilled) * rate / G_USEC_PER_SEC,
                        rate * BURST_SECONDS);
  replay->refilled = now;
}

/* Whether the pace lets replies go on now. */
static gboolean
paced (KvevReplay *replay)
{
  return replay->settings->replay_rate_bytes == 0 || replay->credit >= 0;
}

/* Sends what the peers with a reply can take, a message each in turn,
 * until every one is blocked, the pace says wait, or MESSAGES_PER_TURN
 * went; see KvevPumpFunc. */
static long
pump (KvevService *service, gpointer data)
{
  KvevReplay *replay = data;
  gint64 now = g_get_monotonic_time ();
  guint sent = 0, moved;

  refill (replay, now);
  do
    {
      guint n = g_queue_get_length (&replay->active), i;

      moved = 0;
      for (i = 0; i < n && paced (replay) && sent + moved < MESSAGES_PER_TURN; i++)
        {
          Peer *peer = g_queue_pop_head (&replay->active);

          switch (step (replay, peer, now))
            {
            case STEP_SENT:
              g_queue_push_tail (&replay->active, peer);
              moved++;
              break;
            case STEP_BLOCKED:
              if (still_waiting (replay, peer, now))
                {
                  g_queue_push_tail (&replay->active, peer);
                  break;
                }
              G_GNUC_FALLTHROUGH;
            case STEP_DONE:
              peer->active = FALSE;
              moved++;
              if (kvev_ledger_bytes (peer->ledger) == 0)
                g_hash_table_remove (replay->peers, peer->identity);
              break;
            }
        }
      sent += moved;
    }
  while (moved > 0 && paced (replay) && sent < MESSAGES_PER_TURN
         && !g_queue_is_empty (&replay->active));

  if (g_queue_is_empty (&replay->active))
    {
      replay->backoff_ms = 0;
      return -1;
    }
  if (!paced (replay))
    {
      replay->backoff_ms = 0;
      return (long) (-replay->credit * 1000 / replay->settings->replay_rate_bytes) + 1;
    }
  if (sent >= MESSAGES_PER_TURN)
    {
      replay->backoff_ms = 0;
      return 0;
    }
  /* Every peer is blocked. */
  replay->backoff_ms = sent > 0 || replay->backoff_ms == 0
                           ? BACKOFF_MIN_MS
                           : MIN (replay->backoff_ms * 2, BACKOFF_MAX_MS);
  return replay->backoff_ms;
}

KvevReplay *
kvev_replay_start (const KvevSettings *settings, const KvevNet *net, GError **error)
{
  KvevReplay *replay = g_new0 (KvevReplay, 1);

  replay->settings = settings;
  replay->buffer
      = kvev_replay_buffer_new (settings->replay_buffer_messages, settings->replay_buffer_bytes);
  replay->total = kvev_ledger_new (NULL);
  /* Replies hold at most what the buffer may: replay holds at most twice
   * its budget, whatever its peers do. */
  replay->total_bound = settings->replay_buffer_bytes;
  replay->peer_bound = MAX (replay->total_bound / PEER_SHARE, 1);
  replay->peers = g_hash_table_new_full (g_bytes_hash, g_bytes_equal, NULL, peer_free);
  replay->sweep_at = SWEEP_MIN;
  g_queue_init (&replay->active);
  if (!kvev_service_start_pumped (&replay->service, "kvev-replay", kvev_net_context (net),
                                  kvev_net_socket (net, KVEV_NET_REPLAY), REQUEST_FRAMES,
                                  serve_request, pump, replay, error))
    {
      g_prefix_error (error, _ ("Cannot start replay: "));
      g_hash_table_destroy (replay->peers);
      kvev_ledger_unref (replay->total);
      kvev_replay_buffer_free (replay->buffer);
      g_free (replay);
      return NULL;
    }
  return replay;
}

void
kvev_replay_counts (const KvevReplay *replay, KvevReplayCounts *counts)
{
  if (replay == NULL)
    {
      memset (counts, 0, sizeof *counts);
      return;
    }
  counts->requests = kvev_counter_get (&replay->counts.requests);
  counts->malformed_requests = kvev_counter_get (&replay->counts.malformed_requests);
  counts->refused_requests = kvev_counter_get (&replay->counts.refused_requests);
  counts->abandoned_replies = kvev_counter_get (&replay->counts.abandoned_replies);
  counts->messages = kvev_counter_get (&replay->counts.messages);
  counts->held_bytes = kvev_ledger_bytes (replay->total);
  kvev_replay_buffer_counts (replay->buffer, &counts->buffered_messages, &counts->buffered_bytes);
}

void
kvev_replay_stop (KvevReplay *replay)
{
  if (replay == NULL)
    return;
  /* The thread never waits for a peer, so neither does this; what the
   * pipes still hold keeps its ledgers alive until libzmq frees it. */
  kvev_service_stop (replay->service);
  g_queue_clear (&replay->active);
  g_hash_table_destroy (replay->peers);
  kvev_ledger_unref (replay->total);
  kvev_replay_buffer_free (replay->buffer);
  g_free (replay);
}
