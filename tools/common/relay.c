/* relay.c: --wait-subscribers, by relaying the library's stream through a
 * socket the tool owns (see relay.h for why).
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include "relay.h"
#include "kvtool.h"
#include "endpoint-ipv6.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>

#ifdef HAVE_ZMQ
#include <zmq.h>

#include "socket.h"
#endif

/* How long one probe is given before another is sent.  Not a settle time:
 * the wait ends when a probe is seen, however long that takes. */
#define PROBE_INTERVAL_MS 100

static gboolean
config_flag_is_true (const KvevConfig *config, const char *flag)
{
  g_autofree char *value = kvev_config_get (config, flag);

  return g_strcmp0 (value, "true") == 0;
}

static guint64
config_flag_uint (const KvevConfig *config, const char *flag, guint64 fallback)
{
  g_autofree char *value = kvev_config_get (config, flag);
  guint64 parsed;

  return kvt_parse_uint (value, 0, G_MAXUINT32, &parsed) ? parsed : fallback;
}

#ifdef HAVE_ZMQ

struct _KvtRelay
{
  void *context;
  void *xpub; /* bound where subscribers connect */
  void *xsub; /* connected to the library's private endpoint */
  char *endpoint;
  char *private_dir;
  gboolean armed_cleanup; /* the signal handler removes private_dir */
  char *library_endpoint;
  int linger_ms;
  GThread *thread;

  GMutex lock;
  GCond cond;
  /* Under lock. */
  guint subscriptions;
  guint64 probes_seen;
  gboolean forwarding;
  guint64 last_probe; /* the sequence of the probe passed on, once forwarding */
  gboolean have_forwarded;
  guint64 last_forwarded;
  gboolean stop;

  /* The relay thread's own: the latest probe, held until it is known
   * whether it is the last one. */
  GArray *held;
  guint64 held_sequence;
};

/* A program killed while its relay runs must not leave the private
 * directory behind in $TMPDIR.  The handler removes it and then lets the
 * signal end the process as it would have, so whoever sent it still sees
 * a death by that signal.  Only async-signal-safe calls run there, on
 * paths laid out before the handler can see them.  A signal that was
 * ignored stays ignored (nohup, or a shell's background job).  One relay
 * a process is all the tools make; a second one is not covered. */
static const int cleanup_signals[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM };
static struct sigaction saved_actions[G_N_ELEMENTS (cleanup_signals)];
static gboolean installed[G_N_ELEMENTS (cleanup_signals)];
static char cleanup_socket[4096];
static char cleanup_dir[4096];
static volatile sig_atomic_t cleanup_armed;

static void
remove_on_signal (int signum)
{
  if (cleanup_armed)
    {
      unlink (cleanup_socket);
      rmdir (cleanup_dir);
    }
  /* Blocked until the handler returns, and then fatal. */
  signal (signum, SIG_DFL);
  raise (signum);
}

/* Called with the signals blocked, so none comes between the directory
 * and its registration. */
static gboolean
arm_cleanup (const char *dir, const char *socket_path)
{
  struct sigaction action;
  guint i;

  if (cleanup_armed || g_strlcpy (cleanup_dir, dir, sizeof cleanup_dir) >= sizeof cleanup_dir
      || g_strlcpy (cleanup_socket, socket_path, sizeof cleanup_socket)
             >= sizeof cleanup_socket)
    return FALSE;
  cleanup_armed = 1;
  memset (&action, 0, sizeof action);
  action.sa_handler = remove_on_signal;
  sigfillset (&action.sa_mask);
  action.sa_flags = SA_RESTART;
  for (i = 0; i < G_N_ELEMENTS (cleanup_signals); i++)
    installed[i] = sigaction (cleanup_signals[i], NULL, &saved_actions[i]) == 0
                   && saved_actions[i].sa_handler == SIG_DFL
                   && sigaction (cleanup_signals[i], &action, NULL) == 0;
  return TRUE;
}

/* After the directory is gone: a signal in between finds nothing to
 * remove, which is harmless. */
static void
disarm_cleanup (void)
{
  guint i;

  for (i = 0; i < G_N_ELEMENTS (cleanup_signals); i++)
    if (installed[i])
      sigaction (cleanup_signals[i], &saved_actions[i], NULL);
  memset (installed, 0, sizeof installed);
  cleanup_armed = 0;
}

/* Until pthread_sigmask (SIG_SETMASK, saved, NULL). */
static void
block_cleanup_signals (sigset_t *saved)
{
  sigset_t set;
  guint i;

  sigemptyset (&set);
  for (i = 0; i < G_N_ELEMENTS (cleanup_signals); i++)
    sigaddset (&set, cleanup_signals[i]);
  pthread_sigmask (SIG_BLOCK, &set, saved);
}

/* Sends and empties parts.  An XPUB socket drops at its high-water mark
 * rather than block, as the library's PUB does. */
static void
send_parts (void *socket, GArray *parts)
{
  guint i;

  for (i = 0; i < parts->len; i++)
    {
      zmq_msg_t *part = &g_array_index (parts, zmq_msg_t, i);

      if (zmq_msg_send (part, socket, i + 1 < parts->len ? ZMQ_SNDMORE : 0) < 0)
        zmq_msg_close (part);
    }
  g_array_set_size (parts, 0);
}

static gboolean
parts_sequence (GArray *parts, guint64 *sequence)
{
  guint64 sequence_be;

  if (parts->len != 3 || zmq_msg_size (&g_array_index (parts, zmq_msg_t, 1)) != sizeof sequence_be)
    return FALSE;
  memcpy (&sequence_be, zmq_msg_data (&g_array_index (parts, zmq_msg_t, 1)), sizeof sequence_be);
  *sequence = GUINT64_FROM_BE (sequence_be);
  return TRUE;
}

static void
count_subscriptions (KvtRelay *relay)
{
  g_autoptr (GArray) parts = kvt_parts_new ();
  guint added = 0;

  /* Each is one frame: 1 then the topic to subscribe, 0 to unsubscribe.
   * ZMQ_XPUB_VERBOSE passes every subscribe, also a repeated topic. */
  while (kvt_socket_receive_parts (relay->xpub, parts))
    {
      zmq_msg_t *first = &g_array_index (parts, zmq_msg_t, 0);

      if (zmq_msg_size (first) > 0 && ((const guint8 *) zmq_msg_data (first))[0] == 1)
        added++;
      kvt_parts_clear (parts);
    }
  if (added > 0)
    {
      g_mutex_lock (&relay->lock);
      relay->subscriptions += added;
      g_cond_broadcast (&relay->cond);
      g_mutex_unlock (&relay->lock);
    }
}

/* Whether forwarding has begun, and after which probe.  Read for every
 * message as it arrives, never once per poll: the main thread starts
 * forwarding and publishes straight away, so a message that arrives during
 * the wait is a real one even if forwarding had not begun when the wait
 * began. */
static gboolean
forwarding_state (KvtRelay *relay, guint64 *last_probe)
{
  gboolean forwarding;

  g_mutex_lock (&relay->lock);
  forwarding = relay->forwarding;
  *last_probe = relay->last_probe;
  g_mutex_unlock (&relay->lock);
  return forwarding;
}

static void
forward (KvtRelay *relay, GArray *parts, guint64 sequence)
{
  send_parts (relay->xpub, parts);
  g_mutex_lock (&relay->lock);
  relay->have_forwarded = TRUE;
  relay->last_forwarded = sequence;
  g_cond_broadcast (&relay->cond);
  g_mutex_unlock (&relay->lock);
}

/* The probe held when forwarding began goes out first if it is the last
 * one; every later message is behind it on the same link. */
static void
release_held (KvtRelay *relay, guint64 last_probe)
{
  g_autoptr (GArray) parts = NULL;

  if (relay->held->len == 0)
    return;
  if (relay->held_sequence != last_probe)
    {
      kvt_parts_clear (relay->held);
      return;
    }
  parts = kvt_parts_new ();
  g_array_append_vals (parts, relay->held->data, relay->held->len);
  g_array_set_size (relay->held, 0);
  forward (relay, parts, last_probe);
}

static void
pass_on (KvtRelay *relay, GArray *parts)
{
  guint64 sequence = 0, last_probe;
  gboolean has_sequence = parts_sequence (parts, &sequence);

  if (!forwarding_state (relay, &last_probe))
    {
      /* Only probes arrive before forwarding starts: keep the latest. */
      kvt_parts_clear (relay->held);
      g_array_append_vals (relay->held, parts->data, parts->len);
      g_array_set_size (parts, 0);
      relay->held_sequence = sequence;
      g_mutex_lock (&relay->lock);
      relay->probes_seen++;
      g_cond_broadcast (&relay->cond);
      g_mutex_unlock (&relay->lock);
      return;
    }
  release_held (relay, last_probe);
  if (has_sequence && sequence < last_probe)
    kvt_parts_clear (parts);
  else
    forward (relay, parts, sequence);
}

static gpointer
relay_main (gpointer data)
{
  KvtRelay *relay = data;
  g_autoptr (GArray) parts = kvt_parts_new ();
  zmq_pollitem_t items[2] = {
    { relay->xsub, 0, ZMQ_POLLIN, 0 },
    { relay->xpub, 0, ZMQ_POLLIN, 0 },
  };

  for (;;)
    {
      guint64 last_probe;
      gboolean stop;
      guint taken = 0;

      g_mutex_lock (&relay->lock);
      stop = relay->stop;
      g_mutex_unlock (&relay->lock);
      if (stop)
        break;
      /* The last probe may have come in before forwarding began, with
       * nothing after it yet: it must not wait for the next message. */
      if (forwarding_state (relay, &last_probe))
        release_held (relay, last_probe);

      /* The timeout only bounds how late a stop is noticed. */
      if (zmq_poll (items, 2, 50) <= 0)
        continue;
      if (items[1].revents & ZMQ_POLLIN)
        count_subscriptions (relay);
      while ((items[0].revents & ZMQ_POLLIN) && taken++ < 256
             && kvt_socket_receive_parts (relay->xsub, parts))
        pass_on (relay, parts);
    }
  kvt_parts_clear (relay->held);
  return NULL;
}

static KvtRelay *
relay_new (const char *endpoint, int send_hwm, int linger_ms, GError **error)
{
  g_autoptr (KvtRelay) relay = g_new0 (KvtRelay, 1);
  char bound[1024];
  size_t bound_len = sizeof bound;
  g_autoptr (GError) thread_error = NULL;
  sigset_t saved_mask;

  g_mutex_init (&relay->lock);
  g_cond_init (&relay->cond);
  relay->held = kvt_parts_new ();
  relay->linger_ms = linger_ms;

  block_cleanup_signals (&saved_mask);
  relay->private_dir = g_dir_make_tmp ("kvevents-relay-XXXXXX", error);
  if (relay->private_dir != NULL)
    {
      g_autofree char *socket_path = g_build_filename (relay->private_dir, "upstream", NULL);

      relay->armed_cleanup = arm_cleanup (relay->private_dir, socket_path);
    }
  pthread_sigmask (SIG_SETMASK, &saved_mask, NULL);
  if (relay->private_dir == NULL)
    return NULL;
  relay->library_endpoint = g_strdup_printf ("ipc://%s/upstream", relay->private_dir);

  relay->context = zmq_ctx_new ();
  if (relay->context == NULL || (relay->xpub = zmq_socket (relay->context, ZMQ_XPUB)) == NULL
      || (relay->xsub = zmq_socket (relay->context, ZMQ_XSUB)) == NULL)
    {
      g_set_error (error, KVT_ERROR, KVT_ERROR_FAILED, _ ("Cannot create the relay sockets: %s"),
                   zmq_strerror (zmq_errno ()));
      return NULL;
    }
  /* Nothing may be lost between the library and the relay, which the
   * library's statistics would not show; towards subscribers the relay
   * keeps the library's own high-water mark. */
  if (!kvt_socket_set_int (relay->xpub, ZMQ_SNDHWM, "ZMQ_SNDHWM", send_hwm, error)
      || !kvt_socket_set_int (relay->xpub, ZMQ_XPUB_VERBOSE, "ZMQ_XPUB_VERBOSE", 1, error)
      || !kvt_socket_set_int (relay->xpub, ZMQ_LINGER, "ZMQ_LINGER", 0, error)
      /* It binds the library's endpoint in the library's place. */
      || !kvt_socket_set_int (relay->xpub, ZMQ_IPV6, "ZMQ_IPV6", kvev_endpoint_is_ipv6 (endpoint),
                              error)
      || !kvt_socket_set_int (relay->xsub, ZMQ_RCVHWM, "ZMQ_RCVHWM", 0, error)
      || !kvt_socket_set_int (relay->xsub, ZMQ_LINGER, "ZMQ_LINGER", 0, error)
      || !kvt_socket_set_int (relay->xsub, ZMQ_RECONNECT_IVL, "ZMQ_RECONNECT_IVL", 10, error))
    return NULL;

  if (zmq_bind (relay->xpub, endpoint) != 0)
    {
      g_set_error (error, KVT_ERROR, KVT_ERROR_FAILED, _ ("Cannot bind %s: %s"), endpoint,
                   zmq_strerror (zmq_errno ()));
      return NULL;
    }
  if (zmq_getsockopt (relay->xpub, ZMQ_LAST_ENDPOINT, bound, &bound_len) != 0)
    bound_len = 0;
  relay->endpoint = bound_len > 1 ? g_strndup (bound, bound_len) : g_strdup (endpoint);

  /* An XSUB subscribes by sending; it is remembered and sent again on
   * every (re)connection.  ipc:// connects before the library binds and
   * retries until it has. */
  if (zmq_send (relay->xsub, "\1", 1, 0) != 1
      || zmq_connect (relay->xsub, relay->library_endpoint) != 0)
    {
      g_set_error (error, KVT_ERROR, KVT_ERROR_FAILED, _ ("Cannot connect the relay to %s: %s"),
                   relay->library_endpoint, zmq_strerror (zmq_errno ()));
      return NULL;
    }

  relay->thread = g_thread_try_new ("kvevents-relay", relay_main, relay, &thread_error);
  if (relay->thread == NULL)
    {
      g_set_error (error, KVT_ERROR, KVT_ERROR_FAILED, _ ("Cannot start the relay thread: %s"),
                   thread_error->message);
      return NULL;
    }
  return g_steal_pointer (&relay);
}

static gboolean
wait_until (KvtRelay *relay, gint64 deadline)
{
  if (deadline < 0)
    {
      g_cond_wait (&relay->cond, &relay->lock);
      return TRUE;
    }
  return g_cond_wait_until (&relay->cond, &relay->lock, deadline);
}

static gboolean
relay_wait (KvtRelay *relay, KvevPublisher *publisher, guint n_subscribers, gint64 timeout_ms,
            GError **error)
{
  gint64 start = g_get_monotonic_time ();
  gint64 deadline = timeout_ms < 0 ? -1 : start + timeout_ms * 1000;
  guint64 last_probe;
  gboolean ok = TRUE;

  /* A probe that comes through proves the relay's subscription reached the
   * library's socket: everything published after it reaches the relay. */
  g_mutex_lock (&relay->lock);
  while (ok && relay->probes_seen == 0)
    {
      gint64 next_probe = g_get_monotonic_time () + PROBE_INTERVAL_MS * 1000;

      g_mutex_unlock (&relay->lock);
      kvev_publish_cleared (publisher, KVT_RELAY_PROBE_TENANT);
      g_mutex_lock (&relay->lock);
      while (relay->probes_seen == 0 && g_get_monotonic_time () < next_probe
             && (deadline < 0 || g_get_monotonic_time () < deadline))
        wait_until (relay, deadline < 0 ? next_probe : MIN (next_probe, deadline));
      if (relay->probes_seen == 0 && deadline >= 0 && g_get_monotonic_time () >= deadline)
        {
          g_set_error (error, KVT_ERROR, KVT_ERROR_FAILED,
                       _ ("The relay received nothing from the publisher within %" PRId64 " ms"),
                       timeout_ms);
          ok = FALSE;
        }
    }

  while (ok && relay->subscriptions < n_subscribers)
    if (!wait_until (relay, deadline) && relay->subscriptions < n_subscribers)
      {
        g_set_error (
            error, KVT_ERROR, KVT_ERROR_FAILED,
            g_dngettext (KVT_GETTEXT_PACKAGE, "%u of %u subscriber connected within %" PRId64 " ms",
                         "%u of %u subscribers connected within %" PRId64 " ms", n_subscribers),
            relay->subscriptions, n_subscribers, timeout_ms);
        ok = FALSE;
      }
  g_mutex_unlock (&relay->lock);
  if (!ok)
    return FALSE;

  /* Every probe is with ZeroMQ once flushed, so the last sequence is the
   * last probe's: it goes on to the subscribers, the earlier ones do not. */
  kvev_publisher_flush (publisher, -1);
  last_probe = kvev_publisher_stat (publisher, KVEV_STAT_LAST_SEQUENCE);
  g_mutex_lock (&relay->lock);
  relay->last_probe = last_probe;
  relay->forwarding = TRUE;
  g_mutex_unlock (&relay->lock);
  return TRUE;
}

KvevPublisher *
kvt_relay_publisher_new (const KvevConfig *config, guint n_subscribers, gint64 wait_timeout_ms,
                         KvtRelay **relay_out, GError **error)
{
  g_autoptr (KvtRelay) relay = NULL;
  g_autoptr (KvevConfig) private_config = NULL;
  g_autoptr (KvevPublisher) publisher = NULL;
  g_autofree char *endpoint = NULL;
  /* Flags of the library's that a relay cannot honour; an older library
   * without them reports them unknown, which reads as unset. */
  static const char *const security_flags[] = {
    "kv_events_curve_secret_key_file",
    "kv_events_curve_allowed_clients_file",
    "kv_events_allowed_addresses",
  };
  guint i;

  *relay_out = NULL;
  if (n_subscribers == 0)
    return kvev_publisher_new (config, error);
  if (!config_flag_is_true (config, "enable_kv_events") || !kvev_has_transport ())
    {
      g_printerr (_ ("%s: nothing is published, so --wait-subscribers does not wait\n"),
                  g_get_prgname ());
      return kvev_publisher_new (config, error);
    }
  /* Checked first, so a bad endpoint is reported as the library reports
   * it rather than as the relay's bind failure. */
  if (!kvev_config_validate (config, error))
    return NULL;
  /* The relay's socket has none of the library's CURVE or address checks:
   * putting it in front would publish what they protect to anyone. */
  for (i = 0; i < G_N_ELEMENTS (security_flags); i++)
    {
      g_autofree char *value = kvev_config_get (config, security_flags[i]);

      if (value != NULL && value[0] != '\0')
        {
          g_set_error (error, KVT_ERROR, KVT_ERROR_FAILED,
                       _ ("--wait-subscribers cannot be used with %s: the relay it needs "
                          "would publish without that protection"),
                       security_flags[i]);
          return NULL;
        }
    }

  endpoint = kvev_config_get (config, "kv_events_bind_endpoint");
  relay = relay_new (
      endpoint, (int) MIN (config_flag_uint (config, "kv_events_send_hwm", 1000), G_MAXINT),
      (int) MIN (config_flag_uint (config, "kv_events_close_timeout_ms", 1000), G_MAXINT), error);
  if (relay == NULL)
    return NULL;
  /* Before the wait: a subscriber can come only once it knows the port. */
  if (strchr (endpoint, '*') != NULL)
    g_printerr (_ ("%s: publishing on %s\n"), g_get_prgname (), relay->endpoint);

  private_config = kvev_config_copy (config);
  if (!kvev_config_set (private_config, "kv_events_bind_endpoint", relay->library_endpoint, error))
    return NULL;
  publisher = kvev_publisher_new (private_config, error);
  if (publisher == NULL || !relay_wait (relay, publisher, n_subscribers, wait_timeout_ms, error))
    return NULL;

  *relay_out = g_steal_pointer (&relay);
  return g_steal_pointer (&publisher);
}

const char *
kvt_relay_get_endpoint (const KvtRelay *relay)
{
  return relay->endpoint;
}

gboolean
kvt_relay_finish (KvtRelay *relay, KvevPublisher *publisher, gint64 timeout_ms)
{
  gint64 deadline = timeout_ms < 0 ? -1 : g_get_monotonic_time () + timeout_ms * 1000;
  guint64 last;
  gboolean done;

  if (relay == NULL)
    return TRUE;
  last = kvev_publisher_stat (publisher, KVEV_STAT_LAST_SEQUENCE);
  g_mutex_lock (&relay->lock);
  for (;;)
    {
      done = last <= relay->last_probe || (relay->have_forwarded && relay->last_forwarded >= last);
      if (done || !wait_until (relay, deadline))
        break;
    }
  done = last <= relay->last_probe || (relay->have_forwarded && relay->last_forwarded >= last);
  g_mutex_unlock (&relay->lock);
  return done;
}

void
kvt_relay_free (KvtRelay *relay)
{
  if (relay == NULL)
    return;

  if (relay->thread != NULL)
    {
      g_mutex_lock (&relay->lock);
      relay->stop = TRUE;
      g_mutex_unlock (&relay->lock);
      g_thread_join (relay->thread);
    }
  if (relay->xsub != NULL)
    zmq_close (relay->xsub);
  if (relay->xpub != NULL)
    {
      /* What the relay passed on may still reach subscribers until the
       * library's own close bound. */
      zmq_setsockopt (relay->xpub, ZMQ_LINGER, &relay->linger_ms, sizeof relay->linger_ms);
      zmq_close (relay->xpub);
    }
  if (relay->context != NULL)
    zmq_ctx_term (relay->context);
  if (relay->private_dir != NULL)
    {
      g_autofree char *socket_path = g_build_filename (relay->private_dir, "upstream", NULL);

      g_unlink (socket_path);
      g_rmdir (relay->private_dir);
      if (relay->armed_cleanup)
        disarm_cleanup ();
    }
  if (relay->held != NULL)
    g_array_unref (relay->held);
  g_mutex_clear (&relay->lock);
  g_cond_clear (&relay->cond);
  g_free (relay->endpoint);
  g_free (relay->library_endpoint);
  g_free (relay->private_dir);
  g_free (relay);
}

#else /* !HAVE_ZMQ */

/* Nothing is ever published, so there is nothing to wait for. */
struct _KvtRelay
{
  char *endpoint;
};

KvevPublisher *
kvt_relay_publisher_new (const KvevConfig *config, guint n_subscribers, gint64 wait_timeout_ms,
                         KvtRelay **relay_out, GError **error)
{
  *relay_out = NULL;
  if (n_subscribers > 0 && config_flag_is_true (config, "enable_kv_events"))
    g_printerr (_ ("%s: nothing is published, so --wait-subscribers does not wait\n"),
                g_get_prgname ());
  (void) config_flag_uint;
  return kvev_publisher_new (config, error);
}

const char *
kvt_relay_get_endpoint (const KvtRelay *relay)
{
  return relay->endpoint;
}

gboolean
kvt_relay_finish (KvtRelay *relay, KvevPublisher *publisher, gint64 timeout_ms)
{
  return TRUE;
}

void
kvt_relay_free (KvtRelay *relay)
{
  g_free (relay);
}

#endif /* HAVE_ZMQ */
