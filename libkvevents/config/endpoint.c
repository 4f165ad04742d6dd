/* endpoint.c: bind endpoints; see endpoint.h.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "endpoint.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* The longest path a Unix socket address holds.  libzmq refuses a longer
 * one only after it has unlinked it, so it is refused at validation. */
#define IPC_PATH_MAX (sizeof ((struct sockaddr_un *) NULL)->sun_path - 1)

static void
set_invalid (GError **error, const char *message)
{
  g_set_error_literal (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE, message);
}

static gboolean
is_decimal (const char *text, guint64 min, guint64 max, guint64 *number)
{
  /* g_ascii_string_to_unsigned () alone would take a sign and spaces. */
  return text[0] != '\0' && strspn (text, "0123456789") == strlen (text)
         && g_ascii_string_to_unsigned (text, 10, min, max, number, NULL);
}

static void
set_syntax_error (GError **error)
{
  /* TRANSLATORS: the forms are ZeroMQ syntax, keep them. */
  set_invalid (error, _ ("expected tcp://HOST:PORT or ipc://PATH"));
}

static gboolean
tcp_host_char_is_valid (char c)
{
  /* Printable ASCII, without what would make the address ambiguous. */
  return c > ' ' && c < 0x7f && strchr ("/[]:", c) == NULL;
}

/* Reads the part after tcp:// into @endpoint's host, zone, port and
 * ipv6, refusing what libzmq would read differently from a person: an
 * unbracketed IPv6 address, brackets around something that is not one,
 * a port out of range.  ZeroMQ would refuse these too, but only when the
 * publisher binds; here the master learns at startup, with the flag's
 * name.  Only printable ASCII survives, so a host is safe to quote in a
 * message. */
static gboolean
tcp_host_parse (const char *address, KvevEndpoint *endpoint)
{
  KvevTcpAddress parts;

  if (!kvev_tcp_address_split (address, &parts))
    return FALSE;
  if (strcmp (parts.port, "*") != 0 && !kvev_tcp_port_parse (parts.port, &endpoint->port))
    return FALSE;

  if (parts.bracketed)
    {
      gboolean has_colon = FALSE;
      char *percent;

      for (gsize i = 0; i < parts.host_len; i++)
        {
          char c = parts.host[i];

          if (c == ':')
            has_colon = TRUE;
          else if (!g_ascii_isalnum (c) && strchr (".%-_", c) == NULL)
            return FALSE;
        }
      if (!has_colon)
        return FALSE;
      endpoint->ipv6 = TRUE;
      endpoint->host = g_strndup (parts.host, parts.host_len);
      /* libzmq takes the zone after the last '%', as RFC 4007 writes it. */
      percent = strrchr (endpoint->host, '%');
      if (percent != NULL)
        {
          endpoint->zone = g_strdup (percent + 1);
          *percent = '\0';
        }
      return TRUE;
    }

  for (gsize i = 0; i < parts.host_len; i++)
    if (!tcp_host_char_is_valid (parts.host[i]))
      return FALSE;
  endpoint->host = g_strndup (parts.host, parts.host_len);
  return TRUE;
}

/* The address a numeric host binds, resolved as libzmq's bind resolves
 * it: getaddrinfo () with AI_NUMERICHOST | AI_PASSIVE, IPv6 with IPv4
 * mapped addresses for a bracketed host (the library sets ZMQ_IPV6 for
 * those alone), IPv4 otherwise.  So "0", "0.0" and "127.1" mean what
 * inet_aton () makes of them, and "[0:0::0]" is "[::]". */
static gboolean
tcp_host_resolve (const KvevEndpoint *endpoint, struct sockaddr_storage *address)
{
  struct addrinfo hints;
  struct addrinfo *result = NULL;

  memset (&hints, 0, sizeof hints);
  hints.ai_family = endpoint->ipv6 ? AF_INET6 : AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST | AI_PASSIVE;
  if (endpoint->ipv6)
    hints.ai_flags |= AI_V4MAPPED;
  if (getaddrinfo (endpoint->host, NULL, &hints, &result) != 0 || result == NULL)
    return FALSE;
  memset (address, 0, sizeof *address);
  memcpy (address, result->ai_addr, MIN ((gsize) result->ai_addrlen, sizeof *address));
  freeaddrinfo (result);
  return TRUE;
}

static gboolean
address_is_any (const struct sockaddr_storage *address)
{
  if (address->ss_family == AF_INET)
    {
      struct sockaddr_in v4;

      memcpy (&v4, address, sizeof v4);
      return v4.sin_addr.s_addr == htonl (INADDR_ANY);
    }
  if (address->ss_family == AF_INET6)
    {
      struct sockaddr_in6 v6;
      static const guint8 zero[4] = { 0 };

      memcpy (&v6, address, sizeof v6);
      /* ::ffff:0.0.0.0 on a dual-stack socket is every IPv4 interface. */
      return IN6_IS_ADDR_UNSPECIFIED (&v6.sin6_addr)
             || (IN6_IS_ADDR_V4MAPPED (&v6.sin6_addr)
                 && memcmp (v6.sin6_addr.s6_addr + 12, zero, sizeof zero) == 0);
    }
  return FALSE;
}

/* libzmq reads a zone that starts with a letter as an interface name and
 * any other as an interface index, and fails the bind when neither names
 * an interface. */
static gboolean
zone_is_interface (const char *zone)
{
  char name[IF_NAMESIZE];
  guint64 number;

  if (g_ascii_isalpha (zone[0]))
    return if_nametoindex (zone) != 0;
  return is_decimal (zone, 1, G_MAXUINT, &number)
         && if_indextoname ((unsigned) number, name) != NULL;
}

static gboolean
tcp_parse (const char *address, KvevEndpoint *endpoint, GError **error)
{
  struct sockaddr_storage resolved;
  gboolean is_star, is_numeric;

  if (!tcp_host_parse (address, endpoint))
    {
      set_syntax_error (error);
      return FALSE;
    }
  endpoint->fresh = endpoint->port == 0;
  if (endpoint->ipv6)
    {
      if (endpoint->zone != NULL && !zone_is_interface (endpoint->zone))
        {
          g_set_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE,
                       /* TRANSLATORS: what follows '%' in an IPv6 address
                        * such as [fe80::1%eth0]. */
                       _ ("the zone \"%s\" is not a network interface of this machine"),
                       endpoint->zone);
          return FALSE;
        }
      if (!tcp_host_resolve (endpoint, &resolved))
        {
          g_set_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE,
                       _ ("\"%s\" in brackets is not an IPv6 address"), endpoint->host);
          return FALSE;
        }
      endpoint->wildcard = address_is_any (&resolved);
      return TRUE;
    }

  /* libzmq takes the wildcard, then an interface, then a numeric
   * address.  So an interface named "0" would bind its own address; here
   * such a name counts as the address it spells, and the warning of an
   * exposed stream errs towards being given. */
  is_star = strcmp (endpoint->host, "*") == 0;
  is_numeric = !is_star && tcp_host_resolve (endpoint, &resolved);
  endpoint->wildcard = is_star || (is_numeric && address_is_any (&resolved));
  if (is_star || is_numeric || if_nametoindex (endpoint->host) != 0)
    return TRUE;

  /* libzmq passes AI_NUMERICHOST: a name that needs a resolver fails the
   * bind with "No such device", which says nothing about the fix. */
  if (g_ascii_strcasecmp (endpoint->host, "localhost") == 0
      || g_ascii_strcasecmp (endpoint->host, "localhost.") == 0)
    set_invalid (error, _ ("ZeroMQ binds addresses and network interfaces, not host names: "
                           "for localhost write 127.0.0.1 or [::1]"));
  else
    g_set_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE,
                 /* TRANSLATORS: the host part of a tcp:// endpoint; "*"
                  * is typed as it is. */
                 _ ("\"%s\" is neither an IP address nor a network interface of this "
                    "machine, and ZeroMQ binds no host names: write an IP address "
                    "(an IPv6 one in brackets), an interface name, or * for every interface"),
                 endpoint->host);
  return FALSE;
}

static gboolean
ipc_parse (const char *path, KvevEndpoint *endpoint, GError **error)
{
  if (path[0] == '\0')
    {
      set_syntax_error (error);
      return FALSE;
    }
  if (strlen (path) > IPC_PATH_MAX)
    {
      g_set_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE,
                   _ ("an ipc:// path may be at most %u bytes long"), (guint) IPC_PATH_MAX);
      return FALSE;
    }
  endpoint->path = g_strdup (path);
  endpoint->fresh = strcmp (path, "*") == 0;
  return TRUE;
}

KvevEndpoint *
kvev_endpoint_parse (const char *text, GError **error)
{
  g_autoptr (KvevEndpoint) endpoint = NULL;
  gboolean parsed;

  g_return_val_if_fail (text != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  endpoint = g_new0 (KvevEndpoint, 1);
  endpoint->text = g_strdup (text);
  if (g_str_has_prefix (text, KVEV_TCP_PREFIX))
    {
      endpoint->scheme = KVEV_ENDPOINT_TCP;
      parsed = tcp_parse (text + strlen (KVEV_TCP_PREFIX), endpoint, error);
    }
  else if (g_str_has_prefix (text, KVEV_IPC_PREFIX))
    {
      endpoint->scheme = KVEV_ENDPOINT_IPC;
      parsed = ipc_parse (text + strlen (KVEV_IPC_PREFIX), endpoint, error);
    }
  /* Every publisher has a ZeroMQ context of its own, and an inproc://
   * endpoint exists only inside one context: nothing could connect. */
  else if (g_str_has_prefix (text, KVEV_INPROC_PREFIX))
    {
      set_invalid (error, _ ("inproc:// endpoints are reachable only through the publisher's own "
                             "ZeroMQ context, which nothing outside the library can use: use "
                             "ipc://PATH instead"));
      parsed = FALSE;
    }
  else
    {
      set_syntax_error (error);
      parsed = FALSE;
    }
  return parsed ? g_steal_pointer (&endpoint) : NULL;
}

void
kvev_endpoint_free (KvevEndpoint *endpoint)
{
  if (endpoint == NULL)
    return;
  g_free (endpoint->text);
  g_free (endpoint->host);
  g_free (endpoint->zone);
  g_free (endpoint->path);
  g_free (endpoint);
}

gboolean
kvev_endpoint_is_wildcard (const KvevEndpoint *endpoint)
{
  g_return_val_if_fail (endpoint != NULL, FALSE);

  return endpoint->wildcard;
}

static void
set_bind_error (GError **error, const char *flag, const char *endpoint, const char *reason)
{
  g_autofree char *shown = g_utf8_make_valid (endpoint, -1);

  g_set_error (error, KVEV_ERROR, KVEV_ERROR_TRANSPORT,
               /* TRANSLATORS: a flag name, then an endpoint and the
                * reason. */
               _ ("Cannot bind %s \"%s\": %s"), flag, shown, reason);
}

/* Whether a process accepts connections on the socket at @path.  Only a
 * refused connection says nobody does; anything else, a full backlog or a
 * socket of another type included, means somebody holds it, or that this
 * cannot tell, and both keep the path.  Non-blocking, so a listener that
 * does not accept cannot hold the caller. */
static gboolean
ipc_socket_is_stale (const char *path, int *error_code)
{
  struct sockaddr_un address;
  int fd, rc, saved;

  memset (&address, 0, sizeof address);
  address.sun_family = AF_UNIX;
  if (strlen (path) >= sizeof address.sun_path)
    {
      *error_code = ENAMETOOLONG;
      return FALSE;
    }
  memcpy (address.sun_path, path, strlen (path));

#ifdef SOCK_CLOEXEC
  /* A master may fork at any time: the socket never reaches a child. */
  fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0)
#else
  fd = socket (AF_UNIX, SOCK_STREAM, 0);
  if (fd < 0 || fcntl (fd, F_SETFD, FD_CLOEXEC) != 0
      || fcntl (fd, F_SETFL, fcntl (fd, F_GETFL) | O_NONBLOCK) != 0)
#endif
    {
      *error_code = errno;
      if (fd >= 0)
        close (fd);
      return FALSE;
    }
  do
    rc = connect (fd, (const struct sockaddr *) &address, sizeof address);
  while (rc != 0 && errno == EINTR);
  saved = rc == 0 ? 0 : errno;
  close (fd);

  /* ENOENT: the socket went away since it was seen, which is as good. */
  if (saved == ECONNREFUSED || saved == ENOENT)
    return TRUE;
  *error_code = saved;
  return FALSE;
}

/* libzmq's bind unlinks the path first (it cannot tell a socket left
 * behind from one in use either), so without this a second publisher
 * takes the path over and the first one goes on publishing to nobody,
 * and a regular file there is deleted.
 *
 * What remains: the check and libzmq's unlink and bind are three steps.
 * Two masters starting at the same instant on one path can both find it
 * free, and the later bind then takes it from the earlier one. */
static gboolean
ipc_path_is_free (const char *flag, const char *endpoint, const char *path, GError **error)
{
  g_autofree char *shown_path = g_utf8_make_valid (path, -1);
  g_autofree char *reason = NULL;
  struct stat st;
  int error_code = 0;

  if (lstat (path, &st) != 0)
    {
      error_code = errno;
      /* libzmq reports a missing directory itself. */
      if (error_code == ENOENT)
        return TRUE;
    }
  else if (!S_ISSOCK (st.st_mode))
    {
      /* A symbolic link too: libzmq would unlink the link. */
      reason
          = g_strdup_printf (_ ("%s exists and is not a socket; it is left untouched"), shown_path);
      set_bind_error (error, flag, endpoint, reason);
      return FALSE;
    }
  else if (ipc_socket_is_stale (path, &error_code))
    return TRUE;

  if (error_code == 0 || error_code == EAGAIN || error_code == EPROTOTYPE)
    reason = g_strdup_printf (
        /* TRANSLATORS: the reason, "Address already in use", then a path. */
        _ ("%s (a process is listening on %s)"), g_strerror (EADDRINUSE), shown_path);
  else
    reason = g_strdup_printf (
        /* TRANSLATORS: a path, then the system's reason. */
        _ ("cannot tell whether a process is listening on %s: %s"), shown_path,
        g_strerror (error_code));
  set_bind_error (error, flag, endpoint, reason);
  return FALSE;
}

gboolean
kvev_endpoint_prepare_bind (const char *flag, const KvevEndpoint *endpoint, GError **error)
{
  g_return_val_if_fail (endpoint != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (endpoint->scheme != KVEV_ENDPOINT_IPC)
    return TRUE;
  /* For the path "*" libzmq creates a fresh directory with mkdtemp () and
   * binds a socket in it, which nothing else can hold.  ipc://@NAME is Linux's
   * abstract namespace, where the kernel itself refuses a name in use
   * (EADDRINUSE), as on tcp://; libzmq still unlinks a file called @NAME
   * in the working directory first, which is left to it. */
  if (endpoint->fresh || endpoint->path[0] == '@')
    return TRUE;
  return ipc_path_is_free (flag, endpoint->text, endpoint->path, error);
}
