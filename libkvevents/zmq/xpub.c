/* xpub.c: the ZeroMQ XPUB socket subscribers connect to, with
 * its options, CURVE keys and ZAP policy; see transport.h.
 *
 * An XPUB socket is a PUB socket that also hands its owner every
 * subscription and unsubscription: the same wire for every subscriber,
 * and a publisher that knows who listens.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "xpub.h"

#include "counter.h"
#include "config/endpoint.h"
#include "fault.h"
#include "send-budget.h"
#include "events/queue.h"
#include "replay.h"
#include "snapshot-server.h"
#include "zap.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

/* libzmq reports a socket's refused connections on this, with the
 * socket's name: one name per socket of a context, and every publisher
 * has a context of its own. */
#define MONITOR_ENDPOINT "inproc://kvevents-monitor-%s"

/* The live socket, replay's and the snapshot socket's. */
#define MAX_MONITORS 3

struct _KvevTransport
{
  const KvevSettings *settings;
  KvevQueue *queue; /* stopped: waiting for room is over */
  void *context;
  void *socket;
  /* PAIR ends of the sockets' monitors, with an address allow-list. */
  void *monitors[MAX_MONITORS];
  guint n_monitors;
  KvevZap *zap;
  KvevReplay *replay;
  KvevSnapshotServer *snapshots;
  char *endpoint;
  char *replay_endpoint;
  char *snapshot_endpoint;
  gint64 last_take_in;
  KvevHold hold;
  /* Matching subscriptions taken in since the worker last asked. */
  guint new_subscriptions;

  /* Written by the worker as it takes in, read by anyone. */
  KvevPeerCounts counts;
  GMutex peers_lock;
  GCond peers_cond;
  guint subscription_waiters; /* under peers_lock */
};

static gboolean
set_option (void *socket, int option, const void *value, size_t len, const char *name,
            GError **error)
{
  if (zmq_setsockopt (socket, option, value, len) == 0)
    return TRUE;
  g_set_error (error, KVEV_ERROR, KVEV_ERROR_TRANSPORT,
               _("Cannot set the ZeroMQ socket option %s: %s"), name,
               zmq_strerror (zmq_errno ()));
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
set_string_option (void *socket, int option, const char *value, const char *name,
                   GError **error)
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

/* A worker busy publishing takes subscriptions in at most this often:
 * each look costs libzmq a system call when nothing came. */
#define TAKE_IN_INTERVAL_US 1000

/* What one take-in reads at most, so that a peer that floods
 * subscriptions cannot keep the worker from publishing. */
#define TAKE_IN_BATCH 1000

static void
free_payload (void *data, void *hint)
{
  free (data);
}

/* A worker waiting for room looks at the stop and the subscriptions at
 * least this often. */
#define WAIT_SLICE_US 10000

static void take_in (KvevTransport *transport);

static gboolean
set_lossy (KvevTransport *transport, gboolean lossy)
{
  int nodrop = !lossy;

  return zmq_setsockopt (transport->socket, ZMQ_XPUB_NODROP, &nodrop, sizeof nodrop) == 0;
}

/* The first frame, which a full pipe refuses (ZMQ_XPUB_NODROP): waits
 * for room as kvev_hold_allowance() lets it, then sends without the full
 * pipes, with the socket left lossy until the message's last frame. */
static KvevSendResult
send_topic (KvevTransport *transport)
{
  const KvevSettings *settings = transport->settings;
  gint64 waiting_since = -1; /* when the blocking send now failing began */

  while (zmq_send (transport->socket, settings->topic, settings->topic_len,
                   waiting_since < 0 ? ZMQ_SNDMORE | ZMQ_DONTWAIT : ZMQ_SNDMORE)
         < 0)
    {
      gint64 now = g_get_monotonic_time ();
      gint64 allowance, slice_us;
      int timeout_ms;

      if (zmq_errno () != EAGAIN && zmq_errno () != EINTR)
        return KVEV_SEND_FAILED;
      if (waiting_since >= 0)
        {
          kvev_hold_spend (&transport->hold, now - waiting_since, now);
          take_in (transport);
        }
      allowance = kvev_hold_allowance (&transport->hold,
                                       kvev_counter_get (&transport->counts.subscriptions), now);
      if (allowance == 0 || kvev_queue_stopped (transport->queue))
        {
          /* zmq_send() returns the bytes sent: with a topic, a success
           * taken for a failure would leave the frame queued, and the
           * next message would go out with two topics. */
          if (set_lossy (transport, TRUE)
              && zmq_send (transport->socket, settings->topic, settings->topic_len,
                           ZMQ_SNDMORE | ZMQ_DONTWAIT)
                     >= 0)
            return KVEV_SEND_REFUSED;
          set_lossy (transport, FALSE);
          return KVEV_SEND_FAILED;
        }
      /* A blocking send sleeps until the peers' pipes report room, which
       * zmq_poll() cannot wait for: an XPUB socket always polls as
       * writable. */
      slice_us = allowance < 0 ? WAIT_SLICE_US : MIN (allowance, WAIT_SLICE_US);
      timeout_ms = (int) MAX (1, slice_us / 1000);
      zmq_setsockopt (transport->socket, ZMQ_SNDTIMEO, &timeout_ms, sizeof timeout_ms);
      waiting_since = now;
    }
  if (waiting_since >= 0)
    {
      gint64 now = g_get_monotonic_time ();

      kvev_hold_spend (&transport->hold, now - waiting_since, now);
    }
  return KVEV_SEND_DELIVERED;
}

KvevSendResult
kvev_transport_send (KvevTransport *transport, guint64 sequence, char *payload, gsize payload_len,
                     gboolean heartbeat)
{
  guint64 sequence_be = GUINT64_TO_BE (sequence);
  KvevSendResult result;
  gboolean sent;
  zmq_msg_t message;
  zmq_msg_t kept;

  result = KVEV_FAULT (KVEV_FAULT_SEND) ? KVEV_SEND_FAILED : send_topic (transport);
  if (result == KVEV_SEND_FAILED)
    {
      free (payload);
      return result;
    }
  /* Once the first frame is in, ZeroMQ holds the parts until the last
   * one, and a later refusal would need the same dead socket. */
  zmq_send (transport->socket, &sequence_be, sizeof sequence_be, ZMQ_SNDMORE | ZMQ_DONTWAIT);
  zmq_msg_init_data (&message, payload, payload_len, free_payload, NULL);
  /* The replay buffer shares the payload: a copy of the message, not of
   * its bytes, which ZeroMQ frees once both are done with it. */
  zmq_msg_init (&kept);
  if (transport->replay != NULL)
    zmq_msg_copy (&kept, &message);
  sent = zmq_msg_send (&message, transport->socket, ZMQ_DONTWAIT) >= 0;
  if (result == KVEV_SEND_REFUSED)
    set_lossy (transport, FALSE);
  if (!sent)
    {
      zmq_msg_close (&message);
      zmq_msg_close (&kept);
      return KVEV_SEND_FAILED;
    }
  if (transport->replay != NULL)
    kvev_replay_keep (transport->replay, sequence, &kept, heartbeat);
  zmq_msg_close (&kept);
  return result;
}

/* Whether a subscription prefix can match a message: it must be a prefix
 * of the topic, every message's first frame. */
static gboolean
matches_topic (const KvevSettings *settings, const guint8 *prefix, gsize len)
{
  return len <= settings->topic_len && memcmp (prefix, settings->topic, len) == 0;
}

/* One (un)subscription: the flag byte, then the prefix.  libzmq hands
 * every one over (ZMQ_XPUB_VERBOSER), those of a peer that leaves too. */
static void
count_subscription (KvevTransport *transport, const guint8 *data, gsize size)
{
  KvevPeerCounts *counts = &transport->counts;
  gboolean subscribe;
  gboolean matching;

  if (size == 0 || data[0] > 1)
    return;
  subscribe = data[0] == 1;
  matching = matches_topic (transport->settings, data + 1, size - 1);
  g_mutex_lock (&transport->peers_lock);
  if (subscribe)
    {
      kvev_counter_set (&counts->subscribe_messages, counts->subscribe_messages + 1);
      if (matching)
        {
          kvev_counter_set (&counts->subscriptions, counts->subscriptions + 1);
          transport->new_subscriptions++;
        }
    }
  else
    {
      kvev_counter_set (&counts->unsubscribe_messages, counts->unsubscribe_messages + 1);
      /* A peer that subscribed twice to one prefix unsubscribes once:
       * libzmq keeps a prefix once per peer.  The count stays above
       * zero, as a count of subscribe messages must. */
      if (matching && counts->subscriptions > 0)
        kvev_counter_set (&counts->subscriptions, counts->subscriptions - 1);
    }
  if (transport->subscription_waiters > 0)
    g_cond_broadcast (&transport->peers_cond);
  g_mutex_unlock (&transport->peers_lock);
}

/* The monitor tells of a connection closed as it was accepted.  With an
 * address allow-list that is the accept filter refusing its address, and
 * libzmq passes on whatever errno was left: only the errors of a real
 * failure to accept are told apart, and not counted. */
static void
count_monitor_event (KvevTransport *transport, const guint8 *data, gsize size)
{
  guint16 event;
  guint32 value;

  if (size != sizeof event + sizeof value)
    return;
  memcpy (&event, data, sizeof event);
  memcpy (&value, data + sizeof event, sizeof value);
  if (event != ZMQ_EVENT_ACCEPT_FAILED || transport->settings->security->allowed_addresses == NULL)
    return;
  switch (value)
    {
    case EMFILE:
    case ENFILE:
    case ENOBUFS:
    case ENOMEM:
    case ECONNABORTED:
    case EPROTO:
    case EINTR:
      return;
    default:
      kvev_counter_add (&transport->counts.refused_addresses, 1);
    }
}

/* Reads what waits on socket, at most TAKE_IN_BATCH messages; the first
 * frame of each goes to count. */
static void
drain (KvevTransport *transport, void *socket,
       void (*count) (KvevTransport *, const guint8 *, gsize))
{
  guint i;

  for (i = 0; i < TAKE_IN_BATCH; i++)
    {
      zmq_msg_t frame;
      gboolean first = TRUE;
      int more = 1;
      size_t more_len = sizeof more;

      while (more)
        {
          zmq_msg_init (&frame);
          if (zmq_msg_recv (&frame, socket, ZMQ_DONTWAIT) < 0)
            {
              zmq_msg_close (&frame);
              return;
            }
          if (first)
            count (transport, zmq_msg_data (&frame), zmq_msg_size (&frame));
          first = FALSE;
          zmq_msg_close (&frame);
          if (zmq_getsockopt (socket, ZMQ_RCVMORE, &more, &more_len) != 0)
            more = 0;
        }
    }
}

static void
take_in (KvevTransport *transport)
{
  guint i;

  transport->last_take_in = g_get_monotonic_time ();
  drain (transport, transport->socket, count_subscription);
  for (i = 0; i < transport->n_monitors; i++)
    drain (transport, transport->monitors[i], count_monitor_event);
}

void
kvev_transport_take_in (KvevTransport *transport)
{
  if (g_get_monotonic_time () - transport->last_take_in >= TAKE_IN_INTERVAL_US)
    take_in (transport);
}

void
kvev_transport_wait (KvevTransport *transport, int bell_fd, gint64 end_time)
{
  zmq_pollitem_t items[2 + MAX_MONITORS] = {
    { NULL, bell_fd, ZMQ_POLLIN, 0 },
    { transport->socket, 0, ZMQ_POLLIN, 0 },
  };
  int n_items = 2 + (int) transport->n_monitors;
  long timeout_ms = -1;
  int i;

  if (end_time >= 0)
    {
      gint64 remaining_us = end_time - g_get_monotonic_time ();

      if (remaining_us <= 0)
        return;
      /* Rounded up, so a wait never ends before end_time. */
      timeout_ms = (long) MIN ((remaining_us + 999) / 1000, G_MAXINT);
    }
  for (i = 2; i < n_items; i++)
    items[i] = (zmq_pollitem_t){ transport->monitors[i - 2], 0, ZMQ_POLLIN, 0 };
  if (zmq_poll (items, n_items, timeout_ms) <= 0)
    return;
  /* Anything but the bell is the peers'. */
  for (i = 1; i < n_items; i++)
    if (items[i].revents != 0)
      {
        take_in (transport);
        return;
      }
}

guint
kvev_transport_take_new_subscriptions (KvevTransport *transport)
{
  guint n = transport->new_subscriptions;

  transport->new_subscriptions = 0;
  return n;
}

void
kvev_transport_counts (const KvevTransport *transport, KvevPeerCounts *counts)
{
  guint64 zap_addresses = 0, zap_keys = 0;

  counts->subscriptions = kvev_counter_get (&transport->counts.subscriptions);
  counts->subscribe_messages = kvev_counter_get (&transport->counts.subscribe_messages);
  counts->unsubscribe_messages = kvev_counter_get (&transport->counts.unsubscribe_messages);
  kvev_zap_refusals (transport->zap, &zap_addresses, &zap_keys);
  counts->refused_addresses = kvev_counter_get (&transport->counts.refused_addresses) + zap_addresses;
  counts->refused_keys = zap_keys;
}

gboolean
kvev_transport_wait_subscriptions (KvevTransport *transport, guint64 n, gint64 deadline)
{
  gboolean present;

  g_mutex_lock (&transport->peers_lock);
  transport->subscription_waiters++;
  while (transport->counts.subscriptions < n)
    {
      if (deadline < 0)
        g_cond_wait (&transport->peers_cond, &transport->peers_lock);
      else if (!g_cond_wait_until (&transport->peers_cond, &transport->peers_lock, deadline))
        break;
    }
  present = transport->counts.subscriptions >= n;
  transport->subscription_waiters--;
  g_mutex_unlock (&transport->peers_lock);
  return present;
}

/* The address allow-list again, as libzmq's accept filter: a peer it
 * refuses is closed right after accept(), so it never holds a descriptor
 * through a handshake and never reaches ZAP, which stays as the check of
 * record.  On an IPv6 socket an IPv4 peer arrives as ::ffff:a.b.c.d, so
 * IPv4 ranges are given in that form too; an IPv4 socket never sees an
 * IPv6 peer.  libzmq reads an empty filter list as "accept everyone", so
 * a list with nothing that can match this socket becomes a filter that
 * matches no peer. */
static gboolean
filter_accepted_addresses (KvevTransport *transport, void *socket, gboolean ipv6, GError **error)
{
  const GArray *ranges = transport->settings->security->allowed_addresses;
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
secure_socket (KvevTransport *transport, void *socket, gboolean ipv6, GError **error)
{
  const KvevSecurity *security = transport->settings->security;

  if (!filter_accepted_addresses (transport, socket, ipv6, error))
    return FALSE;
  if (security->allowed_clients != NULL || security->allowed_addresses != NULL)
    {
      if (transport->zap == NULL)
        transport->zap = kvev_zap_start (transport->context, security, error);
      if (transport->zap == NULL)
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
         && set_int_option (socket, ZMQ_HANDSHAKE_IVL, HANDSHAKE_IVL_MS, "ZMQ_HANDSHAKE_IVL",
                            error)
         /* Only for an IPv6 endpoint, which cannot bind without it.  On
          * every socket it would also bind IPv4 addresses as IPv6 ones,
          * and kvev_publisher_get_endpoint() would report
          * tcp://[::ffff:127.0.0.1]:N, which subscribers without ZMQ_IPV6
          * cannot connect to. */
         && (!ipv6 || set_int_option (socket, ZMQ_IPV6, 1, "ZMQ_IPV6", error));
}

static gboolean
set_socket_options (KvevTransport *transport, GError **error)
{
  const KvevSettings *settings = transport->settings;
  void *socket = transport->socket;

  return set_int_option (socket, ZMQ_SNDHWM, (int) MIN (settings->send_hwm, (guint32) G_MAXINT),
                         "ZMQ_SNDHWM", error)
         && set_int_option (socket, ZMQ_XPUB_VERBOSER, 1, "ZMQ_XPUB_VERBOSER", error)
         /* A full pipe refuses rather than drops: see send_topic (). */
         && set_int_option (socket, ZMQ_XPUB_NODROP, 1, "ZMQ_XPUB_NODROP", error)
         && limit_peers (socket, (gint64) MAX (INBOUND_FRAME_FLOOR, settings->topic_len + 1),
                         settings->bind_endpoint->ipv6, error);
}

/* With an address allow-list, libzmq's monitor tells of the connections
 * its accept filter closed on socket, which nothing else sees.  Every
 * socket of the publisher takes the list, so each has a monitor, named
 * for it: the worker drains them all, whichever thread serves the
 * socket, so that a probe of any socket counts in refused_addresses. */
static gboolean
monitor_refusals (KvevTransport *transport, void *socket, const char *name, GError **error)
{
  g_autofree char *endpoint = NULL;
  void *monitor = NULL;

  if (transport->settings->security->allowed_addresses == NULL)
    return TRUE;
  g_assert (transport->n_monitors < MAX_MONITORS);
  endpoint = g_strdup_printf (MONITOR_ENDPOINT, name);
  if (zmq_socket_monitor (socket, endpoint, ZMQ_EVENT_ACCEPT_FAILED) == 0
      && (monitor = zmq_socket (transport->context, ZMQ_PAIR)) != NULL)
    transport->monitors[transport->n_monitors++] = monitor;
  if (monitor == NULL || zmq_connect (monitor, endpoint) != 0)
    {
      g_set_error (error, KVEV_ERROR, KVEV_ERROR_TRANSPORT,
                   _("Cannot watch the socket for refused connections: %s"),
                   zmq_strerror (zmq_errno ()));
      return FALSE;
    }
  return set_int_option (monitor, ZMQ_LINGER, 0, "ZMQ_LINGER", error);
}

/* Binds socket to the endpoint of flag; the endpoint actually bound, to
 * g_free(), or NULL with the error. */
static char *
bind_socket (KvevTransport *transport, void *socket, const char *flag,
             const KvevEndpoint *endpoint, GError **error)
{
  char bound[1024];
  size_t bound_len = sizeof bound;

  if (!kvev_endpoint_prepare_bind (flag, endpoint, error))
    return NULL;
  if (zmq_bind (socket, endpoint->text) != 0)
    {
      g_set_error (error, KVEV_ERROR, KVEV_ERROR_TRANSPORT,
                   /* TRANSLATORS: a flag name, then an endpoint and the
                    * reason. */
                   _("Cannot bind %s \"%s\": %s"), flag, endpoint->text,
                   zmq_strerror (zmq_errno ()));
      return NULL;
    }
  /* Once listening, not before: a bind that fails exposes nothing. */
  kvev_security_warn_if_exposed (endpoint, transport->settings->security);
  if (zmq_getsockopt (socket, ZMQ_LAST_ENDPOINT, bound, &bound_len) != 0)
    {
      g_set_error (error, KVEV_ERROR, KVEV_ERROR_TRANSPORT, _("Cannot read the bound endpoint: %s"),
                   zmq_strerror (zmq_errno ()));
      return NULL;
    }
  return g_strndup (bound, bound_len);
}

/* The replay socket: a ROUTER with the live socket's keys and policy,
 * that says when a subscriber's pipe is full (ZMQ_ROUTER_MANDATORY) so
 * that a reply waits rather than drops.  A request is 8 bytes. */
static gboolean
start_replay (KvevTransport *transport, GError **error)
{
  const KvevSettings *settings = transport->settings;
  void *socket;

  if (settings->replay_endpoint == NULL)
    return TRUE;
  socket = zmq_socket (transport->context, ZMQ_ROUTER);
  if (socket == NULL)
    {
      g_set_error (error, KVEV_ERROR, KVEV_ERROR_TRANSPORT, _("Cannot start replay: %s"),
                   zmq_strerror (zmq_errno ()));
      return FALSE;
    }
  /* Reply messages in one reader's pipe: replay.c bounds their payload
   * bytes, this their number, each some 256 bytes of frames beyond its
   * payload (a quarter of a MiB a reader), and enough that a reader that
   * keeps up finds messages waiting between two turns of the thread. */
  if (!set_int_option (socket, ZMQ_SNDHWM, 1000, "ZMQ_SNDHWM", error)
      || !set_int_option (socket, ZMQ_ROUTER_MANDATORY, 1, "ZMQ_ROUTER_MANDATORY", error)
      || !limit_peers (socket, INBOUND_FRAME_FLOOR, settings->replay_endpoint->ipv6, error)
      || !secure_socket (transport, socket, settings->replay_endpoint->ipv6, error)
      || !monitor_refusals (transport, socket, "replay", error)
      || (transport->replay_endpoint
          = bind_socket (transport, socket, "kv_events_replay_endpoint",
                         settings->replay_endpoint, error))
             == NULL
      || (transport->replay = kvev_replay_start (settings, transport->context, socket, error))
             == NULL)
    {
      zmq_close (socket);
      return FALSE;
    }
  return TRUE;
}

/* Messages of a snapshot reply in a reader's pipe.  The snapshot server
 * bounds their bytes itself (snapshot-server.c, HELD_BYTES), so this only
 * needs to stay above what that many bytes of the smallest chunks make,
 * and bound the pipe's own entries. */
#define SNAPSHOT_SNDHWM 10000

/* The snapshot socket: a ROUTER like replay's, whose requests are one
 * short word. */
static gboolean
start_snapshots (KvevTransport *transport, KvevQueue *queue, KvevSnapshotSource *source,
                 GError **error)
{
  const KvevSettings *settings = transport->settings;
  void *socket;

  if (settings->snapshot_endpoint == NULL)
    return TRUE;
  socket = zmq_socket (transport->context, ZMQ_ROUTER);
  if (socket == NULL)
    {
      g_set_error (error, KVEV_ERROR, KVEV_ERROR_TRANSPORT, _("Cannot start snapshots: %s"),
                   zmq_strerror (zmq_errno ()));
      return FALSE;
    }
  if (!set_int_option (socket, ZMQ_SNDHWM, SNAPSHOT_SNDHWM, "ZMQ_SNDHWM", error)
      || !set_int_option (socket, ZMQ_ROUTER_MANDATORY, 1, "ZMQ_ROUTER_MANDATORY", error)
      || !limit_peers (socket, INBOUND_FRAME_FLOOR, settings->snapshot_endpoint->ipv6, error)
      || !secure_socket (transport, socket, settings->snapshot_endpoint->ipv6, error)
      || !monitor_refusals (transport, socket, "snapshots", error)
      || (transport->snapshot_endpoint
          = bind_socket (transport, socket, "kv_events_snapshot_endpoint",
                         settings->snapshot_endpoint, error))
             == NULL
      || (transport->snapshots = kvev_snapshot_server_start (settings, transport->context, socket,
                                                             queue, source, error))
             == NULL)
    {
      zmq_close (socket);
      return FALSE;
    }
  return TRUE;
}

KvevTransport *
kvev_transport_new (const KvevSettings *settings, KvevQueue *queue, KvevSnapshotSource *source,
                    GError **error)
{
  KvevTransport *transport = g_new0 (KvevTransport, 1);

  transport->settings = settings;
  transport->queue = queue;
  kvev_hold_init (&transport->hold, settings->send_wait_ms, g_get_monotonic_time ());
  g_mutex_init (&transport->peers_lock);
  g_cond_init (&transport->peers_cond);
  transport->context = zmq_ctx_new ();
  if (transport->context == NULL
      || zmq_ctx_set (transport->context, ZMQ_IO_THREADS, (int) settings->io_threads) != 0)
    {
      g_set_error (error, KVEV_ERROR, KVEV_ERROR_TRANSPORT,
                   _("Cannot create a ZeroMQ context: %s"), zmq_strerror (zmq_errno ()));
      goto fail;
    }
  transport->socket = KVEV_FAULT (KVEV_FAULT_SOCKET) ? (errno = EMFILE, NULL)
                                                     : zmq_socket (transport->context, ZMQ_XPUB);
  if (transport->socket == NULL)
    {
      g_set_error (error, KVEV_ERROR, KVEV_ERROR_TRANSPORT,
                   _("Cannot create the publisher's ZeroMQ socket: %s"),
                   zmq_strerror (zmq_errno ()));
      goto fail;
    }
  if (!set_socket_options (transport, error)
      || !secure_socket (transport, transport->socket, settings->bind_endpoint->ipv6, error)
      || !monitor_refusals (transport, transport->socket, "live", error)
      || (transport->endpoint = bind_socket (transport, transport->socket,
                                             "kv_events_bind_endpoint", settings->bind_endpoint,
                                             error))
             == NULL
      || !start_replay (transport, error) || !start_snapshots (transport, queue, source, error))
    goto fail;
  return transport;

fail:
  kvev_transport_free (transport, 0);
  return NULL;
}

const char *
kvev_transport_get_endpoint (const KvevTransport *transport)
{
  return transport->endpoint;
}

const char *
kvev_transport_get_replay_endpoint (const KvevTransport *transport)
{
  return transport->replay_endpoint;
}

void
kvev_transport_replay_counts (const KvevTransport *transport, KvevReplayCounts *counts)
{
  if (transport->replay != NULL)
    kvev_replay_counts (transport->replay, counts);
  else
    memset (counts, 0, sizeof *counts);
}

const char *
kvev_transport_get_snapshot_endpoint (const KvevTransport *transport)
{
  return transport->snapshot_endpoint;
}

void
kvev_transport_snapshot_counts (const KvevTransport *transport, KvevSnapshotCounts *counts)
{
  if (transport->snapshots != NULL)
    kvev_snapshot_server_counts (transport->snapshots, counts);
  else
    memset (counts, 0, sizeof *counts);
}

void
kvev_transport_free (KvevTransport *transport, int linger_ms)
{
  guint i;

  if (transport == NULL)
    return;
  kvev_snapshot_server_stop (transport->snapshots);
  kvev_replay_stop (transport->replay);
  /* The side sockets are closed, which ended their monitors: the live
   * one's ends here, before its socket goes too. */
  if (transport->n_monitors > 0 && transport->socket != NULL)
    zmq_socket_monitor (transport->socket, NULL, 0);
  for (i = 0; i < transport->n_monitors; i++)
    zmq_close (transport->monitors[i]);
  if (transport->socket != NULL)
    {
      zmq_setsockopt (transport->socket, ZMQ_LINGER, &linger_ms, sizeof linger_ms);
      zmq_close (transport->socket);
    }
  /* Terminating the context also ends the ZAP handler's wait. */
  kvev_zap_stop (transport->zap);
  if (transport->context != NULL)
    zmq_ctx_term (transport->context);
  kvev_zap_join (transport->zap);
  g_mutex_clear (&transport->peers_lock);
  g_cond_clear (&transport->peers_cond);
  g_free (transport->endpoint);
  g_free (transport->replay_endpoint);
  g_free (transport->snapshot_endpoint);
  g_free (transport);
}
