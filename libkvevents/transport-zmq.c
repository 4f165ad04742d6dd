/* transport-zmq.c: the ZeroMQ PUB socket and the worker thread that owns
 * it.  Only the worker touches the socket; producers only ever touch the
 * queue.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "publisher-private.h"
#include "encode.h"
#include "endpoint.h"
#include "fault.h"
#include "zap.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

struct _KvevTransport
{
  KvevPublisher *publisher;
  void *context;
  void *socket;
  GThread *worker;
  KvevEncoder *encoder;
  KvevSecurity *security;
  KvevZap *zap;
  guint max_batch;
  gsize message_limit; /* bytes of payload; see kvev_config_message_limit() */
  guint64 next_sequence;
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

/* libzmq's default lets a connection that never completes its handshake
 * hold a descriptor for 30 s; a CURVE handshake over a slow link takes
 * two round trips, far less than this. */
#define HANDSHAKE_IVL_MS 5000

static void
free_payload (void *data, void *hint)
{
  free (data);
}

/* Sends one message: topic, big-endian sequence, payload.  The payload
 * buffer goes to ZeroMQ without a copy.  Returns FALSE if ZeroMQ refused
 * the first frame; a PUB socket drops rather than blocks, so that only
 * happens when the socket or context is gone. */
static gboolean
send_message (KvevTransport *transport, guint64 sequence, char *payload,
              gsize payload_len)
{
  const KvevConfig *config = transport->publisher->config;
  guint64 sequence_be = GUINT64_TO_BE (sequence);
  zmq_msg_t message;

  if (KVEV_FAULT (KVEV_FAULT_SEND)
      || zmq_send (transport->socket, config->topic, strlen (config->topic),
                   ZMQ_SNDMORE | ZMQ_DONTWAIT)
             < 0)
    {
      free (payload);
      return FALSE;
    }
  /* Once the first frame is in, ZeroMQ holds the parts until the last
   * one, and a later refusal would need the same dead socket. */
  zmq_send (transport->socket, &sequence_be, sizeof sequence_be,
            ZMQ_SNDMORE | ZMQ_DONTWAIT);
  zmq_msg_init_data (&message, payload, payload_len, free_payload, NULL);
  if (zmq_msg_send (&message, transport->socket, ZMQ_DONTWAIT) < 0)
    {
      zmq_msg_close (&message);
      return FALSE;
    }
  return TRUE;
}

/* Encodes and sends events[0..n) as one message, consuming one sequence
 * number whether or not it goes out. */
static void
publish_batch (KvevTransport *transport, const KvevEvent *events, guint n)
{
  KvevPublisher *publisher = transport->publisher;
  guint64 sequence = transport->next_sequence++;
  gint64 timestamp_ms = KVEV_NOW_MS ();
  gsize payload_len;
  char *payload;

  payload = kvev_encode_batch (transport->encoder, timestamp_ms, events, n, &payload_len);
  if (send_message (transport, sequence, payload, payload_len))
    {
      kvev_counter_set_release (&publisher->published_events, publisher->published_events + n);
      kvev_counter_set (&publisher->published_batches, publisher->published_batches + 1);
    }
  else
    {
      kvev_counter_set (&publisher->send_failures, publisher->send_failures + 1);
      kvev_counter_set_release (&publisher->send_failed_events,
                                publisher->send_failed_events + n);
    }
  kvev_counter_set (&publisher->last_sequence, sequence);
}

/* Sends events[0..n) in messages of at most max_batch events, each
 * within the message limit: ZeroMQ holds up to send_hwm messages for a
 * subscriber that stops reading, and only their size bounds that memory.
 * An event over the limit alone still goes, in a message of its own. */
static void
publish_events (KvevTransport *transport, const KvevEvent *events, guint n)
{
  gsize overhead = kvev_encode_batch_bound (transport->encoder);

  while (n > 0)
    {
      guint batch = 1;
      gsize bytes = overhead + kvev_encode_event_bound (transport->encoder, &events[0]);

      while (batch < n && batch < transport->max_batch)
        {
          bytes += kvev_encode_event_bound (transport->encoder, &events[batch]);
          if (bytes > transport->message_limit)
            break;
          batch++;
        }
      publish_batch (transport, events, batch);
      events += batch;
      n -= batch;
    }
}

/* Sends the events of the popped calls in order, keeping every event whose
 * strings are not UTF-8 in a message of its own: strict readers reject a
 * whole payload over one bin string, and should lose only that event. */
static void
publish_calls (KvevTransport *transport, KvevCall *const *calls, guint n_calls,
               KvevEvent *events)
{
  guint n = 0, i, j, m;

  for (i = 0; i < n_calls; i++)
    {
      if (kvev_call_is_utf8 (calls[i]))
        {
          n += kvev_call_events (calls[i], calls[i]->dropped, events + n);
          continue;
        }
      publish_events (transport, events, n);
      n = 0;
      m = kvev_call_events (calls[i], calls[i]->dropped, events);
      for (j = 0; j < m; j++)
        publish_batch (transport, events + j, 1);
    }
  publish_events (transport, events, n);
}

static gpointer
worker_main (gpointer data)
{
  KvevTransport *transport = data;
  KvevPublisher *publisher = transport->publisher;
  g_autofree KvevCall **calls = g_new (KvevCall *, transport->max_batch);
  /* A pop stays within max_batch events, except for a first call that
   * alone has more. */
  g_autofree KvevEvent *events
      = g_new (KvevEvent, MAX (transport->max_batch, KVEV_MAX_EVENTS_PER_CALL));
  guint64 reserved_gaps;
  guint n, i;

  while ((n = kvev_queue_pop (publisher->queue, calls, transport->max_batch,
                              publisher->config->batch_wait_us, &reserved_gaps))
         > 0)
    {
      const KvevCall *last = calls[n - 1];

      /* Events the full queue dropped were older than these: the gap goes
       * right before them, where a subscriber can see it. */
      transport->next_sequence += reserved_gaps;
      publish_calls (transport, calls, n, events);
      kvev_publisher_retire (publisher,
                             last->first_event_id + last->n_events - 1);
      for (i = 0; i < n; i++)
        g_free (calls[i]);
    }
  return NULL;
}

static void
close_socket (KvevTransport *transport, int linger_ms)
{
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
  kvev_security_free (transport->security);
  kvev_encoder_free (transport->encoder);
  g_free (transport);
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
filter_accepted_addresses (KvevTransport *transport, gboolean ipv6, GError **error)
{
  const GArray *ranges = transport->security->allowed_addresses;
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
      if (!set_string_option (transport->socket, ZMQ_TCP_ACCEPT_FILTER, filter,
                              "ZMQ_TCP_ACCEPT_FILTER", error))
        return FALSE;
      n_filters++;
    }
  if (n_filters == 0)
    return set_string_option (transport->socket, ZMQ_TCP_ACCEPT_FILTER,
                              ipv6 ? "::/128" : "0.0.0.0/32", "ZMQ_TCP_ACCEPT_FILTER",
                              error);
  return TRUE;
}

/* CURVE and the ZAP handler, as the security flags ask; the plain PUB
 * wire when none is set. */
static gboolean
secure_socket (KvevTransport *transport, gboolean ipv6, GError **error)
{
  const KvevConfig *config = transport->publisher->config;
  KvevSecurity *security;

  security = transport->security = kvev_security_load (config, error);
  if (security == NULL)
    return FALSE;
  if (!filter_accepted_addresses (transport, ipv6, error))
    return FALSE;
  if (security->allowed_clients != NULL || security->allowed_addresses != NULL)
    {
      transport->zap = kvev_zap_start (transport->context, security, error);
      if (transport->zap == NULL)
        return FALSE;
      /* Without a domain ZeroMQ skips ZAP for unauthenticated peers. */
      if (!set_string_option (transport->socket, ZMQ_ZAP_DOMAIN, "kvevents", "ZMQ_ZAP_DOMAIN",
                              error))
        return FALSE;
    }
  if (security->secret_key[0] != '\0')
    {
      if (!set_int_option (transport->socket, ZMQ_CURVE_SERVER, 1, "ZMQ_CURVE_SERVER", error))
        return FALSE;
      if (!set_option (transport->socket, ZMQ_CURVE_SECRETKEY, security->secret_key,
                       KVEV_Z85_KEY_LEN, "ZMQ_CURVE_SECRETKEY", error))
        return FALSE;
    }
  return TRUE;
}

KvevTransport *
kvev_transport_start (KvevPublisher *publisher, char **endpoint,
                      GError **error)
{
  const KvevConfig *config = publisher->config;
  KvevTransport *transport = g_new0 (KvevTransport, 1);
  char bound[1024];
  size_t bound_len = sizeof bound;
  GError *thread_error = NULL;
  gboolean ipv6;

  transport->publisher = publisher;
  transport->max_batch = config->max_batch_events;
  transport->message_limit = kvev_config_message_limit (config);
  transport->context = zmq_ctx_new ();
  if (transport->context == NULL)
    {
      g_set_error (error, KVEV_ERROR, KVEV_ERROR_TRANSPORT,
                   _("Cannot create a ZeroMQ context: %s"),
                   zmq_strerror (zmq_errno ()));
      goto fail;
    }
  transport->socket = KVEV_FAULT (KVEV_FAULT_SOCKET)
                          ? (errno = EMFILE, NULL)
                          : zmq_socket (transport->context, ZMQ_PUB);
  if (transport->socket == NULL)
    {
      g_set_error (error, KVEV_ERROR, KVEV_ERROR_TRANSPORT,
                   _("Cannot create a ZeroMQ PUB socket: %s"),
                   zmq_strerror (zmq_errno ()));
      goto fail;
    }
  if (!set_int_option (transport->socket, ZMQ_SNDHWM,
                       (int) MIN (config->send_hwm, (guint32) G_MAXINT),
                       "ZMQ_SNDHWM", error)
      || !set_int_option (transport->socket, ZMQ_LINGER, 0, "ZMQ_LINGER", error)
      || !set_int64_option (transport->socket, ZMQ_MAXMSGSIZE,
                            (gint64) MAX (INBOUND_FRAME_FLOOR, strlen (config->topic) + 1),
                            "ZMQ_MAXMSGSIZE", error)
      || !set_int_option (transport->socket, ZMQ_HANDSHAKE_IVL, HANDSHAKE_IVL_MS,
                          "ZMQ_HANDSHAKE_IVL", error))
    goto fail;
  /* Only for an IPv6 endpoint, which cannot bind without it.  On every
   * socket it would also bind IPv4 addresses as IPv6 ones, and
   * kvev_publisher_get_endpoint() would report tcp://[::ffff:127.0.0.1]:N,
   * which subscribers without ZMQ_IPV6 cannot connect to. */
  ipv6 = kvev_endpoint_is_ipv6 (config->bind_endpoint);
  if (ipv6 && !set_int_option (transport->socket, ZMQ_IPV6, 1, "ZMQ_IPV6", error))
    goto fail;
  if (!secure_socket (transport, ipv6, error))
    goto fail;
  if (!kvev_endpoint_prepare_bind (config->bind_endpoint, error))
    goto fail;
  if (zmq_bind (transport->socket, config->bind_endpoint) != 0)
    {
      g_set_error (error, KVEV_ERROR, KVEV_ERROR_TRANSPORT,
                   _("Cannot bind kv_events_bind_endpoint \"%s\": %s"),
                   config->bind_endpoint, zmq_strerror (zmq_errno ()));
      goto fail;
    }
  /* Once listening, not before: a bind that fails exposes nothing. */
  kvev_security_warn_if_exposed (config, transport->security);
  if (zmq_getsockopt (transport->socket, ZMQ_LAST_ENDPOINT, bound, &bound_len) != 0)
    {
      g_set_error (error, KVEV_ERROR, KVEV_ERROR_TRANSPORT,
                   _("Cannot read the bound endpoint: %s"),
                   zmq_strerror (zmq_errno ()));
      goto fail;
    }

  transport->encoder = kvev_encoder_new (config);
  if (KVEV_FAULT (KVEV_FAULT_THREAD))
    g_set_error_literal (&thread_error, G_THREAD_ERROR, G_THREAD_ERROR_AGAIN,
                         "Resource temporarily unavailable");
  else
    transport->worker = kvev_thread_try_new ("kvev-publisher", worker_main, transport,
                                             &thread_error);
  if (transport->worker == NULL)
    {
      g_set_error (error, KVEV_ERROR, KVEV_ERROR_TRANSPORT,
                   _("Cannot start the publisher thread: %s"), thread_error->message);
      g_error_free (thread_error);
      goto fail;
    }
  *endpoint = g_strndup (bound, bound_len);
  return transport;

fail:
  close_socket (transport, 0);
  return NULL;
}

void
kvev_transport_stop (KvevTransport *transport, gint64 deadline)
{
  gint64 remaining_ms;

  g_thread_join (transport->worker);
  /* What ZeroMQ still holds may reach connected subscribers until the
   * close deadline, and no longer: the free must return on time. */
  remaining_ms = (deadline - g_get_monotonic_time ()) / 1000;
  close_socket (transport, (int) CLAMP (remaining_ms, 0, G_MAXINT));
}
