/* send-budget.h: how long subscribers whose pipes are full may hold the stream
 * back (kv_events_send_wait_ms; kvevents(7), SLOW SUBSCRIBERS).
 *
 * The socket refuses a message while a subscriber's pipe is full
 * (ZMQ_XPUB_NODROP), and the worker may wait for room.  Waiting only
 * ever delays the other subscribers: with one subscription there is
 * nobody to delay, and the wait has no limit, so that the loss lands in
 * the queue, which counts it.  With several, the wait comes out of a
 * budget of wait_ms that refills at wait_ms a second, so that a
 * subscriber that stalls or stays slow costs the others at most that
 * share of their time; once it is spent the message goes without the
 * full pipes.  Plain arithmetic on the times given, for the unit tests.
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEVENTS_SEND_BUDGET_H
#define KVEVENTS_SEND_BUDGET_H

#include <glib.h>

G_BEGIN_DECLS

typedef struct
{
  gint64 capacity_us;
  gint64 budget_us;
  gint64 refilled_at; /* monotonic time the budget was last brought up to date */
} KvevSendBudget;

void kvev_send_budget_init (KvevSendBudget *budget, guint32 wait_ms, gint64 now);

/* How long the worker may wait for room now: -1 for no limit (a single
 * subscription), else the budget left, in microseconds. */
gint64 kvev_send_budget_allowance (KvevSendBudget *budget, guint64 subscriptions, gint64 now);

/* Takes a wait that ended at now out of the budget. */
void kvev_send_budget_spend (KvevSendBudget *budget, gint64 waited_us, gint64 now);

G_END_DECLS

#endif /* KVEVENTS_SEND_BUDGET_H */
