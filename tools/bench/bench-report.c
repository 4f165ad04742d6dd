/* bench-report.c: the figures kvevents-bench collects, and their two
 * renderings: a table for people and one JSON object for comparing runs
 * across commits.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include "bench-report.h"
#include "bench-stats.h"
#include "kvtool.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <glib/gi18n.h>
#include <msgpack.h>
#include <zmq.h>

static GArray *
doubles_new (void)
{
  return g_array_new (FALSE, FALSE, sizeof (double));
}

/* ---- the model --------------------------------------------------------- */

static void
extra_free (gpointer data)
{
  BenchExtra *extra = data;

  g_free (extra->name);
  g_array_unref (extra->values);
  g_free (extra);
}

static void
figure_free (gpointer data)
{
  BenchFigure *figure = data;

  g_free (figure->id);
  g_free (figure->label);
  g_array_unref (figure->values);
  g_array_unref (figure->ratios);
  g_ptr_array_unref (figure->extras);
  g_free (figure->note);
  g_free (figure);
}

static void
section_free (gpointer data)
{
  BenchSection *section = data;

  g_free (section->title);
  g_ptr_array_unref (section->figures);
  g_ptr_array_unref (section->info);
  g_free (section);
}

static void
target_free (gpointer data)
{
  BenchTarget *target = data;

  g_free (target->label);
  g_free (target->basis);
  g_free (target);
}

BenchSection *
bench_report_add_section (BenchReport *report, const char *id, const char *title)
{
  BenchSection *section = g_new0 (BenchSection, 1);

  if (report->sections == NULL)
    {
      report->sections = g_ptr_array_new_with_free_func (section_free);
      report->targets = g_ptr_array_new_with_free_func (target_free);
    }
  section->id = id;
  section->title = g_strdup (title);
  section->figures = g_ptr_array_new_with_free_func (figure_free);
  section->info = g_ptr_array_new_with_free_func (extra_free);
  g_ptr_array_add (report->sections, section);
  return section;
}

BenchSection *
bench_report_find_section (const BenchReport *report, const char *id)
{
  guint i;

  for (i = 0; report->sections != NULL && i < report->sections->len; i++)
    {
      BenchSection *section = g_ptr_array_index (report->sections, i);

      if (strcmp (section->id, id) == 0)
        return section;
    }
  return NULL;
}

BenchFigure *
bench_section_add_figure (BenchSection *section, const char *id, const char *label,
                          const char *unit, BenchFigure *baseline)
{
  BenchFigure *figure = g_new0 (BenchFigure, 1);

  figure->id = g_strdup (id);
  figure->label = g_strdup (label);
  figure->unit = unit;
  figure->values = doubles_new ();
  figure->baseline = baseline;
  figure->ratios = doubles_new ();
  figure->extras = g_ptr_array_new_with_free_func (extra_free);
  g_ptr_array_add (section->figures, figure);
  return figure;
}

BenchFigure *
bench_report_find_figure (const BenchReport *report, const char *section_id, const char *figure_id)
{
  BenchSection *section = bench_report_find_section (report, section_id);
  guint i;

  for (i = 0; section != NULL && i < section->figures->len; i++)
    {
      BenchFigure *figure = g_ptr_array_index (section->figures, i);

      if (strcmp (figure->id, figure_id) == 0)
        return figure;
    }
  return NULL;
}

void
bench_figure_add (BenchFigure *figure, double value)
{
  if (figure->baseline != NULL)
    {
      guint run = figure->values->len;
      double ratio = NAN;

      /* The baseline of this run is measured first, in the same run. */
      if (run < figure->baseline->values->len)
        {
          double base = g_array_index (figure->baseline->values, double, run);

          if (base != 0 && !isnan (base) && !isnan (value))
            ratio = value / base;
        }
      g_array_append_val (figure->ratios, ratio);
    }
  g_array_append_val (figure->values, value);
}

static BenchExtra *
find_extra (GPtrArray *extras, const char *name)
{
  guint i;

  for (i = 0; i < extras->len; i++)
    {
      BenchExtra *extra = g_ptr_array_index (extras, i);

      if (strcmp (extra->name, name) == 0)
        return extra;
    }
  return NULL;
}

static void
append_extra (GPtrArray *extras, const char *name, double value)
{
  BenchExtra *extra = find_extra (extras, name);

  if (extra == NULL)
    {
      extra = g_new0 (BenchExtra, 1);
      extra->name = g_strdup (name);
      extra->values = doubles_new ();
      g_ptr_array_add (extras, extra);
    }
  g_array_append_val (extra->values, value);
}

void
bench_figure_add_extra (BenchFigure *figure, const char *name, double value)
{
  append_extra (figure->extras, name, value);
}

const BenchExtra *
bench_figure_find_extra (const BenchFigure *figure, const char *name)
{
  return find_extra (figure->extras, name);
}

void
bench_figure_set_note (BenchFigure *figure, char *note)
{
  g_free (figure->note);
  figure->note = note;
}

void
bench_section_set_info (BenchSection *section, const char *name, double value)
{
  BenchExtra *extra = find_extra (section->info, name);

  if (extra != NULL)
    g_array_set_size (extra->values, 0);
  append_extra (section->info, name, value);
}

/* Another run's value: the table prints the median, the JSON every run. */
void
bench_section_add_info (BenchSection *section, const char *name, double value)
{
  append_extra (section->info, name, value);
}

double
bench_section_get_info (const BenchSection *section, const char *name)
{
  BenchExtra *extra = find_extra (section->info, name);

  return extra != NULL ? bench_median (extra->values) : NAN;
}

void
bench_report_add_target (BenchReport *report, const char *id, const char *label, double value,
                         BenchOp op, double limit, const char *unit, const char *basis)
{
  BenchTarget *target = g_new0 (BenchTarget, 1);

  target->id = id;
  target->label = g_strdup (label);
  target->value = value;
  target->op = op;
  target->limit = limit;
  target->unit = unit;
  target->basis = g_strdup (basis);
  g_ptr_array_add (report->targets, target);
}

static gboolean
target_holds (const BenchTarget *target)
{
  if (isnan (target->value))
    return FALSE;
  return target->op == BENCH_AT_MOST ? target->value <= target->limit
                                     : target->value >= target->limit;
}

void
bench_report_free (BenchReport *report)
{
  if (report == NULL)
    return;
  g_clear_pointer (&report->sections, g_ptr_array_unref);
  g_clear_pointer (&report->targets, g_ptr_array_unref);
}

/* ---- the table --------------------------------------------------------- */

/* Compact, so that events/s and ns fit one column. */
static char *
format_number (double v)
{
  double a = fabs (v);

  if (isnan (v))
    return g_strdup ("-");
  if (v == floor (v) && a < 1e6)
    return g_strdup_printf ("%.0f", v);
  if (a >= 1e7)
    return g_strdup_printf ("%.1fM", v / 1e6);
  if (a >= 1e6)
    return g_strdup_printf ("%.2fM", v / 1e6);
  if (a >= 1e4)
    return g_strdup_printf ("%.0f", v);
  if (a >= 100)
    return g_strdup_printf ("%.1f", v);
  return g_strdup_printf ("%.2f", v);
}

static char *
format_ratio (const BenchFigure *figure)
{
  double median = bench_median (figure->ratios);

  if (figure->baseline == NULL)
    return g_strdup ("");
  if (isnan (median))
    return g_strdup ("-");
  if (figure->ratios->len == 1)
    return g_strdup_printf ("%.2fx", median);
  return g_strdup_printf ("%.2fx (%.2f-%.2f)", median, bench_min (figure->ratios),
                          bench_max (figure->ratios));
}

/* printf's widths count bytes; labels are translated text. */
static void
print_padded (const char *text, glong width)
{
  glong len = g_utf8_strlen (text, -1);

  fputs (text, stdout);
  for (; len < width; len++)
    fputc (' ', stdout);
}

static void
print_section (const BenchSection *section)
{
  glong label_width = 0;
  glong unit_width = 0;
  glong ratio_width = 0;
  guint i;

  for (i = 0; i < section->figures->len; i++)
    {
      const BenchFigure *figure = g_ptr_array_index (section->figures, i);
      g_autofree char *ratio = format_ratio (figure);

      label_width = MAX (label_width, g_utf8_strlen (figure->label, -1));
      unit_width = MAX (unit_width, (glong) strlen (figure->unit));
      ratio_width = MAX (ratio_width, (glong) strlen (ratio));
    }
  ratio_width = MAX (ratio_width, g_utf8_strlen (_ ("ratio"), -1));

  printf ("\n%s\n", section->title);
  printf ("  ");
  print_padded ("", label_width);
  printf (" %9s %9s %9s  ", _ ("median"), _ ("min"), _ ("max"));
  print_padded ("", unit_width);
  printf ("  ");
  print_padded (_ ("ratio"), ratio_width);
  printf ("  %s\n", _ ("baseline / notes"));

  for (i = 0; i < section->figures->len; i++)
    {
      const BenchFigure *figure = g_ptr_array_index (section->figures, i);
      g_autofree char *median = format_number (bench_median (figure->values));
      g_autofree char *min = format_number (bench_min (figure->values));
      g_autofree char *max = format_number (bench_max (figure->values));
      g_autofree char *ratio = format_ratio (figure);
      GString *notes = g_string_new (NULL);

      if (figure->baseline != NULL)
        g_string_append_printf (notes, _ ("vs %s"), figure->baseline->id);
      if (figure->note != NULL)
        g_string_append_printf (notes, "%s%s", notes->len > 0 ? "; " : "", figure->note);

      printf ("  ");
      print_padded (figure->label, label_width);
      printf (" %9s %9s %9s  ", median, min, max);
      print_padded (figure->unit, unit_width);
      printf ("  ");
      print_padded (ratio, ratio_width);
      printf ("  %s\n", notes->str);
      g_string_free (notes, TRUE);
    }
  for (i = 0; i < section->info->len; i++)
    {
      const BenchExtra *info = g_ptr_array_index (section->info, i);
      g_autofree char *value = format_number (bench_median (info->values));

      printf ("%s%s = %s", i == 0 ? "  " : ", ", info->name, value);
    }
  if (section->info->len > 0)
    printf ("\n");
}

static char *
format_target_value (const BenchTarget *target, double v)
{
  if (isnan (v))
    return g_strdup (_ ("not measured"));
  if (strcmp (target->unit, "x") == 0)
    return g_strdup_printf ("%.2fx", v);
  /* Counts in full: a loss of 86080 events, not 8.608e+04. */
  if (v == floor (v) && fabs (v) < 1e15)
    return g_strdup_printf ("%.0f %s", v, target->unit);
  return g_strdup_printf ("%.4g %s", v, target->unit);
}

void
bench_report_print_table (const BenchReport *report)
{
  const BenchSettings *settings = report->settings;
  glong label_width = 0;
  guint i;

  /* TRANSLATORS: the program's name, the library's version. */
  printf (_ ("%s %s: %u runs of %u ms per figure, %u-byte keys, %u CPUs.\n"), settings->tool,
          kvev_version (), settings->runs, settings->duration_ms, settings->key_len,
          g_get_num_processors ());
  printf (_ ("Each value is the median, min and max over the runs.  A ratio compares a\n"
             "figure with the baseline measured just before it in the same run (the\n"
             "median of the per-run ratios, then min-max); absolute numbers are only\n"
             "comparable within one run of the program.\n"));

  if (!isnan (report->load_at_start))
    printf (_ ("Load average when it started: %.2f.\n"), report->load_at_start);
  if (report->load_at_start > 0.25 * g_get_num_processors ())
    printf (_ ("The machine was busy when this started: expect noisy figures.\n"));

  for (i = 0; report->sections != NULL && i < report->sections->len; i++)
    print_section (g_ptr_array_index (report->sections, i));

  if (report->targets == NULL || report->targets->len == 0)
    return;
  printf ("\n%s\n", _ ("Targets"));
  for (i = 0; i < report->targets->len; i++)
    {
      const BenchTarget *target = g_ptr_array_index (report->targets, i);

      label_width = MAX (label_width, g_utf8_strlen (target->label, -1));
    }
  for (i = 0; i < report->targets->len; i++)
    {
      const BenchTarget *target = g_ptr_array_index (report->targets, i);
      g_autofree char *value = format_target_value (target, target->value);
      g_autofree char *limit = format_target_value (target, target->limit);
      const char *verdict = isnan (target->value)   ? _ ("NOT MEASURED")
                            : target_holds (target) ? _ ("holds")
                                                    : _ ("MISSES");

      printf ("  ");
      print_padded (target->label, label_width);
      printf ("  %12s  %s %-12s  %-12s  %s\n", value,
              target->op == BENCH_AT_MOST ? "<=" : ">=", limit, verdict, target->basis);
    }
  printf ("\n");
  printf (_ ("Peak RSS: this process %ld KiB"), bench_peak_rss_kib ());
  if (report->subscriber_peak_rss_kib > 0)
    printf (_ (", subscriber %" PRId64 " KiB"), (int64_t) report->subscriber_peak_rss_kib);
  printf (_ ("; %.1f s in all; load average at the end %.2f.\n"),
          (bench_now_ns () - report->started_ns) / 1e9, bench_load_average ());
}

/* ---- JSON -------------------------------------------------------------- */

/* Labels and notes are translated text: valid UTF-8. */
static void
json_string (GString *out, const char *text)
{
  kvt_json_append_utf8 (out, text, strlen (text));
}

static void
json_number (GString *out, double v)
{
  char buffer[G_ASCII_DTOSTR_BUF_SIZE];

  if (isnan (v) || isinf (v))
    {
      g_string_append (out, "null");
      return;
    }
  if (v == floor (v) && fabs (v) < 1e15)
    g_string_append_printf (out, "%.0f", v);
  else
    g_string_append (out, g_ascii_formatd (buffer, sizeof buffer, "%.6g", v));
}

static void
json_summary (GString *out, const GArray *values)
{
  guint i;

  g_string_append (out, "{\"median\": ");
  json_number (out, bench_median (values));
  g_string_append (out, ", \"min\": ");
  json_number (out, bench_min (values));
  g_string_append (out, ", \"max\": ");
  json_number (out, bench_max (values));
  g_string_append (out, ", \"runs\": [");
  for (i = 0; i < values->len; i++)
    {
      if (i > 0)
        g_string_append (out, ", ");
      json_number (out, g_array_index (values, double, i));
    }
  g_string_append (out, "]}");
}

static void
json_extras (GString *out, const GPtrArray *extras)
{
  guint i;

  g_string_append_c (out, '{');
  for (i = 0; i < extras->len; i++)
    {
      const BenchExtra *extra = g_ptr_array_index (extras, i);

      if (i > 0)
        g_string_append (out, ", ");
      json_string (out, extra->name);
      g_string_append (out, ": ");
      json_summary (out, extra->values);
    }
  g_string_append_c (out, '}');
}

static void
json_figure (GString *out, const BenchFigure *figure)
{
  json_string (out, figure->id);
  g_string_append (out, ": {\"label\": ");
  json_string (out, figure->label);
  g_string_append (out, ", \"unit\": ");
  json_string (out, figure->unit);
  g_string_append (out, ", \"value\": ");
  json_summary (out, figure->values);
  g_string_append (out, ", \"baseline\": ");
  if (figure->baseline != NULL)
    {
      json_string (out, figure->baseline->id);
      g_string_append (out, ", \"ratio\": ");
      json_summary (out, figure->ratios);
    }
  else
    g_string_append (out, "null, \"ratio\": null");
  g_string_append (out, ", \"extras\": ");
  json_extras (out, figure->extras);
  g_string_append (out, ", \"note\": ");
  if (figure->note != NULL)
    json_string (out, figure->note);
  else
    g_string_append (out, "null");
  g_string_append_c (out, '}');
}

char *
bench_report_to_json (const BenchReport *report)
{
  const BenchSettings *settings = report->settings;
  GString *out = g_string_new ("{\"tool\": ");
  int zmq_major, zmq_minor, zmq_patch;
  guint i, j;

  zmq_version (&zmq_major, &zmq_minor, &zmq_patch);
  json_string (out, settings->tool);
  g_string_append (out, ", \"version\": ");
  json_string (out, kvev_version ());
  g_string_append_printf (out,
                          ", \"settings\": {\"runs\": %u, \"duration_ms\": %u, "
                          "\"key_len\": %u, \"smoke\": %s}",
                          settings->runs, settings->duration_ms, settings->key_len,
                          settings->smoke ? "true" : "false");
  g_string_append_printf (out,
                          ", \"system\": {\"cpus\": %u, \"glib\": \"%u.%u.%u\", "
                          "\"zmq\": \"%d.%d.%d\", \"msgpack\": ",
                          g_get_num_processors (), glib_major_version, glib_minor_version,
                          glib_micro_version, zmq_major, zmq_minor, zmq_patch);
  json_string (out, msgpack_version ());
  g_string_append (out, ", \"loadavg_start\": ");
  json_number (out, report->load_at_start);
  g_string_append (out, ", \"loadavg_end\": ");
  json_number (out, bench_load_average ());
  g_string_append_c (out, '}');

  for (i = 0; report->sections != NULL && i < report->sections->len; i++)
    {
      const BenchSection *section = g_ptr_array_index (report->sections, i);

      g_string_append (out, ", ");
      json_string (out, section->id);
      g_string_append (out, ": {\"title\": ");
      json_string (out, section->title);
      g_string_append (out, ", \"info\": ");
      json_extras (out, section->info);
      g_string_append (out, ", \"figures\": {");
      for (j = 0; j < section->figures->len; j++)
        {
          if (j > 0)
            g_string_append (out, ", ");
          json_figure (out, g_ptr_array_index (section->figures, j));
        }
      g_string_append (out, "}}");
    }

  g_string_append (out, ", \"targets\": {");
  for (i = 0; report->targets != NULL && i < report->targets->len; i++)
    {
      const BenchTarget *target = g_ptr_array_index (report->targets, i);

      if (i > 0)
        g_string_append (out, ", ");
      json_string (out, target->id);
      g_string_append (out, ": {\"label\": ");
      json_string (out, target->label);
      g_string_append (out, ", \"value\": ");
      json_number (out, target->value);
      g_string_append_printf (
          out, ", \"op\": \"%s\", \"limit\": ", target->op == BENCH_AT_MOST ? "<=" : ">=");
      json_number (out, target->limit);
      g_string_append (out, ", \"unit\": ");
      json_string (out, target->unit);
      g_string_append (out, ", \"holds\": ");
      g_string_append (out, isnan (target->value)   ? "null"
                            : target_holds (target) ? "true"
                                                    : "false");
      g_string_append (out, ", \"basis\": ");
      json_string (out, target->basis);
      g_string_append_c (out, '}');
    }
  g_string_append (out, "}");

  g_string_append_printf (out,
                          ", \"process\": {\"peak_rss_kib\": %ld"
                          ", \"subscriber_peak_rss_kib\": %" G_GINT64_FORMAT ", \"elapsed_s\": ",
                          bench_peak_rss_kib (), report->subscriber_peak_rss_kib);
  json_number (out, (double) (bench_now_ns () - report->started_ns) / 1e9);
  g_string_append (out, "}}\n");
  return g_string_free (out, FALSE);
}
