/* tsan-glib.c: tells ThreadSanitizer about GLib's locks, for make check
 * in a --enable-tsan build, which preloads it with LD_PRELOAD (tests/local.mk).
 *
 * Why: on Linux GMutex, GCond and g_once are built on raw futex system
 * calls and atomics inside libglib-2.0.so, which is not instrumented.
 * TSan sees neither the lock nor the unlock, so every access that a
 * GMutex or a GAsyncQueue correctly orders looks like a data race to it
 * (a whole make check gives hundreds: the queue's counters, every event
 * handed from a producer to the worker).  GLib has no switch to use
 * pthread mutexes instead, and Debian's libglib binds its own calls
 * directly (-Bsymbolic-functions), so its internal locking cannot be
 * interposed either.  What can be interposed is every GLib call that the
 * library and the tests make through the PLT: this file defines those
 * functions, calls GLib's own through dlsym (RTLD_NEXT) and adds the TSan
 * annotations that say what they do:
 *
 *   g_mutex_lock/trylock/unlock/clear     a mutex (lock order too, so TSan
 *                                         also reports potential deadlocks)
 *   g_cond_wait/wait_until                unlock, wait, lock again
 *   g_async_queue_lock/unlock             a mutex, the queue's address
 *   g_async_queue_(timeout_)pop_unlocked  unlock, wait, lock again
 *   g_async_queue_push/pop/... (locking)  release before, acquire after
 *   g_once_init_enter/leave               acquire of what leave released
 *
 * and ignores the memory accesses GLib makes inside those calls (its own
 * list nodes, malloc'd by a pusher and freed by a popper under the lock
 * TSan cannot see).
 *
 * Threads need nothing: TSan intercepts the pthread_create and
 * pthread_join that GLib calls.  libzmq's own lock-free queues are not
 * annotated: tests/tsan.supp covers what libzmq does with its threads.
 *
 * In a process without TSan the annotations are weak and absent, and the
 * functions only forward; in a process without GLib nothing calls them.
 * Built without -fsanitize=thread: it only forwards and annotates.
 *
 *   cc -shared -fPIC -O1 $(pkg-config --cflags glib-2.0) -o tsan-glib.so \
 *      .ci/tsan-glib.c -ldl
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>

/* sanitizer/tsan_interface.h, declared weak: absent outside TSan. */
void __tsan_acquire (void *addr) __attribute__ ((weak));
void __tsan_release (void *addr) __attribute__ ((weak));
void __tsan_mutex_destroy (void *addr, unsigned flags) __attribute__ ((weak));
void __tsan_mutex_pre_lock (void *addr, unsigned flags) __attribute__ ((weak));
void __tsan_mutex_post_lock (void *addr, unsigned flags, int recursion) __attribute__ ((weak));
int __tsan_mutex_pre_unlock (void *addr, unsigned flags) __attribute__ ((weak));
void __tsan_mutex_post_unlock (void *addr, unsigned flags) __attribute__ ((weak));
/* The dynamic annotations, for ignoring what GLib does inside a call. */
void AnnotateIgnoreReadsBegin (const char *file, int line) __attribute__ ((weak));
void AnnotateIgnoreReadsEnd (const char *file, int line) __attribute__ ((weak));
void AnnotateIgnoreWritesBegin (const char *file, int line) __attribute__ ((weak));
void AnnotateIgnoreWritesEnd (const char *file, int line) __attribute__ ((weak));

#define MUTEX_TRY_LOCK (1u << 4)
#define MUTEX_TRY_LOCK_FAILED (1u << 5)

#define TSAN(call)                                                                                 \
  do                                                                                               \
    {                                                                                              \
      if (__tsan_acquire != NULL)                                                                  \
        call;                                                                                      \
    }                                                                                              \
  while (0)

#define ACQUIRE(addr) TSAN (__tsan_acquire ((void *) (addr)))
#define RELEASE(addr) TSAN (__tsan_release ((void *) (addr)))
#define LOCKED(addr, flags)                                                                        \
  TSAN ((__tsan_mutex_pre_lock ((void *) (addr), (flags)),                                         \
         __tsan_mutex_post_lock ((void *) (addr), (flags), 0)))
#define UNLOCKED(addr)                                                                             \
  TSAN ((__tsan_mutex_pre_unlock ((void *) (addr), 0),                                             \
         __tsan_mutex_post_unlock ((void *) (addr), 0)))

/* GLib's own functions, found once, before main, while there is one
 * thread. */
static struct
{
  void (*mutex_lock) (GMutex *);
  gboolean (*mutex_trylock) (GMutex *);
  void (*mutex_unlock) (GMutex *);
  void (*mutex_clear) (GMutex *);
  void (*cond_wait) (GCond *, GMutex *);
  gboolean (*cond_wait_until) (GCond *, GMutex *, gint64);
  void (*queue_lock) (GAsyncQueue *);
  void (*queue_unlock) (GAsyncQueue *);
  gpointer (*queue_pop_unlocked) (GAsyncQueue *);
  gpointer (*queue_timeout_pop_unlocked) (GAsyncQueue *, guint64);
  void (*queue_push) (GAsyncQueue *, gpointer);
  void (*queue_push_front) (GAsyncQueue *, gpointer);
  gpointer (*queue_pop) (GAsyncQueue *);
  gpointer (*queue_try_pop) (GAsyncQueue *);
  gpointer (*queue_timeout_pop) (GAsyncQueue *, guint64);
  gint (*queue_length) (GAsyncQueue *);
  gboolean (*once_init_enter) (volatile void *);
  void (*once_init_leave) (volatile void *, gsize);
} real;

static void *
next (const char *name)
{
  return dlsym (RTLD_NEXT, name);
}

__attribute__ ((constructor)) static void
find_real_functions (void)
{
  real.mutex_lock = next ("g_mutex_lock");
  real.mutex_trylock = next ("g_mutex_trylock");
  real.mutex_unlock = next ("g_mutex_unlock");
  real.mutex_clear = next ("g_mutex_clear");
  real.cond_wait = next ("g_cond_wait");
  real.cond_wait_until = next ("g_cond_wait_until");
  real.queue_lock = next ("g_async_queue_lock");
  real.queue_unlock = next ("g_async_queue_unlock");
  real.queue_pop_unlocked = next ("g_async_queue_pop_unlocked");
  real.queue_timeout_pop_unlocked = next ("g_async_queue_timeout_pop_unlocked");
  real.queue_push = next ("g_async_queue_push");
  real.queue_push_front = next ("g_async_queue_push_front");
  real.queue_pop = next ("g_async_queue_pop");
  real.queue_try_pop = next ("g_async_queue_try_pop");
  real.queue_timeout_pop = next ("g_async_queue_timeout_pop");
  real.queue_length = next ("g_async_queue_length");
  real.once_init_enter = next ("g_once_init_enter");
  real.once_init_leave = next ("g_once_init_leave");
}

static void
need (void *function, const char *name)
{
  if (function == NULL)
    {
      fprintf (stderr, "tsan-glib: GLib's %s not found\n", name);
      abort ();
    }
}

/* Around every call into GLib the thread's memory accesses are ignored:
 * what GLib does inside (malloc and free of a GAsyncQueue's list nodes
 * under its own lock, say) is ordered by locks TSan cannot see, and is not
 * the caller's business.  Only a process that calls GLib gets here, and
 * then GLib is loaded. */
static void
ignore_begin (void)
{
  TSAN ((AnnotateIgnoreReadsBegin (__FILE__, __LINE__),
         AnnotateIgnoreWritesBegin (__FILE__, __LINE__)));
}

static void
ignore_end (void)
{
  TSAN (
      (AnnotateIgnoreWritesEnd (__FILE__, __LINE__), AnnotateIgnoreReadsEnd (__FILE__, __LINE__)));
}

/* result = GLib's fn (args), ignored as above. */
#define CALL(fn, ...) (need ((void *) real.fn, #fn), ignore_begin (), real.fn (__VA_ARGS__))
#define END() ignore_end ()

void
g_mutex_lock (GMutex *mutex)
{
  TSAN (__tsan_mutex_pre_lock (mutex, 0));
  CALL (mutex_lock, mutex);
  END ();
  TSAN (__tsan_mutex_post_lock (mutex, 0, 0));
}

gboolean
g_mutex_trylock (GMutex *mutex)
{
  gboolean locked;

  TSAN (__tsan_mutex_pre_lock (mutex, MUTEX_TRY_LOCK));
  locked = CALL (mutex_trylock, mutex);
  END ();
  TSAN (__tsan_mutex_post_lock (mutex, MUTEX_TRY_LOCK | (locked ? 0 : MUTEX_TRY_LOCK_FAILED), 0));
  return locked;
}

void
g_mutex_unlock (GMutex *mutex)
{
  TSAN (__tsan_mutex_pre_unlock (mutex, 0));
  CALL (mutex_unlock, mutex);
  END ();
  TSAN (__tsan_mutex_post_unlock (mutex, 0));
}

void
g_mutex_clear (GMutex *mutex)
{
  TSAN (__tsan_mutex_destroy (mutex, 0));
  CALL (mutex_clear, mutex);
  END ();
}

void
g_cond_wait (GCond *cond, GMutex *mutex)
{
  UNLOCKED (mutex);
  CALL (cond_wait, cond, mutex);
  END ();
  LOCKED (mutex, 0);
}

gboolean
g_cond_wait_until (GCond *cond, GMutex *mutex, gint64 end_time)
{
  gboolean signalled;

  UNLOCKED (mutex);
  signalled = CALL (cond_wait_until, cond, mutex, end_time);
  END ();
  LOCKED (mutex, 0);
  return signalled;
}

/* The queue's own lock, held by the caller between these two. */
void
g_async_queue_lock (GAsyncQueue *queue)
{
  TSAN (__tsan_mutex_pre_lock (queue, 0));
  CALL (queue_lock, queue);
  END ();
  TSAN (__tsan_mutex_post_lock (queue, 0, 0));
}

void
g_async_queue_unlock (GAsyncQueue *queue)
{
  TSAN (__tsan_mutex_pre_unlock (queue, 0));
  CALL (queue_unlock, queue);
  END ();
  TSAN (__tsan_mutex_post_unlock (queue, 0));
}

/* Called with the lock held, they wait for an item with it dropped (when
 * one is there at once they keep it: modelling a drop anyway only ever
 * hides a race, never invents one). */
gpointer
g_async_queue_pop_unlocked (GAsyncQueue *queue)
{
  gpointer item;

  UNLOCKED (queue);
  item = CALL (queue_pop_unlocked, queue);
  END ();
  LOCKED (queue, 0);
  return item;
}

gpointer
g_async_queue_timeout_pop_unlocked (GAsyncQueue *queue, guint64 timeout)
{
  gpointer item;

  UNLOCKED (queue);
  item = CALL (queue_timeout_pop_unlocked, queue, timeout);
  END ();
  LOCKED (queue, 0);
  return item;
}

/* The calls that take the lock themselves: what the caller wrote before
 * is released with the item, and what others released before is acquired
 * with it.  (A blocking pop waits with the lock dropped, so these are not
 * modelled as holding it.) */
void
g_async_queue_push (GAsyncQueue *queue, gpointer data)
{
  RELEASE (queue);
  CALL (queue_push, queue, data);
  END ();
  ACQUIRE (queue);
}

void
g_async_queue_push_front (GAsyncQueue *queue, gpointer data)
{
  RELEASE (queue);
  CALL (queue_push_front, queue, data);
  END ();
  ACQUIRE (queue);
}

gpointer
g_async_queue_pop (GAsyncQueue *queue)
{
  gpointer item;

  RELEASE (queue);
  item = CALL (queue_pop, queue);
  END ();
  ACQUIRE (queue);
  return item;
}

gpointer
g_async_queue_try_pop (GAsyncQueue *queue)
{
  gpointer item;

  RELEASE (queue);
  item = CALL (queue_try_pop, queue);
  END ();
  ACQUIRE (queue);
  return item;
}

gpointer
g_async_queue_timeout_pop (GAsyncQueue *queue, guint64 timeout)
{
  gpointer item;

  RELEASE (queue);
  item = CALL (queue_timeout_pop, queue, timeout);
  END ();
  ACQUIRE (queue);
  return item;
}

gint
g_async_queue_length (GAsyncQueue *queue)
{
  gint length;

  RELEASE (queue);
  length = CALL (queue_length, queue);
  END ();
  ACQUIRE (queue);
  return length;
}

/* glib.h makes these macros around the functions. */
#undef g_once_init_enter
#undef g_once_init_leave

gboolean
g_once_init_enter (volatile void *location)
{
  gboolean first = CALL (once_init_enter, location);

  END ();
  /* FALSE: another thread initialised it; what it wrote is ours now. */
  if (!first)
    ACQUIRE (location);
  return first;
}

void
g_once_init_leave (volatile void *location, gsize result)
{
  RELEASE (location);
  CALL (once_init_leave, location, result);
  END ();
}
