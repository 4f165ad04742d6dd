/* precondition.h: the public entry points' argument checks.  They are
 * GLib's g_return_if_fail() and g_return_val_if_fail(), returning the
 * same values, except that a master calling with bad arguments in a loop
 * gets a few criticals and then a count, not one critical per call
 * (kvevents(7), LOGGING).  Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEVENTS_PRECONDITION_H
#define KVEVENTS_PRECONDITION_H

#include "internal.h"

G_BEGIN_DECLS

/* Per call site: a bug repeats at one place, and a flood there must not
 * hide the first critical of another bug elsewhere.  Each check has its
 * own, static and zero-initialised; precondition.c's lock guards them. */
typedef struct
{
  gint64 window_start; /* monotonic microseconds: the window's first critical */
  guint shown;         /* criticals shown in the window; 0 before the first */
  guint64 suppressed;  /* the others, told when the next window begins */
} KvevLogLimit;

/* The first KVEV_LOG_LIMIT_BURST criticals of a call site in a window
 * of KVEV_LOG_LIMIT_SECONDS are shown: enough to see the bug, its
 * arguments and whether it repeats, few enough that a loop cannot fill
 * the master's log or slow it down on stderr. */
#define KVEV_LOG_LIMIT_BURST 10
#define KVEV_LOG_LIMIT_SECONDS 10

/* A critical, "FUNCTION: MESSAGE", under limit's budget.  The first one
 * after a window in which some were not shown first says how many. */
void kvev_critical_limited (KvevLogLimit *limit, const char *function, const char *message);

/* GLib's text for a failed precondition, under limit's budget. */
void kvev_precondition_failed (KvevLogLimit *limit, const char *function, const char *expression);

/* As GLib's: G_DISABLE_CHECKS removes the checks themselves, so a bad
 * argument is then undefined behaviour, as with g_return_if_fail(). */
#ifdef G_DISABLE_CHECKS
#define kvev_return_if_fail(expr)                                                                  \
  G_STMT_START { (void) 0; }                                                                       \
  G_STMT_END
#define kvev_return_val_if_fail(expr, val)                                                         \
  G_STMT_START { (void) 0; }                                                                       \
  G_STMT_END
#else
/* text is the expression as the caller wrote it, before expansion;
 * value is empty for a function that returns nothing. */
#define kvev_return_if_fail_(expr, text, value)                                                    \
  G_STMT_START                                                                                     \
  {                                                                                                \
    if (G_UNLIKELY (!(expr)))                                                                      \
      {                                                                                            \
        static KvevLogLimit kvev_limit_;                                                           \
        kvev_precondition_failed (&kvev_limit_, G_STRFUNC, text);                                  \
        return value;                                                                              \
      }                                                                                            \
  }                                                                                                \
  G_STMT_END
#define kvev_return_if_fail(expr) kvev_return_if_fail_ (expr, #expr, )
#define kvev_return_val_if_fail(expr, val) kvev_return_if_fail_ (expr, #expr, (val))
#endif

#ifdef KVEV_TESTING
/* From now on the limits' clock reads microseconds, and moves only when
 * set again: a test ends a window, or stops just short of its end, at
 * once and exactly. */
void kvev_log_limit_set_clock (gint64 microseconds);
#endif

G_END_DECLS

#endif /* KVEVENTS_PRECONDITION_H */
