/* xpub.c: the live stream on the net's XPUB socket; see xpub.h.
 *
 * An XPUB socket is a PUB socket that also hands its owner every
 * subscription and unsubscription: the same wire for every subscriber,
 * and a publisher that knows who listens.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "xpub.h"

#include "counter.h"
#include "fault.h"
#include "send-budget.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

/* A worker busy publishing takes subscriptions in at most this often:
 * each look costs libzmq a system call when nothing came. */
#define TAKE_IN_INTERVAL_US 1000

/* What one take-in reads at most, so that a peer that floods
 * subscriptions cannot keep the worker from publishing. */
#define TAKE_IN_BATCH 1000

struct _KvevXpub
{
  const KvevSettings *settings;
  const KvevNet *net; /* for ZAP's refusals, counted with the monitors' */
  void *socket;
  /* The net's refusal monitors, drained with the socket. */
  void *const *monitors;
  guint n_monitors;
  KvevXpubStopping stopping; /* TRUE: waiting for room is over */
  gpointer stopping_data;
  gint64 last_take_in;
  KvevSendBudget budget;
  /* Matching subscriptions taken in since the worker last heard. */
  guint new_subscriptions;

  /* Written by the worker as it takes in, read by anyone. */
  KvevPeerCounts counts;
  GMutex peers_lock;
  GCond peers_cond;
  guint subscription_waiters; /* under peers_lock */
};

KvevXpub *
kvev_xpub_new (const KvevSettings *settings, const KvevNet *net, KvevXpubStopping stopping,
               gpointer stopping_data)
{
  KvevXpub *xpub = g_new0 (KvevXpub, 1);

  xpub->settings = settings;
  xpub->net = net;
  xpub->socket = kvev_net_socket (net, KVEV_NET_LIVE);
  xpub->monitors = kvev_net_monitors (net, &xpub->n_monitors);
  xpub->stopping = stopping;
  xpub->stopping_data = stopping_data;
  kvev_send_budget_init (&xpub->budget, settings->send_wait_ms, g_get_monotonic_time ());
  g_mutex_init (&xpub->peers_lock);
  g_cond_init (&xpub->peers_cond);
  return xpub;
}

void
kvev_xpub_free (KvevXpub *xpub)
{
  if (xpub == NULL)
    return;
  g_mutex_clear (&xpub->peers_lock);
  g_cond_clear (&xpub->peers_cond);
  g_free (xpub);
}

static void
free_payload (void *data, void *hint)
{
  free (data);
}

/* A worker waiting for room looks at the stop and the subscriptions at
 * least this often. */
#define WAIT_SLICE_US 10000

static void take_in (KvevXpub *xpub);

static gboolean
set_lossy (KvevXpub *xpub, gboolean lossy)
{
  int nodrop = !lossy;

  return zmq_setsockopt (xpub->socket, ZMQ_XPUB_NODROP, &nodrop, sizeof nodrop) == 0;
}

/* The first frame, which a full pipe refuses (ZMQ_XPUB_NODROP): waits
 * for room as kvev_send_budget_allowance() lets it, then sends without
 * the full pipes, with the socket left lossy until the message's last
 * frame. */
static KvevSendResult
send_topic (KvevXpub *xpub)
{
  const KvevSettings *settings = xpub->settings;
  gint64 waiting_since = -1; /* when the blocking send now failing began */

  while (zmq_send (xpub->socket, settings->topic, settings->topic_len,
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
          kvev_send_budget_spend (&xpub->budget, now - waiting_since, now);
          take_in (xpub);
        }
      allowance = kvev_send_budget_allowance (&xpub->budget,
                                              kvev_counter_get (&xpub->counts.subscriptions), now);
      if (allowance == 0 || xpub->stopping (xpub->stopping_data))
        {
          /* zmq_send() returns the bytes sent: with a topic, a success
           * taken for a failure would leave the frame queued, and the
           * next message would go out with two topics. */
          if (set_lossy (xpub, TRUE)
              && zmq_send (xpub->socket, settings->topic, settings->topic_len,
                           ZMQ_SNDMORE | ZMQ_DONTWAIT)
                     >= 0)
            return KVEV_SEND_REFUSED;
          set_lossy (xpub, FALSE);
          return KVEV_SEND_FAILED;
        }
      /* A blocking send sleeps until the peers' pipes report room, which
       * zmq_poll() cannot wait for: an XPUB socket always polls as
       * writable. */
      slice_us = allowance < 0 ? WAIT_SLICE_US : MIN (allowance, WAIT_SLICE_US);
      timeout_ms = (int) MAX (1, slice_us / 1000);
      zmq_setsockopt (xpub->socket, ZMQ_SNDTIMEO, &timeout_ms, sizeof timeout_ms);
      waiting_since = now;
    }
  if (waiting_since >= 0)
    {
      gint64 now = g_get_monotonic_time ();

      kvev_send_budget_spend (&xpub->budget, now - waiting_since, now);
    }
  return KVEV_SEND_DELIVERED;
}

KvevSendResult
kvev_xpub_send (KvevXpub *xpub, guint64 sequence, char *payload, gsize payload_len, zmq_msg_t *kept)
{
  guint64 sequence_be = GUINT64_TO_BE (sequence);
  KvevSendResult result;
  gboolean sent;
  zmq_msg_t message;

  result = KVEV_FAULT (KVEV_FAULT_SEND) ? KVEV_SEND_FAILED : send_topic (xpub);
  if (result == KVEV_SEND_FAILED)
    {
      free (payload);
      return result;
    }
  /* Once the first frame is in, ZeroMQ holds the parts until the last
   * one, and a later refusal would need the same dead socket. */
  zmq_send (xpub->socket, &sequence_be, sizeof sequence_be, ZMQ_SNDMORE | ZMQ_DONTWAIT);
  zmq_msg_init_data (&message, payload, payload_len, free_payload, NULL);
  /* Taken before the send, which empties message: a copy of the
   * message, not of its bytes, which ZeroMQ frees once both are done
   * with it. */
  if (kept != NULL)
    {
      zmq_msg_init (kept);
      zmq_msg_copy (kept, &message);
    }
  sent = zmq_msg_send (&message, xpub->socket, ZMQ_DONTWAIT) >= 0;
  if (result == KVEV_SEND_REFUSED)
    set_lossy (xpub, FALSE);
  if (!sent)
    {
      zmq_msg_close (&message);
      if (kept != NULL)
        zmq_msg_close (kept);
      return KVEV_SEND_FAILED;
    }
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
count_subscription (KvevXpub *xpub, const guint8 *data, gsize size)
{
  KvevPeerCounts *counts = &xpub->counts;
  gboolean subscribe;
  gboolean matching;

  if (size == 0 || data[0] > 1)
    return;
  subscribe = data[0] == 1;
  matching = matches_topic (xpub->settings, data + 1, size - 1);
  g_mutex_lock (&xpub->peers_lock);
  if (subscribe)
    {
      kvev_counter_set (&counts->subscribe_messages, counts->subscribe_messages + 1);
      if (matching)
        {
          kvev_counter_set (&counts->subscriptions, counts->subscriptions + 1);
          xpub->new_subscriptions++;
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
  if (xpub->subscription_waiters > 0)
    g_cond_broadcast (&xpub->peers_cond);
  g_mutex_unlock (&xpub->peers_lock);
}

/* The monitor tells of a connection closed as it was accepted.  With an
 * address allow-list that is the accept filter refusing its address, and
 * libzmq passes on whatever errno was left: only the errors of a real
 * failure to accept are told apart, and not counted. */
static void
count_monitor_event (KvevXpub *xpub, const guint8 *data, gsize size)
{
  guint16 event;
  guint32 value;

  if (size != sizeof event + sizeof value)
    return;
  memcpy (&event, data, sizeof event);
  memcpy (&value, data + sizeof event, sizeof value);
  if (event != ZMQ_EVENT_ACCEPT_FAILED || xpub->settings->security->allowed_addresses == NULL)
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
      kvev_counter_add (&xpub->counts.refused_addresses, 1);
    }
}

/* Reads what waits on socket, at most TAKE_IN_BATCH messages; the first
 * frame of each goes to count. */
static void
drain (KvevXpub *xpub, void *socket, void (*count) (KvevXpub *, const guint8 *, gsize))
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
            count (xpub, zmq_msg_data (&frame), zmq_msg_size (&frame));
          first = FALSE;
          zmq_msg_close (&frame);
          if (zmq_getsockopt (socket, ZMQ_RCVMORE, &more, &more_len) != 0)
            more = 0;
        }
    }
}

static void
take_in (KvevXpub *xpub)
{
  guint i;

  xpub->last_take_in = g_get_monotonic_time ();
  drain (xpub, xpub->socket, count_subscription);
  for (i = 0; i < xpub->n_monitors; i++)
    drain (xpub, xpub->monitors[i], count_monitor_event);
}

static guint
take_new_subscriptions (KvevXpub *xpub)
{
  guint n = xpub->new_subscriptions;

  xpub->new_subscriptions = 0;
  return n;
}

guint
kvev_xpub_take_in (KvevXpub *xpub)
{
  if (g_get_monotonic_time () - xpub->last_take_in >= TAKE_IN_INTERVAL_US)
    take_in (xpub);
  return take_new_subscriptions (xpub);
}

guint
kvev_xpub_wait (KvevXpub *xpub, int bell_fd, gint64 end_time)
{
  /* The bell, the socket, and a monitor per socket of the net at most. */
  zmq_pollitem_t items[2 + KVEV_NET_N_SOCKETS] = {
    { NULL, bell_fd, ZMQ_POLLIN, 0 },
    { xpub->socket, 0, ZMQ_POLLIN, 0 },
  };
  int n_items = 2 + (int) xpub->n_monitors;
  long timeout_ms = -1;
  int i;

  if (end_time >= 0)
    {
      gint64 remaining_us = end_time - g_get_monotonic_time ();

      if (remaining_us <= 0)
        return take_new_subscriptions (xpub);
      /* Rounded up, so a wait never ends before end_time. */
      timeout_ms = (long) MIN ((remaining_us + 999) / 1000, G_MAXINT);
    }
  for (i = 2; i < n_items; i++)
    items[i] = (zmq_pollitem_t){ xpub->monitors[i - 2], 0, ZMQ_POLLIN, 0 };
  /* Anything but the bell is the peers'. */
  if (zmq_poll (items, n_items, timeout_ms) > 0)
    for (i = 1; i < n_items; i++)
      if (items[i].revents != 0)
        {
          take_in (xpub);
          break;
        }
  return take_new_subscriptions (xpub);
}

void
kvev_xpub_counts (const KvevXpub *xpub, KvevPeerCounts *counts)
{
  guint64 zap_addresses = 0, zap_keys = 0;

  counts->subscriptions = kvev_counter_get (&xpub->counts.subscriptions);
  counts->subscribe_messages = kvev_counter_get (&xpub->counts.subscribe_messages);
  counts->unsubscribe_messages = kvev_counter_get (&xpub->counts.unsubscribe_messages);
  kvev_net_zap_refusals (xpub->net, &zap_addresses, &zap_keys);
  counts->refused_addresses = kvev_counter_get (&xpub->counts.refused_addresses) + zap_addresses;
  counts->refused_keys = zap_keys;
}

gboolean
kvev_xpub_wait_subscriptions (KvevXpub *xpub, guint64 n, gint64 deadline)
{
  gboolean present;

  g_mutex_lock (&xpub->peers_lock);
  xpub->subscription_waiters++;
  while (xpub->counts.subscriptions < n)
    {
      if (deadline < 0)
        g_cond_wait (&xpub->peers_cond, &xpub->peers_lock);
      else if (!g_cond_wait_until (&xpub->peers_cond, &xpub->peers_lock, deadline))
        break;
    }
  present = xpub->counts.subscriptions >= n;
  xpub->subscription_waiters--;
  g_mutex_unlock (&xpub->peers_lock);
  return present;
}
