/* test-endpoint-parse.c: reading an endpoint once, into a KvevEndpoint
 * (libkvevents/config/endpoint.c), on the syntax the tools share
 * (base/endpoint-syntax.c): every form a bind takes, with what the bind
 * then reads of it, and every form refused, with its message.  Nothing is
 * bound, so it runs in both builds.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config/endpoint.h"

#include <kvevents/kvevents.h>
#include <net/if.h>
#include <string.h>
#include <sys/un.h>

typedef struct
{
  const char *text;
  KvevEndpointScheme scheme;
  const char *host; /* tcp:// */
  const char *zone;
  guint port;
  gboolean ipv6;
  gboolean wildcard;
  gboolean fresh;
  const char *path; /* ipc:// */
} Parsed;

#define TCP(text, host, zone, port, ipv6, wildcard)                                                \
  {                                                                                                \
    (text), KVEV_ENDPOINT_TCP, (host), (zone), (port), (ipv6), (wildcard), (port) == 0, NULL       \
  }
#define IPC(text, path, fresh)                                                                     \
  {                                                                                                \
    (text), KVEV_ENDPOINT_IPC, NULL, NULL, 0, FALSE, FALSE, (fresh), (path)                        \
  }

static const Parsed accepted[] = {
  TCP ("tcp://127.0.0.1:5557", "127.0.0.1", NULL, 5557, FALSE, FALSE),
  TCP ("tcp://127.0.0.1:*", "127.0.0.1", NULL, 0, FALSE, FALSE),
  TCP ("tcp://127.0.0.1:05557", "127.0.0.1", NULL, 5557, FALSE, FALSE),
  TCP ("tcp://127.1:5557", "127.1", NULL, 5557, FALSE, FALSE),
  TCP ("tcp://10.0.0.1:1", "10.0.0.1", NULL, 1, FALSE, FALSE),
  TCP ("tcp://*:5557", "*", NULL, 5557, FALSE, TRUE),
  TCP ("tcp://*:*", "*", NULL, 0, FALSE, TRUE),
  TCP ("tcp://0.0.0.0:65535", "0.0.0.0", NULL, 65535, FALSE, TRUE),
  TCP ("tcp://0:*", "0", NULL, 0, FALSE, TRUE),
  TCP ("tcp://0.0:*", "0.0", NULL, 0, FALSE, TRUE),
  TCP ("tcp://lo:65535", "lo", NULL, 65535, FALSE, FALSE),
  TCP ("tcp://[::1]:5555", "::1", NULL, 5555, TRUE, FALSE),
  TCP ("tcp://[::]:*", "::", NULL, 0, TRUE, TRUE),
  TCP ("tcp://[0:0::0]:*", "0:0::0", NULL, 0, TRUE, TRUE),
  TCP ("tcp://[::ffff:127.0.0.1]:5555", "::ffff:127.0.0.1", NULL, 5555, TRUE, FALSE),
  TCP ("tcp://[::ffff:0.0.0.0]:*", "::ffff:0.0.0.0", NULL, 0, TRUE, TRUE),
  TCP ("tcp://[fe80::1%lo]:5555", "fe80::1", "lo", 5555, TRUE, FALSE),
  TCP ("tcp://[0::0%lo]:*", "0::0", "lo", 0, TRUE, TRUE),
  IPC ("ipc:///tmp/kv.sock", "/tmp/kv.sock", FALSE),
  IPC ("ipc://relative", "relative", FALSE),
  IPC ("ipc://@abstract", "@abstract", FALSE),
  IPC ("ipc://*", "*", TRUE),
  /* Only the path "*" is one libzmq makes up; this one is a file. */
  IPC ("ipc:///tmp/a:*", "/tmp/a:*", FALSE),
  /* Brackets, but no tcp:// host: no ZMQ_IPV6. */
  IPC ("ipc:///tmp/[x]", "/tmp/[x]", FALSE),
};

static void
assert_parsed (const Parsed *expected)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (KvevEndpoint) endpoint = kvev_endpoint_parse (expected->text, &error);

  g_test_message ("accepted: %s", expected->text);
  g_assert_no_error (error);
  g_assert_nonnull (endpoint);
  /* What zmq_bind () is handed is what was configured. */
  g_assert_cmpstr (endpoint->text, ==, expected->text);
  g_assert_cmpint (endpoint->scheme, ==, expected->scheme);
  g_assert_cmpstr (endpoint->host, ==, expected->host);
  g_assert_cmpstr (endpoint->zone, ==, expected->zone);
  g_assert_cmpuint (endpoint->port, ==, expected->port);
  g_assert_cmpint (endpoint->ipv6, ==, expected->ipv6);
  g_assert_cmpint (endpoint->wildcard, ==, expected->wildcard);
  g_assert_cmpint (kvev_endpoint_is_wildcard (endpoint), ==, expected->wildcard);
  g_assert_cmpint (endpoint->fresh, ==, expected->fresh);
  g_assert_cmpstr (endpoint->path, ==, expected->path);
  /* The tools' reading of IPv6-ness agrees with the library's. */
  g_assert_cmpint (kvev_endpoint_is_ipv6 (expected->text), ==, expected->ipv6);
}

static void
test_accepted (void)
{
  for (gsize i = 0; i < G_N_ELEMENTS (accepted); i++)
    assert_parsed (&accepted[i]);
}

/* A zone by interface index, which only this machine can name. */
static void
test_accepted_zone_index (void)
{
  g_autofree char *text = g_strdup_printf ("tcp://[fe80::1%%%u]:5557", if_nametoindex ("lo"));
  g_autofree char *zone = g_strdup_printf ("%u", if_nametoindex ("lo"));
  Parsed expected = TCP (text, "fe80::1", zone, 5557, TRUE, FALSE);

  assert_parsed (&expected);
}

/* A path a socket address can hold exactly. */
static void
test_accepted_ipc_longest (void)
{
  struct sockaddr_un address;
  g_autofree char *path = g_strnfill (sizeof address.sun_path - 1, 'p');
  g_autofree char *text = g_strconcat ("ipc://", path, NULL);
  Parsed expected = IPC (text, path, FALSE);

  assert_parsed (&expected);
}

static void
assert_refused (const char *text, const char *expected)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (KvevEndpoint) endpoint = NULL;

  g_test_message ("refused: %s", text);
  endpoint = kvev_endpoint_parse (text, &error);
  g_assert_null (endpoint);
  g_assert_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE);
  g_assert_cmpstr (error->message, ==, expected);
}

#define SYNTAX "expected tcp://HOST:PORT or ipc://PATH"

static void
test_refused_syntax (void)
{
  static const char *const refused[] = {
    "tcp://host",
    "tcp://host:",
    "tcp://host:0",
    "tcp://host:00",
    "tcp://host:70000",
    "tcp://host:65536",
    "tcp://host:99999999999999999999",
    "tcp://host:-1",
    "tcp://host:+1",
    "tcp://host:1x",
    "tcp://host: 1",
    "tcp://host:**",
    "tcp://:5555",
    "tcp://",
    "tcp://::1:5555",
    "tcp://[::1]",
    "tcp://[::1]:",
    "tcp://[]:5555",
    "tcp://[::1:5555",
    "tcp://[localhost]:5555",
    "tcp://[0]:*",
    "tcp://[::1]x:5555",
    "tcp://[::1]:5555]",
    "tcp://[a]b:1]:5555",
    "tcp://ho st:5555",
    "tcp://host/path:5555",
    "tcp://a[b:5555",
    "tcp://*",
    "tcp://0",
    "udp://x:1",
    "udp://*:1",
    "TCP://host:1",
    "ipc://",
    "foo",
    "",
    " tcp://host:1",
    "pgm://eth0;239.192.1.1:5555",
  };

  for (gsize i = 0; i < G_N_ELEMENTS (refused); i++)
    assert_refused (refused[i], SYNTAX);
}

#define NOT_A_HOST                                                                                 \
  " is neither an IP address nor a network interface of this machine, and ZeroMQ binds no host "   \
  "names: write an IP address (an IPv6 one in brackets), an interface name, or * for every "       \
  "interface"
#define LOCALHOST                                                                                  \
  "ZeroMQ binds addresses and network interfaces, not host names: for localhost write 127.0.0.1 "  \
  "or [::1]"

static void
test_refused_hosts (void)
{
  assert_refused ("tcp://localhost:5557", LOCALHOST);
  assert_refused ("tcp://LocalHost.:*", LOCALHOST);
  assert_refused ("tcp://kvev-no-such-host.invalid:5557",
                  "\"kvev-no-such-host.invalid\"" NOT_A_HOST);
  assert_refused ("tcp://999.1.1.1:5557", "\"999.1.1.1\"" NOT_A_HOST);
  /* A ';' is no SOURCE; here, as it is for a connect. */
  assert_refused ("tcp://127.0.0.1;127.0.0.2:5557", "\"127.0.0.1;127.0.0.2\"" NOT_A_HOST);
  assert_refused ("tcp://[fe80::1%kvevnosuch0]:5557",
                  "the zone \"kvevnosuch0\" is not a network interface of this machine");
  assert_refused ("tcp://[fe80::1%]:5557",
                  "the zone \"\" is not a network interface of this machine");
  assert_refused ("tcp://[fe80::1%4294967295]:5557",
                  "the zone \"4294967295\" is not a network interface of this machine");
  assert_refused ("tcp://[fe80::zz]:5557", "\"fe80::zz\" in brackets is not an IPv6 address");
  assert_refused ("tcp://[::1.2.3.4.5]:5557", "\"::1.2.3.4.5\" in brackets is not an IPv6 address");
}

static void
test_refused_transports (void)
{
  static const char *const inproc[] = { "inproc://kv", "inproc://a/b:c", "inproc://" };
  struct sockaddr_un address;
  g_autofree char *too_long = g_strnfill (sizeof address.sun_path, 'p');
  g_autofree char *too_long_text = g_strconcat ("ipc://", too_long, NULL);
  g_autofree char *too_long_message = g_strdup_printf (
      "an ipc:// path may be at most %u bytes long", (guint) sizeof address.sun_path - 1);

  for (gsize i = 0; i < G_N_ELEMENTS (inproc); i++)
    assert_refused (inproc[i], "inproc:// endpoints are reachable only through the publisher's "
                               "own ZeroMQ context, which nothing outside the library can use: "
                               "use ipc://PATH instead");
  assert_refused (too_long_text, too_long_message);
}

/* The syntax the library's binds and the tools' connects both read. */
static void
test_shared_syntax (void)
{
  static const struct
  {
    const char *address;
    const char *host;
    gboolean bracketed;
    const char *port;
  } split[] = {
    { "127.0.0.1:5557", "127.0.0.1", FALSE, "5557" },
    { "*:*", "*", FALSE, "*" },
    { "[::1]:5557", "::1", TRUE, "5557" },
    { "[fe80::1%lo]:1", "fe80::1%lo", TRUE, "1" },
    { "host.example:x", "host.example", FALSE, "x" },
    { "a:b:c", "a:b", FALSE, "c" },
  };
  static const char *const unsplit[] = {
    "", "host", "host:", ":1", "[::1]", "[::1]:", "[]:1", "[::1:5557", "[::1]x:5557",
  };
  static const struct
  {
    const char *text;
    guint number;
  } ports[] = {
    { "1", 1 },
    { "65535", 65535 },
    { "05557", 5557 },
    { "0000000000000000000000001", 1 },
  };
  static const char *const not_ports[] = { "", "0", "00", "65536", "*", "+1", "-1", " 1", "1x" };

  for (gsize i = 0; i < G_N_ELEMENTS (split); i++)
    {
      KvevTcpAddress parts;

      g_test_message ("split: %s", split[i].address);
      g_assert_true (kvev_tcp_address_split (split[i].address, &parts));
      g_assert_cmpuint (parts.host_len, ==, strlen (split[i].host));
      g_assert_cmpint (strncmp (parts.host, split[i].host, parts.host_len), ==, 0);
      g_assert_cmpint (parts.bracketed, ==, split[i].bracketed);
      g_assert_cmpstr (parts.port, ==, split[i].port);
    }
  for (gsize i = 0; i < G_N_ELEMENTS (unsplit); i++)
    {
      KvevTcpAddress parts;

      g_test_message ("no split: %s", unsplit[i]);
      g_assert_false (kvev_tcp_address_split (unsplit[i], &parts));
    }
  for (gsize i = 0; i < G_N_ELEMENTS (ports); i++)
    {
      guint number = 0;

      g_assert_true (kvev_tcp_port_parse (ports[i].text, &number));
      g_assert_cmpuint (number, ==, ports[i].number);
    }
  for (gsize i = 0; i < G_N_ELEMENTS (not_ports); i++)
    {
      g_test_message ("not a port: \"%s\"", not_ports[i]);
      g_assert_false (kvev_tcp_port_parse (not_ports[i], NULL));
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/kvevents/endpoint-parse/accepted", test_accepted);
  g_test_add_func ("/kvevents/endpoint-parse/accepted-zone-index", test_accepted_zone_index);
  g_test_add_func ("/kvevents/endpoint-parse/accepted-ipc-longest", test_accepted_ipc_longest);
  g_test_add_func ("/kvevents/endpoint-parse/refused-syntax", test_refused_syntax);
  g_test_add_func ("/kvevents/endpoint-parse/refused-hosts", test_refused_hosts);
  g_test_add_func ("/kvevents/endpoint-parse/refused-transports", test_refused_transports);
  g_test_add_func ("/kvevents/endpoint-parse/shared-syntax", test_shared_syntax);
  return g_test_run ();
}
