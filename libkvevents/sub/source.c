/* source.c: one publisher's sockets: the SUB of its live stream and the
 * DEALERs of its replay and snapshot endpoints, opened, watched by the
 * subscriber's epoll descriptor, made anew after a broken stream or a
 * request given up on, and read a bounded run at a time.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "internal.h"

#include "replay-client.h"
#include "snapshot-client.h"
#include "subscriber.h"
#include <base/endpoint-syntax.h>

#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <zmq.h>

/* The most frames a message of the protocol has (a replay reply with its
 * delimiter); a longer one is read whole and refused. */
#define MAX_PARTS 4

void
kvev_sub_watch (KvevSubscriber *subscriber, void *socket, gboolean watch)
{
  struct epoll_event event = { 0 };
  int fd;
  size_t size = sizeof fd;

  if (socket == NULL || zmq_getsockopt (socket, ZMQ_FD, &fd, &size) != 0)
    return;
  event.events = EPOLLIN;
  event.data.ptr = socket;
  if (watch)
    epoll_ctl (subscriber->epoll_fd, EPOLL_CTL_ADD, fd, &event);
  else
    epoll_ctl (subscriber->epoll_fd, EPOLL_CTL_DEL, fd, &event);
}

static void *
socket_new (KvevSubSource *source, int type, const char *endpoint, GError **error)
{
  KvevSubscriber *subscriber = source->subscriber;
  int zero = 0, ipv6 = kvev_endpoint_is_ipv6 (endpoint);
  void *socket;

  if (!kvev_connect_endpoint_is_valid (endpoint))
    {
      g_set_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE,
                   _ ("Cannot connect to %s: a tcp:// endpoint needs a PORT from 1 to 65535 "
                      "(and an IPv6 host its closing bracket)"),
                   endpoint);
      return NULL;
    }
  socket = zmq_socket (subscriber->context, type);
  if (socket == NULL)
    {
      g_set_error (error, KVEV_ERROR, KVEV_ERROR_TRANSPORT, _ ("Cannot create a %s socket: %s"),
                   type == ZMQ_SUB ? "SUB" : "DEALER", zmq_strerror (zmq_errno ()));
      return NULL;
    }
  zmq_setsockopt (socket, ZMQ_LINGER, &zero, sizeof zero);
  /* Without it a tcp://[v6 address] endpoint never connects, and ZeroMQ
   * says nothing. */
  zmq_setsockopt (socket, ZMQ_IPV6, &ipv6, sizeof ipv6);
  if (type == ZMQ_SUB)
    {
      int hwm = (int) subscriber->options[KVEV_SUBSCRIBER_OPTION_RCVHWM];

      zmq_setsockopt (socket, ZMQ_RCVHWM, &hwm, sizeof hwm);
      zmq_setsockopt (socket, ZMQ_SUBSCRIBE, source->topic, strlen (source->topic));
    }
  /* Like every option that shapes the handshake, the keys go before the
   * connection; the replay and snapshot sockets have the live one's
   * (kvevents(7), REPLAY). */
  if (subscriber->curve
      && (zmq_setsockopt (socket, ZMQ_CURVE_SERVERKEY, subscriber->curve_server_key, 32) != 0
          || zmq_setsockopt (socket, ZMQ_CURVE_PUBLICKEY, subscriber->curve_public_key, 32) != 0
          || zmq_setsockopt (socket, ZMQ_CURVE_SECRETKEY, subscriber->curve_secret_key, 32) != 0))
    {
      g_set_error (error, KVEV_ERROR, KVEV_ERROR_TRANSPORT, _ ("Cannot set the CURVE keys: %s"),
                   zmq_strerror (zmq_errno ()));
      zmq_close (socket);
      return NULL;
    }
  if (zmq_connect (socket, endpoint) != 0)
    {
      int failure = zmq_errno ();

      g_set_error (error, KVEV_ERROR,
                   failure == EINVAL || failure == EPROTONOSUPPORT || failure == ENOCOMPATPROTO
                       ? KVEV_ERROR_INVALID_VALUE
                       : KVEV_ERROR_TRANSPORT,
                   _ ("Cannot connect to %s: %s"), endpoint, zmq_strerror (failure));
      zmq_close (socket);
      return NULL;
    }
  kvev_sub_watch (subscriber, socket, TRUE);
  return socket;
}

static void
socket_close (KvevSubSource *source, void **socket)
{
  if (*socket == NULL)
    return;
  kvev_sub_watch (source->subscriber, *socket, FALSE);
  zmq_close (*socket);
  *socket = NULL;
}

gboolean
kvev_sub_source_open (KvevSubSource *source, GError **error)
{
  source->socket = socket_new (source, ZMQ_SUB, source->endpoint, error);
  if (source->socket == NULL)
    return FALSE;
  if (source->replay_endpoint != NULL
      && (source->replay_socket = socket_new (source, ZMQ_DEALER, source->replay_endpoint, error))
             == NULL)
    return FALSE;
  if (source->snapshot_endpoint != NULL
      && (source->snapshot_socket
          = socket_new (source, ZMQ_DEALER, source->snapshot_endpoint, error))
             == NULL)
    return FALSE;
  return TRUE;
}

void
kvev_sub_source_close (KvevSubSource *source)
{
  socket_close (source, &source->socket);
  socket_close (source, &source->replay_socket);
  socket_close (source, &source->snapshot_socket);
}

void
kvev_sub_source_reconnect (KvevSubSource *source)
{
  g_autoptr (GError) error = NULL;

  socket_close (source, &source->socket);
  source->counts[KVEV_SUBSCRIBER_STAT_RECONNECTS]++;
  source->socket = socket_new (source, ZMQ_SUB, source->endpoint, &error);
  if (source->socket == NULL)
    kvev_sub_notice (source, KVEV_NOTICE_RECONNECT, FALSE, 0, "%s", error->message);
  else
    kvev_sub_notice (source, KVEV_NOTICE_RECONNECT, FALSE, 0, _ ("connected to %s again"),
                     source->endpoint);
}

void
kvev_sub_source_reset_dealer (KvevSubSource *source, gboolean replay)
{
  g_autoptr (GError) error = NULL;
  void **socket = replay ? &source->replay_socket : &source->snapshot_socket;
  const char *endpoint = replay ? source->replay_endpoint : source->snapshot_endpoint;

  if (endpoint == NULL)
    return;
  socket_close (source, socket);
  *socket = socket_new (source, ZMQ_DEALER, endpoint, &error);
  if (*socket == NULL)
    kvev_sub_notice (source, KVEV_NOTICE_RECONNECT, FALSE, 0, _ ("no more requests to %s: %s"),
                     endpoint, error->message);
}

gboolean
kvev_sub_source_request_replay (KvevSubSource *source, guint64 start)
{
  guint8 start_be[8];

  if (source->replay_socket == NULL)
    return FALSE;
  kvev_replay_request_encode (start, start_be);
  /* A DEALER adds no delimiter of its own; the publisher's ROUTER then
   * sees [identity, "", start], as from a REQ. */
  return zmq_send (source->replay_socket, "", 0, ZMQ_SNDMORE | ZMQ_DONTWAIT) == 0
         && zmq_send (source->replay_socket, start_be, sizeof start_be, ZMQ_DONTWAIT)
                == sizeof start_be;
}

gboolean
kvev_sub_source_request_snapshot (KvevSubSource *source)
{
  gsize len = strlen (KVEV_SNAPSHOT_REQUEST);

  if (source->snapshot_socket == NULL)
    return FALSE;
  return zmq_send (source->snapshot_socket, "", 0, ZMQ_SNDMORE | ZMQ_DONTWAIT) == 0
         && zmq_send (source->snapshot_socket, KVEV_SNAPSHOT_REQUEST, len, ZMQ_DONTWAIT)
                == (int) len;
}

/* Receives one whole message without waiting into parts (at most
 * MAX_PARTS kept; the rest of a longer one is read and dropped, and
 * *n_parts says how many there were).  FALSE when none was waiting. */
static gboolean
receive (void *socket, zmq_msg_t parts[MAX_PARTS], guint *n_parts)
{
  gboolean more = TRUE;
  guint n = 0;

  while (more)
    {
      zmq_msg_t part;

      zmq_msg_init (&part);
      if (zmq_msg_recv (&part, socket, n == 0 ? ZMQ_DONTWAIT : 0) < 0)
        {
          zmq_msg_close (&part);
          /* The parts of a message arrive together: only the first can be
           * missing. */
          if (n == 0)
            return FALSE;
          break;
        }
      more = zmq_msg_more (&part);
      if (n < MAX_PARTS)
        parts[n] = part;
      else
        zmq_msg_close (&part);
      n++;
    }
  *n_parts = n;
  return TRUE;
}

static void
close_parts (zmq_msg_t *parts, guint n_parts)
{
  guint i;

  for (i = 0; i < MIN (n_parts, MAX_PARTS); i++)
    zmq_msg_close (&parts[i]);
}

static gboolean
has_input (void *socket)
{
  int events = 0;
  size_t size = sizeof events;

  return socket != NULL && zmq_getsockopt (socket, ZMQ_EVENTS, &events, &size) == 0
         && (events & ZMQ_POLLIN);
}

gboolean
kvev_sub_source_read (KvevSubSource *source, gboolean *took)
{
  zmq_msg_t parts[MAX_PARTS];
  guint n_parts, taken;

  /* Each one may be replaced on the way (a reconnect, a dealer made
   * anew), so it is looked up again every time. */
  for (taken = 0; taken < KVEV_SUB_BATCH && source->socket != NULL
                  && receive (source->socket, parts, &n_parts);
       taken++)
    {
      *took = TRUE;
      source->last_arrival = g_get_monotonic_time ();
      /* kvev_sub_take_live takes the parts it keeps. */
      kvev_sub_take_live (source, parts, n_parts);
      close_parts (parts, n_parts);
    }
  for (taken = 0; taken < KVEV_SUB_BATCH && source->replay_socket != NULL
                  && receive (source->replay_socket, parts, &n_parts);
       taken++)
    {
      *took = TRUE;
      kvev_sub_take_replay (source, parts, n_parts);
      close_parts (parts, n_parts);
    }
  for (taken = 0; taken < KVEV_SUB_BATCH && source->snapshot_socket != NULL
                  && receive (source->snapshot_socket, parts, &n_parts);
       taken++)
    {
      *took = TRUE;
      kvev_sub_take_snapshot (source, parts, n_parts);
      close_parts (parts, n_parts);
    }
  return has_input (source->socket) || has_input (source->replay_socket)
         || has_input (source->snapshot_socket);
}
