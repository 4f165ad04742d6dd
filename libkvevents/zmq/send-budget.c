/* send-budget.c: the wait budget for full pipes; see send-budget.h.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "send-budget.h"

void
kvev_send_budget_init (KvevSendBudget *budget, guint32 wait_ms, gint64 now)
{
  budget->capacity_us = (gint64) wait_ms * 1000;
  budget->budget_us = budget->capacity_us;
  budget->refilled_at = now;
}

/* The budget refills at capacity_us a second: a full refill takes one
 * second whatever the capacity. */
static void
refill (KvevSendBudget *budget, gint64 now)
{
  gint64 elapsed_us = now - budget->refilled_at;

  if (elapsed_us <= 0)
    return;
  budget->refilled_at = now;
  if (elapsed_us >= G_USEC_PER_SEC)
    budget->budget_us = budget->capacity_us;
  else
    budget->budget_us = MIN (budget->capacity_us,
                             budget->budget_us + budget->capacity_us * elapsed_us / G_USEC_PER_SEC);
}

gint64
kvev_send_budget_allowance (KvevSendBudget *budget, guint64 subscriptions, gint64 now)
{
  refill (budget, now);
  if (subscriptions <= 1 && budget->capacity_us > 0)
    return -1;
  return budget->budget_us;
}

void
kvev_send_budget_spend (KvevSendBudget *budget, gint64 waited_us, gint64 now)
{
  refill (budget, now);
  budget->budget_us = MAX (0, budget->budget_us - waited_us);
}
