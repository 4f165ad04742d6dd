/* precondition.c: criticals for a caller's errors, a few per call site
 * and window, then a count; see precondition.h.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "precondition.h"

#include <inttypes.h>

/* Only failing calls take it, so one lock for every call site costs a
 * correct master nothing. */
static GMutex limits_lock;

#ifdef KVEV_TESTING
static gboolean clock_set;
static gint64 clock_now;

void
kvev_log_limit_set_clock (gint64 microseconds)
{
  g_mutex_lock (&limits_lock);
  clock_set = TRUE;
  clock_now = microseconds;
  g_mutex_unlock (&limits_lock);
}
#endif

static gint64
now_locked (void)
{
#ifdef KVEV_TESTING
  if (clock_set)
    return clock_now;
#endif
  return g_get_monotonic_time ();
}

/* Whether this critical is shown; *untold is how many the window that
 * just ended did not show, to tell before it. */
static gboolean
limit_take (KvevLogLimit *limit, guint64 *untold)
{
  gboolean show;
  gint64 now;

  g_mutex_lock (&limits_lock);
  now = now_locked ();
  *untold = 0;
  if (limit->shown == 0 || now - limit->window_start >= KVEV_LOG_LIMIT_SECONDS * G_USEC_PER_SEC)
    {
      *untold = limit->suppressed;
      limit->window_start = now;
      limit->shown = 0;
      limit->suppressed = 0;
    }
  show = limit->shown < KVEV_LOG_LIMIT_BURST;
  if (show)
    limit->shown++;
  else
    limit->suppressed++;
  g_mutex_unlock (&limits_lock);
  return show;
}

/* Logged outside the lock: the master's log handler may call back into
 * the library, wrongly again. */
static void
log_critical (const char *function, const char *message, guint64 untold)
{
  if (untold > 0)
    /* TRANSLATORS: a library function, the critical it logged (in
     * English, as GLib's own), how many more it did not show, and the
     * seconds of the window they fell in. */
    g_critical (_ ("%s: %s: %" PRIu64 " more like this in the last %u s"), function, message,
                (uint64_t) untold, (guint) KVEV_LOG_LIMIT_SECONDS);
  g_critical ("%s: %s", function, message);
}

void
kvev_critical_limited (KvevLogLimit *limit, const char *function, const char *message)
{
  guint64 untold;

  if (limit_take (limit, &untold))
    log_critical (function, message, untold);
}

void
kvev_precondition_failed (KvevLogLimit *limit, const char *function, const char *expression)
{
  g_autofree char *message = NULL;
  guint64 untold;

  /* A loop of bad calls formats nothing once its budget is spent. */
  if (!limit_take (limit, &untold))
    return;
  message = g_strdup_printf ("assertion '%s' failed", expression);
  log_critical (function, message, untold);
}
