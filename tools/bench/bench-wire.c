/* bench-wire.c: raw payloads from the library's own bytes; see
 * bench-wire.h.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include "bench-wire.h"
#include "bench-util.h"
#include <base/utf8.h>

#include <string.h>
#include <glib/gi18n.h>
#include <msgpack.h>
#include <zmq.h>

#define CAPTURE_KEY "__bench_wire__/template"
#define CAPTURE_TIMEOUT_MS 10000

struct _BenchWire
{
  char *payload; /* the captured message's, which the objects point into */
  msgpack_unpacked unpacked;
  const msgpack_object *map;     /* its one event */
  const msgpack_object *dp_rank; /* the payload's last element */
};

static gboolean
is_str (const msgpack_object *o, const char *s, gsize len)
{
  return o->type == MSGPACK_OBJECT_STR && o->via.str.size == len
         && memcmp (o->via.str.ptr, s, len) == 0;
}

#define IS_KEY(o, literal) is_str ((o), literal, sizeof literal - 1)

/* Whether payload is [timestamp, [map], dp_rank] with the capture's key;
 * if so the wire keeps it. */
static gboolean
take_payload (BenchWire *wire, const char *payload, gsize len)
{
  const msgpack_object *root, *maps, *map;
  guint i;

  msgpack_unpacked_init (&wire->unpacked);
  wire->payload = g_memdup2 (payload, len);
  if (msgpack_unpack_next (&wire->unpacked, wire->payload, len, NULL) != MSGPACK_UNPACK_SUCCESS)
    goto other;
  root = &wire->unpacked.data;
  if (root->type != MSGPACK_OBJECT_ARRAY || root->via.array.size != 3)
    goto other;
  maps = &root->via.array.ptr[1];
  if (maps->type != MSGPACK_OBJECT_ARRAY || maps->via.array.size != 1)
    goto other;
  map = &maps->via.array.ptr[0];
  if (map->type != MSGPACK_OBJECT_MAP)
    goto other;
  for (i = 0; i < map->via.map.size; i++)
    if (IS_KEY (&map->via.map.ptr[i].key, "object_key")
        && IS_KEY (&map->via.map.ptr[i].val, CAPTURE_KEY))
      {
        wire->map = map;
        wire->dp_rank = &root->via.array.ptr[2];
        return TRUE;
      }
other:
  /* A heartbeat, or an event of no concern. */
  msgpack_unpacked_destroy (&wire->unpacked);
  g_clear_pointer (&wire->payload, g_free);
  return FALSE;
}

/* Receives until a message holds the capture's event; its last frame is
 * the payload. */
static gboolean
receive_template (BenchWire *wire, void *sub)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) CAPTURE_TIMEOUT_MS * 1000;

  while (g_get_monotonic_time () < deadline)
    {
      zmq_msg_t frame;
      int more = 1;
      size_t more_len = sizeof more;
      gboolean taken = FALSE;

      zmq_msg_init (&frame);
      while (more)
        {
          if (zmq_msg_recv (&frame, sub, 0) < 0)
            {
              zmq_msg_close (&frame);
              return FALSE;
            }
          zmq_getsockopt (sub, ZMQ_RCVMORE, &more, &more_len);
        }
      taken = take_payload (wire, zmq_msg_data (&frame), zmq_msg_size (&frame));
      zmq_msg_close (&frame);
      if (taken)
        return TRUE;
    }
  return FALSE;
}

BenchWire *
bench_wire_capture (const KvevConfig *config, GError **error)
{
  g_autoptr (KvevConfig) copy = kvev_config_copy (config);
  g_autoptr (BenchWire) wire = g_new0 (BenchWire, 1);
  KvevPublisher *publisher;
  int timeout = CAPTURE_TIMEOUT_MS;
  int linger = 0;
  void *context, *sub;
  gboolean ok;

  /* The template's publisher binds a port of its own, never the
   * endpoint the phases use, and serves nothing but the event. */
  if (!kvev_config_set (copy, "kv_events_bind_endpoint", "tcp://127.0.0.1:*", error)
      || !kvev_config_set (copy, "kv_events_replay_endpoint", "", error)
      || !kvev_config_set (copy, "kv_events_snapshot_endpoint", "", error))
    return NULL;
  publisher = kvev_publisher_new (copy, error);
  if (publisher == NULL)
    return NULL;
  context = zmq_ctx_new ();
  sub = zmq_socket (context, ZMQ_SUB);
  zmq_setsockopt (sub, ZMQ_SUBSCRIBE, "", 0);
  zmq_setsockopt (sub, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
  zmq_setsockopt (sub, ZMQ_LINGER, &linger, sizeof linger);
  ok = zmq_connect (sub, kvev_publisher_get_endpoint (publisher)) == 0
       && kvev_publisher_wait_subscribers (publisher, 1, CAPTURE_TIMEOUT_MS);
  if (ok)
    {
      kvev_publish_stored (publisher, BENCH_TENANT, CAPTURE_KEY, -1, NULL, KVEV_MEDIA_CPU);
      ok = receive_template (wire, sub);
    }
  zmq_close (sub);
  zmq_ctx_term (context);
  kvev_publisher_free (publisher);
  if (!ok)
    {
      bench_fail (error, _ ("The library sent no event to the benchmark's own subscriber in %u s"),
                  CAPTURE_TIMEOUT_MS / 1000);
      return NULL;
    }
  return g_steal_pointer (&wire);
}

void
bench_wire_free (BenchWire *wire)
{
  if (wire == NULL)
    return;
  if (wire->payload != NULL)
    msgpack_unpacked_destroy (&wire->unpacked);
  g_free (wire->payload);
  g_free (wire);
}

char *
bench_wire_encode (const BenchWire *wire, gint64 timestamp_ms, guint64 first_event_id,
                   const char *keys, gsize key_len, guint key_ring, guint n_events, gsize *len)
{
  const msgpack_object_map *map = &wire->map->via.map;
  msgpack_sbuffer sbuf;
  msgpack_packer pk;
  guint i, k;

  g_return_val_if_fail (key_ring > 0, NULL);
  /* The library sends a UTF-8 key as a str, the template's type; the
   * benchmark's keys are all printable. */
  for (i = 0; i < MIN (key_ring, n_events); i++)
    g_return_val_if_fail (kvev_bytes_are_utf8 (keys + key_len * i, key_len), NULL);

  msgpack_sbuffer_init (&sbuf);
  msgpack_packer_init (&pk, &sbuf, msgpack_sbuffer_write);
  msgpack_pack_array (&pk, 3);
  msgpack_pack_int64 (&pk, timestamp_ms);
  msgpack_pack_array (&pk, n_events);
  for (i = 0; i < n_events; i++)
    {
      msgpack_pack_map (&pk, map->size);
      for (k = 0; k < map->size; k++)
        {
          const msgpack_object *key = &map->ptr[k].key;

          msgpack_pack_object (&pk, *key);
          if (IS_KEY (key, "event_id"))
            msgpack_pack_uint64 (&pk, first_event_id + i);
          else if (IS_KEY (key, "timestamp"))
            msgpack_pack_int64 (&pk, timestamp_ms);
          else if (IS_KEY (key, "object_key"))
            msgpack_pack_str_with_body (&pk, keys + key_len * (i % key_ring), key_len);
          else
            msgpack_pack_object (&pk, map->ptr[k].val);
        }
    }
  msgpack_pack_object (&pk, *wire->dp_rank);
  *len = sbuf.size;
  return sbuf.data;
}
