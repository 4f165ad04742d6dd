/* options.c: the flags as GOption long options, --enable-kv-events and
 * --kv-events-..., with --kv-events-config-file under them on request;
 * a failed parse leaves the configuration as it found it.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config-private.h"

#include "precondition.h"

#include <string.h>

/* The group's user data.  GOption reverts what it stored itself when a
 * parse fails, but callback options are ours to revert: the values as
 * they were before the parse, put back by the error hook, so a failed
 * parse leaves the configuration as it found it, as a key file does. */
typedef struct
{
  KvevConfig *config;
  KvevConfig *before; /* during a parse */
  /* With --kv-events-config-file: the file, and the flags the command
   * line set, which the file must not override. */
  char *file;
  gboolean *on_command_line; /* kvev_flag_count, in table order */
} OptionGroupData;

#define CONFIG_FILE_OPTION "kv-events-config-file"

static void
option_group_data_free (gpointer data)
{
  OptionGroupData *group_data = data;

  g_clear_pointer (&group_data->before, kvev_config_free);
  g_free (group_data->file);
  g_free (group_data->on_command_line);
  g_free (group_data);
}

static gboolean
option_pre_parse (GOptionContext *context G_GNUC_UNUSED, GOptionGroup *group G_GNUC_UNUSED,
                  gpointer data, GError **error G_GNUC_UNUSED)
{
  OptionGroupData *group_data = data;

  g_clear_pointer (&group_data->before, kvev_config_free);
  group_data->before = kvev_config_copy (group_data->config);
  g_clear_pointer (&group_data->file, g_free);
  memset (group_data->on_command_line, 0, kvev_flag_count * sizeof *group_data->on_command_line);
  return TRUE;
}

/* The file goes under the flags however the command line orders them, so
 * it is loaded once every option is known: onto the values from before
 * the parse, then the command line's put back on top.  A failure here
 * fails the parse, and the error hook restores the snapshot. */
static gboolean
option_post_parse (GOptionContext *context G_GNUC_UNUSED, GOptionGroup *group G_GNUC_UNUSED,
                   gpointer data, GError **error)
{
  OptionGroupData *group_data = data;
  g_autoptr (KvevConfig) work = NULL;

  if (group_data->file == NULL)
    return TRUE;
  work = kvev_config_copy (group_data->before);
  if (!kvev_config_load_file (work, group_data->file, NULL, error))
    {
      g_prefix_error (error, "--%s: ", CONFIG_FILE_OPTION);
      return FALSE;
    }
  for (gsize i = 0; i < kvev_flag_count; i++)
    if (group_data->on_command_line[i])
      {
        const KvevFlag *flag = &kvev_flag_table[i];

        kvev_flag_value_store (flag, kvev_config_slot (work, flag),
                               kvev_config_peek (group_data->config, flag));
      }
  kvev_config_exchange (group_data->config, work);
  return TRUE;
}

/* Called for every group when any option of the command line is bad, or
 * when any group's hook fails: puts the snapshot back.  No post-parse
 * hook drops the snapshot, because GLib runs the main group's post-parse
 * hook after ours and the parse fails when that one does.  The snapshot
 * lives until the next parse or the group's end.  What this leaves: a
 * second parse of the same context that fails in an earlier group's
 * pre-parse hook, before ours took a new snapshot, would put back the
 * values from before the first parse.  GLib has no hook for "the parse
 * is over", and a main group that validates in its post-parse hook is
 * far more common than that. */
static void
option_parse_failed (GOptionContext *context G_GNUC_UNUSED, GOptionGroup *group G_GNUC_UNUSED,
                     gpointer data, GError **error G_GNUC_UNUSED)
{
  OptionGroupData *group_data = data;

  if (group_data->before == NULL)
    return;
  kvev_config_exchange (group_data->config, group_data->before);
  g_clear_pointer (&group_data->before, kvev_config_free);
}

static gboolean
option_parse_file (const char *option_name G_GNUC_UNUSED, const char *value, gpointer data,
                   GError **error G_GNUC_UNUSED)
{
  OptionGroupData *group_data = data;

  /* The last one wins, as for every other option. */
  g_free (group_data->file);
  group_data->file = g_strdup (value);
  return TRUE;
}

static gboolean
option_parse (const char *option_name, const char *value, gpointer data, GError **error)
{
  OptionGroupData *group_data = data;
  KvevConfig *config = group_data->config;
  const KvevFlag *flag = kvev_flag_lookup_option (option_name);

  if (flag == NULL)
    {
      kvev_flag_set_unknown_error (option_name, error);
      return FALSE;
    }
  /* Only booleans take an optional argument; alone, they switch on. */
  if (value == NULL && flag->type == KVEV_FLAG_BOOLEAN)
    value = "true";
  if (value == NULL)
    {
      g_autofree char *shown = kvev_escape_for_message (option_name);

      g_set_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE, _ ("Missing value for %s"), shown);
      return FALSE;
    }
  if (!kvev_config_set_flag (config, flag, value, error))
    return FALSE;
  group_data->on_command_line[kvev_flag_index (flag)] = TRUE;
  return TRUE;
}

/* g_option_group_set_translation_domain would call dgettext before our
 * domain is bound; kvev_gettext binds it first. */
static const char *
option_translate (const char *text, gpointer data G_GNUC_UNUSED)
{
  return kvev_gettext (text);
}

static GOptionGroup *
option_group_new (KvevConfig *config, gboolean with_file)
{
  /* One for the file, one for the end. */
  g_autofree GOptionEntry *entries = g_new0 (GOptionEntry, kvev_flag_count + 2);
  GOptionEntry *entry = entries;
  GOptionGroup *group;
  OptionGroupData *group_data;

  group_data = g_new0 (OptionGroupData, 1);
  group_data->config = config;
  group_data->on_command_line = g_new0 (gboolean, kvev_flag_count);
  /* Descriptions stay msgids here; the translate function turns them
   * into the user's language when --help prints them. */
  group = g_option_group_new ("kv-events", N_ ("KV event publisher options:"),
                              N_ ("Show KV event publisher options"), group_data,
                              option_group_data_free);
  g_option_group_set_translate_func (group, option_translate, NULL, NULL);
  g_option_group_set_parse_hooks (group, option_pre_parse, with_file ? option_post_parse : NULL);
  g_option_group_set_error_hook (group, option_parse_failed);

  if (with_file)
    {
      entry->long_name = CONFIG_FILE_OPTION;
      entry->flags = G_OPTION_FLAG_FILENAME;
      entry->arg = G_OPTION_ARG_CALLBACK;
      entry->arg_data = (gpointer) option_parse_file;
      entry->description = N_ ("Read the [kv_events] group of the key file FILE first; the other "
                               "options override it wherever they stand, and a relative path in "
                               "it is relative to its directory");
      entry->arg_description = N_ ("FILE");
      entry++;
    }
  for (gsize i = 0; i < kvev_flag_count; i++, entry++)
    {
      const KvevFlag *flag = &kvev_flag_table[i];

      entry->long_name = kvev_flag_option_name (flag);
      entry->short_name = 0;
      entry->flags
          = flag->type == KVEV_FLAG_BOOLEAN ? G_OPTION_FLAG_OPTIONAL_ARG : G_OPTION_FLAG_NONE;
      entry->arg = G_OPTION_ARG_CALLBACK;
      entry->arg_data = (gpointer) option_parse;
      entry->description = flag->help;
      entry->arg_description = flag->arg;
    }
  /* The group copies the array; the strings it points to are static. */
  g_option_group_add_entries (group, entries);
  return group;
}

GOptionGroup *
kvev_config_option_group (KvevConfig *config)
{
  kvev_return_val_if_fail (config != NULL, NULL);

  return option_group_new (config, FALSE);
}

GOptionGroup *
kvev_config_option_group_with_file (KvevConfig *config)
{
  kvev_return_val_if_fail (config != NULL, NULL);

  return option_group_new (config, TRUE);
}
