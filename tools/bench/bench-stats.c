/* bench-stats.c: summaries of samples; see bench-stats.h.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include "bench-stats.h"

#include <math.h>

static int
compare_doubles (gconstpointer a, gconstpointer b)
{
  double x = *(const double *) a;
  double y = *(const double *) b;

  return (x > y) - (x < y);
}

double
bench_median (const GArray *values)
{
  g_autoptr (GArray) sorted = NULL;
  guint n, i;

  /* Over the measured runs only, as bench_min () and bench_max () are:
   * a NaN (a run with nothing to divide by) has no place in the order,
   * and sorting with it would make the median depend on where it was. */
  sorted = g_array_sized_new (FALSE, FALSE, sizeof (double), values != NULL ? values->len : 0);
  for (i = 0; values != NULL && i < values->len; i++)
    if (!isnan (g_array_index (values, double, i)))
      g_array_append_val (sorted, g_array_index (values, double, i));
  n = sorted->len;
  if (n == 0)
    return NAN;
  g_array_sort (sorted, compare_doubles);
  if (n % 2 == 1)
    return g_array_index (sorted, double, n / 2);
  return (g_array_index (sorted, double, n / 2 - 1) + g_array_index (sorted, double, n / 2)) / 2;
}

double
bench_min (const GArray *values)
{
  double m = NAN;
  guint i;

  for (i = 0; values != NULL && i < values->len; i++)
    if (isnan (m) || g_array_index (values, double, i) < m)
      m = g_array_index (values, double, i);
  return m;
}

double
bench_max (const GArray *values)
{
  double m = NAN;
  guint i;

  for (i = 0; values != NULL && i < values->len; i++)
    if (isnan (m) || g_array_index (values, double, i) > m)
      m = g_array_index (values, double, i);
  return m;
}

double
bench_sum (const GArray *values)
{
  double s = 0;
  guint i;

  if (values == NULL || values->len == 0)
    return NAN;
  for (i = 0; i < values->len; i++)
    s += g_array_index (values, double, i);
  return s;
}

static int
compare_gint64 (gconstpointer a, gconstpointer b)
{
  gint64 x = *(const gint64 *) a;
  gint64 y = *(const gint64 *) b;

  return (x > y) - (x < y);
}

void
bench_sort_ns (GArray *samples)
{
  g_array_sort (samples, compare_gint64);
}

gint64
bench_percentile_ns (const GArray *sorted, double q)
{
  gsize index;

  if (sorted->len == 0)
    return -1;
  index = (gsize) ceil (q * sorted->len);
  index = index == 0 ? 0 : index - 1;
  return g_array_index (sorted, gint64, MIN (index, sorted->len - 1));
}
