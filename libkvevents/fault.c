/* fault.c: the fault injection seam of the testing build; see fault.h.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "fault.h"

static gint armed_at[KVEV_FAULT_N_POINTS];
static gint calls[KVEV_FAULT_N_POINTS];
static gint persistent[KVEV_FAULT_N_POINTS];

static void
arm (KvevFaultPoint point, guint nth, gboolean from_then_on)
{
  g_atomic_int_set (&armed_at[point], 0);
  g_atomic_int_set (&calls[point], 0);
  g_atomic_int_set (&persistent[point], from_then_on);
  g_atomic_int_set (&armed_at[point], (gint) nth);
}

void
kvev_fault_arm (KvevFaultPoint point, guint nth)
{
  arm (point, nth, FALSE);
}

void
kvev_fault_arm_from (KvevFaultPoint point, guint nth)
{
  arm (point, nth, TRUE);
}

gboolean
kvev_fault_hit (KvevFaultPoint point)
{
  gint nth = g_atomic_int_get (&armed_at[point]);

  if (nth == 0)
    return FALSE;
  if (g_atomic_int_get (&persistent[point]))
    return g_atomic_int_add (&calls[point], 1) + 1 >= nth;
  return g_atomic_int_add (&calls[point], 1) + 1 == nth;
}

static gint64 fixed_clock_ms;

void
kvev_fault_set_clock (gint64 timestamp_ms)
{
  __atomic_store_n (&fixed_clock_ms, timestamp_ms, __ATOMIC_RELAXED);
}

gint64
kvev_fault_now_ms (void)
{
  gint64 fixed = __atomic_load_n (&fixed_clock_ms, __ATOMIC_RELAXED);

  return fixed != 0 ? fixed : g_get_real_time () / 1000;
}
