/* test-bench-stats.c: kvevents-bench's summaries of per-run figures.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include "bench-stats.h"

#include <math.h>

static GArray *
runs (guint n, const double *values)
{
  GArray *array = g_array_new (FALSE, FALSE, sizeof (double));

  g_array_append_vals (array, values, n);
  return array;
}

static void
test_median_plain (void)
{
  static const double odd[] = { 3, 1, 2 };
  static const double even[] = { 4, 1, 3, 2 };
  g_autoptr (GArray) a = runs (G_N_ELEMENTS (odd), odd);
  g_autoptr (GArray) b = runs (G_N_ELEMENTS (even), even);
  g_autoptr (GArray) none = runs (0, NULL);

  g_assert_cmpfloat (bench_median (a), ==, 2);
  g_assert_cmpfloat (bench_median (b), ==, 2.5);
  g_assert_true (isnan (bench_median (none)));
  g_assert_true (isnan (bench_median (NULL)));
}

/* A run with nothing to divide by is NaN.  The median is over the other
 * runs, wherever the NaN stands, as the minimum and maximum are. */
static void
test_median_skips_nan (void)
{
  const double three[] = { 3, NAN, 1 };
  const double first[] = { NAN, 5, 1, 2, 4 };
  const double middle[] = { 5, 1, NAN, 2, 4 };
  const double only[] = { NAN, NAN };
  g_autoptr (GArray) a = runs (G_N_ELEMENTS (three), three);
  g_autoptr (GArray) b = runs (G_N_ELEMENTS (first), first);
  g_autoptr (GArray) c = runs (G_N_ELEMENTS (middle), middle);
  g_autoptr (GArray) d = runs (G_N_ELEMENTS (only), only);

  g_assert_cmpfloat (bench_median (a), ==, 2);
  g_assert_cmpfloat (bench_median (b), ==, 3);
  g_assert_cmpfloat (bench_median (c), ==, 3);
  g_assert_true (isnan (bench_median (d)));
  g_assert_cmpfloat (bench_min (c), ==, 1);
  g_assert_cmpfloat (bench_max (c), ==, 5);
}

/* The nearest rank, as the subscriber reports its latency quantiles: the
 * smallest sample with at least q of them at or below it. */
static void
test_percentile (void)
{
  static const gint64 samples[] = { 50, 10, 40, 20, 30 };
  g_autoptr (GArray) a = g_array_new (FALSE, FALSE, sizeof (gint64));
  g_autoptr (GArray) none = g_array_new (FALSE, FALSE, sizeof (gint64));

  g_array_append_vals (a, samples, G_N_ELEMENTS (samples));
  bench_sort_ns (a);
  g_assert_cmpint (bench_percentile_ns (a, 0.01), ==, 10);
  g_assert_cmpint (bench_percentile_ns (a, 0.20), ==, 10);
  g_assert_cmpint (bench_percentile_ns (a, 0.50), ==, 30);
  g_assert_cmpint (bench_percentile_ns (a, 0.99), ==, 50);
  g_assert_cmpint (bench_percentile_ns (a, 1.0), ==, 50);
  g_assert_cmpint (bench_percentile_ns (none, 0.5), ==, -1);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/kvevents/bench/median", test_median_plain);
  g_test_add_func ("/kvevents/bench/median-skips-nan", test_median_skips_nan);
  g_test_add_func ("/kvevents/bench/percentile", test_percentile);
  return g_test_run ();
}
