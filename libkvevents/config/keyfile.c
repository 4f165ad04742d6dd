/* keyfile.c: the flags from a GKeyFile group, or from a key file by its
 * path, all of them or none, a relative file name in it resolved beside
 * the file.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config-private.h"

#include "precondition.h"

#include <string.h>

/* A key file's value as g_key_file_get_string() reads it: UTF-8, with
 * the escapes \s \n \t \r and \\ undone.  Done here rather than by
 * g_key_file_get_string(), which sets its GError twice (a GLib warning,
 * fatal under G_DEBUG=fatal-warnings) for a value with an unknown escape
 * that also ends in a backslash. */
static char *
key_file_value_unescape (const char *raw, GError **error)
{
  g_autoptr (GString) value = NULL;

  if (!g_utf8_validate (raw, -1, NULL))
    {
      g_set_error_literal (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE,
                           _ ("The value is not UTF-8"));
      return NULL;
    }
  value = g_string_sized_new (strlen (raw));
  for (const char *p = raw; *p != '\0'; p++)
    {
      if (*p != '\\')
        {
          g_string_append_c (value, *p);
          continue;
        }
      p++;
      switch (*p)
        {
        case 's':
          g_string_append_c (value, ' ');
          break;
        case 'n':
          g_string_append_c (value, '\n');
          break;
        case 't':
          g_string_append_c (value, '\t');
          break;
        case 'r':
          g_string_append_c (value, '\r');
          break;
        case '\\':
          g_string_append_c (value, '\\');
          break;
        case '\0':
          g_set_error_literal (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE,
                               _ ("The value ends in a lone backslash"));
          return NULL;
        default:
          {
            /* The whole character after the backslash, which may take
             * several bytes. */
            g_autofree char *sequence = g_strndup (p - 1, (gsize) (g_utf8_next_char (p) - (p - 1)));

            g_set_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE,
                         /* TRANSLATORS: a backslash and the character after
                          * it; the known escapes are \s \n \t \r \\. */
                         _ ("Unknown escape sequence \"%s\" (known: \\s \\n \\t \\r \\\\)"),
                         sequence);
            return NULL;
          }
        }
    }
  return g_string_free (g_steal_pointer (&value), FALSE);
}

/* A path flag's relative value, read from a key file in @base_dir, names
 * a file beside the key file: a master started from another directory,
 * or that changes directory once started, still finds its keys.  Without
 * a @base_dir (a GKeyFile does not know where it was read from) a value
 * is stored as it is, relative to the current directory like one given
 * on the command line. */
static gboolean
config_load_key_file_in (KvevConfig *config, GKeyFile *key_file, const char *group,
                         const char *base_dir, GError **error)
{
  g_autoptr (KvevConfig) work = NULL;
  g_auto (GStrv) keys = NULL;

  if (group == NULL)
    group = "kv_events";
  if (!g_key_file_has_group (key_file, group))
    return TRUE;

  keys = g_key_file_get_keys (key_file, group, NULL, NULL);
  if (keys == NULL)
    return TRUE;

  /* All or nothing: a half-applied file would leave a master running
   * with a mix of old and new flags it never asked for. */
  work = kvev_config_copy (config);
  for (gsize i = 0; keys[i] != NULL; i++)
    {
      g_autoptr (GError) local_error = NULL;
      g_autofree char *raw = NULL;
      g_autofree char *value = NULL;
      g_autofree char *shown_key = NULL;
      g_autofree char *shown_group = NULL;
      g_autofree char *reason = NULL;
      const KvevFlag *flag = kvev_flag_lookup (keys[i]);
      int code;

      raw = g_key_file_get_value (key_file, group, keys[i], &local_error);
      if (raw != NULL)
        value = key_file_value_unescape (raw, &local_error);
      if (value != NULL && flag == NULL)
        kvev_flag_set_unknown_error (keys[i], &local_error);
      else if (value != NULL)
        {
          if (flag->type == KVEV_FLAG_PATH && base_dir != NULL && value[0] != '\0'
              && !g_path_is_absolute (value))
            {
              char *resolved = g_build_filename (base_dir, value, NULL);

              g_free (value);
              value = resolved;
            }
          if (kvev_config_set_flag (work, flag, value, &local_error))
            continue;
        }

      shown_key = kvev_escape_for_message (keys[i]);
      shown_group = kvev_escape_for_message (group);
      code = local_error->domain == KVEV_ERROR ? local_error->code : KVEV_ERROR_INVALID_VALUE;
      /* GKeyFile quotes the raw key in its messages, bytes that are not
       * UTF-8 included; ours must stay printable. */
      reason = g_utf8_make_valid (local_error->message, -1);
      g_set_error (error, KVEV_ERROR, code,
                   /* TRANSLATORS: a key and a group of a key file, then
                    * the reason, an already translated message. */
                   _ ("Key \"%s\" in group [%s]: %s"), shown_key, shown_group, reason);
      return FALSE;
    }

  /* Commit by exchanging values: @config takes the new ones, and @work,
   * freed on return, the old. */
  kvev_config_exchange (config, work);
  return TRUE;
}

gboolean
kvev_config_load_key_file (KvevConfig *config, GKeyFile *key_file, const char *group,
                           GError **error)
{
  kvev_return_val_if_fail (config != NULL, FALSE);
  kvev_return_val_if_fail (key_file != NULL, FALSE);
  kvev_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  return config_load_key_file_in (config, key_file, group, NULL, error);
}

/* Absolute, so that what the key file names stays the same file when
 * the master changes directory after loading it.  Not canonicalized:
 * ".." after a symbolic link is the kernel's to resolve, as it would be
 * for the path itself. */
static char *
key_file_directory (const char *path)
{
  g_autofree char *directory = g_path_get_dirname (path);
  g_autofree char *current = NULL;

  if (g_path_is_absolute (directory))
    return g_steal_pointer (&directory);
  current = g_get_current_dir ();
  if (strcmp (directory, ".") == 0)
    return g_steal_pointer (&current);
  return g_build_filename (current, directory, NULL);
}

gboolean
kvev_config_load_file (KvevConfig *config, const char *path, const char *group, GError **error)
{
  g_autoptr (GKeyFile) key_file = NULL;
  g_autofree char *contents = NULL;
  g_autofree char *directory = NULL;
  g_autofree char *shown = NULL;
  gsize length = 0;

  kvev_return_val_if_fail (config != NULL, FALSE);
  kvev_return_val_if_fail (path != NULL, FALSE);
  kvev_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  /* Read first, then parsed: g_key_file_load_from_file () reports a
   * directory or a FIFO as a parse error, and this way a pipe (a shell's
   * <(...)) can be the file.  GLib's message names the path. */
  if (!g_file_get_contents (path, &contents, &length, error))
    return FALSE;
  key_file = g_key_file_new ();
  directory = key_file_directory (path);
  if (g_key_file_load_from_data (key_file, contents, length, G_KEY_FILE_NONE, error)
      && config_load_key_file_in (config, key_file, group, directory, error))
    return TRUE;
  shown = g_filename_display_name (path);
  g_prefix_error (error, "%s: ", shown);
  return FALSE;
}
