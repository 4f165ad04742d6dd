/* test-sub-e2e.c: the library's subscriber against the library's
 * publisher in one process, each on its own sockets (ipc in a temporary
 * directory): a late joiner through a snapshot, a gap filled by replay,
 * a gap beyond replay made up for by a new snapshot, a restarted
 * publisher (a new publisher_id) bootstrapped again; and against a
 * hostile peer on raw ZeroMQ sockets that sends 2-frame messages, 7-byte
 * sequences, garbage msgpack and a snapshot whose end lies: counted
 * errors and reconnections, never a crash, memory and time bounded.  The
 * testing build's seam loses messages as a network would.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "sub/subscriber.h"

#include <glib/gstdio.h>
#include <msgpack.h>
#include <string.h>
#include <zmq.h>

#define BACKEND "e2e"

typedef struct
{
  GMutex lock;
  GHashTable *keys; /* what the master holds */
  gint slow_walks;  /* walks that first sleep 500 ms */
} Store;

typedef struct
{
  GHashTable *keys; /* what the subscriber's events say */
  guint resets;
  guint64 events;
} Indexer;

static char *dir;

static char *
endpoint (const char *name)
{
  return g_strdup_printf ("ipc://%s/%s", dir, name);
}

static gboolean
walk (KvevSnapshot *snapshot, gpointer user_data, GError **error)
{
  Store *store = user_data;
  GHashTableIter iter;
  gpointer key;
  gboolean going = TRUE;

  if (g_atomic_int_get (&store->slow_walks) > 0)
    {
      g_atomic_int_add (&store->slow_walks, -1);
      g_usleep (500000);
    }
  g_mutex_lock (&store->lock);
  g_hash_table_iter_init (&iter, store->keys);
  while (going && g_hash_table_iter_next (&iter, &key, NULL))
    going = kvev_snapshot_add (snapshot, NULL, key, -1, NULL, KVEV_MEDIA_CPU);
  g_mutex_unlock (&store->lock);
  return TRUE;
}

static KvevPublisher *
publisher_new (Store *store, const char *name, guint replay_messages)
{
  g_autoptr (KvevConfig) config = kvev_config_new ();
  g_autofree char *live = endpoint (name);
  g_autofree char *replay = g_strdup_printf ("%s-replay", live);
  g_autofree char *snapshot = g_strdup_printf ("%s-snapshot", live);
  g_autofree char *messages = g_strdup_printf ("%u", replay_messages);
  g_autoptr (GError) error = NULL;
  KvevPublisher *publisher;

  g_assert_true (kvev_config_set (config, "enable_kv_events", "true", NULL));
  g_assert_true (kvev_config_set (config, "kv_events_backend_id", BACKEND, NULL));
  g_assert_true (kvev_config_set (config, "kv_events_bind_endpoint", live, NULL));
  g_assert_true (kvev_config_set (config, "kv_events_replay_endpoint", replay, NULL));
  g_assert_true (kvev_config_set (config, "kv_events_replay_buffer_messages", messages, NULL));
  g_assert_true (kvev_config_set (config, "kv_events_snapshot_endpoint", snapshot, NULL));
  g_assert_true (kvev_config_set (config, "kv_events_heartbeat_ms", "50", NULL));
  g_assert_true (kvev_config_set (config, "kv_events_emit_publisher_id", "true", NULL));
  g_assert_true (kvev_config_set (config, "kv_events_max_batch_events", "1", NULL));
  publisher = kvev_publisher_new (config, &error);
  g_assert_no_error (error);
  kvev_publisher_set_snapshot_func (publisher, walk, store, NULL);
  return publisher;
}

static void
store_key (Store *store, KvevPublisher *publisher, const char *key, gboolean stored)
{
  g_mutex_lock (&store->lock);
  if (stored)
    {
      g_hash_table_add (store->keys, g_strdup (key));
      kvev_publish_stored (publisher, NULL, key, -1, NULL, KVEV_MEDIA_CPU);
    }
  else
    {
      g_hash_table_remove (store->keys, key);
      kvev_publish_removed (publisher, NULL, key, -1, NULL, KVEV_MEDIA_CPU);
    }
  g_mutex_unlock (&store->lock);
}

static void
on_event (KvevSubscriber *subscriber, const KvevSubscriberEvent *event, gpointer data)
{
  Indexer *indexer = data;
  g_autofree char *key = NULL;

  indexer->events++;
  g_assert_cmpmem (event->backend_id.data, event->backend_id.len, BACKEND, strlen (BACKEND));
  g_assert_cmpint (event->object_key.type, ==, KVEV_VALUE_STR);
  key = g_strndup (event->object_key.data, event->object_key.len);
  if (event->kind == KVEV_KIND_STORED)
    g_hash_table_add (indexer->keys, g_steal_pointer (&key));
  else if (event->kind == KVEV_KIND_REMOVED)
    g_hash_table_remove (indexer->keys, key);
}

static void
on_reset (KvevSubscriber *subscriber, const KvevReset *reset, gpointer data)
{
  Indexer *indexer = data;

  g_assert_cmpmem (reset->backend_id.data, reset->backend_id.len, BACKEND, strlen (BACKEND));
  indexer->resets++;
  g_hash_table_remove_all (indexer->keys);
}

static gboolean
same_keys (Store *store, Indexer *indexer)
{
  GHashTableIter iter;
  gpointer key;
  gboolean same;

  g_mutex_lock (&store->lock);
  same = g_hash_table_size (store->keys) == g_hash_table_size (indexer->keys);
  g_hash_table_iter_init (&iter, store->keys);
  while (same && g_hash_table_iter_next (&iter, &key, NULL))
    same = g_hash_table_contains (indexer->keys, key);
  g_mutex_unlock (&store->lock);
  return same;
}

/* Dispatches until check () holds, at most 10 s. */
static gboolean
dispatch_until (KvevSubscriber *subscriber, gboolean (*check) (gpointer), gpointer data)
{
  gint64 deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
  g_autoptr (GError) error = NULL;

  while (!check (data))
    {
      if (g_get_monotonic_time () > deadline)
        return FALSE;
      g_assert_true (kvev_subscriber_dispatch (subscriber, 50, &error));
      g_assert_no_error (error);
    }
  return TRUE;
}

typedef struct
{
  Store store;
  Indexer indexer;
  KvevPublisher *publisher;
  KvevSubscriber *subscriber;
  guint64 want_snapshots;
} Fixture;

static gboolean
converged (gpointer data)
{
  Fixture *f = data;

  return kvev_subscriber_stat (f->subscriber, 0, KVEV_SUBSCRIBER_STAT_SNAPSHOTS)
             >= f->want_snapshots
         && kvev_subscriber_get_state (f->subscriber, 0) == KVEV_SUBSCRIBER_FOLLOWING
         && same_keys (&f->store, &f->indexer);
}

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  g_mutex_init (&f->store.lock);
  f->store.keys = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  f->indexer.keys = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  f->publisher = publisher_new (&f->store, "pub", GPOINTER_TO_UINT (data));
}

static void
subscribe (Fixture *f)
{
  g_autofree char *live = endpoint ("pub");
  g_autofree char *replay = g_strdup_printf ("%s-replay", live);
  g_autofree char *snapshot = g_strdup_printf ("%s-snapshot", live);
  g_autoptr (GError) error = NULL;

  f->subscriber = kvev_subscriber_new (&error);
  g_assert_no_error (error);
  kvev_subscriber_set_event_func (f->subscriber, on_event, &f->indexer, NULL);
  kvev_subscriber_set_reset_func (f->subscriber, on_reset, &f->indexer, NULL);
  g_assert_cmpint (
      kvev_subscriber_add_publisher (f->subscriber, live, replay, snapshot, NULL, &error), ==, 0);
  g_assert_no_error (error);
  g_assert_true (kvev_publisher_wait_subscribers (f->publisher, 1, 5000));
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  kvev_subscriber_free (f->subscriber);
  kvev_publisher_free (f->publisher);
  g_hash_table_unref (f->store.keys);
  g_hash_table_unref (f->indexer.keys);
  g_mutex_clear (&f->store.lock);
}

static void
publish_keys (Fixture *f, const char *prefix, guint n, gboolean stored)
{
  guint i;

  for (i = 0; i < n; i++)
    {
      g_autofree char *key = g_strdup_printf ("%s-%u", prefix, i);

      store_key (&f->store, f->publisher, key, stored);
    }
  g_assert_true (kvev_publisher_flush (f->publisher, 5000));
}

static void
test_late_join (Fixture *f, gconstpointer data)
{
  publish_keys (f, "before", 50, TRUE);
  subscribe (f);
  f->want_snapshots = 1;
  g_assert_true (dispatch_until (f->subscriber, converged, f));
  g_assert_cmpuint (f->indexer.resets, ==, 1);
  g_assert_cmpuint (kvev_subscriber_stat (f->subscriber, -1, KVEV_SUBSCRIBER_STAT_SNAPSHOT_EVENTS),
                    ==, 50);
  publish_keys (f, "after", 20, TRUE);
  publish_keys (f, "before", 5, FALSE);
  g_assert_true (dispatch_until (f->subscriber, converged, f));
  g_assert_cmpuint (kvev_subscriber_stat (f->subscriber, 0, KVEV_SUBSCRIBER_STAT_DECODE_ERRORS), ==,
                    0);
  g_assert_cmpuint (kvev_subscriber_stat (f->subscriber, 0, KVEV_SUBSCRIBER_STAT_LOST), ==, 0);
}

static gboolean
recovered_three (gpointer data)
{
  Fixture *f = data;

  return converged (f)
         && kvev_subscriber_stat (f->subscriber, 0, KVEV_SUBSCRIBER_STAT_RECOVERED_BY_REPLAY) >= 3;
}

static void
test_gap_replay (Fixture *f, gconstpointer data)
{
  subscribe (f);
  f->want_snapshots = 1;
  g_assert_true (dispatch_until (f->subscriber, converged, f));
  kvev_subscriber_test_drop (f->subscriber, 0, 2, 3);
  publish_keys (f, "k", 10, TRUE);
  g_assert_true (dispatch_until (f->subscriber, recovered_three, f));
  g_assert_cmpuint (kvev_subscriber_stat (f->subscriber, 0, KVEV_SUBSCRIBER_STAT_GAPS), ==, 1);
  g_assert_cmpuint (kvev_subscriber_stat (f->subscriber, 0, KVEV_SUBSCRIBER_STAT_REPLAY_REQUESTS),
                    ==, 1);
  g_assert_cmpuint (kvev_subscriber_stat (f->subscriber, 0, KVEV_SUBSCRIBER_STAT_SNAPSHOTS), ==, 1);
  g_assert_cmpuint (kvev_subscriber_stat (f->subscriber, 0, KVEV_SUBSCRIBER_STAT_LOST), ==, 0);
}

static void
test_gap_beyond_replay (Fixture *f, gconstpointer data)
{
  subscribe (f);
  f->want_snapshots = 1;
  g_assert_true (dispatch_until (f->subscriber, converged, f));
  kvev_subscriber_test_drop (f->subscriber, 0, 2, 5);
  publish_keys (f, "k", 10, TRUE);
  f->want_snapshots = 2;
  g_assert_true (dispatch_until (f->subscriber, converged, f));
  g_assert_cmpuint (
      kvev_subscriber_stat (f->subscriber, 0, KVEV_SUBSCRIBER_STAT_RECOVERED_BY_SNAPSHOT), >, 0);
  g_assert_cmpuint (kvev_subscriber_stat (f->subscriber, 0, KVEV_SUBSCRIBER_STAT_LOST), ==, 0);
  g_assert_cmpuint (f->indexer.resets, ==, 2);
}

static void
test_restart (Fixture *f, gconstpointer data)
{
  subscribe (f);
  publish_keys (f, "old", 10, TRUE);
  f->want_snapshots = 1;
  g_assert_true (dispatch_until (f->subscriber, converged, f));
  kvev_publisher_free (f->publisher);
  /* The new instance restored only some of the objects, unpublished. */
  g_hash_table_remove_all (f->store.keys);
  g_hash_table_add (f->store.keys, g_strdup ("restored"));
  f->publisher = publisher_new (&f->store, "pub", GPOINTER_TO_UINT (data));
  publish_keys (f, "new", 3, TRUE);
  f->want_snapshots = 2;
  g_assert_true (dispatch_until (f->subscriber, converged, f));
  g_assert_cmpuint (kvev_subscriber_stat (f->subscriber, 0, KVEV_SUBSCRIBER_STAT_RESTARTS), >=, 1);
  g_assert_true (g_hash_table_contains (f->indexer.keys, "restored"));
  g_assert_false (g_hash_table_contains (f->indexer.keys, "old-1"));
}

/* A snapshot slower than the stream: the messages held meanwhile go past
 * their bound, are dropped and counted, and a later snapshot makes up
 * for them. */
static void
test_hold_overflow (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  guint64 held_max = 0;
  gint64 deadline;

  subscribe (f);
  g_assert_true (kvev_subscriber_set_option (f->subscriber,
                                             KVEV_SUBSCRIBER_OPTION_HOLD_MAX_MESSAGES, 5, &error));
  g_atomic_int_set (&f->store.slow_walks, 1);
  deadline = g_get_monotonic_time () + 400000;
  /* The first message starts the (slow) snapshot; what follows is held. */
  while (g_get_monotonic_time () < deadline)
    {
      g_assert_true (kvev_subscriber_dispatch (f->subscriber, 10, &error));
      held_max = MAX (held_max,
                      kvev_subscriber_stat (f->subscriber, 0, KVEV_SUBSCRIBER_STAT_HELD_MESSAGES));
    }
  publish_keys (f, "k", 20, TRUE);
  deadline = g_get_monotonic_time () + 300000;
  while (g_get_monotonic_time () < deadline)
    {
      g_assert_true (kvev_subscriber_dispatch (f->subscriber, 10, &error));
      held_max = MAX (held_max,
                      kvev_subscriber_stat (f->subscriber, 0, KVEV_SUBSCRIBER_STAT_HELD_MESSAGES));
    }
  g_assert_cmpuint (kvev_subscriber_stat (f->subscriber, 0, KVEV_SUBSCRIBER_STAT_HOLD_OVERFLOWS),
                    >=, 1);
  g_assert_cmpuint (held_max, <=, 5);
  f->want_snapshots = 1;
  g_assert_true (dispatch_until (f->subscriber, converged, f));
}

static void
on_status (KvevSubscriber *subscriber, const KvevSubscriberStatus *status, gpointer data)
{
  KvevSubscriberState *last = data;

  g_assert_nonnull (status->message);
  *last = status->state;
}

/* Nothing at all for 3 heartbeat intervals is told, once. */
static void
test_silence (void)
{
  g_autofree char *live = endpoint ("nobody");
  g_autoptr (GError) error = NULL;
  g_autoptr (KvevSubscriber) subscriber = kvev_subscriber_new (&error);
  KvevSubscriberState last = KVEV_SUBSCRIBER_WAITING;
  gint64 deadline = g_get_monotonic_time () + 500000;

  g_assert_true (
      kvev_subscriber_set_option (subscriber, KVEV_SUBSCRIBER_OPTION_HEARTBEAT_MS, 50, &error));
  kvev_subscriber_set_status_func (subscriber, on_status, &last, NULL);
  g_assert_cmpint (kvev_subscriber_add_publisher (subscriber, live, NULL, NULL, NULL, &error), ==,
                   0);
  /* Waiting as long as it takes still returns for the timer. */
  while (last != KVEV_SUBSCRIBER_SILENT && g_get_monotonic_time () < deadline)
    g_assert_true (kvev_subscriber_dispatch (subscriber, -1, &error));
  g_assert_true (kvev_subscriber_dispatch (subscriber, 100, &error));
  g_assert_cmpint (last, ==, KVEV_SUBSCRIBER_SILENT);
  g_assert_cmpint (kvev_subscriber_get_state (subscriber, 0), ==, KVEV_SUBSCRIBER_SILENT);
  g_assert_cmpuint (kvev_subscriber_stat (subscriber, 0, KVEV_SUBSCRIBER_STAT_SILENCES), ==, 1);
}

static char *
key_file (const char *name, const char *key, int mode)
{
  char *path = g_build_filename (dir, name, NULL);

  g_assert_true (g_file_set_contents (path, key, -1, NULL));
  g_assert_cmpint (g_chmod (path, mode), ==, 0);
  return path;
}

/* CURVE as the tools take it: the server's public key, the client's
 * secret key from a file checked as the publisher checks its own.  The
 * replay and snapshot sockets have the live one's keys. */
static void
test_curve (Fixture *f, gconstpointer data)
{
  char server_public[41], server_secret[41], client_public[41], client_secret[41];
  char other_public[41], other_secret[41];
  g_autofree char *server_file = NULL, *client_file = NULL, *open_file = NULL;
  g_autofree char *clients_file = NULL, *clients = NULL;
  g_autofree char *live = endpoint ("curve");
  g_autofree char *snapshot = g_strdup_printf ("%s-snapshot", live);
  g_autoptr (KvevConfig) config = kvev_config_new ();
  g_autoptr (GError) error = NULL;

  g_assert_cmpint (zmq_curve_keypair (server_public, server_secret), ==, 0);
  g_assert_cmpint (zmq_curve_keypair (client_public, client_secret), ==, 0);
  g_assert_cmpint (zmq_curve_keypair (other_public, other_secret), ==, 0);
  server_file = key_file ("server.key", server_secret, 0600);
  client_file = key_file ("client.key", client_secret, 0600);
  open_file = key_file ("open.key", client_secret, 0644);
  clients = g_strdup_printf ("%s\n", client_public);
  clients_file = key_file ("clients", clients, 0644);

  kvev_publisher_free (f->publisher);
  g_assert_true (kvev_config_set (config, "enable_kv_events", "true", NULL));
  g_assert_true (kvev_config_set (config, "kv_events_backend_id", BACKEND, NULL));
  g_assert_true (kvev_config_set (config, "kv_events_bind_endpoint", live, NULL));
  g_assert_true (kvev_config_set (config, "kv_events_snapshot_endpoint", snapshot, NULL));
  g_assert_true (kvev_config_set (config, "kv_events_heartbeat_ms", "50", NULL));
  g_assert_true (kvev_config_set (config, "kv_events_curve_secret_key_file", server_file, NULL));
  g_assert_true (
      kvev_config_set (config, "kv_events_curve_allowed_clients_file", clients_file, NULL));
  f->publisher = kvev_publisher_new (config, &error);
  g_assert_no_error (error);
  kvev_publisher_set_snapshot_func (f->publisher, walk, &f->store, NULL);
  publish_keys (f, "k", 5, TRUE);

  f->subscriber = kvev_subscriber_new (&error);
  kvev_subscriber_set_event_func (f->subscriber, on_event, &f->indexer, NULL);
  kvev_subscriber_set_reset_func (f->subscriber, on_reset, &f->indexer, NULL);
  /* A secret key others can read is refused, as the publisher's is. */
  g_assert_false (
      kvev_subscriber_set_curve (f->subscriber, server_public, open_file, NULL, &error));
  g_assert_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE);
  g_clear_error (&error);
  g_assert_false (
      kvev_subscriber_set_curve (f->subscriber, server_public, client_file, other_public, &error));
  g_assert_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE);
  g_clear_error (&error);
  g_assert_false (kvev_subscriber_set_curve (f->subscriber, "short", client_file, NULL, &error));
  g_assert_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE);
  g_clear_error (&error);
  g_assert_true (
      kvev_subscriber_set_curve (f->subscriber, server_public, client_file, client_public, &error));
  g_assert_no_error (error);
  g_assert_cmpint (
      kvev_subscriber_add_publisher (f->subscriber, live, NULL, snapshot, NULL, &error), ==, 0);
  f->want_snapshots = 1;
  g_assert_true (dispatch_until (f->subscriber, converged, f));
  g_unlink (server_file);
  g_unlink (client_file);
  g_unlink (open_file);
  g_unlink (clients_file);
}

/* The hostile peer: a PUB and a ROUTER on raw ZeroMQ. */
static void
send_frames (void *socket, const char *const *frames, const gsize *sizes, guint n)
{
  guint i;

  for (i = 0; i < n; i++)
    zmq_send (socket, frames[i], sizes[i], (i + 1 < n ? ZMQ_SNDMORE : 0) | ZMQ_DONTWAIT);
}

static void
pack_str (msgpack_packer *pk, const char *text)
{
  msgpack_pack_str (pk, strlen (text));
  msgpack_pack_str_body (pk, text, strlen (text));
}

static void
answer_snapshots (void *router, msgpack_sbuffer *header, msgpack_sbuffer *chunk,
                  msgpack_sbuffer *end)
{
  char identity[256];
  int n;

  while ((n = zmq_recv (router, identity, sizeof identity, ZMQ_DONTWAIT)) >= 0)
    {
      int more = 1;
      size_t size = sizeof more;
      char rest[64];
      gsize sizes[4] = { (gsize) n, 0, 0, 0 };
      const char *frames[4] = { identity, "", NULL, NULL };

      while (zmq_getsockopt (router, ZMQ_RCVMORE, &more, &size) == 0 && more)
        zmq_recv (router, rest, sizeof rest, 0);
      frames[2] = "header";
      sizes[2] = 6;
      frames[3] = header->data;
      sizes[3] = header->size;
      send_frames (router, frames, sizes, 4);
      frames[2] = "chunk";
      sizes[2] = 5;
      frames[3] = chunk->data;
      sizes[3] = chunk->size;
      send_frames (router, frames, sizes, 4);
      frames[2] = "end";
      sizes[2] = 3;
      frames[3] = end->data;
      sizes[3] = end->size;
      send_frames (router, frames, sizes, 4);
    }
}

static void
test_hostile (void)
{
  g_autofree char *live = endpoint ("hostile");
  g_autofree char *snapshot_endpoint = endpoint ("hostile-snapshot");
  void *context = zmq_ctx_new ();
  void *pub = zmq_socket (context, ZMQ_PUB);
  void *router = zmq_socket (context, ZMQ_ROUTER);
  static const guint8 seq0[8] = { 0 };
  guint8 seq[8] = { 0 };
  msgpack_sbuffer header, chunk, end;
  msgpack_packer pk;
  g_autoptr (GError) error = NULL;
  KvevSubscriber *subscriber;
  Indexer indexer = { 0 };
  gint64 deadline;
  guint64 sequence = 1, max_held = 0;
  int zero = 0;

  zmq_setsockopt (pub, ZMQ_LINGER, &zero, sizeof zero);
  zmq_setsockopt (router, ZMQ_LINGER, &zero, sizeof zero);
  g_assert_cmpint (zmq_bind (pub, live), ==, 0);
  g_assert_cmpint (zmq_bind (router, snapshot_endpoint), ==, 0);

  msgpack_sbuffer_init (&header);
  msgpack_packer_init (&pk, &header, msgpack_sbuffer_write);
  msgpack_pack_map (&pk, 2);
  pack_str (&pk, "barrier_event_id");
  msgpack_pack_uint64 (&pk, 0);
  pack_str (&pk, "backend_id");
  pack_str (&pk, BACKEND);
  msgpack_sbuffer_init (&chunk);
  msgpack_packer_init (&pk, &chunk, msgpack_sbuffer_write);
  msgpack_pack_array (&pk, 3);
  msgpack_pack_uint64 (&pk, 1);
  msgpack_pack_array (&pk, 1);
  msgpack_pack_map (&pk, 4);
  pack_str (&pk, "event_type");
  pack_str (&pk, "stored");
  pack_str (&pk, "backend_id");
  pack_str (&pk, BACKEND);
  pack_str (&pk, "object_key");
  pack_str (&pk, "lie");
  pack_str (&pk, "medium");
  pack_str (&pk, "cpu");
  msgpack_pack_uint32 (&pk, 0);
  /* One object sent, 99 told. */
  msgpack_sbuffer_init (&end);
  msgpack_packer_init (&pk, &end, msgpack_sbuffer_write);
  msgpack_pack_map (&pk, 1);
  pack_str (&pk, "objects");
  msgpack_pack_uint64 (&pk, 99);

  indexer.keys = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  subscriber = kvev_subscriber_new (&error);
  g_assert_no_error (error);
  g_assert_true (kvev_subscriber_set_option (subscriber, KVEV_SUBSCRIBER_OPTION_HOLD_MAX_MESSAGES,
                                             100, &error));
  kvev_subscriber_set_event_func (subscriber, on_event, &indexer, NULL);
  kvev_subscriber_set_reset_func (subscriber, on_reset, &indexer, NULL);
  g_assert_cmpint (
      kvev_subscriber_add_publisher (subscriber, live, NULL, snapshot_endpoint, NULL, &error), ==,
      0);

  deadline = g_get_monotonic_time () + 3 * G_USEC_PER_SEC;
  while (g_get_monotonic_time () < deadline)
    {
      const char *two[2] = { "", (const char *) seq0 };
      gsize two_sizes[2] = { 0, 8 };
      const char *seven[3] = { "", (const char *) seq, "\x93\x01\x90\x00" };
      gsize seven_sizes[3] = { 0, 7, 4 };
      const char *garbage[3] = { "", (const char *) seq, "\xc1\xc1\xc1" };
      gsize garbage_sizes[3] = { 0, 8, 3 };
      const char *good[3] = { "", (const char *) seq, "\x93\x01\x90\x00" };
      gsize good_sizes[3] = { 0, 8, 4 };
      guint64 be;

      be = GUINT64_TO_BE (sequence++);
      memcpy (seq, &be, 8);
      send_frames (pub, good, good_sizes, 3);
      send_frames (pub, two, two_sizes, 2);
      be = GUINT64_TO_BE (sequence++);
      memcpy (seq, &be, 8);
      send_frames (pub, seven, seven_sizes, 3);
      send_frames (pub, garbage, garbage_sizes, 3);
      answer_snapshots (router, &header, &chunk, &end);
      g_assert_true (kvev_subscriber_dispatch (subscriber, 10, &error));
      g_assert_no_error (error);
      max_held = MAX (max_held,
                      kvev_subscriber_stat (subscriber, 0, KVEV_SUBSCRIBER_STAT_HELD_MESSAGES));
    }
  g_assert_cmpuint (kvev_subscriber_stat (subscriber, 0, KVEV_SUBSCRIBER_STAT_DECODE_ERRORS), >, 3);
  g_assert_cmpuint (kvev_subscriber_stat (subscriber, 0, KVEV_SUBSCRIBER_STAT_RECONNECTS), >, 1);
  g_assert_cmpuint (kvev_subscriber_stat (subscriber, 0, KVEV_SUBSCRIBER_STAT_SNAPSHOT_FAILURES),
                    >=, 1);
  /* The lying snapshot was never applied. */
  g_assert_cmpuint (kvev_subscriber_stat (subscriber, 0, KVEV_SUBSCRIBER_STAT_SNAPSHOTS), ==, 0);
  g_assert_cmpuint (indexer.resets, ==, 0);
  g_assert_false (g_hash_table_contains (indexer.keys, "lie"));
  g_assert_cmpuint (max_held, <=, 101);

  kvev_subscriber_free (subscriber);
  g_hash_table_unref (indexer.keys);
  msgpack_sbuffer_destroy (&header);
  msgpack_sbuffer_destroy (&chunk);
  msgpack_sbuffer_destroy (&end);
  zmq_close (pub);
  zmq_close (router);
  zmq_ctx_term (context);
}

/* The descriptor says when to dispatch, and a GSource dispatches. */
static gboolean
stop_loop (gpointer data)
{
  g_main_loop_quit (data);
  return G_SOURCE_CONTINUE;
}

static void
test_source (Fixture *f, gconstpointer data)
{
  g_autoptr (GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  g_autoptr (GSource) source = NULL;
  gint64 deadline;

  publish_keys (f, "k", 5, TRUE);
  subscribe (f);
  g_assert_cmpint (kvev_subscriber_get_fd (f->subscriber), >=, 0);
  source = kvev_subscriber_create_source (f->subscriber);
  g_source_set_callback (source, stop_loop, loop, NULL);
  g_source_attach (source, NULL);
  f->want_snapshots = 1;
  deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
  while (!converged (f) && g_get_monotonic_time () < deadline)
    {
      guint timeout = g_timeout_add (100, stop_loop, loop);

      g_main_loop_run (loop);
      g_source_remove (timeout);
    }
  g_source_destroy (source);
  g_assert_true (converged (f));
}

int
main (int argc, char **argv)
{
  int status;

  g_test_init (&argc, &argv, NULL);
  dir = g_dir_make_tmp ("test-sub-e2e.XXXXXX", NULL);
  g_assert_nonnull (dir);
  g_test_add ("/sub-e2e/late-join", Fixture, GUINT_TO_POINTER (10000), fixture_setup,
              test_late_join, fixture_teardown);
  g_test_add ("/sub-e2e/gap-replay", Fixture, GUINT_TO_POINTER (10000), fixture_setup,
              test_gap_replay, fixture_teardown);
  g_test_add ("/sub-e2e/gap-beyond-replay", Fixture, GUINT_TO_POINTER (1), fixture_setup,
              test_gap_beyond_replay, fixture_teardown);
  g_test_add ("/sub-e2e/restart", Fixture, GUINT_TO_POINTER (10000), fixture_setup, test_restart,
              fixture_teardown);
  g_test_add ("/sub-e2e/source", Fixture, GUINT_TO_POINTER (10000), fixture_setup, test_source,
              fixture_teardown);
  g_test_add ("/sub-e2e/hold-overflow", Fixture, GUINT_TO_POINTER (10000), fixture_setup,
              test_hold_overflow, fixture_teardown);
  g_test_add_func ("/sub-e2e/silence", test_silence);
  g_test_add ("/sub-e2e/curve", Fixture, GUINT_TO_POINTER (10000), fixture_setup, test_curve,
              fixture_teardown);
  g_test_add_func ("/sub-e2e/hostile", test_hostile);
  status = g_test_run ();
  g_rmdir (dir);
  g_free (dir);
  return status;
}
