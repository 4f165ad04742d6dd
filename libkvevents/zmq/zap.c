/* zap.c: a ZAP handler (ZeroMQ RFC 27) answering for a publisher's socket.
 * It admits a peer when its address is in the allow-list (if any) and,
 * under CURVE, its public key is an allowed client's (if a list is given).
 * SPDX-License-Identifier: Apache-2.0
 */
#include "zap.h"

#include "counter.h"
#include "fault.h"

#include <errno.h>
#include <string.h>
#include <zmq.h>

#define ZAP_ENDPOINT "inproc://zeromq.zap.01"
/* version, request id, domain, address, routing id, mechanism, credentials */
#define ZAP_REQUEST_FRAMES 7

struct _KvevZap
{
  void *socket;
  GThread *thread;
  const KvevSecurity *security;
  gint stopping;
  guint64 refused_addresses;
  guint64 refused_keys;
};

typedef struct
{
  zmq_msg_t frames[ZAP_REQUEST_FRAMES];
  guint n_frames;
} ZapRequest;

static gboolean
frame_equals (zmq_msg_t *frame, const char *text)
{
  return zmq_msg_size (frame) == strlen (text)
         && memcmp (zmq_msg_data (frame), text, zmq_msg_size (frame)) == 0;
}

static char *
frame_dup (zmq_msg_t *frame)
{
  return g_strndup (zmq_msg_data (frame), zmq_msg_size (frame));
}

static void
request_clear (ZapRequest *request)
{
  guint i;

  for (i = 0; i < request->n_frames; i++)
    zmq_msg_close (&request->frames[i]);
  request->n_frames = 0;
}

/* How long the handler pauses after a failed receive before it tries
 * again: a persistent error must not spin a CPU. */
#define RETRY_PAUSE_US (100 * 1000)

static int
receive_frame (void *socket, zmq_msg_t *frame)
{
  if (KVEV_FAULT (KVEV_FAULT_ZAP_RECEIVE))
    return ENOTSUP;
  return zmq_msg_recv (frame, socket, 0) < 0 ? zmq_errno () : 0;
}

/* Receives one whole request; extra frames are read and ignored.  FALSE
 * only when the handler must stop: the context is terminating, or
 * kvev_zap_stop() was called.  With no handler bound libzmq admits every
 * peer, so no other error may end the loop.  While receiving fails, the
 * handshakes waiting for an answer get none, so their peers stay out, and
 * the handler tries again after a pause.  A request cut short by an error
 * is dropped; its rest, read as a request, is refused by admit().  The
 * thread blocks signals, but a stray EINTR is still no reason to leave. */
static gboolean
receive_request (KvevZap *zap, ZapRequest *request)
{
  gboolean failing = FALSE;
  int more = 1;
  size_t more_len = sizeof more;

  request->n_frames = 0;
  while (more)
    {
      zmq_msg_t frame;
      int error;

      zmq_msg_init (&frame);
      error = receive_frame (zap->socket, &frame);
      if (error != 0)
        {
          zmq_msg_close (&frame);
          if (error == EINTR)
            continue;
          request_clear (request);
          if (error == ETERM || g_atomic_int_get (&zap->stopping))
            return FALSE;
          if (!failing)
            g_warning (_ ("The ZeroMQ authentication handler cannot receive: %s; "
                          "no new subscriber is admitted until it can"),
                       zmq_strerror (error));
          failing = TRUE;
          g_usleep (RETRY_PAUSE_US);
          continue;
        }
      if (request->n_frames < ZAP_REQUEST_FRAMES)
        request->frames[request->n_frames++] = frame;
      else
        zmq_msg_close (&frame);
      if (zmq_getsockopt (zap->socket, ZMQ_RCVMORE, &more, &more_len) != 0)
        more = 0;
    }
  return TRUE;
}

static gboolean
admit (KvevZap *zap, ZapRequest *request)
{
  const KvevSecurity *security = zap->security;
  g_autofree char *address = NULL;

  if (request->n_frames < 6 || !frame_equals (&request->frames[0], "1.0"))
    return FALSE;
  address = frame_dup (&request->frames[3]);
  if (!kvev_security_address_allowed (security, address))
    {
      kvev_counter_add (&zap->refused_addresses, 1);
      return FALSE;
    }
  if (security->allowed_clients != NULL)
    {
      g_autoptr (GBytes) key = NULL;

      if (frame_equals (&request->frames[5], "CURVE") && request->n_frames >= 7
          && zmq_msg_size (&request->frames[6]) == KVEV_KEY_BYTES)
        key = g_bytes_new (zmq_msg_data (&request->frames[6]), KVEV_KEY_BYTES);
      if (key == NULL || !g_hash_table_contains (security->allowed_clients, key))
        {
          kvev_counter_add (&zap->refused_keys, 1);
          return FALSE;
        }
    }
  return TRUE;
}

static void
send_frame (void *socket, const void *data, size_t size, int flags)
{
  while (zmq_send (socket, data, size, flags) < 0 && zmq_errno () == EINTR)
    ;
}

static void
send_reply (void *socket, ZapRequest *request, gboolean admitted)
{
  const char *status = admitted ? "200" : "400";
  const char *text = admitted ? "OK" : "Not allowed";
  zmq_msg_t *request_id = request->n_frames > 1 ? &request->frames[1] : NULL;

  send_frame (socket, "1.0", 3, ZMQ_SNDMORE);
  send_frame (socket, request_id ? zmq_msg_data (request_id) : "",
              request_id ? zmq_msg_size (request_id) : 0, ZMQ_SNDMORE);
  send_frame (socket, status, 3, ZMQ_SNDMORE);
  send_frame (socket, text, strlen (text), ZMQ_SNDMORE);
  send_frame (socket, "", 0, ZMQ_SNDMORE); /* user id */
  send_frame (socket, "", 0, 0);           /* metadata */
}

static gpointer
zap_main (gpointer data)
{
  KvevZap *zap = data;
  ZapRequest request;

  while (receive_request (zap, &request))
    {
      send_reply (zap->socket, &request, admit (zap, &request));
      request_clear (&request);
    }
  zmq_close (zap->socket);
  return NULL;
}

KvevZap *
kvev_zap_start (void *context, const KvevSecurity *security, GError **error)
{
  g_autofree KvevZap *zap = g_new0 (KvevZap, 1);
  GError *thread_error = NULL;
  int linger = 0;

  zap->security = security;
  zap->socket = zmq_socket (context, ZMQ_REP);
  if (zap->socket == NULL || zmq_bind (zap->socket, ZAP_ENDPOINT) != 0)
    {
      g_set_error (error, KVEV_ERROR, KVEV_ERROR_TRANSPORT,
                   _ ("Cannot start the ZeroMQ authentication handler: %s"),
                   zmq_strerror (zmq_errno ()));
      if (zap->socket != NULL)
        zmq_close (zap->socket);
      return NULL;
    }
  zmq_setsockopt (zap->socket, ZMQ_LINGER, &linger, sizeof linger);
  zap->thread = kvev_thread_try_new ("kvev-zap", zap_main, zap, &thread_error);
  if (zap->thread == NULL)
    {
      g_set_error (error, KVEV_ERROR, KVEV_ERROR_TRANSPORT,
                   _ ("Cannot start the ZeroMQ authentication handler: %s"), thread_error->message);
      g_error_free (thread_error);
      zmq_close (zap->socket);
      return NULL;
    }
  return g_steal_pointer (&zap);
}

void
kvev_zap_stop (KvevZap *zap)
{
  if (zap != NULL)
    g_atomic_int_set (&zap->stopping, 1);
}

void
kvev_zap_join (KvevZap *zap)
{
  if (zap == NULL)
    return;
  g_thread_join (zap->thread);
  g_free (zap);
}

void
kvev_zap_refusals (const KvevZap *zap, guint64 *addresses, guint64 *keys)
{
  *addresses = zap != NULL ? kvev_counter_get (&zap->refused_addresses) : 0;
  *keys = zap != NULL ? kvev_counter_get (&zap->refused_keys) : 0;
}
