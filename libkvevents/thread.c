/* thread.c: the threads the library starts inside the master's process.
 *
 * They block every asynchronous signal, as libzmq's own threads do.  A
 * signal meant for the master then lands on one of the master's threads,
 * and never interrupts a blocking ZeroMQ call in ours: the ZAP handler
 * once read such an EINTR as the end of the context and left, after which
 * libzmq admitted every peer.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "internal.h"

#ifdef G_OS_UNIX
#include <pthread.h>
#include <signal.h>
#endif

#ifdef G_OS_UNIX
void
kvev_thread_block_signals (sigset_t *saved)
{
  sigset_t blocked;

  sigfillset (&blocked);
  /* A fault must still end the process where it happened. */
  sigdelset (&blocked, SIGSEGV);
  sigdelset (&blocked, SIGBUS);
  sigdelset (&blocked, SIGFPE);
  sigdelset (&blocked, SIGILL);
  pthread_sigmask (SIG_BLOCK, &blocked, saved);
}
#endif

GThread *
kvev_thread_try_new (const char *name, GThreadFunc func, gpointer data, GError **error)
{
#ifdef G_OS_UNIX
  sigset_t saved;
  GThread *thread;

  /* A new thread inherits the mask of the one that creates it, so it
   * never runs a moment with the signals open. */
  kvev_thread_block_signals (&saved);
  thread = g_thread_try_new (name, func, data, error);
  pthread_sigmask (SIG_SETMASK, &saved, NULL);
  return thread;
#else
  return g_thread_try_new (name, func, data, error);
#endif
}
