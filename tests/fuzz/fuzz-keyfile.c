/* fuzz-keyfile.c: a key file of any bytes through GKeyFile, then
 * kvev_config_load_key_file () and kvev_config_validate ().
 *
 * Input: the key file.  It is loaded into a configuration that already
 * holds a few non-default values, for the default group (NULL), for
 * "kv_events" and for the file's first group.  The values of the two file
 * flags are then replaced by files in a private directory (fuzz.h) before
 * validating: the fuzzer never names a path the library would read.
 *
 * Besides crashes and leaks it checks what the API promises: a load is
 * all or nothing and, when it succeeds, means exactly what
 * kvev_config_set () of every key of the group in order means; a failure
 * is a KVEV_ERROR in UTF-8; loading the same group twice changes nothing
 * the second time.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include "fuzz.h"

#include <string.h>

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  kvev_fuzz_init ();
  return 0;
}

/* GLib 2.74's g_key_file_get_string () sets its GError twice, with a
 * GLib-WARNING ("GError set over the top of a previous GError"), for a
 * value holding an escape it does not know (\q) and ending in a lone
 * backslash: its parser checks for an earlier error in one case and not
 * in the other.  The library unescapes values itself for that reason,
 * but the oracle below still asks GLib, so that every other input checks
 * the library's unescaping against GLib's; inputs that hit the bug are
 * skipped so that every warning can stay fatal.  The escapes are GLib's:
 * \s \n \t \r \\. */
static gboolean
hits_glib_double_error (const char *raw)
{
  gboolean unknown_escape = FALSE;

  for (const char *p = raw; *p != '\0'; p++)
    {
      if (*p != '\\')
        continue;
      p++;
      if (*p == '\0')
        return unknown_escape;
      if (strchr ("sntr\\", *p) == NULL)
        unknown_escape = TRUE;
    }
  return FALSE;
}

static gboolean
group_hits_glib_double_error (GKeyFile *key_file, const char *group)
{
  g_auto (GStrv) keys = g_key_file_get_keys (key_file, group, NULL, NULL);

  for (gsize i = 0; keys != NULL && keys[i] != NULL; i++)
    {
      g_autofree char *raw = g_key_file_get_value (key_file, group, keys[i], NULL);

      if (raw != NULL && hits_glib_double_error (raw))
        return TRUE;
    }
  return FALSE;
}

/* What kvev_config_load_key_file () promises to do, spelled out with
 * kvev_config_set (): TRUE if every key of the group sets. */
static gboolean
load_by_hand (KvevConfig *config, GKeyFile *key_file, const char *group)
{
  g_auto (GStrv) keys = NULL;

  if (!g_key_file_has_group (key_file, group))
    return TRUE;
  keys = g_key_file_get_keys (key_file, group, NULL, NULL);
  for (gsize i = 0; keys != NULL && keys[i] != NULL; i++)
    {
      g_autoptr (GError) error = NULL;
      g_autofree char *value = g_key_file_get_string (key_file, group, keys[i], &error);

      if (error != NULL)
        return FALSE;
      if (value != NULL && !kvev_config_set (config, keys[i], value, NULL))
        return FALSE;
    }
  return TRUE;
}

static void
load_group (KvevConfig *config, GKeyFile *key_file, const char *group)
{
  g_autoptr (KvevConfig) expected = kvev_config_copy (config);
  g_autoptr (GError) error = NULL;
  g_auto (GStrv) before = kvev_fuzz_snapshot (config);
  g_auto (GStrv) after = NULL;
  g_auto (GStrv) by_hand = NULL;
  gboolean expected_ok = load_by_hand (expected, key_file, group != NULL ? group : "kv_events");
  gboolean ok = kvev_config_load_key_file (config, key_file, group, &error);

  kvev_fuzz_check_error (ok, error,
                         KVEV_FUZZ_CODE (KVEV_ERROR_UNKNOWN_FLAG)
                             | KVEV_FUZZ_CODE (KVEV_ERROR_INVALID_VALUE));
  kvev_fuzz_assert (ok == expected_ok);
  after = kvev_fuzz_snapshot (config);
  if (!ok)
    {
      kvev_fuzz_assert (
          kvev_fuzz_snapshot_equal ((const char *const *) before, (const char *const *) after));
      return;
    }
  by_hand = kvev_fuzz_snapshot (expected);
  kvev_fuzz_assert (
      kvev_fuzz_snapshot_equal ((const char *const *) by_hand, (const char *const *) after));

  /* A second load of the same group has nothing left to change. */
  {
    g_auto (GStrv) again = NULL;

    kvev_fuzz_assert (kvev_config_load_key_file (config, key_file, group, NULL));
    again = kvev_fuzz_snapshot (config);
    kvev_fuzz_assert (
        kvev_fuzz_snapshot_equal ((const char *const *) after, (const char *const *) again));
  }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autoptr (GKeyFile) key_file = g_key_file_new ();
  g_autoptr (KvevConfig) config = kvev_config_new ();
  g_autoptr (GError) error = NULL;
  g_autofree char *start_group = NULL;
  gboolean ok;

  kvev_fuzz_init ();

  if (!g_key_file_load_from_data (key_file, (const char *) data, size, G_KEY_FILE_NONE, NULL))
    return 0;

  /* Values a load must keep when it fails, and may replace. */
  kvev_fuzz_assert (kvev_config_set (config, "kv_events_backend_id", "fuzz-backend", NULL));
  kvev_fuzz_assert (kvev_config_set (config, "kv_events_dp_rank", "3", NULL));
  kvev_fuzz_assert (kvev_config_set (config, "kv_events_emit_object_key", "false", NULL));

  start_group = g_key_file_get_start_group (key_file);
  if (group_hits_glib_double_error (key_file, "kv_events")
      || (start_group != NULL && group_hits_glib_double_error (key_file, start_group)))
    return 0;

  load_group (config, key_file, NULL);
  load_group (config, key_file, "kv_events");
  if (start_group != NULL)
    load_group (config, key_file, start_group);

  kvev_fuzz_redirect_files (config);
  ok = kvev_config_validate (config, &error);
  kvev_fuzz_check_error (ok, error,
                         KVEV_FUZZ_CODE (KVEV_ERROR_INCOMPLETE)
                             | KVEV_FUZZ_CODE (KVEV_ERROR_INVALID_VALUE));
  return 0;
}
