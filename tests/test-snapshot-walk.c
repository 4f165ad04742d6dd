/* test-snapshot-walk.c: the master's walk as the library runs it.  No
 * call of the walk waits for the subscriber while the master may hold its
 * locks; the walk learns from kvev_snapshot_add() and
 * kvev_snapshot_pause() when to stop (subscriber behind, publisher freed,
 * function replaced); the function cannot be replaced from inside the
 * walk, and a forked child's copy leaves it alone (kvevents(7),
 * SNAPSHOTS and THE MASTER'S PROCESS).
 * SPDX-License-Identifier: Apache-2.0
 */
#include "test-util.h"

#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

/* What a walk saw, written by the walk's thread. */
typedef struct
{
  KvevPublisher *publisher;
  guint objects;       /* to add */
  guint delay_us;      /* after each add */
  guint pause_every;   /* 0: never pause */
  guint added;         /* adds that returned TRUE */
  gint64 longest_call; /* µs, of any add or pause */
  gint64 longest_add;  /* µs */
  gboolean stopped;    /* a call returned FALSE */
  gboolean set_inside; /* try kvev_publisher_set_snapshot_func() from the walk */
  gint walking;        /* atomic */
  gint walks;          /* atomic: ended */
  gint release;        /* atomic: the walk may end */
  GMutex lock;
  GCond cond;
  gint destroyed; /* atomic */
} Walk;

static gboolean
walk (KvevSnapshot *snapshot, gpointer data, GError **error)
{
  Walk *w = data;
  guint i;

  g_atomic_int_set (&w->walking, 1);
  if (w->set_inside)
    {
      g_test_expect_message ("kvevents", G_LOG_LEVEL_CRITICAL, "*inside the snapshot walk*");
      kvev_publisher_set_snapshot_func (w->publisher, NULL, NULL, NULL);
      g_test_assert_expected_messages ();
    }
  for (i = 0; i < w->objects; i++)
    {
      char key[64];
      gint64 start = g_get_monotonic_time ();
      gboolean going;

      /* Keys of 40 bytes, as a master's. */
      g_snprintf (key, sizeof key, "object-%08u-xxxxxxxxxxxxxxxxxxxxxxxxx", i);
      going = kvev_snapshot_add (snapshot, "walk", key, -1, NULL, KVEV_MEDIA_CPU | KVEV_MEDIA_DISK);
      w->longest_add = MAX (w->longest_add, g_get_monotonic_time () - start);
      if (going && w->pause_every > 0 && i % w->pause_every == w->pause_every - 1)
        going = kvev_snapshot_pause (snapshot);
      w->longest_call = MAX (w->longest_call, g_get_monotonic_time () - start);
      if (!going)
        {
          w->stopped = TRUE;
          break;
        }
      w->added++;
      if (w->delay_us > 0)
        g_usleep (w->delay_us);
    }
  g_mutex_lock (&w->lock);
  while (!g_atomic_int_get (&w->release))
    g_cond_wait (&w->cond, &w->lock);
  g_mutex_unlock (&w->lock);
  g_atomic_int_set (&w->walking, 0);
  g_atomic_int_inc (&w->walks);
  return TRUE;
}

static void
walk_destroyed (gpointer data)
{
  Walk *w = data;

  g_atomic_int_inc (&w->destroyed);
}

static Walk *
walk_new (KvevPublisher *publisher, guint objects)
{
  Walk *w = g_new0 (Walk, 1);

  w->publisher = publisher;
  w->objects = objects;
  g_mutex_init (&w->lock);
  g_cond_init (&w->cond);
  /* Unless a test holds the walk at its end, it ends at once. */
  w->release = 1;
  return w;
}

static void
walk_free (Walk *w)
{
  g_mutex_clear (&w->lock);
  g_cond_clear (&w->cond);
  g_free (w);
}

static void
walk_release (Walk *w)
{
  g_mutex_lock (&w->lock);
  g_atomic_int_set (&w->release, 1);
  g_cond_broadcast (&w->cond);
  g_mutex_unlock (&w->lock);
}

static KvevPublisher *
publisher_new (const char *name)
{
  g_autofree char *endpoint = test_ipc_endpoint (name);
  g_autofree char *snapshot_name = g_strconcat (name, "-snapshot", NULL);
  g_autofree char *snapshot_endpoint = test_ipc_endpoint (snapshot_name);
  g_autoptr (KvevConfig) config = test_config_new (endpoint);
  g_autoptr (GError) error = NULL;
  KvevPublisher *publisher;

  test_config_set (config, "kv_events_snapshot_endpoint", snapshot_endpoint);
  test_config_set (config, "kv_events_close_timeout_ms", "500");
  publisher = kvev_publisher_new (config, &error);
  g_assert_no_error (error);
  return publisher;
}

/* A DEALER that asked for a snapshot; it reads only when told to. */
static void *
ask (void *context, KvevPublisher *publisher)
{
  void *dealer = zmq_socket (context, ZMQ_DEALER);
  int linger = 0, hwm = 1;

  zmq_setsockopt (dealer, ZMQ_LINGER, &linger, sizeof linger);
  /* What it does not read stays with the publisher, not in this
   * process. */
  zmq_setsockopt (dealer, ZMQ_RCVHWM, &hwm, sizeof hwm);
  g_assert_cmpint (zmq_connect (dealer, kvev_publisher_get_snapshot_endpoint (publisher)), ==, 0);
  g_assert_cmpint (zmq_send (dealer, "", 0, ZMQ_SNDMORE), ==, 0);
  g_assert_cmpint (zmq_send (dealer, "snapshot", 8, 0), ==, 8);
  return dealer;
}

static void
wait_until (gint *atomic, gint value)
{
  gint64 deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;

  while (g_atomic_int_get (atomic) != value)
    {
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_usleep (1000);
    }
}

/* The longest a call of the walk may take without having waited for the
 * subscriber: a few chunks' encoding, on a loaded or instrumented
 * machine. */
static gint64
call_limit_us (void)
{
  return test_running_on_valgrind () ? 2 * G_USEC_PER_SEC : 200000;
}

/* A subscriber that never reads, a walk that never pauses: kvev_snapshot_add()
 * never waits for it, and once the snapshot holds its bound it returns
 * FALSE. */
static void
test_add_never_waits (void)
{
  g_autoptr (KvevPublisher) publisher = publisher_new ("add-never-waits");
  void *context = zmq_ctx_new ();
  Walk *w = walk_new (publisher, 1000000);
  void *dealer;

  kvev_publisher_set_snapshot_func (publisher, walk, w, NULL);
  dealer = ask (context, publisher);
  wait_until (&w->walks, 1);
  g_assert_true (w->stopped);
  g_assert_cmpuint (w->added, <, w->objects);
  g_assert_cmpint (w->longest_add, <, call_limit_us ());
  g_assert_cmpuint (kvev_publisher_stat (publisher, KVEV_STAT_SNAPSHOTS_FAILED), ==, 1);
  zmq_close (dealer);
  kvev_publisher_set_snapshot_func (publisher, NULL, NULL, NULL);
  zmq_ctx_term (context);
  walk_free (w);
}

/* The same walk with pauses: only kvev_snapshot_pause() waits, and the
 * snapshot's budget of waiting ends it. */
static void
test_pause_waits_within_budget (void)
{
  g_autoptr (KvevPublisher) publisher = publisher_new ("pause-budget");
  void *context = zmq_ctx_new ();
  Walk *w = walk_new (publisher, 1000000);
  void *dealer;
  gint64 start;

  w->pause_every = 256;
  kvev_publisher_set_snapshot_func (publisher, walk, w, NULL);
  start = g_get_monotonic_time ();
  dealer = ask (context, publisher);
  wait_until (&w->walks, 1);
  g_assert_true (w->stopped);
  g_assert_cmpint (w->longest_add, <, call_limit_us ());
  /* 5 s in all, however many pauses waited. */
  g_assert_cmpint (g_get_monotonic_time () - start, <, 9 * G_USEC_PER_SEC);
  g_assert_cmpint (w->longest_call, >=, G_USEC_PER_SEC / 2);
  zmq_close (dealer);
  kvev_publisher_set_snapshot_func (publisher, NULL, NULL, NULL);
  zmq_ctx_term (context);
  walk_free (w);
}

/* Freeing the publisher ends a walk at its next add, and the free keeps
 * to kv_events_close_timeout_ms rather than waiting out the walk. */
static void
test_free_stops_walk (void)
{
  KvevPublisher *publisher = publisher_new ("free-stops-walk");
  void *context = zmq_ctx_new ();
  Walk *w = walk_new (publisher, 2000);
  void *dealer;
  gint64 start;

  w->delay_us = 2000;
  kvev_publisher_set_snapshot_func (publisher, walk, w, NULL);
  dealer = ask (context, publisher);
  wait_until (&w->walking, 1);
  start = g_get_monotonic_time ();
  kvev_publisher_free (publisher);
  /* 2000 objects at 2 ms would be 4 s. */
  g_assert_cmpint (g_get_monotonic_time () - start, <, 2 * G_USEC_PER_SEC);
  g_assert_true (w->stopped);
  g_assert_cmpuint (w->added, <, 1000);
  zmq_close (dealer);
  zmq_ctx_term (context);
  walk_free (w);
}

/* Replacing the function stops the walk in progress, and the replaced
 * data is destroyed once it returned. */
static void
test_replace_stops_walk (void)
{
  g_autoptr (KvevPublisher) publisher = publisher_new ("replace-stops-walk");
  void *context = zmq_ctx_new ();
  Walk *w = walk_new (publisher, 2000);
  void *dealer;
  gint64 start;

  w->delay_us = 2000;
  kvev_publisher_set_snapshot_func (publisher, walk, w, walk_destroyed);
  dealer = ask (context, publisher);
  wait_until (&w->walking, 1);
  start = g_get_monotonic_time ();
  kvev_publisher_set_snapshot_func (publisher, NULL, NULL, NULL);
  g_assert_cmpint (g_get_monotonic_time () - start, <, 2 * G_USEC_PER_SEC);
  g_assert_true (w->stopped);
  g_assert_cmpint (g_atomic_int_get (&w->destroyed), ==, 1);
  zmq_close (dealer);
  zmq_ctx_term (context);
  walk_free (w);
}

/* From inside the walk the setter would wait for itself: refused with a
 * critical, and the walk goes on. */
static void
test_set_inside_walk (void)
{
  g_autoptr (KvevPublisher) publisher = publisher_new ("set-inside-walk");
  void *context = zmq_ctx_new ();
  Walk *w = walk_new (publisher, 10);
  void *dealer;

  w->set_inside = TRUE;
  kvev_publisher_set_snapshot_func (publisher, walk, w, walk_destroyed);
  dealer = ask (context, publisher);
  wait_until (&w->walks, 1);
  g_assert_cmpuint (w->added, ==, 10);
  g_assert_cmpint (g_atomic_int_get (&w->destroyed), ==, 0);
  kvev_publisher_set_snapshot_func (publisher, NULL, NULL, NULL);
  g_assert_cmpint (g_atomic_int_get (&w->destroyed), ==, 1);
  zmq_close (dealer);
  zmq_ctx_term (context);
  walk_free (w);
}

/* A child forked while the parent walks: its copy's setter returns at
 * once (the walk holds the parent's lock, which the child inherited
 * held) and runs none of the parent's destroy notifies. */
static void
test_fork_during_walk (void)
{
  g_autoptr (KvevPublisher) publisher = publisher_new ("fork-during-walk");
  void *context = zmq_ctx_new ();
  Walk *w = walk_new (publisher, 1);
  void *dealer;
  pid_t pid;
  int status;

  w->release = 0;
  kvev_publisher_set_snapshot_func (publisher, walk, w, walk_destroyed);
  dealer = ask (context, publisher);
  wait_until (&w->walking, 1);
  pid = test_fork ();
  if (pid == 0)
    {
      kvev_publisher_set_snapshot_func (publisher, NULL, NULL, NULL);
      kvev_publisher_set_snapshot_func (publisher, walk, w, NULL);
      _exit (g_atomic_int_get (&w->destroyed) == 0 ? 0 : 3);
    }
  status = test_wait_child (pid, 10 * G_USEC_PER_SEC, "the forked child");
  g_assert_true (WIFEXITED (status));
  /* Memcheck's leak check in the child counts what only the parent's
   * vanished threads held as lost, and exits 1 (test-fork.c says more);
   * the walk's destroy notify run in the child is 3. */
  if (test_running_on_valgrind () && WEXITSTATUS (status) == 1)
    g_test_message ("the child's leak check failed, as under memcheck it does");
  else
    g_assert_cmpint (WEXITSTATUS (status), ==, 0);
  walk_release (w);
  wait_until (&w->walks, 1);
  kvev_publisher_set_snapshot_func (publisher, NULL, NULL, NULL);
  g_assert_cmpint (g_atomic_int_get (&w->destroyed), ==, 1);
  zmq_close (dealer);
  zmq_ctx_term (context);
  walk_free (w);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/kvevents/snapshot-walk/add-never-waits", test_add_never_waits);
  g_test_add_func ("/kvevents/snapshot-walk/pause-waits-within-budget",
                   test_pause_waits_within_budget);
  g_test_add_func ("/kvevents/snapshot-walk/free-stops-walk", test_free_stops_walk);
  g_test_add_func ("/kvevents/snapshot-walk/replace-stops-walk", test_replace_stops_walk);
  g_test_add_func ("/kvevents/snapshot-walk/set-inside-walk", test_set_inside_walk);
  g_test_add_func ("/kvevents/snapshot-walk/fork-during-walk", test_fork_during_walk);
  return g_test_run ();
}
