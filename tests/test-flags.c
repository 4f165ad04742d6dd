/* test-flags.c: the flag table itself (libkvevents/config/flags.c): its
 * names are unique, every row's default is what a new configuration
 * says, every row can be set from a key file and from the command line,
 * and every row lands in the KvevSettings field that carries it.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config/config-private.h"
#include "config/settings.h"

#include <string.h>

/* Where each flag must land, written out independently of the table: a
 * row that names another flag's field would pass every other check. */
static const struct
{
  const char *name;
  glong offset;
} landings[] = {
  { "enable_kv_events", G_STRUCT_OFFSET (KvevSettings, enable) },
  { "kv_events_bind_endpoint", G_STRUCT_OFFSET (KvevSettings, bind_endpoint) },
  { "kv_events_backend_id", G_STRUCT_OFFSET (KvevSettings, backend_id) },
  { "kv_events_model_name", G_STRUCT_OFFSET (KvevSettings, model_name) },
  { "kv_events_block_size", G_STRUCT_OFFSET (KvevSettings, block_size) },
  { "kv_events_additional_salt", G_STRUCT_OFFSET (KvevSettings, additional_salt) },
  { "kv_events_lora_name", G_STRUCT_OFFSET (KvevSettings, lora_name) },
  { "kv_events_dp_rank", G_STRUCT_OFFSET (KvevSettings, dp_rank) },
  { "kv_events_emit_object_key", G_STRUCT_OFFSET (KvevSettings, emit_object_key) },
  { "kv_events_emit_legacy_compat", G_STRUCT_OFFSET (KvevSettings, emit_legacy_compat) },
  { "kv_events_queue_capacity", G_STRUCT_OFFSET (KvevSettings, queue_capacity) },
  { "kv_events_max_batch_events", G_STRUCT_OFFSET (KvevSettings, max_batch_events) },
  { "kv_events_send_hwm", G_STRUCT_OFFSET (KvevSettings, send_hwm) },
  { "kv_events_close_timeout_ms", G_STRUCT_OFFSET (KvevSettings, close_timeout_ms) },
  { "kv_events_topic", G_STRUCT_OFFSET (KvevSettings, topic) },
  { "kv_events_curve_secret_key_file", G_STRUCT_OFFSET (KvevSettings, curve_secret_key_file) },
  { "kv_events_curve_allowed_clients_file",
    G_STRUCT_OFFSET (KvevSettings, curve_allowed_clients_file) },
  { "kv_events_allowed_addresses", G_STRUCT_OFFSET (KvevSettings, allowed_addresses) },
  { "kv_events_batch_wait_us", G_STRUCT_OFFSET (KvevSettings, batch_wait_us) },
  { "kv_events_send_buffer_bytes", G_STRUCT_OFFSET (KvevSettings, send_buffer_bytes) },
  { "kv_events_non_utf8", G_STRUCT_OFFSET (KvevSettings, non_utf8) },
  { "kv_events_heartbeat_ms", G_STRUCT_OFFSET (KvevSettings, heartbeat_ms) },
  { "kv_events_emit_publisher_id", G_STRUCT_OFFSET (KvevSettings, emit_publisher_id) },
  { "kv_events_replay_endpoint", G_STRUCT_OFFSET (KvevSettings, replay_endpoint) },
  { "kv_events_replay_buffer_messages", G_STRUCT_OFFSET (KvevSettings, replay_buffer_messages) },
  { "kv_events_replay_buffer_bytes", G_STRUCT_OFFSET (KvevSettings, replay_buffer_bytes) },
  { "kv_events_snapshot_endpoint", G_STRUCT_OFFSET (KvevSettings, snapshot_endpoint) },
  { "kv_events_replay_rate_bytes", G_STRUCT_OFFSET (KvevSettings, replay_rate_bytes) },
  { "kv_events_send_wait_ms", G_STRUCT_OFFSET (KvevSettings, send_wait_ms) },
  { "kv_events_io_threads", G_STRUCT_OFFSET (KvevSettings, io_threads) },
  { "kv_events_snapshot_duty_percent", G_STRUCT_OFFSET (KvevSettings, snapshot_duty_percent) },
};

/* The row's default as text, worked out from the row alone. */
static char *
row_default (const KvevFlag *flag)
{
  switch (flag->type)
    {
    case KVEV_FLAG_BOOLEAN:
      g_assert_cmpuint (flag->default_number, <=, 1);
      return g_strdup (flag->default_number ? "true" : "false");
    case KVEV_FLAG_UINT32:
      g_assert_cmpuint (flag->min, <=, flag->default_number);
      g_assert_cmpuint (flag->default_number, <=, flag->max);
      return g_strdup_printf ("%u", flag->default_number);
    case KVEV_FLAG_WORD:
      g_assert_cmpuint (flag->default_number, <, g_strv_length ((char **) flag->words));
      return g_strdup (flag->words[flag->default_number]);
    case KVEV_FLAG_STRING:
    case KVEV_FLAG_PATH:
    case KVEV_FLAG_ENDPOINT:
      g_assert_nonnull (flag->default_string);
      return g_strdup (flag->default_string);
    }
  g_assert_not_reached ();
}

/* A value the row accepts that is not its default, as text, and as
 * kvev_config_get () gives it back.  Each row's differs from every
 * other's where the type allows, so that two rows landing in one field
 * show. */
static char *
row_other_value (const KvevFlag *flag)
{
  switch (flag->type)
    {
    case KVEV_FLAG_BOOLEAN:
      return g_strdup (flag->default_number ? "false" : "true");
    case KVEV_FLAG_UINT32:
      {
        /* The row's index keeps the values apart; the limits hold it. */
        guint32 value = flag->min + (guint32) kvev_flag_index (flag) + 1;

        if (value > flag->max || value == flag->default_number)
          value = flag->default_number != flag->max ? flag->max : flag->min;
        return g_strdup_printf ("%u", value);
      }
    case KVEV_FLAG_WORD:
      return g_strdup (
          flag->words[(flag->default_number + 1) % g_strv_length ((char **) flag->words)]);
    case KVEV_FLAG_STRING:
      return g_strdup_printf ("value of %s", flag->name);
    case KVEV_FLAG_PATH:
      return g_strdup_printf ("/kvev-nonexistent/%s", flag->name);
    case KVEV_FLAG_ENDPOINT:
      return g_strdup_printf ("ipc://@kvev-test-%s", flag->name);
    }
  g_assert_not_reached ();
}

static void
assert_get (const KvevConfig *config, const char *name, const char *expected)
{
  g_autofree char *value = kvev_config_get (config, name);

  g_assert_cmpstr (value, ==, expected);
}

static void
test_names_unique (void)
{
  const char *const *names = kvev_config_flags ();
  g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GHashTable) options = g_hash_table_new (g_str_hash, g_str_equal);

  g_assert_cmpuint (g_strv_length ((char **) names), ==, kvev_flag_count);
  for (gsize i = 0; i < kvev_flag_count; i++)
    {
      const KvevFlag *flag = &kvev_flag_table[i];

      g_test_message ("flag %s", flag->name);
      /* kvev_config_flags () lists the table as it is. */
      g_assert_cmpstr (names[i], ==, flag->name);
      g_assert_true (g_hash_table_add (seen, (gpointer) flag->name));
      /* The command line folds '_' into '-': those must stay apart too. */
      g_assert_true (g_hash_table_add (options, (gpointer) kvev_flag_option_name (flag)));
      g_assert_true (kvev_flag_lookup (flag->name) == flag);
      g_assert_nonnull (flag->help);
      g_assert_nonnull (flag->arg);
    }
}

static void
test_defaults (void)
{
  g_autoptr (KvevConfig) config = kvev_config_new ();

  for (gsize i = 0; i < kvev_flag_count; i++)
    {
      const KvevFlag *flag = &kvev_flag_table[i];
      g_autofree char *expected = row_default (flag);

      g_test_message ("flag %s", flag->name);
      assert_get (config, flag->name, expected);
    }
}

/* One row at a time from a key file, then every row from one file. */
static void
test_key_file (void)
{
  g_autoptr (KvevConfig) all = kvev_config_new ();
  g_autoptr (GKeyFile) every_row = g_key_file_new ();
  g_autoptr (GError) error = NULL;

  for (gsize i = 0; i < kvev_flag_count; i++)
    {
      const KvevFlag *flag = &kvev_flag_table[i];
      g_autofree char *value = row_other_value (flag);
      g_autoptr (KvevConfig) config = kvev_config_new ();
      g_autoptr (GKeyFile) key_file = g_key_file_new ();

      g_test_message ("[kv_events] %s=%s", flag->name, value);
      g_key_file_set_value (key_file, "kv_events", flag->name, value);
      g_key_file_set_value (every_row, "kv_events", flag->name, value);
      g_assert_true (kvev_config_load_key_file (config, key_file, NULL, &error));
      g_assert_no_error (error);
      assert_get (config, flag->name, value);
    }
  g_assert_true (kvev_config_load_key_file (all, every_row, NULL, &error));
  g_assert_no_error (error);
  for (gsize i = 0; i < kvev_flag_count; i++)
    {
      g_autofree char *value = row_other_value (&kvev_flag_table[i]);

      assert_get (all, kvev_flag_table[i].name, value);
    }
}

static gboolean
parse_options (KvevConfig *config, GPtrArray *args, GError **error)
{
  g_autoptr (GOptionContext) context = g_option_context_new (NULL);
  g_autofree char **argv = g_new0 (char *, args->len + 2);
  char **arguments = argv;
  int argc = 0;

  argv[argc++] = (char *) "test-flags";
  for (guint i = 0; i < args->len; i++)
    argv[argc++] = g_ptr_array_index (args, i);
  g_option_context_add_group (context, kvev_config_option_group (config));
  /* GOption removes what it parsed from argv; the strings stay args'. */
  return g_option_context_parse (context, &argc, &arguments, error);
}

/* One row at a time as a long option, then every row on one command
 * line; booleans alone, without a value, too. */
static void
test_options (void)
{
  g_autoptr (KvevConfig) all = kvev_config_new ();
  g_autoptr (GPtrArray) every_row = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GError) error = NULL;

  for (gsize i = 0; i < kvev_flag_count; i++)
    {
      const KvevFlag *flag = &kvev_flag_table[i];
      g_autofree char *value = row_other_value (flag);
      g_autoptr (KvevConfig) config = kvev_config_new ();
      g_autoptr (GPtrArray) args = g_ptr_array_new_with_free_func (g_free);
      char *option = g_strdup_printf ("--%s=%s", kvev_flag_option_name (flag), value);

      g_test_message ("%s", option);
      g_ptr_array_add (args, option);
      g_ptr_array_add (every_row, g_strdup (option));
      g_assert_true (parse_options (config, args, &error));
      g_assert_no_error (error);
      assert_get (config, flag->name, value);

      if (flag->type == KVEV_FLAG_BOOLEAN)
        {
          g_autoptr (KvevConfig) alone = kvev_config_new ();
          g_autoptr (GPtrArray) switch_args = g_ptr_array_new_with_free_func (g_free);

          g_assert_true (kvev_config_set (alone, flag->name, "false", NULL));
          g_ptr_array_add (switch_args, g_strdup_printf ("--%s", kvev_flag_option_name (flag)));
          g_assert_true (parse_options (alone, switch_args, &error));
          g_assert_no_error (error);
          assert_get (alone, flag->name, "true");
        }
    }
  g_assert_true (parse_options (all, every_row, &error));
  g_assert_no_error (error);
  for (gsize i = 0; i < kvev_flag_count; i++)
    {
      g_autofree char *value = row_other_value (&kvev_flag_table[i]);

      assert_get (all, kvev_flag_table[i].name, value);
    }
}

/* Each row names the field the list above gives it, and no two rows
 * share one. */
static void
test_landings (void)
{
  g_autoptr (GHashTable) offsets = g_hash_table_new (g_direct_hash, g_direct_equal);

  g_assert_cmpuint (G_N_ELEMENTS (landings), ==, kvev_flag_count);
  for (gsize i = 0; i < G_N_ELEMENTS (landings); i++)
    {
      const KvevFlag *flag = kvev_flag_lookup (landings[i].name);

      g_test_message ("flag %s", landings[i].name);
      g_assert_nonnull (flag);
      g_assert_cmpint (flag->settings_offset, ==, landings[i].offset);
      g_assert_true (
          g_hash_table_add (offsets, GSIZE_TO_POINTER ((gsize) flag->settings_offset + 1)));
    }
}

/* What kvev_settings_new () copies through the table: every row's value,
 * in its field, as the field's type has it.  Disabled, so that nothing is
 * checked: the endpoints, which only an enabled publisher parses, are
 * checked on their own below. */
static void
test_settings_copy (void)
{
  g_autoptr (KvevConfig) config = kvev_config_new ();
  g_autoptr (KvevSettings) settings = NULL;
  g_autoptr (GError) error = NULL;

  for (gsize i = 0; i < kvev_flag_count; i++)
    {
      const KvevFlag *flag = &kvev_flag_table[i];
      g_autofree char *value = row_other_value (flag);

      if (strcmp (flag->name, "enable_kv_events") != 0)
        g_assert_true (kvev_config_set (config, flag->name, value, NULL));
    }
  settings = kvev_settings_new (config, &error);
  g_assert_no_error (error);
  g_assert_nonnull (settings);
  for (gsize i = 0; i < kvev_flag_count; i++)
    {
      const KvevFlag *flag = &kvev_flag_table[i];
      gconstpointer field = G_STRUCT_MEMBER_P (settings, flag->settings_offset);
      g_autofree char *text = kvev_config_get (config, flag->name);

      g_test_message ("flag %s=%s", flag->name, text);
      switch (flag->type)
        {
        case KVEV_FLAG_BOOLEAN:
          g_assert_cmpint (*(const gboolean *) field, ==, strcmp (text, "true") == 0);
          break;
        case KVEV_FLAG_UINT32:
          {
            g_autofree char *landed = g_strdup_printf ("%u", *(const guint32 *) field);

            g_assert_cmpstr (landed, ==, text);
          }
          break;
        case KVEV_FLAG_WORD:
          g_assert_cmpstr (flag->words[*(const guint *) field], ==, text);
          break;
        case KVEV_FLAG_STRING:
        case KVEV_FLAG_PATH:
          g_assert_cmpstr (*(char *const *) field, ==, text);
          /* The settings' own copy. */
          g_assert_true (*(char *const *) field != kvev_config_peek (config, flag)->string);
          break;
        case KVEV_FLAG_ENDPOINT:
          g_assert_null (*(KvevEndpoint *const *) field);
          break;
        }
    }
}

/* The endpoint rows of an enabled configuration are parsed into their
 * fields; one left "" is none. */
static void
test_settings_endpoints (void)
{
  g_autoptr (KvevConfig) config = kvev_config_new ();
  g_autoptr (KvevSettings) settings = NULL;
  g_autoptr (GError) error = NULL;
  guint parsed = 0;

  g_assert_true (kvev_config_set (config, "enable_kv_events", "true", NULL));
  g_assert_true (kvev_config_set (config, "kv_events_backend_id", "b", NULL));
  for (gsize i = 0; i < kvev_flag_count; i++)
    {
      const KvevFlag *flag = &kvev_flag_table[i];
      g_autofree char *value = row_other_value (flag);

      if (flag->type == KVEV_FLAG_ENDPOINT)
        g_assert_true (kvev_config_set (config, flag->name, value, NULL));
    }
  settings = kvev_settings_new (config, &error);
  g_assert_no_error (error);
  for (gsize i = 0; i < kvev_flag_count; i++)
    {
      const KvevFlag *flag = &kvev_flag_table[i];
      const KvevEndpoint *endpoint;
      g_autofree char *value = NULL;

      if (flag->type != KVEV_FLAG_ENDPOINT)
        continue;
      g_test_message ("flag %s", flag->name);
      endpoint = *(KvevEndpoint *const *) G_STRUCT_MEMBER_P (settings, flag->settings_offset);
      value = row_other_value (flag);
      g_assert_nonnull (endpoint);
      g_assert_cmpstr (endpoint->text, ==, value);
      g_assert_cmpint (endpoint->scheme, ==, KVEV_ENDPOINT_IPC);
      g_assert_cmpstr (endpoint->path, ==, value + strlen ("ipc://"));
      parsed++;
    }
  g_assert_cmpuint (parsed, ==, 3);

  g_clear_pointer (&settings, kvev_settings_free);
  g_assert_true (kvev_config_set (config, "kv_events_replay_endpoint", "", NULL));
  settings = kvev_settings_new (config, &error);
  g_assert_no_error (error);
  g_assert_null (settings->replay_endpoint);
  g_assert_nonnull (settings->snapshot_endpoint);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/kvevents/flags/names-unique", test_names_unique);
  g_test_add_func ("/kvevents/flags/defaults", test_defaults);
  g_test_add_func ("/kvevents/flags/key-file", test_key_file);
  g_test_add_func ("/kvevents/flags/options", test_options);
  g_test_add_func ("/kvevents/flags/landings", test_landings);
  g_test_add_func ("/kvevents/flags/settings-copy", test_settings_copy);
  g_test_add_func ("/kvevents/flags/settings-endpoints", test_settings_endpoints);
  return g_test_run ();
}
