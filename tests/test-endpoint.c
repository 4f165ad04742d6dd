/* test-endpoint.c: binding endpoints (libkvevents/config/endpoint.c): an
 * ipc:// path that is taken, is not a socket or is a socket left behind,
 * and loopback binds that must not warn.  Real binds on ipc:// in a
 * private directory and on the loopback addresses only; which endpoints
 * are wildcards, which must not be bound here, is in test-security.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config/endpoint.h"
#include "test-util.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static guint exposure_warnings;

static gboolean
count_exposure_warning (const char *domain, GLogLevelFlags level, const char *message,
                        gpointer data)
{
  if (strstr (message, "every interface") == NULL)
    return TRUE;
  exposure_warnings++;
  return FALSE;
}

/* Real publishers on the loopback addresses bind and log nothing. */
static void
test_loopback_binds_quietly (void)
{
  static const char *const loopbacks[] = { "tcp://127.0.0.1:*", "tcp://[::1]:*" };

  exposure_warnings = 0;
  g_test_log_set_fatal_handler (count_exposure_warning, NULL);
  for (gsize i = 0; i < G_N_ELEMENTS (loopbacks); i++)
    {
      g_autoptr (KvevConfig) config = test_config_new (loopbacks[i]);
      g_autoptr (KvevPublisher) publisher = NULL;
      g_autoptr (GError) error = NULL;

      if (kvev_endpoint_is_ipv6 (loopbacks[i]) && !test_have_ipv6_loopback ())
        {
          g_test_message ("this host cannot bind the IPv6 loopback: %s not bound", loopbacks[i]);
          continue;
        }
      publisher = kvev_publisher_new (config, &error);
      g_assert_no_error (error);
      g_assert_nonnull (publisher);
    }
  g_test_log_set_fatal_handler (NULL, NULL);
  g_assert_cmpuint (exposure_warnings, ==, 0);
}

static char *
endpoint_path (const char *endpoint)
{
  g_assert_true (g_str_has_prefix (endpoint, "ipc://"));
  return g_strdup (endpoint + strlen ("ipc://"));
}

static KvevPublisher *
publisher_on (const char *endpoint)
{
  g_autoptr (KvevConfig) config = test_config_new (endpoint);
  g_autoptr (GError) error = NULL;
  KvevPublisher *publisher = kvev_publisher_new (config, &error);

  g_assert_no_error (error);
  g_assert_nonnull (publisher);
  return publisher;
}

/* kvev_publisher_new () on @endpoint fails as a bind does, naming the
 * flag, the path and @reason. */
static void
assert_bind_refused (const char *endpoint, const char *reason)
{
  g_autoptr (KvevConfig) config = test_config_new (endpoint);
  g_autoptr (GError) error = NULL;
  g_autofree char *path = endpoint_path (endpoint);
  g_autofree char *prefix
      = g_strdup_printf ("Cannot bind kv_events_bind_endpoint \"%s\": ", endpoint);

  g_assert_null (kvev_publisher_new (config, &error));
  g_assert_error (error, KVEV_ERROR, KVEV_ERROR_TRANSPORT);
  g_test_message ("%s", error->message);
  g_assert_true (g_str_has_prefix (error->message, prefix));
  g_assert_nonnull (strstr (error->message + strlen (prefix), path));
  g_assert_nonnull (strstr (error->message, reason));
}

/* The first publisher delivers to a subscriber that connects now, and to
 * @sub, which was connected before. */
static void
assert_still_delivers (KvevPublisher *publisher, TestSub *sub)
{
  TestSub *late = test_sub_new (kvev_publisher_get_endpoint (publisher));
  g_autoptr (TestMessage) first = NULL;
  g_autoptr (TestMessage) message = NULL;

  first = test_sync (publisher, late);
  test_publish_some (publisher);
  message = test_sub_recv (sub, 5000);
  g_assert_nonnull (message);
  g_assert_true (test_sub_receives_anything (late));
  test_sub_free (late);
}

/* An AF_UNIX stream socket bound at @path; listening when @listen_too,
 * else it is closed at once, leaving the file as a crashed program does. */
static int
unix_socket_at (const char *path, gboolean listen_too)
{
  struct sockaddr_un address;
  int fd = socket (AF_UNIX, SOCK_STREAM, 0);

  g_assert_cmpint (fd, >=, 0);
  memset (&address, 0, sizeof address);
  address.sun_family = AF_UNIX;
  g_assert_cmpuint (strlen (path), <, sizeof address.sun_path);
  memcpy (address.sun_path, path, strlen (path));
  g_assert_cmpint (bind (fd, (struct sockaddr *) &address, sizeof address), ==, 0);
  if (listen_too)
    {
      g_assert_cmpint (listen (fd, 1), ==, 0);
      return fd;
    }
  close (fd);
  return -1;
}

/* A second publisher on a path where one listens fails like tcp:// does,
 * and the first one keeps the path: subscribers still reach it. */
static void
test_ipc_in_use (void)
{
  g_autofree char *endpoint = test_ipc_endpoint ("in-use");
  g_autofree char *foreign = test_ipc_endpoint ("foreign");
  g_autofree char *foreign_path = endpoint_path (foreign);
  g_autoptr (KvevPublisher) publisher = publisher_on (endpoint);
  TestSub *sub = test_sub_new (endpoint);
  g_autoptr (TestMessage) first = NULL;
  int listener;

  first = test_sync (publisher, sub);
  assert_bind_refused (endpoint, "Address already in use");
  assert_still_delivers (publisher, sub);
  test_sub_free (sub);

  /* Any program's listener, not only a publisher's. */
  listener = unix_socket_at (foreign_path, TRUE);
  assert_bind_refused (foreign, "Address already in use");
  close (listener);
}

/* A path that is not a socket is refused, and libzmq never gets to
 * unlink it. */
static void
test_ipc_not_a_socket (void)
{
  g_autofree char *endpoint = test_ipc_endpoint ("regular");
  g_autofree char *path = endpoint_path (endpoint);
  g_autofree char *link_endpoint = test_ipc_endpoint ("link");
  g_autofree char *link_path = endpoint_path (link_endpoint);
  g_autofree char *dir_endpoint = test_ipc_endpoint ("directory");
  g_autofree char *dir_path = endpoint_path (dir_endpoint);
  g_autofree char *contents = NULL;
  g_autofree char *target = NULL;
  g_autoptr (GError) error = NULL;

  g_file_set_contents (path, "precious", -1, &error);
  g_assert_no_error (error);
  assert_bind_refused (endpoint, "exists and is not a socket");
  g_file_get_contents (path, &contents, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (contents, ==, "precious");

  /* A link is not followed, nor removed. */
  g_assert_cmpint (symlink (path, link_path), ==, 0);
  assert_bind_refused (link_endpoint, "exists and is not a socket");
  target = g_file_read_link (link_path, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (target, ==, path);

  g_assert_cmpint (g_mkdir (dir_path, 0700), ==, 0);
  assert_bind_refused (dir_endpoint, "exists and is not a socket");
  g_assert_true (g_file_test (dir_path, G_FILE_TEST_IS_DIR));
  g_assert_cmpint (g_rmdir (dir_path), ==, 0);
}

/* A socket nobody listens on is what a master that crashed, or a
 * publisher freed (libzmq leaves the file), leaves behind: a new
 * publisher replaces it and serves. */
static void
test_ipc_stale_socket (void)
{
  g_autofree char *endpoint = test_ipc_endpoint ("stale");
  g_autofree char *path = endpoint_path (endpoint);
  KvevPublisher *publisher;
  struct stat st;

  unix_socket_at (path, FALSE);
  g_assert_cmpint (g_lstat (path, &st), ==, 0);
  g_assert_true (S_ISSOCK (st.st_mode));
  for (guint round = 0; round < 2; round++)
    {
      TestSub *sub;
      g_autoptr (TestMessage) first = NULL;

      publisher = publisher_on (endpoint);
      sub = test_sub_new (endpoint);
      first = test_sync (publisher, sub);
      test_publish_some (publisher);
      g_assert_true (test_sub_receives_anything (sub));
      test_sub_free (sub);
      kvev_publisher_free (publisher);
    }
}
int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/kvevents/endpoint/loopback-binds-quietly", test_loopback_binds_quietly);
  g_test_add_func ("/kvevents/endpoint/ipc-in-use", test_ipc_in_use);
  g_test_add_func ("/kvevents/endpoint/ipc-not-a-socket", test_ipc_not_a_socket);
  g_test_add_func ("/kvevents/endpoint/ipc-stale-socket", test_ipc_stale_socket);

  return g_test_run ();
}
