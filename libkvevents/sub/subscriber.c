/* subscriber.c: the public subscriber (kvevents-subscriber.h): options,
 * keys, publishers, callbacks, and dispatch on the caller's thread, with
 * the descriptor and the GSource that tell a main loop when to call it.
 *
 * The descriptor is an epoll set of every socket's ZMQ_FD, an eventfd
 * written when a dispatch left messages behind (ZMQ_FD signals a change,
 * not a level, so a bounded run must say itself that more is waiting),
 * and a timerfd set to the next timer.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "internal.h"

#include "subscriber.h"
#include <base/secret.h>

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#ifdef HAVE_ZMQ
#include "config/security.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <zmq.h>
#endif

static const gint64 option_defaults[] = {
  [KVEV_SUBSCRIBER_OPTION_HEARTBEAT_MS] = 0,
  [KVEV_SUBSCRIBER_OPTION_REPLAY_TIMEOUT_MS] = 5000,
  [KVEV_SUBSCRIBER_OPTION_SNAPSHOT_TIMEOUT_MS] = 30000,
  [KVEV_SUBSCRIBER_OPTION_HOLD_MAX_MESSAGES] = 100000,
  [KVEV_SUBSCRIBER_OPTION_HOLD_MAX_BYTES] = G_GINT64_CONSTANT (256) * 1024 * 1024,
  [KVEV_SUBSCRIBER_OPTION_RCVHWM] = 0,
  [KVEV_SUBSCRIBER_OPTION_SNAPSHOT_MAX_BYTES] = G_GINT64_CONSTANT (1024) * 1024 * 1024,
};

#ifndef HAVE_ZMQ
static void
no_transport (GError **error)
{
  g_set_error (error, KVEV_ERROR, KVEV_ERROR_TRANSPORT,
               _ ("This libkvevents was built without ZeroMQ and cannot subscribe"));
}
#endif

void
kvev_sub_notice (KvevSubSource *source, KvevSubscriberNoticeCode code, gboolean has_sequence,
                 guint64 sequence, const char *format, ...)
{
  KvevSubscriber *subscriber = source->subscriber;
  KvevSubscriberNotice notice = { 0 };
  g_autofree char *text = NULL;
  va_list args;

  if (subscriber->notice_func == NULL)
    return;
  va_start (args, format);
  text = g_strdup_vprintf (format, args);
  va_end (args);
  notice.publisher_index = source->index;
  notice.endpoint = source->endpoint;
  notice.code = code;
  notice.has_sequence = has_sequence;
  notice.sequence = sequence;
  notice.message = text;
  subscriber->notice_func (subscriber, &notice, subscriber->notice_data);
}

void
kvev_sub_set_state (KvevSubSource *source, KvevSubscriberState state, KvevSubscriberReason reason,
                    guint64 lost, const char *format, ...)
{
  KvevSubscriber *subscriber = source->subscriber;
  KvevSubscriberStatus status = { 0 };
  g_autofree char *text = NULL;
  va_list args;

  /* A loss is told each time; a state only when it changes. */
  if (state == source->state && lost == 0)
    return;
  source->state = state;
  if (subscriber->status_func == NULL)
    return;
  va_start (args, format);
  text = g_strdup_vprintf (format, args);
  va_end (args);
  status.publisher_index = source->index;
  status.endpoint = source->endpoint;
  status.state = state;
  status.reason = reason;
  status.lost_messages = lost;
  status.message = text;
  subscriber->status_func (subscriber, &status, subscriber->status_data);
}

KvevSubscriber *
kvev_subscriber_new (GError **error)
{
  g_autoptr (KvevSubscriber) subscriber = g_new0 (KvevSubscriber, 1);

  g_return_val_if_fail (error == NULL || *error == NULL, NULL);
  subscriber->sources = g_ptr_array_new ();
  subscriber->backends = g_ptr_array_new ();
  subscriber->epoll_fd = subscriber->wake_fd = subscriber->timer_fd = -1;
  subscriber->test_drop_source = -1;
  memcpy (subscriber->options, option_defaults, sizeof subscriber->options);
#ifdef HAVE_ZMQ
  subscriber->context = zmq_ctx_new ();
  if (subscriber->context == NULL)
    {
      g_set_error (error, KVEV_ERROR, KVEV_ERROR_TRANSPORT,
                   _ ("Cannot create a ZeroMQ context: %s"), zmq_strerror (zmq_errno ()));
      return NULL;
    }
  subscriber->epoll_fd = epoll_create1 (EPOLL_CLOEXEC);
  subscriber->wake_fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
  subscriber->timer_fd = timerfd_create (CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
  if (subscriber->epoll_fd < 0 || subscriber->wake_fd < 0 || subscriber->timer_fd < 0)
    {
      g_set_error (error, KVEV_ERROR, KVEV_ERROR_TRANSPORT,
                   _ ("Cannot create the subscriber's descriptors: %s"), g_strerror (errno));
      return NULL;
    }
  {
    struct epoll_event event = { .events = EPOLLIN };

    epoll_ctl (subscriber->epoll_fd, EPOLL_CTL_ADD, subscriber->wake_fd, &event);
    epoll_ctl (subscriber->epoll_fd, EPOLL_CTL_ADD, subscriber->timer_fd, &event);
  }
#endif
  return g_steal_pointer (&subscriber);
}

static void
source_free (KvevSubSource *source)
{
#ifdef HAVE_ZMQ
  kvev_sub_source_close (source);
  kvev_sub_source_clear_state (source);
#endif
  g_free (source->endpoint);
  g_free (source->replay_endpoint);
  g_free (source->snapshot_endpoint);
  g_free (source->topic);
  g_free (source);
}

static void
backend_free (KvevSubBackend *backend)
{
  g_byte_array_unref (backend->backend_id);
  g_free (backend);
}

static void
set_func (gpointer *func_slot, gpointer func, gpointer *data_slot, gpointer data,
          GDestroyNotify *destroy_slot, GDestroyNotify destroy)
{
  GDestroyNotify old_destroy = *destroy_slot;
  gpointer old_data = *data_slot;

  *func_slot = func;
  *data_slot = data;
  *destroy_slot = destroy;
  if (old_destroy != NULL)
    old_destroy (old_data);
}

void
kvev_subscriber_free (KvevSubscriber *subscriber)
{
  guint i;

  if (subscriber == NULL)
    return;
  for (i = 0; i < subscriber->sources->len; i++)
    source_free (g_ptr_array_index (subscriber->sources, i));
  g_ptr_array_unref (subscriber->sources);
  for (i = 0; i < subscriber->backends->len; i++)
    backend_free (g_ptr_array_index (subscriber->backends, i));
  g_ptr_array_unref (subscriber->backends);
#ifdef HAVE_ZMQ
  if (subscriber->context != NULL)
    zmq_ctx_term (subscriber->context);
#endif
  if (subscriber->epoll_fd >= 0)
    close (subscriber->epoll_fd);
  if (subscriber->wake_fd >= 0)
    close (subscriber->wake_fd);
  if (subscriber->timer_fd >= 0)
    close (subscriber->timer_fd);
  kvev_secret_wipe (subscriber->curve_secret_key, sizeof subscriber->curve_secret_key);
  set_func ((gpointer *) &subscriber->event_func, NULL, &subscriber->event_data, NULL,
            &subscriber->event_destroy, NULL);
  set_func ((gpointer *) &subscriber->reset_func, NULL, &subscriber->reset_data, NULL,
            &subscriber->reset_destroy, NULL);
  set_func ((gpointer *) &subscriber->status_func, NULL, &subscriber->status_data, NULL,
            &subscriber->status_destroy, NULL);
  set_func ((gpointer *) &subscriber->notice_func, NULL, &subscriber->notice_data, NULL,
            &subscriber->notice_destroy, NULL);
  g_free (subscriber);
}

gboolean
kvev_subscriber_set_option (KvevSubscriber *subscriber, KvevSubscriberOption option, gint64 value,
                            GError **error)
{
  gint64 max = G_MAXINT;

  g_return_val_if_fail (subscriber != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  if ((guint) option >= G_N_ELEMENTS (subscriber->options))
    {
      g_set_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE, _ ("Unknown subscriber option %d"),
                   (int) option);
      return FALSE;
    }
  if (option == KVEV_SUBSCRIBER_OPTION_HOLD_MAX_BYTES
      || option == KVEV_SUBSCRIBER_OPTION_SNAPSHOT_MAX_BYTES)
    max = G_MAXINT64;
  if (value < 0 || value > max)
    {
      g_set_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE,
                   _ ("Subscriber option %d must be from 0 to %" PRId64 ", not %" PRId64),
                   (int) option, max, value);
      return FALSE;
    }
  subscriber->options[option] = value;
  return TRUE;
}

gboolean
kvev_subscriber_set_curve (KvevSubscriber *subscriber, const char *server_public_key,
                           const char *secret_key_file, const char *public_key, GError **error)
{
  g_return_val_if_fail (subscriber != NULL, FALSE);
  g_return_val_if_fail (server_public_key != NULL, FALSE);
  g_return_val_if_fail (secret_key_file != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
#ifdef HAVE_ZMQ
  {
    g_autofree char *server = g_strstrip (g_strdup (server_public_key));
    g_autoptr (KvevSecurity) security = NULL;
    char derived[KVEV_Z85_KEY_LEN + 1] = "";
    guint8 server_key[32], public_bin[32], secret_bin[32];
    gboolean ok = FALSE;

    if (!kvev_z85_decode_key (server, server_key))
      {
        g_autofree char *shown = kvev_escape_for_message (server);

        g_set_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE,
                     _ ("The server key \"%s\" is not a Z85 public key (40 characters)"), shown);
        return FALSE;
      }
    /* The publisher's own checks of a secret key file, through the one
     * function that makes them. */
    security = kvev_security_load (secret_key_file, "", "", NULL, error);
    if (security == NULL)
      return FALSE;
    if (zmq_curve_public (derived, security->secret_key) != 0)
      g_set_error (error, KVEV_ERROR, KVEV_ERROR_TRANSPORT, _ ("Cannot derive the public key: %s"),
                   zmq_strerror (zmq_errno ()));
    else if (public_key != NULL)
      {
        g_autofree char *given = g_strstrip (g_strdup (public_key));

        if (strcmp (given, derived) != 0)
          g_set_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE,
                       _ ("The public key is not the public key of the secret key in \"%s\""),
                       secret_key_file);
        else
          ok = TRUE;
      }
    else
      ok = TRUE;
    if (ok)
      ok = kvev_z85_decode_key (derived, public_bin)
           && kvev_z85_decode_key (security->secret_key, secret_bin);
    if (ok)
      {
        memcpy (subscriber->curve_server_key, server_key, 32);
        memcpy (subscriber->curve_public_key, public_bin, 32);
        memcpy (subscriber->curve_secret_key, secret_bin, 32);
        subscriber->curve = TRUE;
      }
    kvev_secret_wipe (secret_bin, sizeof secret_bin);
    return ok;
  }
#else
  (void) public_key;
  no_transport (error);
  return FALSE;
#endif
}

gint
kvev_subscriber_add_publisher (KvevSubscriber *subscriber, const char *endpoint,
                               const char *replay_endpoint, const char *snapshot_endpoint,
                               const char *topic, GError **error)
{
  g_return_val_if_fail (subscriber != NULL, -1);
  g_return_val_if_fail (endpoint != NULL, -1);
  g_return_val_if_fail (error == NULL || *error == NULL, -1);
#ifdef HAVE_ZMQ
  {
    KvevSubSource *source = g_new0 (KvevSubSource, 1);

    source->subscriber = subscriber;
    source->index = subscriber->sources->len;
    source->endpoint = g_strdup (endpoint);
    source->replay_endpoint
        = replay_endpoint != NULL && *replay_endpoint != '\0' ? g_strdup (replay_endpoint) : NULL;
    source->snapshot_endpoint = snapshot_endpoint != NULL && *snapshot_endpoint != '\0'
                                    ? g_strdup (snapshot_endpoint)
                                    : NULL;
    source->topic = g_strdup (topic != NULL ? topic : "");
    source->last_arrival = g_get_monotonic_time ();
    g_queue_init (&source->held);
    if (!kvev_sub_source_open (source, error))
      {
        source_free (source);
        return -1;
      }
    g_ptr_array_add (subscriber->sources, source);
    return (gint) source->index;
  }
#else
  (void) replay_endpoint;
  (void) snapshot_endpoint;
  (void) topic;
  no_transport (error);
  return -1;
#endif
}

guint
kvev_subscriber_get_n_publishers (const KvevSubscriber *subscriber)
{
  g_return_val_if_fail (subscriber != NULL, 0);
  return subscriber->sources->len;
}

KvevSubscriberState
kvev_subscriber_get_state (const KvevSubscriber *subscriber, guint publisher_index)
{
  g_return_val_if_fail (subscriber != NULL, KVEV_SUBSCRIBER_WAITING);
  if (publisher_index >= subscriber->sources->len)
    return KVEV_SUBSCRIBER_WAITING;
  return ((const KvevSubSource *) g_ptr_array_index (subscriber->sources, publisher_index))->state;
}

void
kvev_subscriber_set_event_func (KvevSubscriber *subscriber, KvevSubscriberEventFunc func,
                                gpointer user_data, GDestroyNotify destroy)
{
  g_return_if_fail (subscriber != NULL);
  set_func ((gpointer *) &subscriber->event_func, (gpointer) func, &subscriber->event_data,
            user_data, &subscriber->event_destroy, destroy);
}

void
kvev_subscriber_set_reset_func (KvevSubscriber *subscriber, KvevSubscriberResetFunc func,
                                gpointer user_data, GDestroyNotify destroy)
{
  g_return_if_fail (subscriber != NULL);
  set_func ((gpointer *) &subscriber->reset_func, (gpointer) func, &subscriber->reset_data,
            user_data, &subscriber->reset_destroy, destroy);
}

void
kvev_subscriber_set_status_func (KvevSubscriber *subscriber, KvevSubscriberStatusFunc func,
                                 gpointer user_data, GDestroyNotify destroy)
{
  g_return_if_fail (subscriber != NULL);
  set_func ((gpointer *) &subscriber->status_func, (gpointer) func, &subscriber->status_data,
            user_data, &subscriber->status_destroy, destroy);
}

void
kvev_subscriber_set_notice_func (KvevSubscriber *subscriber, KvevSubscriberNoticeFunc func,
                                 gpointer user_data, GDestroyNotify destroy)
{
  g_return_if_fail (subscriber != NULL);
  set_func ((gpointer *) &subscriber->notice_func, (gpointer) func, &subscriber->notice_data,
            user_data, &subscriber->notice_destroy, destroy);
}

#ifdef HAVE_ZMQ
/* Runs the timers that are due; the ms until the next one, or -1. */
static gint64
run_timers (KvevSubscriber *subscriber)
{
  gint64 now = g_get_monotonic_time (), wait_ms = -1;
  guint i;

  for (i = 0; i < subscriber->sources->len; i++)
    wait_ms = kvev_sub_check_timers (g_ptr_array_index (subscriber->sources, i), now, wait_ms);
  return wait_ms;
}

/* A bounded run from every socket; TRUE when some hold more. */
static gboolean
read_all (KvevSubscriber *subscriber, gboolean *took)
{
  gboolean more = FALSE;
  guint i;

  for (i = 0; i < subscriber->sources->len; i++)
    more |= kvev_sub_source_read (g_ptr_array_index (subscriber->sources, i), took);
  return more;
}

static gboolean
wait_for_input (KvevSubscriber *subscriber, gint64 timeout_ms, GError **error)
{
  guint n = subscriber->sources->len * 3, n_items = 0, i;
  zmq_pollitem_t *items = g_newa (zmq_pollitem_t, MAX (n, 1));

  for (i = 0; i < n; i++)
    {
      KvevSubSource *source = g_ptr_array_index (subscriber->sources, i / 3);
      void *socket = i % 3 == 0   ? source->socket
                     : i % 3 == 1 ? source->replay_socket
                                  : source->snapshot_socket;

      /* An item without a socket would be polled as descriptor 0. */
      if (socket == NULL)
        continue;
      items[n_items].socket = socket;
      items[n_items].fd = -1;
      items[n_items].events = ZMQ_POLLIN;
      items[n_items].revents = 0;
      n_items++;
    }
  if (n_items == 0)
    {
      if (timeout_ms != 0)
        g_usleep ((gulong) MIN (timeout_ms < 0 ? 1000 : timeout_ms, 1000) * 1000);
      return TRUE;
    }
  if (zmq_poll (items, (int) n_items, (long) timeout_ms) < 0 && zmq_errno () != EINTR)
    {
      g_set_error (error, KVEV_ERROR, KVEV_ERROR_TRANSPORT, _ ("Cannot wait for messages: %s"),
                   zmq_strerror (zmq_errno ()));
      return FALSE;
    }
  return TRUE;
}

/* What the descriptor says until the next dispatch: readable at once when
 * messages were left behind, otherwise when the next timer is due. */
static void
arm (KvevSubscriber *subscriber, gboolean more, gint64 next_ms)
{
  struct itimerspec spec = { { 0, 0 }, { 0, 0 } };

  if (more)
    {
      guint64 one = 1;

      if (write (subscriber->wake_fd, &one, sizeof one) < 0)
        g_debug ("cannot write the subscriber's eventfd: %s", g_strerror (errno));
    }
  if (next_ms >= 0)
    {
      /* 0 would disarm it. */
      gint64 ns = MAX (next_ms, 1) * 1000000;

      spec.it_value.tv_sec = ns / 1000000000;
      spec.it_value.tv_nsec = ns % 1000000000;
    }
  timerfd_settime (subscriber->timer_fd, 0, &spec, NULL);
}
#endif

gboolean
kvev_subscriber_dispatch (KvevSubscriber *subscriber, int timeout_ms, GError **error)
{
  g_return_val_if_fail (subscriber != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
#ifdef HAVE_ZMQ
  {
    gboolean took = FALSE, more;
    guint64 drained;
    gint64 next_ms;

    if (read (subscriber->wake_fd, &drained, sizeof drained) < 0 && errno != EAGAIN)
      g_debug ("cannot read the subscriber's eventfd: %s", g_strerror (errno));
    if (read (subscriber->timer_fd, &drained, sizeof drained) < 0 && errno != EAGAIN)
      g_debug ("cannot read the subscriber's timerfd: %s", g_strerror (errno));

    next_ms = run_timers (subscriber);
    more = read_all (subscriber, &took);
    /* One wait at most, for a message or the next timer: the caller gets
     * its callbacks, or its loop back, within timeout_ms. */
    if (!took && !more && timeout_ms != 0)
      {
        gint64 wait_ms = timeout_ms;

        if (next_ms >= 0)
          wait_ms = wait_ms < 0 ? next_ms : MIN (wait_ms, next_ms);
        if (!wait_for_input (subscriber, wait_ms, error))
          return FALSE;
        run_timers (subscriber);
        more = read_all (subscriber, &took);
      }
    arm (subscriber, more, run_timers (subscriber));
    return TRUE;
  }
#else
  (void) timeout_ms;
  no_transport (error);
  return FALSE;
#endif
}

int
kvev_subscriber_get_fd (const KvevSubscriber *subscriber)
{
  g_return_val_if_fail (subscriber != NULL, -1);
  return subscriber->epoll_fd;
}

typedef struct
{
  GSource source;
  KvevSubscriber *subscriber;
  gpointer tag;
} SubscriberSource;

static gboolean
source_dispatch (GSource *source, GSourceFunc callback, gpointer user_data)
{
  SubscriberSource *self = (SubscriberSource *) source;
  g_autoptr (GError) error = NULL;

  if (!kvev_subscriber_dispatch (self->subscriber, 0, &error))
    g_warning ("%s", error->message);
  if (callback != NULL)
    return callback (user_data);
  return G_SOURCE_CONTINUE;
}

static GSourceFuncs source_funcs = {
  NULL, NULL, source_dispatch, NULL, NULL, NULL,
};

GSource *
kvev_subscriber_create_source (KvevSubscriber *subscriber)
{
  SubscriberSource *source;

  g_return_val_if_fail (subscriber != NULL, NULL);
  source = (SubscriberSource *) g_source_new (&source_funcs, sizeof (SubscriberSource));
  source->subscriber = subscriber;
  g_source_set_name ((GSource *) source, "KvevSubscriber");
  if (subscriber->epoll_fd >= 0)
    source->tag = g_source_add_unix_fd ((GSource *) source, subscriber->epoll_fd, G_IO_IN);
  return (GSource *) source;
}

#ifdef KVEV_TESTING
void
kvev_subscriber_test_drop (KvevSubscriber *subscriber, guint publisher_index, guint64 skip,
                           guint64 count)
{
  subscriber->test_drop_source = (gint) publisher_index;
  subscriber->test_drop_skip = skip;
  subscriber->test_drop_count = count;
}
#endif
