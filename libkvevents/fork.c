/* fork.c: what a fork() leaves of the publishers in the child.
 *
 * The child has only the thread that called fork().  The worker, the ZAP
 * handler and libzmq's threads are gone, and so is whoever held a lock at
 * that moment, most likely a producer holding the queue's: the child's
 * first event call would wait on it for ever, a flush or a free would
 * wait on a worker that is not there, and libzmq's context is not the
 * child's to use or to terminate.  So the child handler marks every copy
 * inherited, and every call on an inherited publisher returns before it
 * touches any of that (kvevents-publisher.h says what each returns).
 *
 * The mark costs the event path nothing: the event calls already test
 * accepting before they touch the queue, and the child handler clears
 * it; testing getpid() in each call would be a system call in each.
 *
 * The child handler walks a registry of the publishers whose transport
 * runs.  The prepare handler takes the registry's lock, so no publisher
 * is half linked at the fork, and the parent and child handlers release
 * it.  pthread_atfork() ties the handlers to this library: glibc drops
 * them when it is unloaded.
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#include "fork.h"

#include <pthread.h>

static GMutex registry_lock;
static KvevForkEntry *registry;

static void
prepare_fork (void)
{
  g_mutex_lock (&registry_lock);
}

static void
after_fork_in_parent (void)
{
  g_mutex_unlock (&registry_lock);
}

/* Inherited publishers stay linked: kvev_publisher_free() leaves them
 * allocated, and the registry keeps them reachable. */
static void
after_fork_in_child (void)
{
  KvevForkEntry *entry;

  for (entry = registry; entry != NULL; entry = entry->next)
    {
      entry->inherited = TRUE;
      g_atomic_int_set (entry->accepting, 0);
    }
  /* GMutex has no owner: the child's thread may release it. */
  g_mutex_unlock (&registry_lock);
}

gboolean
kvev_fork_watch (GError **error)
{
  /* pthread_atfork()'s result plus one, since 0 means not yet. */
  static gsize installed;

  if (g_once_init_enter (&installed))
    g_once_init_leave (
        &installed,
        (gsize) pthread_atfork (prepare_fork, after_fork_in_parent, after_fork_in_child) + 1);
  if (installed == 1)
    return TRUE;
  g_set_error (error, KVEV_ERROR, KVEV_ERROR_TRANSPORT,
               _ ("Cannot install the kv_events publisher's fork() handlers: %s"),
               g_strerror ((int) installed - 1));
  return FALSE;
}

void
kvev_fork_track (KvevForkEntry *entry, gint *accepting)
{
  g_mutex_lock (&registry_lock);
  entry->accepting = accepting;
  entry->inherited = FALSE;
  entry->prev = NULL;
  entry->next = registry;
  if (registry != NULL)
    registry->prev = entry;
  registry = entry;
  g_mutex_unlock (&registry_lock);
}

void
kvev_fork_untrack (KvevForkEntry *entry)
{
  g_mutex_lock (&registry_lock);
  if (entry->prev != NULL)
    entry->prev->next = entry->next;
  else
    registry = entry->next;
  if (entry->next != NULL)
    entry->next->prev = entry->prev;
  entry->prev = entry->next = NULL;
  g_mutex_unlock (&registry_lock);
}
