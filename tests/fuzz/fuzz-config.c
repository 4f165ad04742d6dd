/* fuzz-config.c: kvev_config_set () with any flag names and values, then
 * get, copy, validate and the command-line front end on the result.
 *
 * Input: lines, each "NAME=VALUE" (split at the first '=' or NUL; a line
 * without either sets NAME to "").  At most MAX_RECORDS lines are used.
 * The values of the two file flags become the contents of a file in a
 * private directory (fuzz.h): the fuzzer never names a path the library
 * would read.
 *
 * Besides crashes and leaks it checks what the API promises:
 *  - a failed set names an unknown flag or an invalid value, in UTF-8, and
 *    leaves the configuration unchanged;
 *  - a set value reads back (strings exactly, booleans and numbers in a
 *    form that sets the same value again);
 *  - get is NULL exactly for unknown names;
 *  - a copy reads and validates like the original; a disabled
 *    configuration is valid;
 *  - the option group accepts what set accepts, with the same result.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include "fuzz.h"

#include <string.h>

#define MAX_RECORDS 64

typedef enum
{
  TYPE_STRING,
  TYPE_BOOLEAN,
  TYPE_NUMBER,
  TYPE_WORD,
} FlagType;

static GHashTable *flag_types; /* name -> FlagType + 1 */

/* Learns each flag's type from what it accepts, so the target needs no
 * copy of the library's table. */
static void
learn_flag_types (void)
{
  const char *const *names = kvev_config_flags ();

  flag_types = g_hash_table_new (g_str_hash, g_str_equal);
  for (gsize i = 0; names[i] != NULL; i++)
    {
      g_autoptr (KvevConfig) scratch = kvev_config_new ();
      FlagType type;

      if (kvev_config_set (scratch, names[i], "not a number", NULL))
        type = TYPE_STRING;
      else if (kvev_config_set (scratch, names[i], "true", NULL))
        type = TYPE_BOOLEAN;
      else if (kvev_config_set (scratch, names[i], "1", NULL))
        type = TYPE_NUMBER;
      else
        type = TYPE_WORD; /* one of a fixed set, which only its default shows */
      g_hash_table_insert (flag_types, (gpointer) names[i], GINT_TO_POINTER (type + 1));
    }
}

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  kvev_fuzz_init ();
  learn_flag_types ();
  return 0;
}

typedef struct
{
  char *name;
  char *value; /* as set: a file flag's is already a path */
  gboolean ok;
} Record;

static void
record_clear (gpointer data)
{
  Record *record = data;

  g_free (record->name);
  g_free (record->value);
}

/* The form a value takes once set and read back. */
static void
check_read_back (FlagType type, const char *value, const char *got)
{
  switch (type)
    {
    case TYPE_STRING:
      kvev_fuzz_assert (strcmp (got, value) == 0);
      break;
    case TYPE_BOOLEAN:
      kvev_fuzz_assert (strcmp (got, "true") == 0 || strcmp (got, "false") == 0);
      kvev_fuzz_assert ((strcmp (got, "true") == 0)
                        == (g_ascii_strcasecmp (value, "true") == 0
                            || g_ascii_strcasecmp (value, "yes") == 0 || strcmp (value, "1") == 0));
      break;
    case TYPE_NUMBER:
      {
        /* Digits only, no leading zero, the same number. */
        const char *v = value;

        kvev_fuzz_assert (got[0] != '\0');
        kvev_fuzz_assert (strspn (got, "0123456789") == strlen (got));
        kvev_fuzz_assert (got[0] != '0' || got[1] == '\0');
        while (v[0] == '0' && v[1] != '\0')
          v++;
        kvev_fuzz_assert (strcmp (got, v) == 0);
      }
      break;
    case TYPE_WORD:
      /* Any case in, the table's spelling out. */
      kvev_fuzz_assert (g_ascii_strcasecmp (got, value) == 0);
      break;
    }
}

static void
set_one (KvevConfig *config, Record *record)
{
  g_autoptr (GError) error = NULL;
  g_auto (GStrv) before = kvev_fuzz_snapshot (config);
  g_auto (GStrv) after = NULL;
  g_autofree char *got = NULL;
  gpointer type = g_hash_table_lookup (flag_types, record->name);

  record->ok = kvev_config_set (config, record->name, record->value, &error);
  kvev_fuzz_check_error (record->ok, error,
                         KVEV_FUZZ_CODE (KVEV_ERROR_UNKNOWN_FLAG)
                             | KVEV_FUZZ_CODE (KVEV_ERROR_INVALID_VALUE));
  got = kvev_config_get (config, record->name);
  after = kvev_fuzz_snapshot (config);

  /* Known names are exactly the ones get answers. */
  kvev_fuzz_assert ((type != NULL) == (got != NULL));
  if (error != NULL)
    kvev_fuzz_assert ((error->code == KVEV_ERROR_UNKNOWN_FLAG) == (type == NULL));

  if (!record->ok)
    {
      kvev_fuzz_assert (
          kvev_fuzz_snapshot_equal ((const char *const *) before, (const char *const *) after));
      return;
    }

  check_read_back ((FlagType) (GPOINTER_TO_INT (type) - 1), record->value, got);

  /* What get returns, set takes back unchanged. */
  {
    g_autoptr (GError) again_error = NULL;
    g_autofree char *again = NULL;
    g_auto (GStrv) after_again = NULL;

    kvev_fuzz_assert (kvev_config_set (config, record->name, got, &again_error));
    again = kvev_config_get (config, record->name);
    kvev_fuzz_assert (strcmp (again, got) == 0);
    after_again = kvev_fuzz_snapshot (config);
    kvev_fuzz_assert (
        kvev_fuzz_snapshot_equal ((const char *const *) after, (const char *const *) after_again));
  }
}

static gboolean
validate (const KvevConfig *config, char **message)
{
  g_autoptr (GError) error = NULL;
  gboolean ok = kvev_config_validate (config, &error);

  kvev_fuzz_check_error (ok, error,
                         KVEV_FUZZ_CODE (KVEV_ERROR_INCOMPLETE)
                             | KVEV_FUZZ_CODE (KVEV_ERROR_INVALID_VALUE));
  *message = error != NULL ? g_strdup (error->message) : NULL;
  return ok;
}

/* Whether the command line must mean what kvev_config_set () meant: a
 * name GOption can take as it is (lowercase letters, digits and '_', so
 * that turning '_' into '-' gives back exactly one name), and an ASCII
 * value (GOption converts other bytes from the locale's charset first, and
 * a fuzzer runs in the C locale).
 *
 * Not a name whose part after the first '_' is a flag: GOption also takes
 * --GROUP-OPTION, and compares only the characters before the first dash
 * with the group's name, so --kv-kv-events-topic and --k-kv-events-topic
 * are aliases of --kv-events-topic (GLib's behaviour, not the library's:
 * kvev_config_set () rightly refuses kv_kv_events_topic). */
static gboolean
comparable_on_command_line (const Record *record)
{
  const char *underscore = strchr (record->name, '_');

  if (record->name[0] == '\0')
    return FALSE;
  for (const char *p = record->name; *p != '\0'; p++)
    if (!g_ascii_islower (*p) && !g_ascii_isdigit (*p) && *p != '_')
      return FALSE;
  if (underscore != NULL && g_hash_table_contains (flag_types, underscore + 1))
    return FALSE;
  for (const char *p = record->value; *p != '\0'; p++)
    if ((guchar) *p >= 0x80)
      return FALSE;
  return TRUE;
}

/* The same records as --kv-events-...=VALUE options. */
static void
check_option_group (GArray *records, const char *const *expected)
{
  g_autoptr (KvevConfig) config = kvev_config_new ();
  g_autoptr (GOptionContext) context = NULL;
  g_autoptr (GPtrArray) args = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GError) error = NULL;
  gboolean all_ok = TRUE;
  char **argv;
  int argc;
  gboolean ok;

  for (guint i = 0; i < records->len; i++)
    {
      const Record *record = &g_array_index (records, Record, i);

      if (!comparable_on_command_line (record))
        return;
      all_ok = all_ok && record->ok;
    }

  g_ptr_array_add (args, g_strdup ("fuzz-config"));
  for (guint i = 0; i < records->len; i++)
    {
      const Record *record = &g_array_index (records, Record, i);
      g_autofree char *option = g_strdup (record->name);

      g_strdelimit (option, "_", '-');
      g_ptr_array_add (args, g_strdup_printf ("--%s=%s", option, record->value));
    }
  g_ptr_array_add (args, NULL);

  context = g_option_context_new (NULL);
  g_option_context_set_help_enabled (context, FALSE);
  g_option_context_add_group (context, kvev_config_option_group (config));
  /* GOption rearranges argv and may free what it removes: give it a
   * shallow copy, the strings stay owned by args. */
  argc = (int) args->len - 1;
  argv = g_memdup2 (args->pdata, sizeof (char *) * args->len);
  ok = g_option_context_parse (context, &argc, &argv, &error);
  g_free (argv);

  kvev_fuzz_assert (ok == (error == NULL));
  kvev_fuzz_assert (ok == all_ok);
  if (ok)
    {
      g_auto (GStrv) got = kvev_fuzz_snapshot (config);

      kvev_fuzz_assert (kvev_fuzz_snapshot_equal (expected, (const char *const *) got));
    }
  else
    kvev_fuzz_assert (g_utf8_validate (error->message, -1, NULL));
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autoptr (KvevConfig) config = kvev_config_new ();
  g_autoptr (KvevConfig) copy = NULL;
  g_autoptr (GArray) records = g_array_new (FALSE, TRUE, sizeof (Record));
  g_auto (GStrv) snapshot = NULL;
  g_auto (GStrv) copy_snapshot = NULL;
  g_autofree char *message = NULL;
  g_autofree char *copy_message = NULL;
  g_autofree char *enabled = NULL;
  const char *p = (const char *) data, *end = p + size;
  gboolean ok;

  if (flag_types == NULL)
    LLVMFuzzerInitialize (NULL, NULL);
  g_array_set_clear_func (records, record_clear);

  while (p < end && records->len < MAX_RECORDS)
    {
      const char *eol = memchr (p, '\n', (gsize) (end - p));
      const char *line_end = eol != NULL ? eol : end;
      const char *sep = p;
      Record record = { 0 };

      while (sep < line_end && *sep != '=' && *sep != '\0')
        sep++;
      record.name = g_strndup (p, (gsize) (sep - p));
      /* g_strndup () stops at a NUL inside the value too. */
      record.value
          = sep < line_end ? g_strndup (sep + 1, (gsize) (line_end - sep - 1)) : g_strdup ("");
      if (kvev_fuzz_is_file_flag (record.name))
        {
          char *path = kvev_fuzz_file_value (record.name, record.value);

          g_free (record.value);
          record.value = path;
        }
      g_array_append_val (records, record);
      set_one (config, &g_array_index (records, Record, records->len - 1));
      p = line_end + (eol != NULL);
    }

  snapshot = kvev_fuzz_snapshot (config);
  copy = kvev_config_copy (config);
  copy_snapshot = kvev_fuzz_snapshot (copy);
  kvev_fuzz_assert (kvev_fuzz_snapshot_equal ((const char *const *) snapshot,
                                              (const char *const *) copy_snapshot));

  ok = validate (config, &message);
  kvev_fuzz_assert (validate (copy, &copy_message) == ok);
  kvev_fuzz_assert (g_strcmp0 (message, copy_message) == 0);
  enabled = kvev_config_get (config, "enable_kv_events");
  if (strcmp (enabled, "false") == 0)
    kvev_fuzz_assert (ok);

  /* The copy is independent: changing it leaves the original alone. */
  kvev_fuzz_assert (kvev_config_set (copy, "kv_events_topic", "fuzz-copy", NULL));
  {
    g_auto (GStrv) again = kvev_fuzz_snapshot (config);

    kvev_fuzz_assert (
        kvev_fuzz_snapshot_equal ((const char *const *) snapshot, (const char *const *) again));
  }

  check_option_group (records, (const char *const *) snapshot);
  return 0;
}
