/* test-send-budget.c: the wait budget for full pipes (libkvevents/zmq/send-budget.h).
 * SPDX-License-Identifier: Apache-2.0
 */
#include "zmq/send-budget.h"

#define MS 1000

static void
test_sole_subscription (void)
{
  KvevSendBudget budget;

  kvev_send_budget_init (&budget, 100, 0);
  /* Waiting delays nobody else: no limit, however long it waited. */
  g_assert_cmpint (kvev_send_budget_allowance (&budget, 1, 0), ==, -1);
  kvev_send_budget_spend (&budget, 5000 * MS, 5000 * MS);
  g_assert_cmpint (kvev_send_budget_allowance (&budget, 0, 5000 * MS), ==, -1);
  g_assert_cmpint (kvev_send_budget_allowance (&budget, 1, 5000 * MS), ==, -1);
}

static void
test_budget (void)
{
  KvevSendBudget budget;

  kvev_send_budget_init (&budget, 100, 0);
  g_assert_cmpint (kvev_send_budget_allowance (&budget, 2, 0), ==, 100 * MS);
  kvev_send_budget_spend (&budget, 60 * MS, 60 * MS);
  g_assert_cmpint (kvev_send_budget_allowance (&budget, 2, 60 * MS), ==, 40 * MS);
  kvev_send_budget_spend (&budget, 60 * MS, 120 * MS);
  /* Spent: the message goes without the full pipes. */
  g_assert_cmpint (kvev_send_budget_allowance (&budget, 8, 120 * MS), ==, 0);
  /* 100 ms a second comes back: 10 ms in 100 ms, all of it in 1 s. */
  g_assert_cmpint (kvev_send_budget_allowance (&budget, 2, 220 * MS), ==, 10 * MS);
  g_assert_cmpint (kvev_send_budget_allowance (&budget, 2, 5000 * MS), ==, 100 * MS);
  /* Never more than the capacity, however long the stream flowed. */
  g_assert_cmpint (kvev_send_budget_allowance (&budget, 2, 9000 * MS), ==, 100 * MS);
}

static void
test_share_of_a_second (void)
{
  KvevSendBudget budget;
  gint64 now = 0, waited = 0;

  /* A subscriber that stays slow: every wait takes what the budget
   * allows, then the stream runs for a millisecond.  Over 10 s the
   * others were held back a tenth of the time at most. */
  kvev_send_budget_init (&budget, 100, 0);
  while (now < 10000 * MS)
    {
      gint64 allowance = kvev_send_budget_allowance (&budget, 3, now);

      now += allowance;
      waited += allowance;
      kvev_send_budget_spend (&budget, allowance, now);
      now += MS;
    }
  g_assert_cmpint (waited, <=, 1100 * MS);
  g_assert_cmpint (waited, >=, 900 * MS);
}

static void
test_never_wait (void)
{
  KvevSendBudget budget;

  kvev_send_budget_init (&budget, 0, 0);
  g_assert_cmpint (kvev_send_budget_allowance (&budget, 1, 0), ==, 0);
  g_assert_cmpint (kvev_send_budget_allowance (&budget, 2, 2000 * MS), ==, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/kvevents/send-budget/sole-subscription", test_sole_subscription);
  g_test_add_func ("/kvevents/send-budget/budget", test_budget);
  g_test_add_func ("/kvevents/send-budget/share-of-a-second", test_share_of_a_second);
  g_test_add_func ("/kvevents/send-budget/never-wait", test_never_wait);
  return g_test_run ();
}
