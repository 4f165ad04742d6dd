/* resources.c: what the ZeroMQ transport takes from the process, checked
 * before libzmq is asked for it.
 *
 * libzmq 4.3 takes some failures to get a descriptor or a thread for bugs
 * of its own: its pollers errno_assert() epoll_create1(), its address
 * resolver getifaddrs() and its threads pthread_create(), and each assert
 * is an abort() of the whole process.  A master short of descriptors or
 * of address space must get a GError from kvev_publisher_new() instead,
 * and keep running, so the publisher first takes everything its transport
 * will need, all at once, and hands it back right before libzmq asks.
 *
 * What remains is a race: another thread of the master can take
 * descriptors or address space between the check and libzmq's calls a
 * fraction of a millisecond later, and libzmq can then still abort.  The
 * margin absorbs a few such descriptors; only libzmq returning its errors
 * could close the race.
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#include "resources.h"

#ifdef G_OS_UNIX
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

/* The descriptors of libzmq 4.3 on Linux, where every mailbox is an
 * eventfd and every poller an epoll instance:
 *  - zmq_ctx_new(): the mailbox of the thread that calls zmq_ctx_term();
 *  - the first zmq_socket() starts the context: the reaper thread's
 *    mailbox and poller, and those of each I/O thread
 *    (kv_events_io_threads);
 *  - each socket's mailbox: the XPUB socket; the ZAP handler's REP socket
 *    when an allow-list is set (zap.c; its inproc bind takes none); with
 *    an address allow-list, the two PAIR sockets of each bound socket's
 *    monitor (net.c); with replay, and again with snapshots, a ROUTER
 *    socket (net.c) and the two PAIR sockets that stop its thread
 *    (service.c);
 *  - zmq_bind() on tcp://: the netlink socket of getifaddrs() while it
 *    resolves the address, then the listening socket (ipc:// takes only
 *    the latter; both are counted for every endpoint), for each bound
 *    socket.
 * And the queue's doorbell, an eventfd of the library's own. */
#define ZMQ_CONTEXT_FDS 3
#define ZMQ_IO_THREAD_FDS 2
#define ZMQ_SOCKET_FDS 1
#define ZMQ_BIND_FDS 2
#define QUEUE_FDS 1
/* Beyond what libzmq holds once bound: the key files kvev_security_load()
 * reads while the context runs, the catalogue gettext may open for an
 * error message, and the first subscribers, whom the listener accepts
 * into a descriptor each.  libzmq survives a failed accept(), but a
 * publisher that no subscriber can reach serves nobody. */
#define FD_MARGIN 4

/* libzmq's reaper, then its I/O threads; the publisher's worker, the ZAP
 * handler when an allow-list is set, and the replay and snapshot
 * threads. */
#define ZMQ_REAPER_THREADS 1

/* The descriptors are taken with the lowest numbers free, as libzmq's
 * will be, so what matters is how many are free below RLIMIT_NOFILE, not
 * which.  Duplicates of one descriptor cost nothing but the slot. */
static gboolean
check_descriptors (guint needed, GError **error)
{
  g_autofree int *fds = g_new (int, needed);
  guint n, i;
  int saved_errno = 0;

  for (n = 0; n < needed; n++)
    {
      fds[n]
          = n == 0 ? open ("/dev/null", O_RDONLY | O_CLOEXEC) : fcntl (fds[0], F_DUPFD_CLOEXEC, 0);
      if (fds[n] < 0)
        {
          saved_errno = errno;
          break;
        }
    }
  for (i = 0; i < n; i++)
    close (fds[i]);
  if (n == needed)
    return TRUE;

  if (saved_errno == EMFILE)
    {
      struct rlimit limit;

      if (getrlimit (RLIMIT_NOFILE, &limit) != 0)
        limit.rlim_cur = RLIM_INFINITY;
      g_set_error (error, KVEV_ERROR, KVEV_ERROR_TRANSPORT,
                   _ ("Too few file descriptors left for the kv_events publisher: it "
                      "needs %u, and RLIMIT_NOFILE (%" PRIu64 ") leaves %u free"),
                   needed, (uint64_t) limit.rlim_cur, n);
    }
  else
    g_set_error (error, KVEV_ERROR, KVEV_ERROR_TRANSPORT,
                 _ ("Cannot reserve the %u file descriptors the kv_events publisher "
                    "needs: %s"),
                 needed, g_strerror (saved_errno));
  return FALSE;
}

static void *
probe_main (void *data)
{
  GMutex *gate = data;

  /* Held until every probe runs: their stacks exist at the same time. */
  g_mutex_lock (gate);
  g_mutex_unlock (gate);
  return NULL;
}

/* Starts needed threads with the default attributes, as libzmq's
 * pthread_create() and GLib's g_thread_try_new() (which sets no stack
 * size) do, so they get the stacks those will, and joins them.  glibc
 * keeps a joined thread's stack in a cache (up to 40 MiB) that the next
 * pthread_create() of that size takes from, so the address space shown
 * free goes right to libzmq's threads, and a stack the cache has no room
 * for is unmapped, which frees it as well. */
static gboolean
check_threads (guint needed, GError **error)
{
  g_autofree pthread_t *threads = g_new (pthread_t, needed);
  GMutex gate;
  sigset_t saved;
  guint n, i;
  int failure = 0;

  g_mutex_init (&gate);
  g_mutex_lock (&gate);
  /* Never a signal of the master's on a probe. */
  kvev_thread_block_signals (&saved);
  for (n = 0; n < needed; n++)
    if ((failure = pthread_create (&threads[n], NULL, probe_main, &gate)) != 0)
      break;
  pthread_sigmask (SIG_SETMASK, &saved, NULL);
  g_mutex_unlock (&gate);
  for (i = 0; i < n; i++)
    pthread_join (threads[i], NULL);
  g_mutex_clear (&gate);
  if (n == needed)
    return TRUE;

  /* glibc says EAGAIN both for RLIMIT_NPROC and for a stack that does
   * not fit in the address space. */
  g_set_error (error, KVEV_ERROR, KVEV_ERROR_TRANSPORT,
               _ ("Too few threads or too little address space left for the kv_events "
                  "publisher: it runs %u threads, and starting them failed: %s"),
               needed, g_strerror (failure));
  return FALSE;
}

gboolean
kvev_resources_check (const KvevSettings *settings, GError **error)
{
  /* What net.c opens, or libzmq could run short where this found
   * enough: ZAP for either allow-list (secure_socket()), and with an
   * address allow-list a monitor on each bound socket
   * (monitor_refusals()). */
  gboolean zap = settings->security->allowed_clients != NULL
                 || settings->security->allowed_addresses != NULL;
  gboolean monitor = settings->security->allowed_addresses != NULL;
  guint services
      = (settings->replay_endpoint != NULL ? 1 : 0) + (settings->snapshot_endpoint != NULL ? 1 : 0);
  guint binds = 1 + services;
  guint sockets = 1 + (zap ? 1 : 0) + (monitor ? 2 * binds : 0) + 3 * services;

  return check_descriptors (ZMQ_CONTEXT_FDS + ZMQ_IO_THREAD_FDS * settings->io_threads
                                + ZMQ_SOCKET_FDS * sockets + ZMQ_BIND_FDS * binds + QUEUE_FDS
                                + FD_MARGIN,
                            error)
         && check_threads (ZMQ_REAPER_THREADS + settings->io_threads + 1 + (zap ? 1 : 0) + services,
                           error);
}

#else /* !G_OS_UNIX */

gboolean
kvev_resources_check (const KvevSettings *settings, GError **error)
{
  /* libzmq's descriptors and threads are POSIX ones: elsewhere there is
   * nothing here to count. */
  return TRUE;
}

#endif
