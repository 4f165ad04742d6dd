/* service.c: a ROUTER answered by a thread of its own; see service.h.
 *
 * The thread waits on the socket and on a PAIR that kvev_service_stop()
 * writes to, so that a stop never waits for a peer, and reads each
 * request whole before it answers, so that a malformed one is dropped
 * whole too.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "service.h"

#include <errno.h>

struct _KvevService
{
  void *socket;
  void *stop_in;  /* the thread's end */
  void *stop_out; /* kvev_service_stop()'s end */
  GThread *thread;
  guint max_frames;
  KvevServeFunc serve;
  KvevPumpFunc pump; /* or NULL */
  gpointer data;
};

/* Requests read at most between two calls of the pump: a peer that
 * floods requests does not hold up the replies. */
#define REQUESTS_PER_WAKE 64

/* Reads one request, all of its frames, and hands it over; FALSE when
 * there was none. */
static gboolean
serve_one (KvevService *service)
{
  g_autofree zmq_msg_t *frames = g_new (zmq_msg_t, service->max_frames);
  zmq_msg_t extra;
  guint n = 0, i;
  int more = 1;
  size_t more_len = sizeof more;

  while (more)
    {
      zmq_msg_t *frame = n < service->max_frames ? &frames[n] : &extra;

      zmq_msg_init (frame);
      if (zmq_msg_recv (frame, service->socket, ZMQ_DONTWAIT) < 0)
        {
          zmq_msg_close (frame);
          break;
        }
      if (frame == &extra)
        zmq_msg_close (&extra);
      n++;
      if (zmq_getsockopt (service->socket, ZMQ_RCVMORE, &more, &more_len) != 0)
        more = 0;
    }
  if (n > 0)
    service->serve (service, frames, n, service->data);
  for (i = 0; i < MIN (n, service->max_frames); i++)
    zmq_msg_close (&frames[i]);
  return n > 0;
}

static gpointer
service_main (gpointer data)
{
  KvevService *service = data;
  long timeout = -1;

  for (;;)
    {
      zmq_pollitem_t items[] = {
        { service->socket, 0, ZMQ_POLLIN, 0 },
        { service->stop_in, 0, ZMQ_POLLIN, 0 },
      };
      guint n = 0;

      if (zmq_poll (items, 2, timeout) < 0)
        {
          if (zmq_errno () == EINTR)
            continue;
          break;
        }
      if (items[1].revents != 0)
        break;
      if (items[0].revents != 0)
        while (n < REQUESTS_PER_WAKE && serve_one (service))
          n++;
      if (service->pump != NULL)
        timeout = service->pump (service, service->data);
    }
  /* The socket is the caller's: the join publishes what this thread did
   * with it, so that the caller's thread may close it. */
  zmq_close (service->stop_in);
  return NULL;
}

gboolean
kvev_service_start (KvevService **out, const char *name, void *context, void *socket,
                    guint max_frames, KvevServeFunc serve, gpointer data, GError **error)
{
  return kvev_service_start_pumped (out, name, context, socket, max_frames, serve, NULL, data,
                                    error);
}

gboolean
kvev_service_start_pumped (KvevService **out, const char *name, void *context, void *socket,
                           guint max_frames, KvevServeFunc serve, KvevPumpFunc pump, gpointer data,
                           GError **error)
{
  KvevService *service = g_new0 (KvevService, 1);
  g_autofree char *stop_endpoint = g_strdup_printf ("inproc://%s-stop", name);
  int linger = 0;

  g_assert (max_frames > 0);
  service->max_frames = max_frames;
  service->serve = serve;
  service->pump = pump;
  service->data = data;
  service->stop_in = zmq_socket (context, ZMQ_PAIR);
  service->stop_out = zmq_socket (context, ZMQ_PAIR);
  if (service->stop_in == NULL || service->stop_out == NULL
      || zmq_bind (service->stop_in, stop_endpoint) != 0
      || zmq_connect (service->stop_out, stop_endpoint) != 0)
    {
      g_set_error_literal (error, KVEV_ERROR, KVEV_ERROR_TRANSPORT, zmq_strerror (zmq_errno ()));
      goto fail;
    }
  zmq_setsockopt (service->stop_in, ZMQ_LINGER, &linger, sizeof linger);
  zmq_setsockopt (service->stop_out, ZMQ_LINGER, &linger, sizeof linger);
  service->socket = socket;
  /* The thread may serve a request at once, and its callback finds the
   * service through data: creating the thread publishes this write. */
  *out = service;
  service->thread = kvev_thread_try_new (name, service_main, service, error);
  if (service->thread == NULL)
    goto fail;
  return TRUE;

fail:
  *out = NULL;
  if (service->stop_in != NULL)
    zmq_close (service->stop_in);
  if (service->stop_out != NULL)
    zmq_close (service->stop_out);
  g_free (service);
  return FALSE;
}

void
kvev_service_stop (KvevService *service)
{
  if (service == NULL)
    return;
  zmq_send (service->stop_out, "", 0, 0);
  g_thread_join (service->thread);
  zmq_close (service->stop_out);
  g_free (service);
}

void *
kvev_service_socket (KvevService *service)
{
  return service->socket;
}

gboolean
kvev_service_wait (KvevService *service, long ms)
{
  zmq_pollitem_t stop = { service->stop_in, 0, ZMQ_POLLIN, 0 };

  return zmq_poll (&stop, 1, ms) == 0;
}

int
kvev_service_offer_identity (KvevService *service, const void *identity, gsize len)
{
  int error;

  if (zmq_send (service->socket, identity, len, ZMQ_SNDMORE | ZMQ_DONTWAIT) >= 0)
    return 0;
  error = zmq_errno ();
  /* Nothing was queued either way: a signal only delays the next try. */
  if (error == EAGAIN || error == EINTR)
    return EAGAIN;
  return error != 0 ? error : EHOSTUNREACH;
}
