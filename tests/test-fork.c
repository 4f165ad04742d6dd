/* test-fork.c: a master that forks, to run a helper or to daemonise,
 * while its publisher runs.  In the child every call on the inherited
 * publisher returns at once and does nothing (kvev_publisher_new() in
 * kvevents-publisher.h); the parent's publisher goes on delivering.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "test-util.h"

#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define N_PRODUCERS 3
#define N_CHILDREN 100
/* A child does a dozen calls that each return at once: far less than
 * this even on a loaded machine. */
#define CHILD_TIMEOUT_US (30 * G_USEC_PER_SEC)

typedef struct
{
  KvevPublisher *publisher;
  gint stop; /* atomic */
  guint id;
} Producer;

/* Every event call, in a loop: at any moment one of the producers is
 * likely to hold the queue's lock. */
static gpointer
produce (gpointer data)
{
  Producer *producer = data;
  guint i = 0;

  while (!g_atomic_int_get (&producer->stop))
    {
      char key[32];
      KvevClearScope *scope;

      g_snprintf (key, sizeof key, "p%u-%u", producer->id, i++);
      kvev_publish_stored (producer->publisher, "parent", key, -1, NULL, KVEV_MEDIA_CPU);
      kvev_publish_delta (producer->publisher, "parent", key, -1, "g", KVEV_MEDIA_CPU,
                          KVEV_MEDIA_DISK);
      kvev_publish_removed (producer->publisher, "parent", key, -1, NULL, KVEV_MEDIA_DISK);
      if (i % 16 == 0)
        {
          scope = kvev_clear_begin (producer->publisher, "parent");
          kvev_clear_object_removed (scope, key, -1, NULL, KVEV_MEDIA_CPU);
          kvev_clear_end (scope);
        }
    }
  return NULL;
}

/* Every value of a stats_json object is 0, false included; the instance
 * id is the copy's. */
static void
assert_stats_json_all_zero (const char *json)
{
  const char *value;

  g_assert_true (g_str_has_prefix (json, "{\"enabled\": false, \"instance_id\": \""));
  for (value = strstr (json, ": "); value != NULL; value = strstr (value + 1, ": "))
    g_assert_true (g_str_has_prefix (value, ": 0,") || g_str_has_prefix (value, ": 0}")
                   || g_str_has_prefix (value, ": false,") || g_str_has_prefix (value, ": \"")
                   || g_str_has_prefix (value, ": null,"));
}

/* What a child does with the publisher it inherited: every call, each
 * returning at once.  Run in the child; an assertion aborts it, which the
 * parent reports. */
static void
use_inherited (KvevPublisher *publisher)
{
  g_autofree char *json = NULL;
  KvevClearScope *scope;
  guint stat;

  kvev_publish_stored (publisher, "from-child", "k", -1, NULL, KVEV_MEDIA_CPU);
  kvev_publish_delta (publisher, "from-child", "k", -1, NULL, KVEV_MEDIA_CPU, KVEV_MEDIA_DISK);
  kvev_publish_removed (publisher, "from-child", "k", -1, NULL, KVEV_MEDIA_ALL);
  kvev_publish_cleared (publisher, "from-child");

  /* A scope that would publish cleared on a live publisher. */
  scope = kvev_clear_begin (publisher, "from-child");
  kvev_clear_object_removed (scope, "k", -1, NULL, KVEV_MEDIA_CPU);
  g_assert_false (kvev_clear_end (scope));
  scope = kvev_clear_begin (publisher, "from-child");
  kvev_clear_skipped (scope, KVEV_SKIP_LEASED);
  g_assert_false (kvev_clear_end (scope));

  g_assert_false (kvev_publisher_is_enabled (publisher));
  /* Without bound: it must not wait for a worker that is not there. */
  g_assert_true (kvev_publisher_flush (publisher, -1));
  /* Past the last statistic too: newer ones read 0 as well. */
  for (stat = 0; stat <= KVEV_STAT_CLEARED_SUPPRESSED + 8; stat++)
    g_assert_cmpuint (kvev_publisher_stat (publisher, (KvevStat) stat), ==, 0);
  json = kvev_publisher_stats_json (publisher);
  assert_stats_json_all_zero (json);
  kvev_publisher_free (publisher);
}

/* Memcheck runs its leak check in every child, where the parent's other
 * threads are gone: what only they pointed to (a producer's call on its
 * way to the queue, the worker's buffers) counts as lost there, and
 * fails the child, though nothing in the child could reach or free it. */
static gboolean
skip_on_valgrind (void)
{
  if (!test_running_on_valgrind ())
    return FALSE;
  g_test_skip ("memcheck counts what only the parent's vanished threads held as lost in "
               "each child");
  return TRUE;
}

/* Fails unless the child exited with status 0. */
static void
wait_child (pid_t pid, const char *what)
{
  int status = test_wait_child (pid, CHILD_TIMEOUT_US, what);

  if (WIFSIGNALED (status))
    g_error ("%s was killed by signal %d (%s)", what, WTERMSIG (status),
             g_strsignal (WTERMSIG (status)));
  g_assert_true (WIFEXITED (status));
  if (WEXITSTATUS (status) != 0)
    g_error ("%s exited with status %d", what, WEXITSTATUS (status));
}

/* Children forked while producers publish.  A child whose event calls
 * took the queue's lock, which a producer holds at about one fork in
 * four, would wait on it for ever: a hundred children leave that no
 * chance to go unseen. */
static void
test_fork_while_publishing (void)
{
  g_autofree char *endpoint = test_ipc_endpoint ("fork-busy");
  g_autoptr (KvevConfig) config = test_config_new (endpoint);
  g_autoptr (GError) error = NULL;
  Producer producers[N_PRODUCERS];
  GThread *threads[N_PRODUCERS];
  KvevPublisher *publisher;
  guint i;

  if (skip_on_valgrind ())
    return;
  publisher = kvev_publisher_new (config, &error);
  g_assert_no_error (error);
  for (i = 0; i < N_PRODUCERS; i++)
    {
      producers[i] = (Producer){ publisher, 0, i };
      threads[i] = g_thread_new ("producer", produce, &producers[i]);
    }
  /* Until every producer is in its loop. */
  while (kvev_publisher_stat (publisher, KVEV_STAT_ENQUEUED_EVENTS) < 1000)
    g_usleep (1000);

  for (i = 0; i < N_CHILDREN; i++)
    {
      g_autofree char *what = g_strdup_printf ("child %u of %u", i + 1, N_CHILDREN);
      pid_t pid;

      g_usleep (g_random_int_range (0, 2000));
      pid = test_fork ();
      if (pid == 0)
        {
          use_inherited (publisher);
          _exit (0);
        }
      wait_child (pid, what);
    }

  for (i = 0; i < N_PRODUCERS; i++)
    {
      g_atomic_int_set (&producers[i].stop, 1);
      g_thread_join (threads[i]);
    }
  /* The parent's publisher is as it was: it still publishes. */
  g_assert_true (kvev_publisher_is_enabled (publisher));
  g_assert_true (kvev_publisher_flush (publisher, 30000));
  g_assert_cmpuint (kvev_publisher_stat (publisher, KVEV_STAT_PUBLISHED_EVENTS)
                        + kvev_publisher_stat (publisher, KVEV_STAT_DROPPED_EVENTS),
                    ==, kvev_publisher_stat (publisher, KVEV_STAT_ENQUEUED_EVENTS));
  kvev_publisher_free (publisher);
}

#ifndef KVEV_TEST_TSAN
/* A child can still make a publisher of its own: the fork left the
 * library's lock free. */
static void
publish_from_own_publisher (void)
{
  g_autofree char *endpoint = test_ipc_endpoint ("fork-child-own");
  g_autoptr (KvevConfig) config = test_config_new (endpoint);
  g_autoptr (GError) error = NULL;
  KvevPublisher *publisher;

  publisher = kvev_publisher_new (config, &error);
  g_assert_no_error (error);
  g_assert_true (kvev_publisher_is_enabled (publisher));
  kvev_publish_stored (publisher, "child", "k", -1, NULL, KVEV_MEDIA_CPU);
  g_assert_true (kvev_publisher_flush (publisher, 10000));
  g_assert_cmpuint (kvev_publisher_stat (publisher, KVEV_STAT_PUBLISHED_EVENTS), ==, 1);
  kvev_publisher_free (publisher);
}
#endif

/* A child forked while the publisher is idle publishes nothing, says
 * nothing (a free that waited for the child's queue to drain would warn
 * that it dropped it) and leaves the parent's stream alone. */
static void
test_fork_idle (void)
{
  g_autofree char *endpoint = test_ipc_endpoint ("fork-idle");
  g_autoptr (KvevConfig) config = test_config_new (endpoint);
  g_autoptr (GError) error = NULL;
  g_autoptr (TestMessage) first = NULL;
  g_autofree char *child_stderr = NULL;
  KvevPublisher *publisher;
  TestSub *sub;
  int stderr_pipe[2];
  gboolean parent_seen = FALSE;
  pid_t pid;

  if (skip_on_valgrind ())
    return;
  publisher = kvev_publisher_new (config, &error);
  g_assert_no_error (error);
  sub = test_sub_new (kvev_publisher_get_endpoint (publisher));
  first = test_sync (publisher, sub);

  g_assert_cmpint (pipe (stderr_pipe), ==, 0);
  pid = test_fork ();
  if (pid == 0)
    {
      close (stderr_pipe[0]);
      if (dup2 (stderr_pipe[1], STDERR_FILENO) < 0)
        _exit (1);
      use_inherited (publisher);
#ifndef KVEV_TEST_TSAN
      /* ThreadSanitizer does not start threads after a fork of a
       * process that has some. */
      publish_from_own_publisher ();
#endif
      _exit (0);
    }
  close (stderr_pipe[1]);
  wait_child (pid, "the idle child");
  child_stderr = test_read_all (stderr_pipe[0]);
  close (stderr_pipe[0]);
  g_assert_cmpstr (child_stderr, ==, "");

  kvev_publish_stored (publisher, "from-parent", "k", -1, NULL, KVEV_MEDIA_CPU);
  g_assert_true (kvev_publisher_flush (publisher, 10000));
  while (!parent_seen)
    {
      g_autoptr (TestMessage) message = test_sub_recv (sub, 10000);
      g_autofree char *tenant = NULL;

      g_assert_nonnull (message);
      g_assert_true (message->decoded);
      tenant = test_map_dup_str (&message->events[0], "tenant_id");
      g_assert_cmpstr (tenant, !=, "from-child");
      parent_seen = g_strcmp0 (tenant, "from-parent") == 0;
    }
  g_assert_false (test_sub_receives_anything (sub));

  test_sub_free (sub);
  kvev_publisher_free (publisher);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/kvevents/fork/while-publishing", test_fork_while_publishing);
  g_test_add_func ("/kvevents/fork/idle", test_fork_idle);
  return g_test_run ();
}
