/* send-budget.c: the wait budget for full pipes; see send-budget.h.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "send-budget.h"

void
kvev_hold_init (KvevHold *hold, guint32 wait_ms, gint64 now)
{
  hold->capacity_us = (gint64) wait_ms * 1000;
  hold->budget_us = hold->capacity_us;
  hold->refilled_at = now;
}

/* The budget refills at capacity_us a second: a full refill takes one
 * second whatever the capacity. */
static void
refill (KvevHold *hold, gint64 now)
{
  gint64 elapsed_us = now - hold->refilled_at;

  if (elapsed_us <= 0)
    return;
  hold->refilled_at = now;
  if (elapsed_us >= G_USEC_PER_SEC)
    hold->budget_us = hold->capacity_us;
  else
    hold->budget_us
        = MIN (hold->capacity_us, hold->budget_us + hold->capacity_us * elapsed_us / G_USEC_PER_SEC);
}

gint64
kvev_hold_allowance (KvevHold *hold, guint64 subscriptions, gint64 now)
{
  refill (hold, now);
  if (subscriptions <= 1 && hold->capacity_us > 0)
    return -1;
  return hold->budget_us;
}

void
kvev_hold_spend (KvevHold *hold, gint64 waited_us, gint64 now)
{
  refill (hold, now);
  hold->budget_us = MAX (0, hold->budget_us - waited_us);
}
