/* snapshot-server.c: snapshot requests and the walks that answer them;
 * see snapshot-server.h.
 *
 * A request is [identity, "", "snapshot"].  The answer, all to that
 * identity after the delimiter, each a message of its own:
 *   ["header", {"barrier_event_id": B, "publisher_id": ID, "backend_id": S,
 *               "dp_rank": R}]
 *   ["chunk", payload] any number of times, each payload an ordinary
 *     [timestamp_ms, [stored maps], dp_rank], every map's event_id B
 *   ["end", {"objects": N}], or ["error", {"message": TEXT}] instead
 * with the maps in msgpack.  B is the last event_id the publisher had
 * accepted when the walk began: applying the chunks, then every live
 * event with an event_id above B, in order, ends in the master's state
 * (kvevents(7), SNAPSHOTS, says why).  One walk at a time; requests that
 * come meanwhile wait their turn.
 *
 * The walk runs the master's function, which holds the master's locks
 * around kvev_snapshot_add(): nothing there waits for the subscriber.
 * Every send is ZMQ_DONTWAIT, and a chunk the subscriber's pipe has no
 * room for is held; a ledger counts what the snapshot made until libzmq
 * frees it, so that what a slow or silent subscriber costs is bounded in
 * bytes, and the walk waits for it only in kvev_snapshot_pause(), which
 * the master calls with no lock held, and after the walk.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "snapshot-server.h"

#include "counter.h"
#include "events/encode.h"
#include "fault.h"
#include "ledger.h"
#include "precondition.h"
#include "service.h"
#include <base/utf8.h>

#include <errno.h>
#include <msgpack.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#define REQUEST_FRAMES 3

/* What one snapshot may have made and libzmq not yet written out: held
 * chunks and those in the subscriber's pipe.  Eight of the largest
 * chunks (KVEV_MAX_MESSAGE_BYTES), and thousands of usual ones. */
#define HELD_BYTES (8u * 1024 * 1024)

/* What every subscriber's unread snapshots may hold together.  A request
 * that finds more than TOTAL_BYTES - HELD_BYTES held is refused, so a
 * walk never takes the total over it. */
#define TOTAL_BYTES (32u * 1024 * 1024)

/* How long one snapshot may wait for its subscriber, in all.  Time the
 * subscriber spends reading at MIN_READ_RATE or faster is given back, so
 * a large snapshot to a steady reader never runs out, and one that takes
 * a frame now and then to keep the walk waiting does. */
#define WAIT_BUDGET_US (5 * G_USEC_PER_SEC)
#define MIN_READ_RATE (1024.0 * 1024)

/* Walk time that may go at once after a quiet time, past
 * kv_events_snapshot_duty_percent: a first snapshot is not slowed. */
#define BURST_US ((double) G_USEC_PER_SEC)

/* How long a wait for the subscriber sleeps before it looks again: its
 * pipe says nothing when it has room. */
#define WAIT_SLICE_MS 1

/* Why a walk stops before its function returns. */
typedef enum
{
  GOING = 0,
  STOP_GONE,      /* the subscriber went away */
  STOP_BEHIND,    /* it holds HELD_BYTES and more */
  STOP_BUDGET,    /* it read too slowly for WAIT_BUDGET_US */
  STOP_STOPPING,  /* the publisher is being freed */
  STOP_REPLACING, /* the master replaces its function */
} StopReason;

/* What a subscriber is told when its snapshot stops; wire text, read by
 * programs, so not translated. */
static const char *const stop_messages[] = {
  [STOP_BEHIND] = "the subscriber fell too far behind the walk",
  [STOP_BUDGET] = "the subscriber read the snapshot too slowly",
  [STOP_STOPPING] = "the publisher is stopping",
  [STOP_REPLACING] = "the master replaced its snapshot function",
};

struct _KvevSnapshotServer
{
  const KvevSettings *settings;
  KvevSnapshotSource *source;
  KvevSnapshotBarrier barrier;
  gpointer barrier_data;
  KvevService *service;
  KvevEncoder *encoder;
  KvevSnapshotCounts counts;
  gint stopping; /* atomic: kvev_snapshot_server_stop() began */
  KvevLedger *total;
  /* Subscribers whose last snapshot libzmq still holds: identity (GBytes)
   * to its ledger.  One walk per subscriber at a time, and none for one
   * that does not read. */
  GHashTable *unread;
  /* The thread's own: walk time it may still take at once (µs), as of
   * refilled. */
  double credit;
  gint64 refilled;
};

struct _KvevSnapshot
{
  KvevSnapshotServer *server;
  zmq_msg_t *identity;
  KvevLedger *ledger;
  guint64 barrier;
  StopReason stop;
  GQueue held;     /* zmq_msg_t *, chunk payloads the pipe had no room for */
  gsize made;      /* bytes of every chunk made, held or sent */
  gsize read_mark; /* of them, what libzmq had freed at the last look */
  gint64 budget;   /* µs it may still wait */
  gint64 walk_mark;
  guint64 objects;
  /* The chunk being filled: calls, their events, the payload bound. */
  KvevCall **calls;
  KvevEvent *events;
  guint n_calls;
  guint n_events;
  gsize bytes;
};

/* Offers [identity, "", kind, body] without waiting; body is taken when
 * it goes.  EAGAIN: the subscriber's pipe is full (ZMQ_ROUTER_MANDATORY
 * says so instead of dropping); another errno: it is gone. */
static int
offer (KvevSnapshotServer *server, zmq_msg_t *identity, const char *kind, zmq_msg_t *body)
{
  void *socket = kvev_service_socket (server->service);
  int error = kvev_service_offer_identity (server->service, zmq_msg_data (identity),
                                           zmq_msg_size (identity));

  if (error != 0)
    return error;
  zmq_send (socket, "", 0, ZMQ_SNDMORE);
  zmq_send (socket, kind, strlen (kind), ZMQ_SNDMORE);
  zmq_msg_send (body, socket, 0);
  return 0;
}

/* One member of a reply's map: a str when text is set, else a uint. */
typedef struct
{
  const char *key;
  guint64 number;
  const char *text;
} Member;

/* Offers a small map; they are not held: 0 or the errno of offer(). */
static int
offer_map (KvevSnapshotServer *server, zmq_msg_t *identity, const char *kind, const Member *members,
           guint n_members)
{
  msgpack_sbuffer buffer;
  msgpack_packer packer;
  zmq_msg_t body;
  guint i;
  int error;

  msgpack_sbuffer_init (&buffer);
  msgpack_packer_init (&packer, &buffer, msgpack_sbuffer_write);
  msgpack_pack_map (&packer, n_members);
  for (i = 0; i < n_members; i++)
    {
      msgpack_pack_str_with_body (&packer, members[i].key, strlen (members[i].key));
      if (members[i].text != NULL)
        msgpack_pack_str_with_body (&packer, members[i].text, strlen (members[i].text));
      else
        msgpack_pack_uint64 (&packer, members[i].number);
    }
  zmq_msg_init_size (&body, buffer.size);
  memcpy (zmq_msg_data (&body), buffer.data, buffer.size);
  msgpack_sbuffer_destroy (&buffer);
  error = offer (server, identity, kind, &body);
  zmq_msg_close (&body);
  return error;
}

/* An error, when the subscriber has room for it: nothing waits. */
static void
offer_error (KvevSnapshotServer *server, zmq_msg_t *identity, const char *message)
{
  const Member member = { "message", 0, message };

  offer_map (server, identity, "error", &member, 1);
}

/* Whether the walk goes on; the first reason to stop stays. */
static gboolean
going (KvevSnapshot *snapshot)
{
  if (snapshot->stop != GOING)
    return FALSE;
  if (g_atomic_int_get (&snapshot->server->stopping))
    snapshot->stop = STOP_STOPPING;
  else if (kvev_snapshot_source_replacing (snapshot->server->source))
    snapshot->stop = STOP_REPLACING;
  else if (kvev_ledger_bytes (snapshot->ledger) > HELD_BYTES)
    snapshot->stop = STOP_BEHIND;
  return snapshot->stop == GOING;
}

/* Hands held chunks to the pipe, oldest first, while it has room. */
static void
offer_held (KvevSnapshot *snapshot)
{
  zmq_msg_t *chunk;

  while (snapshot->stop != STOP_GONE && (chunk = g_queue_peek_head (&snapshot->held)) != NULL)
    {
      int error = offer (snapshot->server, snapshot->identity, "chunk", chunk);

      if (error == EAGAIN)
        return;
      if (error != 0)
        snapshot->stop = STOP_GONE;
      zmq_msg_close (chunk);
      g_free (g_queue_pop_head (&snapshot->held));
    }
}

static void
free_payload (gpointer payload)
{
  free (payload);
}

static void
flush_chunk (KvevSnapshot *snapshot)
{
  KvevSnapshotServer *server = snapshot->server;
  gsize len;
  char *payload;
  guint i;

  if (snapshot->n_events > 0 && snapshot->stop == GOING)
    {
      zmq_msg_t *chunk = g_new (zmq_msg_t, 1);

      payload = kvev_encode_batch (server->encoder, KVEV_NOW_MS (), snapshot->events,
                                   snapshot->n_events, &len);
      snapshot->made += len;
      kvev_ledger_init_data (snapshot->ledger, chunk, payload, len, free_payload, payload);
      g_queue_push_tail (&snapshot->held, chunk);
      offer_held (snapshot);
    }
  for (i = 0; i < snapshot->n_calls; i++)
    g_free (snapshot->calls[i]);
  snapshot->n_calls = snapshot->n_events = 0;
  snapshot->bytes = kvev_encode_batch_bound (server->encoder);
}

gboolean
kvev_snapshot_add (KvevSnapshot *snapshot, const char *tenant_id, const char *object_key,
                   gssize key_len, const char *group_id, KvevMedia media)
{
  const KvevSettings *settings;
  gsize tenant_len, key_bytes, group_len, bound = 0;
  gboolean utf8;
  KvevCall *call;
  guint n, i;

  kvev_return_val_if_fail (snapshot != NULL, FALSE);
  kvev_return_val_if_fail (object_key != NULL, TRUE);
  kvev_return_val_if_fail (key_len >= -1, TRUE);
  kvev_return_val_if_fail ((media & ~KVEV_MEDIA_ALL) == 0, TRUE);

  settings = snapshot->server->settings;
  key_bytes = key_len == -1 ? strnlen (object_key, KVEV_MAX_KEY_LEN + 1) : (gsize) key_len;
  tenant_len = tenant_id != NULL ? strnlen (tenant_id, KVEV_MAX_KEY_LEN + 1) : 0;
  group_len = group_id != NULL ? strnlen (group_id, KVEV_MAX_KEY_LEN + 1) : 0;
  kvev_return_val_if_fail (key_bytes <= KVEV_MAX_KEY_LEN && tenant_len <= KVEV_MAX_KEY_LEN
                               && group_len <= KVEV_MAX_KEY_LEN,
                           TRUE);
  if (!going (snapshot))
    return FALSE;
  if (media == KVEV_MEDIA_NONE || key_bytes == 0 || !settings->emit_object_key)
    return TRUE;
  utf8 = kvev_bytes_are_utf8 (tenant_id, tenant_len) && kvev_bytes_are_utf8 (object_key, key_bytes)
         && kvev_bytes_are_utf8 (group_id, group_len);
  /* As live: skipped, or alone in a chunk of its own, so a strict reader
   * loses only it. */
  if (!utf8 && settings->non_utf8 == KVEV_NON_UTF8_SKIP)
    return TRUE;

  call = kvev_call_new_keyed (KVEV_MEDIA_NONE, media, tenant_id, tenant_len, object_key, key_bytes,
                              group_id, group_len);
  call->first_event_id = snapshot->barrier;
  if (!utf8 || snapshot->n_events + KVEV_MAX_EVENTS_PER_CALL > settings->max_batch_events)
    flush_chunk (snapshot);
  n = kvev_call_events (call, 0, !utf8, snapshot->events + snapshot->n_events);
  for (i = 0; i < n; i++)
    {
      snapshot->events[snapshot->n_events + i].event_id = snapshot->barrier;
      bound += kvev_encode_event_bound (snapshot->server->encoder,
                                        &snapshot->events[snapshot->n_events + i]);
    }
  if (snapshot->n_events > 0 && snapshot->bytes + bound > settings->message_limit)
    {
      KvevEvent moved[KVEV_MAX_EVENTS_PER_CALL];

      memcpy (moved, snapshot->events + snapshot->n_events, n * sizeof *moved);
      flush_chunk (snapshot);
      memcpy (snapshot->events, moved, n * sizeof *moved);
    }
  snapshot->calls[snapshot->n_calls++] = call;
  snapshot->n_events += n;
  snapshot->bytes += bound;
  snapshot->objects++;
  if (!utf8)
    flush_chunk (snapshot);
  return going (snapshot);
}

/* Spends waited µs of the snapshot's budget, giving back what the
 * subscriber read meanwhile at MIN_READ_RATE; FALSE once it is spent. */
static gboolean
spend_budget (KvevSnapshot *snapshot, gint64 waited)
{
  gsize read = snapshot->made - kvev_ledger_bytes (snapshot->ledger);

  snapshot->budget
      += (gint64) ((double) (read - snapshot->read_mark) * G_USEC_PER_SEC / MIN_READ_RATE) - waited;
  snapshot->budget = MIN (snapshot->budget, WAIT_BUDGET_US);
  snapshot->read_mark = read;
  return snapshot->budget > 0;
}

/* Waits, with no lock of the master's held, until every chunk is in the
 * pipe and what libzmq holds of them is at most below bytes. */
static gboolean
drain (KvevSnapshot *snapshot, gsize below)
{
  KvevSnapshotServer *server = snapshot->server;

  offer_held (snapshot);
  while (going (snapshot)
         && (snapshot->held.length > 0 || kvev_ledger_bytes (snapshot->ledger) > below))
    {
      gint64 start = g_get_monotonic_time ();

      if (!kvev_service_wait (server->service, WAIT_SLICE_MS))
        snapshot->stop = STOP_STOPPING;
      else if (!spend_budget (snapshot, g_get_monotonic_time () - start))
        snapshot->stop = STOP_BUDGET;
      offer_held (snapshot);
    }
  return going (snapshot);
}

/* Walk time, for kv_events_snapshot_duty_percent. */
static void
refill (KvevSnapshotServer *server)
{
  gint64 now = g_get_monotonic_time ();

  server->credit = MIN (server->credit
                            + (double) (now - server->refilled)
                                  * server->settings->snapshot_duty_percent / 100,
                        BURST_US);
  server->refilled = now;
}

/* Holds the walks back while they took more than their share; FALSE when
 * the server is stopping meanwhile. */
static gboolean
pace (KvevSnapshotServer *server)
{
  double wait_us;

  refill (server);
  if (server->credit >= 0)
    return TRUE;
  wait_us = -server->credit * 100 / server->settings->snapshot_duty_percent;
  return kvev_service_wait (server->service, (long) (wait_us / 1000) + 1);
}

static void
charge_walk (KvevSnapshot *snapshot)
{
  gint64 now = g_get_monotonic_time ();

  snapshot->server->credit -= (double) (now - snapshot->walk_mark);
  snapshot->walk_mark = now;
}

gboolean
kvev_snapshot_pause (KvevSnapshot *snapshot)
{
  kvev_return_val_if_fail (snapshot != NULL, FALSE);

  if (!going (snapshot))
    return FALSE;
  charge_walk (snapshot);
  /* Half, so that the next stretch of the walk has room to run in. */
  if (drain (snapshot, HELD_BYTES / 2) && !pace (snapshot->server))
    snapshot->stop = STOP_STOPPING;
  snapshot->walk_mark = g_get_monotonic_time ();
  return going (snapshot);
}

/* Under the source's lock, once the function is known: takes the barrier
 * and sends the header, or says that no walk should run. */
static gboolean
begin (KvevSnapshot *snapshot, gpointer data)
{
  KvevSnapshotServer *server = snapshot->server;
  const KvevSettings *settings = server->settings;
  int error;

  /* Before the function reads any object: every mutation the walk does
   * not see is then published with an id above it (kvevents(7),
   * SNAPSHOTS, says why that is exact). */
  snapshot->barrier = server->barrier (server->barrier_data);
  /* backend_id and dp_rank say whose state it is, even when it holds
   * no object: a subscriber replaces what it knew of that backend. */
  {
    const Member header[] = {
      { "barrier_event_id", snapshot->barrier, NULL },
      { "publisher_id", 0, settings->instance_id_hex },
      { "backend_id", 0, settings->backend_id },
      { "dp_rank", settings->dp_rank, NULL },
    };

    error = offer_map (server, snapshot->identity, "header", header, G_N_ELEMENTS (header));
  }
  /* A subscriber with no room for the header, or gone, would take no
   * chunk either. */
  if (error != 0)
    snapshot->stop = STOP_GONE;
  snapshot->walk_mark = g_get_monotonic_time ();
  return error == 0;
}

/* Whether identity may have a walk now; counted and answered (when that
 * does not wait) if not. */
static gboolean
admit (KvevSnapshotServer *server, zmq_msg_t *identity, GBytes *key)
{
  GHashTableIter iter;
  gpointer ledger;

  g_hash_table_iter_init (&iter, server->unread);
  while (g_hash_table_iter_next (&iter, NULL, &ledger))
    if (kvev_ledger_bytes (ledger) == 0)
      g_hash_table_iter_remove (&iter);
  /* Its last snapshot is still in its pipe: a walk would only queue
   * behind it.  The error is small and never waits, and a subscriber
   * that asks in a loop without reading fills its pipe's message limit
   * with them, after which it is not answered. */
  if (g_hash_table_contains (server->unread, key))
    {
      kvev_counter_add (&server->counts.refused, 1);
      offer_error (server, identity, "the last snapshot sent to this subscriber is still unread");
      return FALSE;
    }
  if (kvev_ledger_bytes (server->total) > TOTAL_BYTES - HELD_BYTES)
    {
      kvev_counter_add (&server->counts.refused, 1);
      offer_error (server, identity,
                   "the publisher holds too many unread snapshots; ask again later");
      return FALSE;
    }
  return TRUE;
}

/* One walk, answered to identity. */
static void
answer (KvevSnapshotServer *server, zmq_msg_t *identity)
{
  const KvevSettings *settings = server->settings;
  g_autoptr (GError) error = NULL;
  g_autoptr (GBytes) key = g_bytes_new (zmq_msg_data (identity), zmq_msg_size (identity));
  KvevSnapshot snapshot = { 0 };
  gboolean found, complete;

  kvev_counter_add (&server->counts.requests, 1);
  if (!admit (server, identity, key) || !pace (server))
    return;
  snapshot.server = server;
  snapshot.identity = identity;
  snapshot.ledger = kvev_ledger_new (server->total);
  snapshot.budget = WAIT_BUDGET_US;
  g_queue_init (&snapshot.held);
  snapshot.calls = g_new (KvevCall *, settings->max_batch_events);
  snapshot.events = g_new (KvevEvent, settings->max_batch_events + KVEV_MAX_EVENTS_PER_CALL);
  snapshot.bytes = kvev_encode_batch_bound (server->encoder);
  complete = kvev_snapshot_source_walk (server->source, &snapshot, begin, NULL, &found, &error);
  if (found && snapshot.walk_mark != 0)
    charge_walk (&snapshot);
  flush_chunk (&snapshot);
  g_free (snapshot.calls);
  g_free (snapshot.events);
  kvev_counter_add (&server->counts.objects, snapshot.objects);

  /* The end goes after the last chunk, and nothing holds the master's
   * locks any more. */
  if (!found)
    {
      kvev_counter_add (&server->counts.refused, 1);
      offer_error (server, identity, "this publisher has no snapshot function");
    }
  else if (complete && drain (&snapshot, G_MAXSIZE))
    {
      const Member end = { "objects", snapshot.objects, NULL };

      offer_map (server, identity, "end", &end, 1);
    }
  else
    {
      kvev_counter_add (&server->counts.failed, 1);
      if (snapshot.stop != STOP_GONE)
        offer_error (server, identity,
                     snapshot.stop != GOING ? stop_messages[snapshot.stop]
                     : error != NULL        ? error->message
                                            : "the snapshot function failed");
    }
  while (snapshot.held.length > 0)
    {
      zmq_msg_t *chunk = g_queue_pop_head (&snapshot.held);

      zmq_msg_close (chunk);
      g_free (chunk);
    }
  if (kvev_ledger_bytes (snapshot.ledger) > 0)
    g_hash_table_insert (server->unread, g_steal_pointer (&key), kvev_ledger_ref (snapshot.ledger));
  kvev_ledger_unref (snapshot.ledger);
}

/* Answers [identity, "", "snapshot"]; another shape is refused, with an
 * error to a peer that sent a delimiter, which can take an answer. */
static void
serve_request (KvevService *service, zmq_msg_t *frames, guint n_frames, gpointer data)
{
  KvevSnapshotServer *server = data;

  if (n_frames == REQUEST_FRAMES && zmq_msg_size (&frames[1]) == 0
      && zmq_msg_size (&frames[2]) == strlen ("snapshot")
      && memcmp (zmq_msg_data (&frames[2]), "snapshot", strlen ("snapshot")) == 0)
    {
      answer (server, &frames[0]);
      return;
    }
  kvev_counter_add (&server->counts.requests, 1);
  kvev_counter_add (&server->counts.refused, 1);
  if (n_frames >= 2 && zmq_msg_size (&frames[1]) == 0)
    offer_error (server, &frames[0], "a snapshot request is one frame, \"snapshot\"");
}

KvevSnapshotServer *
kvev_snapshot_server_start (const KvevSettings *settings, const KvevNet *net,
                            KvevSnapshotSource *source, KvevSnapshotBarrier barrier,
                            gpointer barrier_data, GError **error)
{
  KvevSnapshotServer *server = g_new0 (KvevSnapshotServer, 1);

  server->settings = settings;
  server->source = source;
  server->barrier = barrier;
  server->barrier_data = barrier_data;
  server->encoder = kvev_encoder_new (settings);
  server->total = kvev_ledger_new (NULL);
  server->unread
      = g_hash_table_new_full (g_bytes_hash, g_bytes_equal, (GDestroyNotify) g_bytes_unref,
                               (GDestroyNotify) kvev_ledger_unref);
  server->credit = BURST_US;
  server->refilled = g_get_monotonic_time ();
  if (!kvev_service_start (&server->service, "kvev-snapshot", kvev_net_context (net),
                           kvev_net_socket (net, KVEV_NET_SNAPSHOTS), REQUEST_FRAMES, serve_request,
                           server, error))
    {
      g_prefix_error (error, _ ("Cannot start snapshots: "));
      g_hash_table_unref (server->unread);
      kvev_ledger_unref (server->total);
      kvev_encoder_free (server->encoder);
      g_free (server);
      return NULL;
    }
  return server;
}

void
kvev_snapshot_server_counts (const KvevSnapshotServer *server, KvevSnapshotCounts *counts)
{
  if (server == NULL)
    {
      memset (counts, 0, sizeof *counts);
      return;
    }
  counts->requests = kvev_counter_get (&server->counts.requests);
  counts->refused = kvev_counter_get (&server->counts.refused);
  counts->failed = kvev_counter_get (&server->counts.failed);
  counts->objects = kvev_counter_get (&server->counts.objects);
}

void
kvev_snapshot_server_stop (KvevSnapshotServer *server)
{
  if (server == NULL)
    return;
  /* A walk in progress stops at its next add or pause. */
  g_atomic_int_set (&server->stopping, 1);
  kvev_service_stop (server->service);
  g_hash_table_unref (server->unread);
  kvev_ledger_unref (server->total);
  kvev_encoder_free (server->encoder);
  g_free (server);
}
