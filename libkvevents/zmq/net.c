/* net.c: the context, ZAP and every socket of a publisher, hardened
 * alike and bound; see net.h.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "net.h"

#include "config/endpoint.h"
#include "fault.h"
#include "zap.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <zmq.h>

/* libzmq reports a socket's refused connections on this, with the
 * socket's name: one name per socket of a context, and every publisher
 * has a context of its own. */
#define MONITOR_ENDPOINT "inproc://kvevents-monitor-%s"

struct _KvevNet
{
  const KvevSettings *settings;
  void *context;
  KvevZap *zap;
  void *sockets[KVEV_NET_N_SOCKETS];
  char *endpoints[KVEV_NET_N_SOCKETS];
  /* PAIR ends of the sockets' monitors, with an address allow-list. */
  void *monitors[KVEV_NET_N_SOCKETS];
  guint n_monitors;
};

static gboolean
set_option (void *socket, int option, const void *value, size_t len, const char *name,
            GError **error)
{
  if (zmq_setsockopt (socket, option, value, len) == 0)
    return TRUE;
  g_set_error (error, KVEV_ERROR, KVEV_ERROR_TRANSPORT,
               _ ("Cannot set the ZeroMQ socket option %s: %s"), name, zmq_strerror (zmq_errno ()));
  return FALSE;
}

static gboolean
set_int_option (void *socket, int option, int value, const char *name, GError **error)
{
  return set_option (socket, option, &value, sizeof value, name, error);
}

static gboolean
set_int64_option (void *socket, int option, gint64 value, const char *name, GError **error)
{
  int64_t option_value = value;

  return set_option (socket, option, &option_value, sizeof option_value, name, error);
}

static gboolean
set_string_option (void *socket, int option, const char *value, const char *name, GError **error)
{
  return set_option (socket, option, value, strlen (value), name, error);
}

/* The most a subscriber may send in one frame.  Its handshake commands
 * take a few hundred bytes (CURVE's INITIATE with its metadata the most),
 * and a subscription that can match anything is at most the topic and
 * its flag byte: every message's first frame is the topic.  libzmq
 * checks a frame's declared size against this before it allocates, in
 * the handshake too, so a peer that declares a huge frame is
 * disconnected before it costs memory, and before ZAP hears of it. */
#define INBOUND_FRAME_FLOOR 4096

/* A subscriber sends one subscription, or a few; libzmq moves no more
 * than this many of a peer's at a time. */
#define INBOUND_HWM 100

/* libzmq's default lets a connection that never completes its handshake
 * hold a descriptor for 30 s; a CURVE handshake over a slow link takes
 * two round trips, far less than this. */
#define HANDSHAKE_IVL_MS 5000

/* The address allow-list again, as libzmq's accept filter: a peer it
 * refuses is closed right after accept(), so it never holds a descriptor
 * through a handshake and never reaches ZAP, which stays as the check of
 * record.  On an IPv6 socket an IPv4 peer arrives as ::ffff:a.b.c.d, so
 * IPv4 ranges are given in that form too; an IPv4 socket never sees an
 * IPv6 peer.  libzmq reads an empty filter list as "accept everyone", so
 * a list with nothing that can match this socket becomes a filter that
 * matches no peer. */
static gboolean
filter_accepted_addresses (KvevNet *net, void *socket, gboolean ipv6, GError **error)
{
  const GArray *ranges = net->settings->security->allowed_addresses;
  guint i, n_filters = 0;

  if (ranges == NULL)
    return TRUE;
  for (i = 0; i < ranges->len; i++)
    {
      const KvevAddressRange *range = &g_array_index (ranges, KvevAddressRange, i);
      char address[INET6_ADDRSTRLEN];
      g_autofree char *filter = NULL;

      if (range->family == AF_INET6 && !ipv6)
        continue;
      inet_ntop (range->family, range->bytes, address, sizeof address);
      if (range->family == AF_INET && ipv6)
        filter = g_strdup_printf ("::ffff:%s/%u", address, range->prefix + 96);
      else
        filter = g_strdup_printf ("%s/%u", address, range->prefix);
      if (!set_string_option (socket, ZMQ_TCP_ACCEPT_FILTER, filter, "ZMQ_TCP_ACCEPT_FILTER",
                              error))
        return FALSE;
      n_filters++;
    }
  if (n_filters == 0)
    return set_string_option (socket, ZMQ_TCP_ACCEPT_FILTER, ipv6 ? "::/128" : "0.0.0.0/32",
                              "ZMQ_TCP_ACCEPT_FILTER", error);
  return TRUE;
}

/* CURVE and the ZAP handler, as the security flags ask, the same on every
 * socket of the publisher; the plain wire when none is set. */
static gboolean
secure_socket (KvevNet *net, void *socket, gboolean ipv6, GError **error)
{
  const KvevSecurity *security = net->settings->security;

  if (!filter_accepted_addresses (net, socket, ipv6, error))
    return FALSE;
  if (security->allowed_clients != NULL || security->allowed_addresses != NULL)
    {
      if (net->zap == NULL)
        net->zap = kvev_zap_start (net->context, security, error);
      if (net->zap == NULL)
        return FALSE;
      /* Without a domain ZeroMQ skips ZAP for unauthenticated peers. */
      if (!set_string_option (socket, ZMQ_ZAP_DOMAIN, "kvevents", "ZMQ_ZAP_DOMAIN", error))
        return FALSE;
    }
  if (security->secret_key[0] != '\0')
    {
      if (!set_int_option (socket, ZMQ_CURVE_SERVER, 1, "ZMQ_CURVE_SERVER", error)
          || !set_option (socket, ZMQ_CURVE_SECRETKEY, security->secret_key, KVEV_Z85_KEY_LEN,
                          "ZMQ_CURVE_SECRETKEY", error))
        return FALSE;
    }
  return TRUE;
}

/* What every socket of the publisher sets: see the limits above. */
static gboolean
limit_peers (void *socket, gint64 frame_limit, gboolean ipv6, GError **error)
{
  return set_int_option (socket, ZMQ_LINGER, 0, "ZMQ_LINGER", error)
         && set_int_option (socket, ZMQ_RCVHWM, INBOUND_HWM, "ZMQ_RCVHWM", error)
         && set_int64_option (socket, ZMQ_MAXMSGSIZE, frame_limit, "ZMQ_MAXMSGSIZE", error)
         && set_int_option (socket, ZMQ_HANDSHAKE_IVL, HANDSHAKE_IVL_MS, "ZMQ_HANDSHAKE_IVL", error)
         /* Only for an IPv6 endpoint, which cannot bind without it.  On
          * every socket it would also bind IPv4 addresses as IPv6 ones,
          * and kvev_publisher_get_endpoint() would report
          * tcp://[::ffff:127.0.0.1]:N, which subscribers without ZMQ_IPV6
          * cannot connect to. */
         && (!ipv6 || set_int_option (socket, ZMQ_IPV6, 1, "ZMQ_IPV6", error));
}

/* The live socket.  A subscription is at most the topic and its flag
 * byte, and every (un)subscription comes to the xpub (ZMQ_XPUB_VERBOSER),
 * which counts them.  *out is set once the socket exists, for the net to
 * close whatever fails after. */
static gboolean
open_live (KvevNet *net, gboolean ipv6, void **out, GError **error)
{
  const KvevSettings *settings = net->settings;
  void *socket = KVEV_FAULT (KVEV_FAULT_SOCKET) ? (errno = EMFILE, NULL)
                                                : zmq_socket (net->context, ZMQ_XPUB);

  if (socket == NULL)
    {
      g_set_error (error, KVEV_ERROR, KVEV_ERROR_TRANSPORT,
                   _ ("Cannot create the publisher's ZeroMQ socket: %s"),
                   zmq_strerror (zmq_errno ()));
      return FALSE;
    }
  *out = socket;
  return set_int_option (socket, ZMQ_SNDHWM, (int) MIN (settings->send_hwm, (guint32) G_MAXINT),
                         "ZMQ_SNDHWM", error)
         && set_int_option (socket, ZMQ_XPUB_VERBOSER, 1, "ZMQ_XPUB_VERBOSER", error)
         /* A full pipe refuses rather than drops: see send_topic () in
          * xpub.c. */
         && set_int_option (socket, ZMQ_XPUB_NODROP, 1, "ZMQ_XPUB_NODROP", error)
         && limit_peers (socket, (gint64) MAX (INBOUND_FRAME_FLOOR, settings->topic_len + 1), ipv6,
                         error);
}

/* The replay socket: a ROUTER with the live socket's keys and policy,
 * that says when a subscriber's pipe is full (ZMQ_ROUTER_MANDATORY) so
 * that a reply waits rather than drops.  A request is 8 bytes. */
static gboolean
open_replay (KvevNet *net, gboolean ipv6, void **out, GError **error)
{
  void *socket = zmq_socket (net->context, ZMQ_ROUTER);

  if (socket == NULL)
    {
      g_set_error (error, KVEV_ERROR, KVEV_ERROR_TRANSPORT, _ ("Cannot start replay: %s"),
                   zmq_strerror (zmq_errno ()));
      return FALSE;
    }
  *out = socket;
  /* Reply messages in one reader's pipe: replay.c bounds their payload
   * bytes, this their number, each some 256 bytes of frames beyond its
   * payload (a quarter of a MiB a reader), and enough that a reader that
   * keeps up finds messages waiting between two turns of the thread. */
  return set_int_option (socket, ZMQ_SNDHWM, 1000, "ZMQ_SNDHWM", error)
         && set_int_option (socket, ZMQ_ROUTER_MANDATORY, 1, "ZMQ_ROUTER_MANDATORY", error)
         && limit_peers (socket, INBOUND_FRAME_FLOOR, ipv6, error);
}

/* Messages of a snapshot reply in a reader's pipe.  The snapshot server
 * bounds their bytes itself (snapshot-server.c, HELD_BYTES), so this only
 * needs to stay above what that many bytes of the smallest chunks make,
 * and bound the pipe's own entries. */
#define SNAPSHOT_SNDHWM 10000

/* The snapshot socket: a ROUTER like replay's, whose requests are one
 * short word. */
static gboolean
open_snapshots (KvevNet *net, gboolean ipv6, void **out, GError **error)
{
  void *socket = zmq_socket (net->context, ZMQ_ROUTER);

  if (socket == NULL)
    {
      g_set_error (error, KVEV_ERROR, KVEV_ERROR_TRANSPORT, _ ("Cannot start snapshots: %s"),
                   zmq_strerror (zmq_errno ()));
      return FALSE;
    }
  *out = socket;
  return set_int_option (socket, ZMQ_SNDHWM, SNAPSHOT_SNDHWM, "ZMQ_SNDHWM", error)
         && set_int_option (socket, ZMQ_ROUTER_MANDATORY, 1, "ZMQ_ROUTER_MANDATORY", error)
         && limit_peers (socket, INBOUND_FRAME_FLOOR, ipv6, error);
}

/* With an address allow-list, libzmq's monitor tells of the connections
 * its accept filter closed on socket, which nothing else sees.  Every
 * socket of the publisher takes the list, so each has a monitor, named
 * for it: the worker drains them all (xpub.c), whichever thread serves
 * the socket, so that a probe of any socket counts in refused_addresses. */
static gboolean
monitor_refusals (KvevNet *net, void *socket, const char *name, GError **error)
{
  g_autofree char *endpoint = NULL;
  void *monitor = NULL;

  if (net->settings->security->allowed_addresses == NULL)
    return TRUE;
  g_assert (net->n_monitors < G_N_ELEMENTS (net->monitors));
  endpoint = g_strdup_printf (MONITOR_ENDPOINT, name);
  if (zmq_socket_monitor (socket, endpoint, ZMQ_EVENT_ACCEPT_FAILED) == 0
      && (monitor = zmq_socket (net->context, ZMQ_PAIR)) != NULL)
    net->monitors[net->n_monitors++] = monitor;
  if (monitor == NULL || zmq_connect (monitor, endpoint) != 0)
    {
      g_set_error (error, KVEV_ERROR, KVEV_ERROR_TRANSPORT,
                   _ ("Cannot watch the socket for refused connections: %s"),
                   zmq_strerror (zmq_errno ()));
      return FALSE;
    }
  return set_int_option (monitor, ZMQ_LINGER, 0, "ZMQ_LINGER", error);
}

/* Binds socket to the endpoint of flag; the endpoint actually bound, to
 * g_free(), or NULL with the error. */
static char *
bind_socket (KvevNet *net, void *socket, const char *flag, const KvevEndpoint *endpoint,
             GError **error)
{
  char bound[1024];
  size_t bound_len = sizeof bound;

  if (zmq_bind (socket, endpoint->text) != 0)
    {
      g_set_error (error, KVEV_ERROR, KVEV_ERROR_TRANSPORT,
                   /* TRANSLATORS: a flag name, then an endpoint and the
                    * reason. */
                   _ ("Cannot bind %s \"%s\": %s"), flag, endpoint->text,
                   zmq_strerror (zmq_errno ()));
      return NULL;
    }
  /* Once listening, not before: a bind that fails exposes nothing. */
  kvev_security_warn_if_exposed (endpoint, net->settings->security);
  if (zmq_getsockopt (socket, ZMQ_LAST_ENDPOINT, bound, &bound_len) != 0)
    {
      g_set_error (error, KVEV_ERROR, KVEV_ERROR_TRANSPORT,
                   _ ("Cannot read the bound endpoint: %s"), zmq_strerror (zmq_errno ()));
      return NULL;
    }
  return g_strndup (bound, bound_len);
}

/* Every socket the settings ask for, made, hardened and bound one after
 * the other, live first.  The only reader of the settings' endpoints. */
static gboolean
open_sockets (KvevNet *net, GError **error)
{
  const KvevSettings *settings = net->settings;
  const struct
  {
    const char *flag;
    const KvevEndpoint *endpoint;
    gboolean (*open) (KvevNet *net, gboolean ipv6, void **out, GError **error);
    const char *monitor;
  } wanted[KVEV_NET_N_SOCKETS] = {
    [KVEV_NET_LIVE] = { "kv_events_bind_endpoint", settings->bind_endpoint, open_live, "live" },
    [KVEV_NET_REPLAY]
    = { "kv_events_replay_endpoint", settings->replay_endpoint, open_replay, "replay" },
    [KVEV_NET_SNAPSHOTS]
    = { "kv_events_snapshot_endpoint", settings->snapshot_endpoint, open_snapshots, "snapshots" },
  };
  guint i;

  for (i = 0; i < KVEV_NET_N_SOCKETS; i++)
    {
      if (wanted[i].endpoint == NULL)
        continue;
      if (!wanted[i].open (net, wanted[i].endpoint->ipv6, &net->sockets[i], error)
          || !secure_socket (net, net->sockets[i], wanted[i].endpoint->ipv6, error)
          || !monitor_refusals (net, net->sockets[i], wanted[i].monitor, error)
          || !kvev_endpoint_prepare_bind (wanted[i].flag, wanted[i].endpoint, error)
          || (net->endpoints[i]
              = bind_socket (net, net->sockets[i], wanted[i].flag, wanted[i].endpoint, error))
                 == NULL)
        return FALSE;
    }
  return TRUE;
}

KvevNet *
kvev_net_open (const KvevSettings *settings, GError **error)
{
  KvevNet *net;

  g_return_val_if_fail (settings != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  net = g_new0 (KvevNet, 1);
  net->settings = settings;
  net->context = zmq_ctx_new ();
  if (net->context == NULL
      || zmq_ctx_set (net->context, ZMQ_IO_THREADS, (int) settings->io_threads) != 0)
    {
      g_set_error (error, KVEV_ERROR, KVEV_ERROR_TRANSPORT,
                   _ ("Cannot create a ZeroMQ context: %s"), zmq_strerror (zmq_errno ()));
      kvev_net_close (net, 0);
      return NULL;
    }
  if (!open_sockets (net, error))
    {
      kvev_net_close (net, 0);
      return NULL;
    }
  return net;
}

const char *
kvev_net_endpoint (const KvevNet *net, KvevNetSocket which)
{
  return net->endpoints[which];
}

void *
kvev_net_context (const KvevNet *net)
{
  return net->context;
}

void *
kvev_net_socket (const KvevNet *net, KvevNetSocket which)
{
  return net->sockets[which];
}

void *const *
kvev_net_monitors (const KvevNet *net, guint *n_monitors)
{
  *n_monitors = net->n_monitors;
  return net->monitors;
}

void
kvev_net_zap_refusals (const KvevNet *net, guint64 *addresses, guint64 *keys)
{
  kvev_zap_refusals (net->zap, addresses, keys);
}

void
kvev_net_close (KvevNet *net, gint64 deadline)
{
  void *live;
  int linger_ms;
  guint i;

  if (net == NULL)
    return;
  /* The side sockets first, which ends their monitors; the live one's
   * ends here, before its socket goes too. */
  for (i = 0; i < KVEV_NET_N_SOCKETS; i++)
    if (i != KVEV_NET_LIVE && net->sockets[i] != NULL)
      zmq_close (net->sockets[i]);
  live = net->sockets[KVEV_NET_LIVE];
  if (net->n_monitors > 0 && live != NULL)
    zmq_socket_monitor (live, NULL, 0);
  for (i = 0; i < net->n_monitors; i++)
    zmq_close (net->monitors[i]);
  if (live != NULL)
    {
      /* What ZeroMQ still holds may reach connected subscribers until
       * the deadline, and no longer: the close must return on time. */
      linger_ms = (int) CLAMP ((deadline - g_get_monotonic_time ()) / 1000, 0, G_MAXINT);
      zmq_setsockopt (live, ZMQ_LINGER, &linger_ms, sizeof linger_ms);
      zmq_close (live);
    }
  /* Terminating the context also ends the ZAP handler's wait. */
  kvev_zap_stop (net->zap);
  if (net->context != NULL)
    zmq_ctx_term (net->context);
  kvev_zap_join (net->zap);
  for (i = 0; i < KVEV_NET_N_SOCKETS; i++)
    g_free (net->endpoints[i]);
  g_free (net);
}
