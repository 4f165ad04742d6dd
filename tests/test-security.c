/* test-security.c: CURVE, the allowed clients, the address allow-list and
 * their validation.  Real sockets on loopback addresses only.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include "config/endpoint.h"
#include "config/security.h"
#include "config/settings.h"
#ifdef HAVE_ZMQ
#include "test-util.h"
#include <zmq.h>
#endif

#include <glib/gstdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#ifdef __linux__
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

static char *key_dir;

static char *
write_file (const char *name, const char *contents, int mode)
{
  char *path = g_build_filename (key_dir, name, NULL);
  g_autoptr (GError) error = NULL;

  g_file_set_contents (path, contents, -1, &error);
  g_assert_no_error (error);
  g_assert_cmpint (g_chmod (path, mode), ==, 0);
  return path;
}

static KvevConfig *
secure_config (const char *endpoint)
{
  KvevConfig *config = kvev_config_new ();

  g_assert_true (kvev_config_set (config, "enable_kv_events", "true", NULL));
  g_assert_true (kvev_config_set (config, "kv_events_bind_endpoint", endpoint, NULL));
  g_assert_true (kvev_config_set (config, "kv_events_backend_id", "b", NULL));
  return config;
}

static void
set (KvevConfig *config, const char *flag, const char *value)
{
  g_autoptr (GError) error = NULL;

  g_assert_true (kvev_config_set (config, flag, value, &error));
  g_assert_no_error (error);
}

static void
assert_invalid (KvevConfig *config, int code, const char *expected)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GError) new_error = NULL;

  g_assert_false (kvev_config_validate (config, &error));
  g_assert_error (error, KVEV_ERROR, code);
  if (strstr (error->message, expected) == NULL)
    g_error ("\"%s\" does not say \"%s\"", error->message, expected);
  g_assert_null (kvev_publisher_new (config, &new_error));
  g_assert_error (new_error, KVEV_ERROR, code);
}

/* A valid server secret key and two valid client public keys, Z85. */
#define SERVER_SECRET "JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6"
#define CLIENT_PUBLIC_1 "Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID"
#define CLIENT_PUBLIC_2 "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7"

static void
test_secret_key_mode (void)
{
  g_autofree char *open_key = write_file ("open.key", SERVER_SECRET "\n", 0644);
  g_autofree char *group_key = write_file ("group.key", SERVER_SECRET "\n", 0640);
  g_autofree char *good_key = write_file ("good.key", SERVER_SECRET "\n", 0600);
  g_autoptr (KvevConfig) config = secure_config ("tcp://127.0.0.1:*");

  set (config, "kv_events_curve_secret_key_file", open_key);
  assert_invalid (config, KVEV_ERROR_INVALID_VALUE, "chmod 600");
  set (config, "kv_events_curve_secret_key_file", group_key);
  assert_invalid (config, KVEV_ERROR_INVALID_VALUE, "group or others");
  set (config, "kv_events_curve_secret_key_file", good_key);
  g_assert_true (kvev_config_validate (config, NULL));
}

static void
test_malformed_keys (void)
{
  g_autofree char *short_key = write_file ("short.key", "abc\n", 0600);
  g_autofree char *bad_chars
      = write_file ("bad.key", "JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh~\n", 0600);
  g_autofree char *good_key = write_file ("good2.key", SERVER_SECRET, 0600);
  g_autofree char *clients
      = write_file ("clients", "# operators\n" CLIENT_PUBLIC_1 "\n\nnot-a-key\n", 0644);
  g_autofree char *missing = g_build_filename (key_dir, "missing", NULL);
  g_autoptr (KvevConfig) config = secure_config ("tcp://127.0.0.1:*");

  set (config, "kv_events_curve_secret_key_file", short_key);
  assert_invalid (config, KVEV_ERROR_INVALID_VALUE, "Z85 secret key");
  set (config, "kv_events_curve_secret_key_file", bad_chars);
  assert_invalid (config, KVEV_ERROR_INVALID_VALUE, "Z85 secret key");
  set (config, "kv_events_curve_secret_key_file", missing);
  assert_invalid (config, KVEV_ERROR_INVALID_VALUE, "kv_events_curve_secret_key_file");

  set (config, "kv_events_curve_secret_key_file", good_key);
  set (config, "kv_events_curve_allowed_clients_file", clients);
  assert_invalid (config, KVEV_ERROR_INVALID_VALUE, "line 4");

  /* Client keys without a server key would protect nothing. */
  set (config, "kv_events_curve_secret_key_file", "");
  assert_invalid (config, KVEV_ERROR_INCOMPLETE, "kv_events_curve_secret_key_file");
}

/* What the two file flags must refuse or take, whatever the file's
 * contents: the reader's checks come before the parse. */
typedef enum
{
  FILE_FIFO,      /* a FIFO nobody writes: opening it must not wait */
  FILE_DEV_ZERO,  /* a device that never ends */
  FILE_DIRECTORY, /* the temporary directory itself */
  FILE_OVERSIZED, /* a regular file one byte over the bound */
  FILE_AT_BOUND,  /* a regular file of exactly the bound: it loads */
} FileKind;

typedef struct
{
  const char *flag;
  gboolean secret;
  gsize bound; /* security.c's size bound for this file */
  FileKind kind;
} FileCase;

/* The secret key file holds one 41-byte line; the allowed-clients file
 * one per subscriber. */
#define SECRET_BOUND 1024
#define CLIENTS_BOUND (1024 * 1024)

/* A file of exactly size bytes that the flag's parser accepts: the
 * secret key padded with blanks, or comment lines and one key. */
static char *
padded_contents (const FileCase *file_case, gsize size)
{
  const char *key = file_case->secret ? SERVER_SECRET "\n" : CLIENT_PUBLIC_1 "\n";
  gsize key_len = strlen (key);
  char *contents = g_malloc (size + 1);

  g_assert_cmpuint (size, >, key_len + 2);
  memcpy (contents, key, key_len);
  if (file_case->secret)
    memset (contents + key_len, ' ', size - key_len);
  else
    {
      contents[key_len] = '#';
      memset (contents + key_len + 1, 'c', size - key_len - 1);
    }
  contents[size - 1] = '\n';
  contents[size] = '\0';
  return contents;
}

/* A child that, without the reader's checks, would read /dev/zero until
 * it is killed: bounded here so that it fails alone.  Sanitizers
 * reserve terabytes of address space, so under them the trap's timeout
 * is the only bound. */
static void
limit_child_memory (void)
{
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#if defined(__has_feature)
#if !__has_feature(address_sanitizer) && !__has_feature(thread_sanitizer)
#define KVEV_TEST_LIMIT_MEMORY 1
#endif
#else
#define KVEV_TEST_LIMIT_MEMORY 1
#endif
#endif
#ifdef KVEV_TEST_LIMIT_MEMORY
  struct rlimit limit = { 1024 * 1024 * 1024, 1024 * 1024 * 1024 };

  g_assert_cmpint (setrlimit (RLIMIT_AS, &limit), ==, 0);
#endif
}

/* Runs in the child of test_key_file_kind: builds the file and checks
 * what validation says of it. */
static void
check_key_file_kind (const FileCase *file_case)
{
  g_autoptr (KvevConfig) config = secure_config ("tcp://127.0.0.1:*");
  g_autofree char *secret = write_file ("kind-server.key", SERVER_SECRET "\n", 0600);
  g_autofree char *path = NULL;
  const char *expected = NULL;

  limit_child_memory ();
  if (!file_case->secret)
    set (config, "kv_events_curve_secret_key_file", secret);
  switch (file_case->kind)
    {
    case FILE_FIFO:
      path = g_build_filename (key_dir, "fifo", NULL);
      g_assert_cmpint (mkfifo (path, 0600), ==, 0);
      expected = "is not a regular file";
      break;
    case FILE_DEV_ZERO:
      path = g_strdup ("/dev/zero");
      expected = "is not a regular file";
      break;
    case FILE_DIRECTORY:
      path = g_strdup (key_dir);
      expected = "is not a regular file";
      break;
    case FILE_OVERSIZED:
    case FILE_AT_BOUND:
      {
        gsize size = file_case->bound + (file_case->kind == FILE_OVERSIZED);
        g_autofree char *contents = padded_contents (file_case, size);

        path = write_file ("sized", contents, 0600);
        if (file_case->kind == FILE_OVERSIZED)
          expected
              = file_case->secret ? "is larger than 1024 bytes" : "is larger than 1048576 bytes";
      }
      break;
    }
  set (config, file_case->flag, path);
  if (expected == NULL)
    {
      g_autoptr (GError) error = NULL;

      g_assert_true (kvev_config_validate (config, &error));
      g_assert_no_error (error);
      return;
    }
  {
    g_autoptr (GError) error = NULL;

    g_assert_false (kvev_config_validate (config, &error));
    g_assert_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE);
    g_test_message ("%s", error->message);
    /* The flag, the path and the reason. */
    g_assert_nonnull (strstr (error->message, file_case->flag));
    g_assert_nonnull (strstr (error->message, path));
    g_assert_nonnull (strstr (error->message, expected));
  }
}

/* In a child with a timeout, so that a reader that waits on a FIFO or
 * reads a device for ever fails the test rather than hanging it. */
static void
test_key_file_kind (gconstpointer data)
{
  const FileCase *file_case = data;

  if (g_test_subprocess ())
    {
      check_key_file_kind (file_case);
      return;
    }
  g_test_trap_subprocess (NULL, 20 * G_USEC_PER_SEC, G_TEST_SUBPROCESS_INHERIT_STDERR);
  g_test_trap_assert_passed ();
}

/* Text that a string function would cut at its NUL byte: the secret
 * after it, or the allowed keys, would be silently ignored. */
static void
test_key_file_nul (void)
{
  g_autofree char *secret = write_file ("nul.key", SERVER_SECRET "\n", 0600);
  g_autofree char *secret_nul = NULL;
  g_autofree char *clients_nul = NULL;
  g_autoptr (KvevConfig) config = secure_config ("tcp://127.0.0.1:*");
  static const char secret_bytes[] = SERVER_SECRET "\0trailing\n";
  static const char client_bytes[] = CLIENT_PUBLIC_1 "\n\0" CLIENT_PUBLIC_2 "\n";

  secret_nul = g_build_filename (key_dir, "secret-nul.key", NULL);
  clients_nul = g_build_filename (key_dir, "clients-nul", NULL);
  g_assert_true (g_file_set_contents (secret_nul, secret_bytes, sizeof secret_bytes - 1, NULL));
  g_assert_cmpint (g_chmod (secret_nul, 0600), ==, 0);
  g_assert_true (g_file_set_contents (clients_nul, client_bytes, sizeof client_bytes - 1, NULL));

  set (config, "kv_events_curve_secret_key_file", secret_nul);
  assert_invalid (config, KVEV_ERROR_INVALID_VALUE, "holds a NUL byte");
  set (config, "kv_events_curve_secret_key_file", secret);
  set (config, "kv_events_curve_allowed_clients_file", clients_nul);
  assert_invalid (config, KVEV_ERROR_INVALID_VALUE, "holds a NUL byte");
}

/* The wipe reaches every byte, and a length of 0 touches none. */
static void
test_secret_wipe (void)
{
  char buffer[] = "0123456789abcdef";

  kvev_secret_wipe (buffer + 2, 0);
  g_assert_cmpstr (buffer, ==, "0123456789abcdef");
  kvev_secret_wipe (buffer + 2, 10);
  g_assert_cmpmem (buffer, sizeof buffer, "01\0\0\0\0\0\0\0\0\0\0cdef", sizeof buffer);
}

static void
test_malformed_addresses (void)
{
  static const char *const bad[] = { "127.0.0.1,", "localhost",   "10.0.0.0/33", "::1/129",
                                     "10.0.0.0/",  "10.0.0.0/8x", "1.2.3.4.5",   "10.0.0.0/-1" };
  g_autoptr (KvevConfig) config = secure_config ("tcp://127.0.0.1:*");
  g_autoptr (KvevConfig) ipc = secure_config ("ipc:///tmp/kvev-never-bound");
  guint i;

  for (i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      set (config, "kv_events_allowed_addresses", bad[i]);
      assert_invalid (config, KVEV_ERROR_INVALID_VALUE, "kv_events_allowed_addresses");
    }
  set (config, "kv_events_allowed_addresses", "127.0.0.1, 10.0.0.0/8,::1,fe80::/10");
  g_assert_true (kvev_config_validate (config, NULL));

  /* A peer over ipc has no address to check. */
  set (ipc, "kv_events_allowed_addresses", "127.0.0.1");
  assert_invalid (ipc, KVEV_ERROR_INVALID_VALUE, "tcp://");
}

static void
test_address_matching (void)
{
  g_autoptr (KvevConfig) config = secure_config ("tcp://127.0.0.1:*");
  g_autoptr (KvevSettings) settings = NULL;
  g_autoptr (GError) error = NULL;
  const KvevSecurity *security;

  set (config, "kv_events_allowed_addresses", "127.0.0.1,10.1.0.0/16,fd00::/8");
  settings = kvev_settings_new (config, &error);
  g_assert_no_error (error);
  security = settings->security;
  g_assert_true (kvev_security_address_allowed (security, "127.0.0.1"));
  g_assert_true (kvev_security_address_allowed (security, "::ffff:127.0.0.1"));
  g_assert_false (kvev_security_address_allowed (security, "127.0.0.2"));
  g_assert_true (kvev_security_address_allowed (security, "10.1.255.3"));
  g_assert_false (kvev_security_address_allowed (security, "10.2.0.1"));
  g_assert_true (kvev_security_address_allowed (security, "fd12::1"));
  g_assert_false (kvev_security_address_allowed (security, "fe80::1"));
  g_assert_false (kvev_security_address_allowed (security, ""));
  g_assert_false (kvev_security_address_allowed (security, "garbage"));
}

/* Every spelling libzmq binds as 0.0.0.0 or :: (it reads an IPv4 host as
 * inet_aton () does), then endpoints that bind one address, or nothing. */
static const char *const wildcards[] = {
  "tcp://*:*",         "tcp://*:5557",     "tcp://0.0.0.0:*", "tcp://0:*",
  "tcp://0.0:*",       "tcp://0.0.0:5557", "tcp://[::]:*",    "tcp://[::0]:*",
  "tcp://[0:0::0]:*",  "tcp://[0000::]:*", "tcp://[::]:5557", "tcp://[::ffff:0.0.0.0]:*",
  "tcp://[0::0%lo]:*",
};
static const char *const single_addresses[] = {
  "tcp://127.0.0.1:*", "tcp://127.1:*",
  "tcp://[::1]:*",     "tcp://[::ffff:127.0.0.1]:*",
  "tcp://lo:*",        "tcp://10.0.0.1:5557",
  "ipc:///tmp/x",      "ipc://*",
  "tcp://*",           "tcp://0",
  "tcp://[0]:*",       "udp://*:1",
};

/* An endpoint validation refuses is never bound, so it listens nowhere. */
static gboolean
endpoint_is_wildcard (const char *text)
{
  g_autoptr (KvevEndpoint) endpoint = kvev_endpoint_parse (text, NULL);

  return endpoint != NULL && kvev_endpoint_is_wildcard (endpoint);
}

static void
test_wildcard_endpoints (void)
{
  for (gsize i = 0; i < G_N_ELEMENTS (wildcards); i++)
    {
      g_test_message ("wildcard: %s", wildcards[i]);
      g_assert_true (endpoint_is_wildcard (wildcards[i]));
    }
  for (gsize i = 0; i < G_N_ELEMENTS (single_addresses); i++)
    {
      g_test_message ("not a wildcard: %s", single_addresses[i]);
      g_assert_false (endpoint_is_wildcard (single_addresses[i]));
    }

  g_assert_true (kvev_endpoint_is_ipv6 ("tcp://[::1]:5557"));
  g_assert_true (kvev_endpoint_is_ipv6 ("tcp://[::]:*"));
  g_assert_false (kvev_endpoint_is_ipv6 ("tcp://127.0.0.1:5557"));
  g_assert_false (kvev_endpoint_is_ipv6 ("tcp://*:5557"));
  g_assert_false (kvev_endpoint_is_ipv6 ("ipc:///tmp/[x]"));
}

/* The warning is checked without binding: tests never listen beyond
 * loopback.  It depends on the address bound, not on its spelling; a
 * stray warning would abort the test under G_DEBUG=fatal-warnings. */
static void
test_wildcard_warning (void)
{
  for (gsize i = 0; i < G_N_ELEMENTS (wildcards); i++)
    {
      g_autoptr (KvevConfig) config = secure_config (wildcards[i]);
      g_autoptr (KvevSettings) settings = NULL;
      g_autoptr (KvevSettings) listed = NULL;

      g_test_message ("warns: %s", wildcards[i]);
      settings = kvev_settings_new (config, NULL);
      g_assert_nonnull (settings);
      g_test_expect_message ("kvevents", G_LOG_LEVEL_WARNING, "*listens on every interface*");
      kvev_security_warn_if_exposed (settings->bind_endpoint, settings->security);
      g_test_assert_expected_messages ();
      /* An allow-list is protection: no warning. */
      set (config, "kv_events_allowed_addresses", "10.0.0.0/8");
      listed = kvev_settings_new (config, NULL);
      g_assert_nonnull (listed);
      kvev_security_warn_if_exposed (listed->bind_endpoint, listed->security);
    }
  for (gsize i = 0; i < G_N_ELEMENTS (single_addresses); i++)
    {
      g_autoptr (KvevSecurity) security = g_new0 (KvevSecurity, 1);
      g_autoptr (KvevEndpoint) endpoint = kvev_endpoint_parse (single_addresses[i], NULL);

      if (endpoint != NULL)
        kvev_security_warn_if_exposed (endpoint, security);
    }
}

#ifdef HAVE_ZMQ
static void
test_curve_allowed_clients (void)
{
  char server_public[41], server_secret[41], allowed_public[41], allowed_secret[41];
  char other_public[41], other_secret[41], wrong_public[41], wrong_secret[41];
  g_autofree char *secret_file = NULL;
  g_autofree char *clients_file = NULL;
  g_autofree char *clients = NULL;
  g_autoptr (KvevConfig) config = secure_config ("tcp://127.0.0.1:*");
  g_autoptr (KvevPublisher) publisher = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (TestMessage) first = NULL;
  TestSub *allowed, *unknown, *wrong_server, *plain;
  const char *endpoint;
  guint received = 0;

  g_assert_cmpint (zmq_curve_keypair (server_public, server_secret), ==, 0);
  g_assert_cmpint (zmq_curve_keypair (allowed_public, allowed_secret), ==, 0);
  g_assert_cmpint (zmq_curve_keypair (other_public, other_secret), ==, 0);
  g_assert_cmpint (zmq_curve_keypair (wrong_public, wrong_secret), ==, 0);
  secret_file = write_file ("server.key", server_secret, 0600);
  clients = g_strdup_printf ("# the indexer\n%s\n", allowed_public);
  clients_file = write_file ("allowed", clients, 0644);
  set (config, "kv_events_curve_secret_key_file", secret_file);
  set (config, "kv_events_curve_allowed_clients_file", clients_file);
  publisher = kvev_publisher_new (config, &error);
  g_assert_no_error (error);
  endpoint = kvev_publisher_get_endpoint (publisher);

  unknown = test_sub_new_curve (endpoint, server_public, other_public, other_secret);
  wrong_server = test_sub_new_curve (endpoint, wrong_public, other_public, other_secret);
  plain = test_sub_new (endpoint);
  allowed = test_sub_new_curve (endpoint, server_public, allowed_public, allowed_secret);
  first = test_sync (publisher, allowed);
  test_publish_some (publisher);
  while (received < 20)
    {
      g_autoptr (TestMessage) message = test_sub_recv (allowed, 5000);

      g_assert_nonnull (message);
      received += message->n_events;
    }
  g_assert_false (test_sub_receives_anything (unknown));
  g_assert_false (test_sub_receives_anything (wrong_server));
  g_assert_false (test_sub_receives_anything (plain));

  /* The refused ones tried all along; the allowed one is still served. */
  test_publish_some (publisher);
  g_assert_true (test_sub_receives_anything (allowed));
  test_sub_free (allowed);
  test_sub_free (unknown);
  test_sub_free (wrong_server);
  test_sub_free (plain);
}

/* CURVE without a client list: encryption, no client authentication. */
static void
test_curve_any_client (void)
{
  char server_public[41], server_secret[41], client_public[41], client_secret[41];
  g_autofree char *secret_file = NULL;
  g_autoptr (KvevConfig) config = secure_config ("tcp://127.0.0.1:*");
  g_autoptr (KvevPublisher) publisher = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (TestMessage) first = NULL;
  TestSub *client, *plain;

  g_assert_cmpint (zmq_curve_keypair (server_public, server_secret), ==, 0);
  g_assert_cmpint (zmq_curve_keypair (client_public, client_secret), ==, 0);
  secret_file = write_file ("server2.key", server_secret, 0600);
  set (config, "kv_events_curve_secret_key_file", secret_file);
  publisher = kvev_publisher_new (config, &error);
  g_assert_no_error (error);
  plain = test_sub_new (kvev_publisher_get_endpoint (publisher));
  client = test_sub_new_curve (kvev_publisher_get_endpoint (publisher), server_public,
                               client_public, client_secret);
  first = test_sync (publisher, client);
  test_publish_some (publisher);
  g_assert_true (test_sub_receives_anything (client));
  g_assert_false (test_sub_receives_anything (plain));
  test_sub_free (client);
  test_sub_free (plain);
}

static void
test_address_allow_list (void)
{
  g_autoptr (KvevPublisher) publisher
      = test_publisher_new_allowing ("tcp://127.0.0.1:*", "127.0.0.1");

  test_assert_only_local_admitted (publisher);
}

static KvevPublisher *
new_ipv6_publisher (const char *endpoint, const char *allowed)
{
  KvevPublisher *publisher = test_publisher_new_allowing (endpoint, allowed);

  g_assert_true (g_str_has_prefix (kvev_publisher_get_endpoint (publisher), "tcp://[::"));
  return publisher;
}

/* An IPv6 endpoint binds and serves, and the allow-list judges IPv6
 * peers: ::1 is in "::1" and not in "127.0.0.0/8".  An IPv4 peer of an
 * IPv6 socket, as a wildcard host has them, is judged by its IPv4
 * address: ::ffff:127.0.0.1 is in "127.0.0.1" and not in "10.0.0.0/8". */
static void
test_ipv6_loopback (void)
{
  g_autoptr (KvevPublisher) listed = NULL;
  g_autoptr (KvevPublisher) unlisted = NULL;
  g_autoptr (KvevPublisher) mapped = NULL;
  g_autoptr (KvevPublisher) mapped_unlisted = NULL;
  g_autoptr (TestMessage) first = NULL;
  g_autoptr (TestMessage) first_mapped = NULL;
  g_autofree char *v4_endpoint = NULL;
  TestSub *sub, *refused;

  if (!test_have_ipv6_loopback ())
    {
      g_test_skip ("this host cannot bind the IPv6 loopback");
      return;
    }
  listed = new_ipv6_publisher ("tcp://[::1]:*", "::1");
  sub = test_sub_new (kvev_publisher_get_endpoint (listed));
  first = test_sync (listed, sub);
  test_publish_some (listed);
  g_assert_true (test_sub_receives_anything (sub));
  test_sub_free (sub);

  unlisted = new_ipv6_publisher ("tcp://[::1]:*", "127.0.0.0/8");
  refused = test_sub_new (kvev_publisher_get_endpoint (unlisted));
  test_publish_some (unlisted);
  g_assert_false (test_sub_receives_anything (refused));
  test_sub_free (refused);

  mapped = new_ipv6_publisher ("tcp://[::ffff:127.0.0.1]:*", "127.0.0.1");
  v4_endpoint = g_strdup_printf ("tcp://127.0.0.1:%s",
                                 strrchr (kvev_publisher_get_endpoint (mapped), ':') + 1);
  sub = test_sub_new (v4_endpoint);
  first_mapped = test_sync (mapped, sub);
  test_publish_some (mapped);
  g_assert_true (test_sub_receives_anything (sub));
  test_sub_free (sub);

  mapped_unlisted = new_ipv6_publisher ("tcp://[::ffff:127.0.0.1]:*", "10.0.0.0/8");
  g_free (v4_endpoint);
  v4_endpoint = g_strdup_printf ("tcp://127.0.0.1:%s",
                                 strrchr (kvev_publisher_get_endpoint (mapped_unlisted), ':') + 1);
  refused = test_sub_new (v4_endpoint);
  test_publish_some (mapped_unlisted);
  g_assert_false (test_sub_receives_anything (refused));
  test_sub_free (refused);
}

#ifdef __linux__
static void
on_signal (int signum G_GNUC_UNUSED)
{
}

/* The thread of this process whose name is @name, or 0. */
static pid_t
find_thread_now (const char *name)
{
  g_autoptr (GDir) dir = g_dir_open ("/proc/self/task", 0, NULL);
  const char *tid;

  while (dir != NULL && (tid = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = g_strdup_printf ("/proc/self/task/%s/comm", tid);
      g_autofree char *comm = NULL;

      if (g_file_get_contents (path, &comm, NULL, NULL) && strcmp (g_strchomp (comm), name) == 0)
        return (pid_t) g_ascii_strtoll (tid, NULL, 10);
    }
  return 0;
}

/* A new thread names itself once it runs: give it a few seconds. */
static pid_t
find_thread (const char *name)
{
  pid_t tid = 0;
  guint i;

  for (i = 0; i < 500 && (tid = find_thread_now (name)) == 0; i++)
    g_usleep (10000);
  return tid;
}

/* Whether thread tid of this process blocks signum, from its SigBlk. */
static gboolean
thread_blocks (pid_t tid, int signum)
{
  g_autofree char *path = g_strdup_printf ("/proc/self/task/%d/status", (int) tid);
  g_autofree char *status = NULL;
  const char *line;
  guint64 mask;

  g_assert_true (g_file_get_contents (path, &status, NULL, NULL));
  line = strstr (status, "\nSigBlk:");
  g_assert_nonnull (line);
  mask = g_ascii_strtoull (line + strlen ("\nSigBlk:"), NULL, 16);
  return (mask >> (signum - 1)) & 1;
}

/* A signal for the master must not reach the library's threads.  When
 * it reached the ZAP handler, its blocking receive failed with EINTR, the
 * handler left, and libzmq, finding no handler, let every peer in. */
static void
test_signals_spare_library_threads (void)
{
  g_autoptr (KvevConfig) config = secure_config ("tcp://127.0.0.1:*");
  g_autoptr (GError) error = NULL;
  KvevPublisher *publisher;
  struct sigaction action = { 0 }, saved;
  pid_t zap, worker;

  /* Without SA_RESTART, as GLib's own g_unix_signal_add() installs. */
  action.sa_handler = on_signal;
  sigemptyset (&action.sa_mask);
  g_assert_cmpint (sigaction (SIGUSR1, &action, &saved), ==, 0);

  set (config, "kv_events_allowed_addresses", "127.0.0.1");
  publisher = kvev_publisher_new (config, &error);
  g_assert_no_error (error);
  zap = find_thread ("kvev-zap");
  worker = find_thread ("kvev-publisher");
  if (zap == 0 || worker == 0)
    {
      g_test_skip ("/proc/self/task does not name the library's threads");
      kvev_publisher_free (publisher);
      sigaction (SIGUSR1, &saved, NULL);
      return;
    }
  g_assert_true (thread_blocks (zap, SIGUSR1));
  g_assert_true (thread_blocks (worker, SIGUSR1));
  g_assert_true (thread_blocks (worker, SIGTERM));
  g_assert_false (thread_blocks (worker, SIGSEGV));
  g_assert_cmpint (syscall (SYS_tgkill, getpid (), zap, SIGUSR1), ==, 0);
  g_assert_cmpint (syscall (SYS_tgkill, getpid (), worker, SIGUSR1), ==, 0);
  g_usleep (100000);
  g_assert_cmpint (find_thread_now ("kvev-zap"), ==, zap);

  /* Both connect after the signals, so both go through the handler. */
  test_assert_only_local_admitted (publisher);
  /* The signals are still pending on the threads; they end with them. */
  kvev_publisher_free (publisher);
  g_assert_cmpint (sigaction (SIGUSR1, &saved, NULL), ==, 0);
}
#endif

#endif

int
main (int argc, char **argv)
{
  int status;

  g_test_init (&argc, &argv, NULL);
  key_dir = g_dir_make_tmp ("kvev-keys-XXXXXX", NULL);
  g_assert_nonnull (key_dir);

  g_test_add_func ("/kvevents/security/secret-key-mode", test_secret_key_mode);
  g_test_add_func ("/kvevents/security/malformed-keys", test_malformed_keys);
  g_test_add_func ("/kvevents/security/malformed-addresses", test_malformed_addresses);
  {
    static const char *const kind_names[]
        = { "fifo", "dev-zero", "directory", "oversized", "at-bound" };
    static FileCase cases[2 * G_N_ELEMENTS (kind_names)];

    for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
      {
        gboolean secret = i < G_N_ELEMENTS (kind_names);
        g_autofree char *path = NULL;

        cases[i].flag
            = secret ? "kv_events_curve_secret_key_file" : "kv_events_curve_allowed_clients_file";
        cases[i].secret = secret;
        cases[i].bound = secret ? SECRET_BOUND : CLIENTS_BOUND;
        cases[i].kind = (FileKind) (i % G_N_ELEMENTS (kind_names));
        path = g_strdup_printf ("/kvevents/security/key-file/%s/%s",
                                secret ? "secret" : "allowed-clients", kind_names[cases[i].kind]);
        g_test_add_data_func (path, &cases[i], test_key_file_kind);
      }
  }
  g_test_add_func ("/kvevents/security/key-file/nul", test_key_file_nul);
  g_test_add_func ("/kvevents/security/secret-wipe", test_secret_wipe);
  g_test_add_func ("/kvevents/security/address-matching", test_address_matching);
  g_test_add_func ("/kvevents/security/wildcard-endpoints", test_wildcard_endpoints);
  g_test_add_func ("/kvevents/security/wildcard-warning", test_wildcard_warning);
#ifdef HAVE_ZMQ
  g_test_add_func ("/kvevents/security/curve-allowed-clients", test_curve_allowed_clients);
  g_test_add_func ("/kvevents/security/curve-any-client", test_curve_any_client);
  g_test_add_func ("/kvevents/security/address-allow-list", test_address_allow_list);
  g_test_add_func ("/kvevents/security/ipv6-loopback", test_ipv6_loopback);
#ifdef __linux__
  g_test_add_func ("/kvevents/security/signals-spare-library-threads",
                   test_signals_spare_library_threads);
#endif
#endif

  status = g_test_run ();
  {
    g_autoptr (GDir) dir = g_dir_open (key_dir, 0, NULL);
    const char *name;

    while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
      {
        g_autofree char *path = g_build_filename (key_dir, name, NULL);
        g_unlink (path);
      }
    g_rmdir (key_dir);
  }
  return status;
}
