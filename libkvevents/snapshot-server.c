/* snapshot-server.c: snapshot requests and the walks that answer them;
 * see snapshot-server.h.
 *
 * A request is [identity, "", "snapshot"].  The answer, all to that
 * identity after the delimiter:
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
 * SPDX-License-Identifier: Apache-2.0
 */
#include "snapshot-server.h"

#include "counter.h"
#include "encode.h"
#include "fault.h"
#include "precondition.h"
#include "service.h"
#include "utf8.h"

#include <msgpack.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#define REQUEST_FRAMES 3

struct _KvevSnapshotServer
{
  const KvevSettings *settings;
  KvevQueue *queue;
  KvevSnapshotSource *source;
  KvevService *service;
  KvevEncoder *encoder;
  KvevSnapshotCounts counts;
};

struct _KvevSnapshot
{
  KvevSnapshotServer *server;
  zmq_msg_t *identity;
  guint64 barrier;
  gboolean gone; /* the subscriber stopped reading: adds do nothing */
  guint64 objects;
  /* The chunk being filled: calls, their events, the payload bound. */
  KvevCall **calls;
  KvevEvent *events;
  guint n_calls;
  guint n_events;
  gsize bytes;
};

static void
free_payload (void *data, void *hint)
{
  free (data);
}

/* Sends [identity, "", kind, body]; FALSE when the subscriber is gone or
 * too slow (ZMQ_ROUTER_MANDATORY says so instead of dropping). */
static gboolean
send_frames (KvevSnapshotServer *server, zmq_msg_t *identity, const char *kind, const void *body,
             gsize body_len, gboolean body_is_malloced)
{
  void *socket = kvev_service_socket (server->service);
  zmq_msg_t message;

  if (!kvev_service_send_identity (server->service, identity))
    {
      if (body_is_malloced)
        free ((void *) body);
      return FALSE;
    }
  zmq_send (socket, "", 0, ZMQ_SNDMORE);
  zmq_send (socket, kind, strlen (kind), ZMQ_SNDMORE);
  if (body_is_malloced)
    {
      zmq_msg_init_data (&message, (void *) body, body_len, free_payload, NULL);
      zmq_msg_send (&message, socket, 0);
    }
  else
    zmq_send (socket, body, body_len, 0);
  return TRUE;
}

/* One member of a reply's map: a str when text is set, else a uint. */
typedef struct
{
  const char *key;
  guint64 number;
  const char *text;
} Member;

static void
send_map (KvevSnapshotServer *server, zmq_msg_t *identity, const char *kind, const Member *members,
          guint n_members)
{
  msgpack_sbuffer buffer;
  msgpack_packer packer;
  guint i;

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
  send_frames (server, identity, kind, buffer.data, buffer.size, FALSE);
  msgpack_sbuffer_destroy (&buffer);
}

static void
send_error (KvevSnapshotServer *server, zmq_msg_t *identity, const char *message)
{
  const Member member = { "message", 0, message };

  send_map (server, identity, "error", &member, 1);
}

static void
flush_chunk (KvevSnapshot *snapshot)
{
  KvevSnapshotServer *server = snapshot->server;
  gsize len;
  char *payload;
  guint i;

  if (snapshot->n_events > 0 && !snapshot->gone)
    {
      payload = kvev_encode_batch (server->encoder, KVEV_NOW_MS (), snapshot->events,
                                   snapshot->n_events, &len);
      if (!send_frames (server, snapshot->identity, "chunk", payload, len, TRUE))
        snapshot->gone = TRUE;
    }
  for (i = 0; i < snapshot->n_calls; i++)
    g_free (snapshot->calls[i]);
  snapshot->n_calls = snapshot->n_events = 0;
  snapshot->bytes = kvev_encode_batch_bound (server->encoder);
}

void
kvev_snapshot_add (KvevSnapshot *snapshot, const char *tenant_id, const char *object_key,
                   gssize key_len, const char *group_id, KvevMedia media)
{
  const KvevSettings *settings;
  gsize tenant_len, key_bytes, group_len, bound = 0;
  gboolean utf8;
  KvevCall *call;
  guint n, i;

  kvev_return_if_fail (snapshot != NULL);
  kvev_return_if_fail (object_key != NULL);
  kvev_return_if_fail (key_len >= -1);
  kvev_return_if_fail ((media & ~KVEV_MEDIA_ALL) == 0);

  settings = snapshot->server->settings;
  key_bytes = key_len == -1 ? strnlen (object_key, KVEV_MAX_KEY_LEN + 1) : (gsize) key_len;
  tenant_len = tenant_id != NULL ? strnlen (tenant_id, KVEV_MAX_KEY_LEN + 1) : 0;
  group_len = group_id != NULL ? strnlen (group_id, KVEV_MAX_KEY_LEN + 1) : 0;
  kvev_return_if_fail (key_bytes <= KVEV_MAX_KEY_LEN && tenant_len <= KVEV_MAX_KEY_LEN
                       && group_len <= KVEV_MAX_KEY_LEN);
  if (snapshot->gone || media == KVEV_MEDIA_NONE || key_bytes == 0 || !settings->emit_object_key)
    return;
  utf8 = kvev_bytes_are_utf8 (tenant_id, tenant_len) && kvev_bytes_are_utf8 (object_key, key_bytes)
         && kvev_bytes_are_utf8 (group_id, group_len);
  /* As live: skipped, or alone in a chunk of its own, so a strict reader
   * loses only it. */
  if (!utf8 && settings->non_utf8 == KVEV_NON_UTF8_SKIP)
    return;

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
}

/* One walk, answered to identity. */
static void
answer (KvevSnapshotServer *server, zmq_msg_t *identity)
{
  const KvevSettings *settings = server->settings;
  KvevSnapshotSource *source = server->source;
  g_autoptr (GError) error = NULL;
  KvevSnapshot snapshot = { 0 };
  gboolean complete;

  kvev_counter_add (&server->counts.requests, 1);
  g_mutex_lock (&source->lock);
  if (source->func == NULL)
    {
      g_mutex_unlock (&source->lock);
      kvev_counter_add (&server->counts.refused, 1);
      send_error (server, identity, "this publisher has no snapshot function");
      return;
    }
  snapshot.server = server;
  snapshot.identity = identity;
  snapshot.calls = g_new (KvevCall *, settings->max_batch_events);
  snapshot.events = g_new (KvevEvent, settings->max_batch_events + KVEV_MAX_EVENTS_PER_CALL);
  snapshot.bytes = kvev_encode_batch_bound (server->encoder);
  /* Ids are given in order under the queue's lock: every event accepted
   * before this has an id <= it, every later one a greater id. */
  snapshot.barrier = kvev_queue_last_event_id (server->queue);
  /* backend_id and dp_rank say whose state it is, even when it holds
   * no object: a subscriber replaces what it knew of that backend. */
  {
    const Member header[] = {
      { "barrier_event_id", snapshot.barrier, NULL },
      { "publisher_id", 0, settings->instance_id_hex },
      { "backend_id", 0, settings->backend_id },
      { "dp_rank", settings->dp_rank, NULL },
    };

    send_map (server, identity, "header", header, G_N_ELEMENTS (header));
  }
  complete = source->func (&snapshot, source->user_data, &error);
  g_mutex_unlock (&source->lock);
  flush_chunk (&snapshot);
  g_free (snapshot.calls);
  g_free (snapshot.events);
  kvev_counter_add (&server->counts.objects, snapshot.objects);

  if (complete && !snapshot.gone)
    {
      const Member end = { "objects", snapshot.objects, NULL };

      send_map (server, identity, "end", &end, 1);
      return;
    }
  kvev_counter_add (&server->counts.failed, 1);
  if (!snapshot.gone)
    send_error (server, identity, error != NULL ? error->message : "the snapshot function failed");
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
    send_error (server, &frames[0], "a snapshot request is one frame, \"snapshot\"");
}

KvevSnapshotServer *
kvev_snapshot_server_start (const KvevSettings *settings, void *context, void *socket,
                            KvevQueue *queue, KvevSnapshotSource *source, GError **error)
{
  KvevSnapshotServer *server = g_new0 (KvevSnapshotServer, 1);

  server->settings = settings;
  server->queue = queue;
  server->source = source;
  server->encoder = kvev_encoder_new (settings);
  if (!kvev_service_start (&server->service, "kvev-snapshot", context, socket, REQUEST_FRAMES,
                           serve_request, server, error))
    {
      g_prefix_error (error, _ ("Cannot start snapshots: "));
      kvev_encoder_free (server->encoder);
      g_free (server);
      return NULL;
    }
  return server;
}

void
kvev_snapshot_server_counts (const KvevSnapshotServer *server, KvevSnapshotCounts *counts)
{
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
  kvev_service_stop (server->service);
  kvev_encoder_free (server->encoder);
  g_free (server);
}
