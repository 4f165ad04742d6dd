/* test-util.c: see test-util.h.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "test-util.h"
#include <base/endpoint-syntax.h>

#include <errno.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

struct _TestSub
{
  void *context;
  void *socket;
};

static char *tmp_dir;

static void
remove_tmp_dir (void)
{
  g_autoptr (GDir) dir = NULL;
  const char *name;

  if (tmp_dir == NULL)
    return;
  dir = g_dir_open (tmp_dir, 0, NULL);
  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = g_build_filename (tmp_dir, name, NULL);
      g_unlink (path);
    }
  g_rmdir (tmp_dir);
  g_clear_pointer (&tmp_dir, g_free);
}

char *
test_ipc_endpoint (const char *name)
{
  if (tmp_dir == NULL)
    {
      g_autoptr (GError) error = NULL;

      tmp_dir = g_dir_make_tmp ("kvev-test-XXXXXX", &error);
      g_assert_no_error (error);
      atexit (remove_tmp_dir);
    }
  return g_strdup_printf ("ipc://%s/%s", tmp_dir, name);
}

TestSub *
test_sub_new (const char *endpoint)
{
  return test_sub_new_curve (endpoint, NULL, NULL, NULL);
}

TestSub *
test_sub_new_curve (const char *endpoint, const char *server_key, const char *public_key,
                    const char *secret_key)
{
  TestSub *sub = g_new0 (TestSub, 1);
  int zero = 0, one = 1, reconnect_ms = 10;

  sub->context = zmq_ctx_new ();
  g_assert_nonnull (sub->context);
  sub->socket = zmq_socket (sub->context, ZMQ_SUB);
  g_assert_nonnull (sub->socket);
  g_assert_cmpint (zmq_setsockopt (sub->socket, ZMQ_RCVHWM, &zero, sizeof zero), ==, 0);
  g_assert_cmpint (zmq_setsockopt (sub->socket, ZMQ_LINGER, &zero, sizeof zero), ==, 0);
  g_assert_cmpint (
      zmq_setsockopt (sub->socket, ZMQ_RECONNECT_IVL, &reconnect_ms, sizeof reconnect_ms), ==, 0);
  if (kvev_endpoint_is_ipv6 (endpoint))
    g_assert_cmpint (zmq_setsockopt (sub->socket, ZMQ_IPV6, &one, sizeof one), ==, 0);
  g_assert_cmpint (zmq_setsockopt (sub->socket, ZMQ_SUBSCRIBE, "", 0), ==, 0);
  if (server_key != NULL)
    {
      g_assert_cmpint (zmq_setsockopt (sub->socket, ZMQ_CURVE_SERVERKEY, server_key, 40), ==, 0);
      g_assert_cmpint (zmq_setsockopt (sub->socket, ZMQ_CURVE_PUBLICKEY, public_key, 40), ==, 0);
      g_assert_cmpint (zmq_setsockopt (sub->socket, ZMQ_CURVE_SECRETKEY, secret_key, 40), ==, 0);
    }
  g_assert_cmpint (zmq_connect (sub->socket, endpoint), ==, 0);
  return sub;
}

void
test_sub_free (TestSub *sub)
{
  if (sub == NULL)
    return;
  zmq_close (sub->socket);
  zmq_ctx_term (sub->context);
  g_free (sub);
}

static void
decode_payload (TestMessage *message, const char *data, gsize len)
{
  const msgpack_object *root, *items;
  size_t offset = 0;

  msgpack_unpacked_init (&message->unpacked);
  if (msgpack_unpack_next (&message->unpacked, data, len, &offset) != MSGPACK_UNPACK_SUCCESS)
    return;
  /* The payload is one msgpack value, nothing after it. */
  g_assert_cmpuint (offset, ==, len);
  root = &message->unpacked.data;
  g_assert_cmpint (root->type, ==, MSGPACK_OBJECT_ARRAY);
  g_assert_cmpuint (root->via.array.size, ==, 3);
  items = root->via.array.ptr;
  g_assert_cmpint (items[0].type, ==, MSGPACK_OBJECT_POSITIVE_INTEGER);
  g_assert_cmpint (items[1].type, ==, MSGPACK_OBJECT_ARRAY);
  g_assert_cmpint (items[2].type, ==, MSGPACK_OBJECT_POSITIVE_INTEGER);
  message->timestamp_ms = (gint64) items[0].via.u64;
  message->events = items[1].via.array.ptr;
  message->n_events = items[1].via.array.size;
  message->dp_rank = items[2].via.u64;
  message->decoded = TRUE;
}

TestMessage *
test_sub_recv (TestSub *sub, int timeout_ms)
{
  zmq_pollitem_t item = { sub->socket, 0, ZMQ_POLLIN, 0 };
  TestMessage *message;
  int more = 1;
  size_t more_len = sizeof more;

  if (zmq_poll (&item, 1, timeout_ms) <= 0)
    return NULL;

  message = g_new0 (TestMessage, 1);
  msgpack_unpacked_init (&message->unpacked);
  while (more)
    {
      zmq_msg_t frame;

      zmq_msg_init (&frame);
      g_assert_cmpint (zmq_msg_recv (&frame, sub->socket, 0), >=, 0);
      switch (message->n_frames)
        {
        case 0:
          message->topic = g_bytes_new (zmq_msg_data (&frame), zmq_msg_size (&frame));
          break;
        case 1:
          message->sequence_len = zmq_msg_size (&frame);
          if (message->sequence_len == 8)
            {
              guint64 be;
              memcpy (&be, zmq_msg_data (&frame), 8);
              message->sequence = GUINT64_FROM_BE (be);
            }
          break;
        case 2:
          msgpack_unpacked_destroy (&message->unpacked);
          message->payload = g_bytes_new (zmq_msg_data (&frame), zmq_msg_size (&frame));
          decode_payload (message, g_bytes_get_data (message->payload, NULL),
                          g_bytes_get_size (message->payload));
          break;
        default:
          break;
        }
      message->n_frames++;
      g_assert_cmpint (zmq_getsockopt (sub->socket, ZMQ_RCVMORE, &more, &more_len), ==, 0);
      zmq_msg_close (&frame);
    }
  return message;
}

void
test_message_free (TestMessage *message)
{
  if (message == NULL)
    return;
  g_clear_pointer (&message->topic, g_bytes_unref);
  msgpack_unpacked_destroy (&message->unpacked);
  g_clear_pointer (&message->payload, g_bytes_unref);
  g_free (message);
}

static gboolean
is_tenant_event (const TestMessage *message, const char *tenant)
{
  g_autofree char *value = NULL;

  if (!message->decoded || message->n_events != 1)
    return FALSE;
  value = test_map_dup_str (&message->events[0], "tenant_id");
  return g_strcmp0 (value, tenant) == 0;
}

TestMessage *
test_sync (KvevPublisher *publisher, TestSub *sub)
{
  TestMessage *first = NULL;
  guint attempts;

  for (attempts = 0; first == NULL && attempts < 500; attempts++)
    {
      kvev_publish_cleared (publisher, "kvev-test-sync");
      g_assert_true (kvev_publisher_flush (publisher, 5000));
      first = test_sub_recv (sub, 20);
    }
  g_assert_nonnull (first);
  g_assert_true (is_tenant_event (first, "kvev-test-sync"));

  kvev_publish_cleared (publisher, "kvev-test-sync-end");
  g_assert_true (kvev_publisher_flush (publisher, 5000));
  for (;;)
    {
      g_autoptr (TestMessage) message = test_sub_recv (sub, 5000);

      g_assert_nonnull (message);
      if (is_tenant_event (message, "kvev-test-sync-end"))
        break;
      g_assert_true (is_tenant_event (message, "kvev-test-sync"));
    }
  return first;
}

gboolean
test_sub_receives_anything (TestSub *sub)
{
  g_autoptr (TestMessage) message = test_sub_recv (sub, 300);

  return message != NULL;
}

void
test_publish_some (KvevPublisher *publisher)
{
  guint i;

  for (i = 0; i < 20; i++)
    kvev_publish_stored (publisher, "tenant", "key", -1, NULL, KVEV_MEDIA_CPU);
  g_assert_true (kvev_publisher_flush (publisher, 10000));
}

gboolean
test_have_ipv6_loopback (void)
{
  void *context = zmq_ctx_new ();
  void *socket = zmq_socket (context, ZMQ_PUB);
  int one = 1, zero = 0;
  gboolean bound;

  zmq_setsockopt (socket, ZMQ_IPV6, &one, sizeof one);
  zmq_setsockopt (socket, ZMQ_LINGER, &zero, sizeof zero);
  bound = zmq_bind (socket, "tcp://[::1]:*") == 0;
  zmq_close (socket);
  zmq_ctx_term (context);
  return bound;
}

KvevPublisher *
test_publisher_new_allowing (const char *endpoint, const char *allowed)
{
  g_autoptr (KvevConfig) config = test_config_new (endpoint);
  g_autoptr (GError) error = NULL;
  KvevPublisher *publisher;

  test_config_set (config, "kv_events_allowed_addresses", allowed);
  publisher = kvev_publisher_new (config, &error);
  g_assert_no_error (error);
  return publisher;
}

void
test_assert_only_local_admitted (KvevPublisher *publisher)
{
  const char *endpoint = kvev_publisher_get_endpoint (publisher);
  g_autoptr (TestMessage) first = NULL;
  g_autofree char *from_other = NULL;
  TestSub *local, *other;

  /* ZeroMQ's "tcp://SOURCE;DESTINATION" binds the subscriber's side. */
  from_other = g_strdup_printf ("tcp://127.0.0.2:0;%s", endpoint + strlen ("tcp://"));
  other = test_sub_new (from_other);
  local = test_sub_new (endpoint);
  first = test_sync (publisher, local);
  test_publish_some (publisher);
  g_assert_true (test_sub_receives_anything (local));
  g_assert_false (test_sub_receives_anything (other));
  test_sub_free (local);
  test_sub_free (other);
}

KvevConfig *
test_config_new (const char *endpoint)
{
  KvevConfig *config = kvev_config_new ();

  test_config_set (config, "enable_kv_events", "true");
  test_config_set (config, "kv_events_bind_endpoint", endpoint);
  test_config_set (config, "kv_events_backend_id", "backend-1");
  return config;
}

void
test_config_set (KvevConfig *config, const char *flag, const char *value)
{
  g_autoptr (GError) error = NULL;

  g_assert_true (kvev_config_set (config, flag, value, &error));
  g_assert_no_error (error);
}

const msgpack_object *
test_map_get (const msgpack_object *map, const char *key)
{
  gsize key_len = strlen (key);
  guint i;

  g_assert_cmpint (map->type, ==, MSGPACK_OBJECT_MAP);
  for (i = 0; i < map->via.map.size; i++)
    {
      const msgpack_object *k = &map->via.map.ptr[i].key;

      g_assert_cmpint (k->type, ==, MSGPACK_OBJECT_STR);
      if (k->via.str.size == key_len && memcmp (k->via.str.ptr, key, key_len) == 0)
        return &map->via.map.ptr[i].val;
    }
  return NULL;
}

char *
test_map_dup_str (const msgpack_object *map, const char *key)
{
  const msgpack_object *value = test_map_get (map, key);

  if (value == NULL || value->type != MSGPACK_OBJECT_STR)
    return NULL;
  return g_strndup (value->via.str.ptr, value->via.str.size);
}

guint64
test_map_uint (const msgpack_object *map, const char *key)
{
  const msgpack_object *value = test_map_get (map, key);

  g_assert_nonnull (value);
  g_assert_cmpint (value->type, ==, MSGPACK_OBJECT_POSITIVE_INTEGER);
  return value->via.u64;
}

gboolean
test_running_on_valgrind (void)
{
  const char *preload = g_getenv ("LD_PRELOAD");

  return preload != NULL && strstr (preload, "vgpreload") != NULL;
}

pid_t
test_fork (void)
{
  pid_t pid;

  fflush (stdout);
  fflush (stderr);
  pid = fork ();
  g_assert_cmpint (pid, >=, 0);
  return pid;
}

int
test_wait_child (pid_t pid, gint64 timeout_us, const char *what)
{
  gint64 deadline = g_get_monotonic_time () + timeout_us;
  int status;
  pid_t got;

  while ((got = waitpid (pid, &status, WNOHANG)) == 0 && g_get_monotonic_time () < deadline)
    g_usleep (500);
  if (got == 0)
    {
      kill (pid, SIGKILL);
      waitpid (pid, &status, 0);
      g_error ("%s hung", what);
    }
  g_assert_cmpint (got, ==, pid);
  return status;
}

char *
test_read_all (int fd)
{
  GString *text = g_string_new (NULL);
  char buffer[512];
  gssize n;

  while ((n = read (fd, buffer, sizeof buffer)) > 0 || (n < 0 && errno == EINTR))
    if (n > 0)
      g_string_append_len (text, buffer, n);
  return g_string_free (text, FALSE);
}
