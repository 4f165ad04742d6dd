/* test-limits.c: kvev_publisher_new() in a process short of file
 * descriptors or of address space.  For each limit a child sets it, makes
 * a publisher on tcp://127.0.0.1:* with an address allow-list (so the ZAP
 * handler starts too), publishes one event and frees it.  Whatever the
 * limit, the child must either get its publisher or a GError: libzmq
 * aborts the process when it cannot get a descriptor or a thread, so the
 * library must find out before asking it.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "test-util.h"

#include <pthread.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

/* The child's exit statuses. */
#define CHILD_CREATED 10
#define CHILD_GERROR 11
#define CHILD_WRONG_ERROR 12

#define CHILD_TIMEOUT_US (30 * G_USEC_PER_SEC)

/* Every limit is tried, and what went wrong with each told, before the
 * test fails. */
typedef struct
{
  guint created;
  guint gerror;
  guint failed;
} Outcomes;

/* What the process maps now, from /proc/self/status; 0 if unknown. */
static rlim_t
mapped_bytes (void)
{
  g_autofree char *status = NULL;
  const char *line;

  if (!g_file_get_contents ("/proc/self/status", &status, NULL, NULL)
      || (line = strstr (status, "\nVmSize:")) == NULL)
    return 0;
  return (rlim_t) g_ascii_strtoull (line + strlen ("\nVmSize:"), NULL, 10) * 1024;
}

/* Whether the child's publisher has every socket and thread it can: four
 * I/O threads, replay and snapshots besides the allow-list. */
static gboolean every_socket;

/* Sets resource to limit (for RLIMIT_AS: limit beyond what the child
 * maps already), then makes, uses and frees a publisher. */
static void G_GNUC_NORETURN
child_main (int resource, rlim_t limit, int report_fd)
{
  g_autoptr (KvevConfig) config = test_config_new ("tcp://127.0.0.1:*");
  g_autoptr (GError) error = NULL;
  KvevPublisher *publisher;
  struct rlimit rl;

  test_config_set (config, "kv_events_allowed_addresses", "127.0.0.1");
  if (every_socket)
    {
      test_config_set (config, "kv_events_io_threads", "4");
      test_config_set (config, "kv_events_replay_endpoint", "tcp://127.0.0.1:*");
      test_config_set (config, "kv_events_snapshot_endpoint", "tcp://127.0.0.1:*");
    }
  if (getrlimit (resource, &rl) != 0)
    _exit (1);
  if (resource == RLIMIT_AS)
    limit += mapped_bytes ();
  rl.rlim_cur = limit;
  if (setrlimit (resource, &rl) != 0)
    _exit (2);

  publisher = kvev_publisher_new (config, &error);
  if (publisher == NULL)
    {
      gboolean transport = g_error_matches (error, KVEV_ERROR, KVEV_ERROR_TRANSPORT);

      /* The parent logs it, and can tell what the child ran out of. */
      if (write (report_fd, error->message, strlen (error->message)) < 0)
        _exit (3);
      _exit (transport ? CHILD_GERROR : CHILD_WRONG_ERROR);
    }
  kvev_publish_stored (publisher, "t", "k", -1, NULL, KVEV_MEDIA_CPU);
  kvev_publisher_free (publisher);
  _exit (CHILD_CREATED);
}

static void
run_child (int resource, const char *name, rlim_t limit, const char *unit, rlim_t unit_size,
           const char *expected, Outcomes *outcomes)
{
  g_autofree char *what
      = g_strdup_printf ("%s %" G_GUINT64_FORMAT "%s", name, (guint64) (limit / unit_size), unit);
  g_autofree char *report = NULL;
  int report_pipe[2];
  int status;
  pid_t pid;

  g_assert_cmpint (pipe (report_pipe), ==, 0);
  pid = test_fork ();
  if (pid == 0)
    {
      close (report_pipe[0]);
      child_main (resource, limit, report_pipe[1]);
    }
  close (report_pipe[1]);
  status = test_wait_child (pid, CHILD_TIMEOUT_US, what);
  report = test_read_all (report_pipe[0]);
  close (report_pipe[0]);

  if (WIFSIGNALED (status))
    {
      g_test_message ("FAILED: the child with %s was killed by signal %d (%s)", what,
                      WTERMSIG (status), g_strsignal (WTERMSIG (status)));
      outcomes->failed++;
    }
  else if (WEXITSTATUS (status) == CHILD_CREATED)
    {
      g_test_message ("%s: created", what);
      outcomes->created++;
    }
  else if (WEXITSTATUS (status) == CHILD_GERROR && strstr (report, expected) != NULL)
    {
      /* The error names what ran short. */
      g_test_message ("%s: %s", what, report);
      outcomes->gerror++;
    }
  else
    {
      g_test_message ("FAILED: the child with %s exited with status %d: %s (expected an error "
                      "naming %s)",
                      what, WEXITSTATUS (status), report, expected);
      outcomes->failed++;
    }
}

/* Whether the hard limit lets a child set every soft limit up to max. */
static gboolean
hard_limit_allows (int resource, rlim_t max)
{
  struct rlimit rl;

  g_assert_cmpint (getrlimit (resource, &rl), ==, 0);
  return rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= max;
}

static void
assert_outcomes (const Outcomes *outcomes)
{
  g_assert_cmpuint (outcomes->failed, ==, 0);
  /* A range where every limit gives the same answer tests nothing. */
  g_assert_cmpuint (outcomes->created, >, 0);
  g_assert_cmpuint (outcomes->gerror, >, 0);
}

/* Valgrind runs the program on its own descriptors and memory: it keeps
 * RLIMIT_NOFILE for its own checks and does not pass it to the kernel,
 * and the address space is its own as much as the program's. */
static void
file_descriptors (gboolean all_sockets, rlim_t max)
{
  Outcomes outcomes = { 0 };
  rlim_t limit;

  if (test_running_on_valgrind ())
    {
      g_test_skip ("valgrind does not apply RLIMIT_NOFILE to the program");
      return;
    }
  if (!hard_limit_allows (RLIMIT_NOFILE, max))
    {
      g_test_skip ("the hard RLIMIT_NOFILE is below the limits tried");
      return;
    }
  every_socket = all_sockets;
  for (limit = 4; limit <= max; limit++)
    run_child (RLIMIT_NOFILE, "RLIMIT_NOFILE", limit, "", 1, "file descriptors", &outcomes);
  every_socket = FALSE;
  assert_outcomes (&outcomes);
}

static void
test_file_descriptors (void)
{
  file_descriptors (FALSE, 64);
}

static void
test_file_descriptors_every_socket (void)
{
  file_descriptors (TRUE, 80);
}

/* The window where libzmq's pthread_create() fails lies within a few
 * thread stacks above what the process maps already, wherever that is
 * (a dozen MiB for this program, far more for a master with threads of
 * its own and their malloc arenas), and the stacks are RLIMIT_STACK big:
 * the limits step through six default stacks above the mapped size. */
static void
test_address_space (void)
{
  Outcomes outcomes = { 0 };
  pthread_attr_t attr;
  size_t stack_size;
  guint step;

#if defined(KVEV_TEST_ASAN) || defined(KVEV_TEST_TSAN)
  /* Their shadow memory takes terabytes of address space. */
  g_test_skip ("the sanitizer's shadow memory leaves no room under any RLIMIT_AS");
  return;
#endif
  if (test_running_on_valgrind ())
    {
      g_test_skip ("valgrind does not apply RLIMIT_AS to the program");
      return;
    }
  if (mapped_bytes () == 0)
    {
      g_test_skip ("no VmSize in /proc/self/status");
      return;
    }
  /* With no size set, glibc tells the one a new thread gets. */
  g_assert_cmpint (pthread_attr_init (&attr), ==, 0);
  g_assert_cmpint (pthread_attr_getstacksize (&attr, &stack_size), ==, 0);
  pthread_attr_destroy (&attr);
  g_test_message ("default thread stack: %zu KiB", stack_size / 1024);
  if (!hard_limit_allows (RLIMIT_AS, mapped_bytes () + 8 * (rlim_t) stack_size))
    {
      g_test_skip ("the hard RLIMIT_AS leaves no room for the limits tried");
      return;
    }

  for (step = 0; step <= 24; step++)
    run_child (RLIMIT_AS, "RLIMIT_AS = mapped +", (rlim_t) stack_size / 4 * step, " KiB", 1024,
               "threads", &outcomes);
  assert_outcomes (&outcomes);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/kvevents/limits/file-descriptors", test_file_descriptors);
  g_test_add_func ("/kvevents/limits/file-descriptors-every-socket",
                   test_file_descriptors_every_socket);
  g_test_add_func ("/kvevents/limits/address-space", test_address_space);
  return g_test_run ();
}
