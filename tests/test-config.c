/* test-config.c: the flag table, parsing, key files, options, validation.
 * SPDX-License-Identifier: Apache-2.0
 */
/* Internal headers: the tests look at the values a configuration holds,
 * to check that strings are never NULL and that each flag has its own,
 * and use the library's KVEV_DEFAULT_* macros. */
#include "config/config-private.h"
#include "config/settings.h"

#include <kvevents/kvevents.h>
#include <net/if.h>
#include <string.h>
#include <sys/un.h>

typedef struct
{
  const char *name;
  const char *default_value;
} ExpectedFlag;

/* The flags as README documents them, written out independently of the
 * library's table. */
static const ExpectedFlag expected_flags[] = {
  { "enable_kv_events", "false" },
  { "kv_events_bind_endpoint", "" },
  { "kv_events_backend_id", "" },
  { "kv_events_model_name", "" },
  { "kv_events_block_size", "0" },
  { "kv_events_additional_salt", "" },
  { "kv_events_lora_name", "" },
  { "kv_events_dp_rank", "0" },
  { "kv_events_emit_object_key", "true" },
  { "kv_events_emit_legacy_compat", "true" },
  { "kv_events_queue_capacity", "65536" },
  { "kv_events_max_batch_events", "64" },
  { "kv_events_send_hwm", "10000" },
  { "kv_events_close_timeout_ms", "1000" },
  { "kv_events_topic", "" },
  { "kv_events_curve_secret_key_file", "" },
  { "kv_events_curve_allowed_clients_file", "" },
  { "kv_events_allowed_addresses", "" },
  { "kv_events_batch_wait_us", "50" },
  { "kv_events_send_buffer_bytes", "268435456" },
  { "kv_events_non_utf8", "bin" },
  { "kv_events_heartbeat_ms", "0" },
  { "kv_events_emit_publisher_id", "false" },
  { "kv_events_replay_endpoint", "" },
  { "kv_events_replay_buffer_messages", "10000" },
  { "kv_events_replay_buffer_bytes", "268435456" },
  { "kv_events_snapshot_endpoint", "" },
  { "kv_events_replay_rate_bytes", "16777216" },
  { "kv_events_send_wait_ms", "100" },
  { "kv_events_io_threads", "2" },
  { "kv_events_snapshot_duty_percent", "10" },
};

static const char *const boolean_flags[] = {
  "enable_kv_events",
  "kv_events_emit_object_key",
  "kv_events_emit_legacy_compat",
  "kv_events_emit_publisher_id",
};

static const char *const string_flags[] = {
  "kv_events_bind_endpoint",
  "kv_events_backend_id",
  "kv_events_model_name",
  "kv_events_additional_salt",
  "kv_events_lora_name",
  "kv_events_topic",
  "kv_events_curve_secret_key_file",
  "kv_events_curve_allowed_clients_file",
  "kv_events_allowed_addresses",
  "kv_events_replay_endpoint",
  "kv_events_snapshot_endpoint",
};

typedef struct
{
  const char *name;
  guint32 min;
  guint32 max;
} IntegerFlag;

/* The word flag and its words, in the order of its enum. */
static const char *const non_utf8_words[] = { "bin", "skip" };

static const IntegerFlag integer_flags[] = {
  { "kv_events_block_size", 0, G_MAXUINT32 },
  { "kv_events_dp_rank", 0, G_MAXUINT32 },
  { "kv_events_queue_capacity", 0, G_MAXUINT32 },
  { "kv_events_max_batch_events", 1, 4096 },
  { "kv_events_send_hwm", 0, G_MAXUINT32 },
  { "kv_events_close_timeout_ms", 0, 600000 },
  { "kv_events_batch_wait_us", 0, 1000000 },
  { "kv_events_send_buffer_bytes", 0, G_MAXUINT32 },
  { "kv_events_heartbeat_ms", 0, 3600000 },
  { "kv_events_replay_buffer_messages", 1, G_MAXUINT32 },
  { "kv_events_replay_buffer_bytes", 1, G_MAXUINT32 },
  { "kv_events_replay_rate_bytes", 0, G_MAXUINT32 },
  { "kv_events_send_wait_ms", 0, 1000 },
  { "kv_events_io_threads", 1, 64 },
  { "kv_events_snapshot_duty_percent", 1, 100 },
};

/* The value @config holds for the flag @name, where the library keeps it. */
static KvevFlagValue *
held (const KvevConfig *config, const char *name)
{
  const KvevFlag *flag = kvev_flag_lookup (name);

  g_assert_nonnull (flag);
  return &config->values[kvev_flag_index (flag)];
}

/* Every flag's value as text, to compare whole configurations. */
static GStrv
snapshot (const KvevConfig *config)
{
  GStrv values = g_new0 (char *, G_N_ELEMENTS (expected_flags) + 1);

  for (gsize i = 0; i < G_N_ELEMENTS (expected_flags); i++)
    {
      values[i] = kvev_config_get (config, expected_flags[i].name);
      g_assert_nonnull (values[i]);
    }
  return values;
}

static void
assert_snapshot (const KvevConfig *config, const char *const *expected)
{
  for (gsize i = 0; i < G_N_ELEMENTS (expected_flags); i++)
    {
      g_autofree char *value = kvev_config_get (config, expected_flags[i].name);

      if (g_strcmp0 (value, expected[i]) != 0)
        g_test_message ("flag %s differs", expected_flags[i].name);
      g_assert_cmpstr (value, ==, expected[i]);
    }
}

static void
assert_get (const KvevConfig *config, const char *flag, const char *expected)
{
  g_autofree char *value = kvev_config_get (config, flag);

  g_assert_cmpstr (value, ==, expected);
}

/* A configuration far from the defaults, so that "unchanged" means
 * something. */
static KvevConfig *
config_new_custom (void)
{
  KvevConfig *config = kvev_config_new ();
  static const char *const settings[][2] = {
    { "enable_kv_events", "true" },           { "kv_events_bind_endpoint", "tcp://127.0.0.1:5557" },
    { "kv_events_backend_id", "backend-a" },  { "kv_events_model_name", "model-a" },
    { "kv_events_block_size", "16" },         { "kv_events_dp_rank", "2" },
    { "kv_events_emit_object_key", "false" }, { "kv_events_queue_capacity", "10" },
    { "kv_events_max_batch_events", "8" },    { "kv_events_topic", "kv" },
    { "kv_events_non_utf8", "skip" },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (settings); i++)
    {
      g_autoptr (GError) error = NULL;

      g_assert_true (kvev_config_set (config, settings[i][0], settings[i][1], &error));
      g_assert_no_error (error);
    }
  return config;
}

static void
assert_set_fails (KvevConfig *config, const char *flag, const char *value, int code,
                  const char *expected_message)
{
  g_autoptr (GError) error = NULL;
  g_auto (GStrv) before = snapshot (config);
  g_autofree char *shown_flag = g_strescape (flag, NULL);
  g_autofree char *shown_value = g_strescape (value, NULL);

  g_test_message ("set %s=\"%s\"", shown_flag, shown_value);
  g_assert_false (kvev_config_set (config, flag, value, &error));
  g_assert_error (error, KVEV_ERROR, code);
  g_assert_true (g_utf8_validate (error->message, -1, NULL));
  if (expected_message != NULL)
    g_assert_cmpstr (error->message, ==, expected_message);
  assert_snapshot (config, (const char *const *) before);

  /* Without a GError the call still fails cleanly. */
  g_assert_false (kvev_config_set (config, flag, value, NULL));
  assert_snapshot (config, (const char *const *) before);
}

static void
test_flags_list (void)
{
  const char *const *names = kvev_config_flags ();
  gsize n = 0;

  g_assert_nonnull (names);
  while (names[n] != NULL)
    n++;
  /* The fifteen publisher flags, the security flags, then the tuning flags
   * in the order they were added. */
  g_assert_cmpuint (n, ==, 31);
  g_assert_cmpuint (n, ==, G_N_ELEMENTS (expected_flags));
  for (gsize i = 0; i < n; i++)
    g_assert_cmpstr (names[i], ==, expected_flags[i].name);
  /* A static array: the same one every time. */
  g_assert_true (kvev_config_flags () == names);
}

static void
test_defaults (void)
{
  g_autoptr (KvevConfig) config = kvev_config_new ();
  g_autofree char *queue = g_strdup_printf ("%u", KVEV_DEFAULT_QUEUE_CAPACITY);
  g_autofree char *batch = g_strdup_printf ("%u", KVEV_DEFAULT_MAX_BATCH_EVENTS);
  g_autofree char *hwm = g_strdup_printf ("%u", KVEV_DEFAULT_SEND_HWM);
  g_autofree char *timeout = g_strdup_printf ("%u", KVEV_DEFAULT_CLOSE_TIMEOUT_MS);

  for (gsize i = 0; i < G_N_ELEMENTS (expected_flags); i++)
    {
      g_test_message ("flag %s", expected_flags[i].name);
      assert_get (config, expected_flags[i].name, expected_flags[i].default_value);
    }

  /* The private macros the publisher uses agree with the table. */
  assert_get (config, "kv_events_queue_capacity", queue);
  assert_get (config, "kv_events_max_batch_events", batch);
  assert_get (config, "kv_events_send_hwm", hwm);
  assert_get (config, "kv_events_close_timeout_ms", timeout);

  /* The values the configuration holds: strings are never NULL. */
  g_assert_false (held (config, "enable_kv_events")->boolean);
  g_assert_true (held (config, "kv_events_emit_object_key")->boolean);
  g_assert_true (held (config, "kv_events_emit_legacy_compat")->boolean);
  g_assert_cmpstr (held (config, "kv_events_bind_endpoint")->string, ==, "");
  g_assert_cmpstr (held (config, "kv_events_backend_id")->string, ==, "");
  g_assert_cmpstr (held (config, "kv_events_model_name")->string, ==, "");
  g_assert_cmpstr (held (config, "kv_events_additional_salt")->string, ==, "");
  g_assert_cmpstr (held (config, "kv_events_lora_name")->string, ==, "");
  g_assert_cmpstr (held (config, "kv_events_topic")->string, ==, "");
  g_assert_cmpstr (held (config, "kv_events_curve_secret_key_file")->string, ==, "");
  g_assert_cmpstr (held (config, "kv_events_curve_allowed_clients_file")->string, ==, "");
  g_assert_cmpstr (held (config, "kv_events_allowed_addresses")->string, ==, "");
  g_assert_cmpuint (held (config, "kv_events_block_size")->number, ==, 0);
  g_assert_cmpuint (held (config, "kv_events_dp_rank")->number, ==, 0);
  g_assert_cmpuint (held (config, "kv_events_queue_capacity")->number, ==,
                    KVEV_DEFAULT_QUEUE_CAPACITY);
  g_assert_cmpuint (held (config, "kv_events_max_batch_events")->number, ==,
                    KVEV_DEFAULT_MAX_BATCH_EVENTS);
  g_assert_cmpuint (held (config, "kv_events_send_hwm")->number, ==, KVEV_DEFAULT_SEND_HWM);
  g_assert_cmpuint (held (config, "kv_events_send_buffer_bytes")->number, ==,
                    KVEV_DEFAULT_SEND_BUFFER_BYTES);
  g_assert_cmpuint (held (config, "kv_events_close_timeout_ms")->number, ==,
                    KVEV_DEFAULT_CLOSE_TIMEOUT_MS);
  g_assert_cmpint (held (config, "kv_events_non_utf8")->word, ==, KVEV_NON_UTF8_BIN);
}

static void
test_get_unknown (void)
{
  g_autoptr (KvevConfig) config = kvev_config_new ();

  g_assert_null (kvev_config_get (config, "kv_events_dp_rnak"));
  g_assert_null (kvev_config_get (config, ""));
  g_assert_null (kvev_config_get (config, "KV_EVENTS_DP_RANK"));
  g_assert_null (kvev_config_get (config, "kv-events-dp-rank"));
}

static void
test_booleans (void)
{
  static const char *const true_words[] = {
    "true", "TRUE", "True", "tRuE", "yes", "YES", "Yes", "1",
  };
  static const char *const false_words[] = {
    "false", "FALSE", "False", "no", "NO", "No", "0",
  };
  g_autoptr (KvevConfig) config = kvev_config_new ();

  for (gsize f = 0; f < G_N_ELEMENTS (boolean_flags); f++)
    {
      for (gsize i = 0; i < G_N_ELEMENTS (true_words); i++)
        {
          g_autoptr (GError) error = NULL;

          g_assert_true (kvev_config_set (config, boolean_flags[f], "false", NULL));
          g_assert_true (kvev_config_set (config, boolean_flags[f], true_words[i], &error));
          g_assert_no_error (error);
          assert_get (config, boolean_flags[f], "true");
        }
      for (gsize i = 0; i < G_N_ELEMENTS (false_words); i++)
        {
          g_autoptr (GError) error = NULL;

          g_assert_true (kvev_config_set (config, boolean_flags[f], "true", NULL));
          g_assert_true (kvev_config_set (config, boolean_flags[f], false_words[i], &error));
          g_assert_no_error (error);
          assert_get (config, boolean_flags[f], "false");
        }
    }

  /* The value held follows. */
  g_assert_true (kvev_config_set (config, "enable_kv_events", "yes", NULL));
  g_assert_true (held (config, "enable_kv_events")->boolean);
  g_assert_true (kvev_config_set (config, "kv_events_emit_object_key", "no", NULL));
  g_assert_false (held (config, "kv_events_emit_object_key")->boolean);
  g_assert_true (kvev_config_set (config, "kv_events_emit_legacy_compat", "0", NULL));
  g_assert_false (held (config, "kv_events_emit_legacy_compat")->boolean);
}

static void
test_integers (void)
{
  g_autoptr (KvevConfig) config = kvev_config_new ();

  for (gsize f = 0; f < G_N_ELEMENTS (integer_flags); f++)
    {
      const IntegerFlag *flag = &integer_flags[f];
      guint32 values[] = { flag->min, flag->min + 1, flag->max / 2, flag->max - 1, flag->max };

      for (gsize i = 0; i < G_N_ELEMENTS (values); i++)
        {
          g_autoptr (GError) error = NULL;
          g_autofree char *text = g_strdup_printf ("%u", values[i]);

          g_test_message ("set %s=%s", flag->name, text);
          g_assert_true (kvev_config_set (config, flag->name, text, &error));
          g_assert_no_error (error);
          assert_get (config, flag->name, text);
        }
    }

  /* Leading zeros are still decimal digits, and are not octal. */
  g_assert_true (kvev_config_set (config, "kv_events_dp_rank", "010", NULL));
  assert_get (config, "kv_events_dp_rank", "10");
  g_assert_true (
      kvev_config_set (config, "kv_events_dp_rank", "0000000000000000000004294967295", NULL));
  assert_get (config, "kv_events_dp_rank", "4294967295");

  /* The value held follows. */
  g_assert_true (kvev_config_set (config, "kv_events_dp_rank", "7", NULL));
  g_assert_cmpuint (held (config, "kv_events_dp_rank")->number, ==, 7);
  g_assert_true (kvev_config_set (config, "kv_events_block_size", "256", NULL));
  g_assert_cmpuint (held (config, "kv_events_block_size")->number, ==, 256);
  g_assert_true (kvev_config_set (config, "kv_events_queue_capacity", "0", NULL));
  g_assert_cmpuint (held (config, "kv_events_queue_capacity")->number, ==, 0);
  g_assert_true (kvev_config_set (config, "kv_events_max_batch_events", "4096", NULL));
  g_assert_cmpuint (held (config, "kv_events_max_batch_events")->number, ==, 4096);
  g_assert_true (kvev_config_set (config, "kv_events_send_hwm", "0", NULL));
  g_assert_cmpuint (held (config, "kv_events_send_hwm")->number, ==, 0);
  g_assert_true (kvev_config_set (config, "kv_events_close_timeout_ms", "600000", NULL));
  g_assert_cmpuint (held (config, "kv_events_close_timeout_ms")->number, ==, 600000);
}

static void
test_strings (void)
{
  static const char *const values[] = {
    "x",
    "",
    " spaces around ",
    "tcp://*:5557",
    "模型-名", /* UTF-8 */
    "\xff\xfe not UTF-8",
    "quote \" and backslash \\",
    "line\nbreak",
  };
  g_autoptr (KvevConfig) config = kvev_config_new ();
  g_autofree char *long_value = g_strnfill (100000, 'k');

  for (gsize f = 0; f < G_N_ELEMENTS (string_flags); f++)
    {
      for (gsize i = 0; i < G_N_ELEMENTS (values); i++)
        {
          g_autoptr (GError) error = NULL;

          g_assert_true (kvev_config_set (config, string_flags[f], values[i], &error));
          g_assert_no_error (error);
          assert_get (config, string_flags[f], values[i]);
        }
      g_assert_true (kvev_config_set (config, string_flags[f], long_value, NULL));
      assert_get (config, string_flags[f], long_value);
    }

  /* Each flag has a value of its own. */
  for (gsize f = 0; f < G_N_ELEMENTS (string_flags); f++)
    g_assert_true (kvev_config_set (config, string_flags[f], string_flags[f], NULL));
  g_assert_cmpstr (held (config, "kv_events_bind_endpoint")->string, ==, "kv_events_bind_endpoint");
  g_assert_cmpstr (held (config, "kv_events_backend_id")->string, ==, "kv_events_backend_id");
  g_assert_cmpstr (held (config, "kv_events_model_name")->string, ==, "kv_events_model_name");
  g_assert_cmpstr (held (config, "kv_events_additional_salt")->string, ==,
                   "kv_events_additional_salt");
  g_assert_cmpstr (held (config, "kv_events_lora_name")->string, ==, "kv_events_lora_name");
  g_assert_cmpstr (held (config, "kv_events_topic")->string, ==, "kv_events_topic");
  g_assert_cmpstr (held (config, "kv_events_curve_secret_key_file")->string, ==,
                   "kv_events_curve_secret_key_file");
  g_assert_cmpstr (held (config, "kv_events_curve_allowed_clients_file")->string, ==,
                   "kv_events_curve_allowed_clients_file");
  g_assert_cmpstr (held (config, "kv_events_allowed_addresses")->string, ==,
                   "kv_events_allowed_addresses");

  /* The configuration owns its copy. */
  {
    char value[] = "backend-1";

    g_assert_true (kvev_config_set (config, "kv_events_backend_id", value, NULL));
    value[0] = 'X';
    g_assert_cmpstr (held (config, "kv_events_backend_id")->string, ==, "backend-1");
  }
  /* Setting a string to the very text it holds is safe. */
  g_assert_true (kvev_config_set (config, "kv_events_backend_id",
                                  held (config, "kv_events_backend_id")->string, NULL));
  g_assert_cmpstr (held (config, "kv_events_backend_id")->string, ==, "backend-1");
}

static void
test_bad_integers (void)
{
  static const char *const bad[] = {
    "+1",
    "-1",
    "-0",
    " 1",
    "1 ",
    "\t1",
    "1\n",
    "",
    " ",
    "12x",
    "x12",
    "0x10",
    "1.5",
    "1e3",
    "1,000",
    "1_000",
    "4294967296",
    "99999999999999999999999999",
    "18446744073709551616",
  };
  g_autoptr (KvevConfig) config = config_new_custom ();

  for (gsize f = 0; f < G_N_ELEMENTS (integer_flags); f++)
    {
      g_autofree char *arabic_digit
          = g_strdup_printf ("Invalid value \"\xd9\xa1\" for %s: expected an unsigned integer "
                             "from %u to %u",
                             integer_flags[f].name, integer_flags[f].min, integer_flags[f].max);

      for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
        {
          /* ASCII only, so escaping is plain C escaping. */
          g_autofree char *escaped = g_strescape (bad[i], NULL);
          g_autofree char *expected = g_strdup_printf (
              "Invalid value \"%s\" for %s: expected an unsigned integer "
              "from %u to %u",
              escaped, integer_flags[f].name, integer_flags[f].min, integer_flags[f].max);

          assert_set_fails (config, integer_flags[f].name, bad[i], KVEV_ERROR_INVALID_VALUE,
                            expected);
        }
      /* A digit, but not an ASCII one. */
      assert_set_fails (config, integer_flags[f].name, "\xd9\xa1", KVEV_ERROR_INVALID_VALUE,
                        arabic_digit);
    }

  /* The example of the documentation, exactly. */
  assert_set_fails (config, "kv_events_dp_rank", "12x", KVEV_ERROR_INVALID_VALUE,
                    "Invalid value \"12x\" for kv_events_dp_rank: expected "
                    "an unsigned integer from 0 to 4294967295");
  assert_set_fails (config, "kv_events_block_size", "4294967296", KVEV_ERROR_INVALID_VALUE,
                    "Invalid value \"4294967296\" for kv_events_block_size: "
                    "expected an unsigned integer from 0 to 4294967295");
  assert_set_fails (config, "kv_events_dp_rank", "", KVEV_ERROR_INVALID_VALUE,
                    "Invalid value \"\" for kv_events_dp_rank: expected "
                    "an unsigned integer from 0 to 4294967295");
}

static void
test_out_of_range (void)
{
  g_autoptr (KvevConfig) config = config_new_custom ();

  assert_set_fails (config, "kv_events_max_batch_events", "0", KVEV_ERROR_INVALID_VALUE,
                    "Invalid value \"0\" for kv_events_max_batch_events: "
                    "expected an unsigned integer from 1 to 4096");
  assert_set_fails (config, "kv_events_max_batch_events", "4097", KVEV_ERROR_INVALID_VALUE,
                    "Invalid value \"4097\" for kv_events_max_batch_events: "
                    "expected an unsigned integer from 1 to 4096");
  assert_set_fails (config, "kv_events_max_batch_events", "4294967295", KVEV_ERROR_INVALID_VALUE,
                    NULL);
  assert_set_fails (config, "kv_events_close_timeout_ms", "600001", KVEV_ERROR_INVALID_VALUE,
                    "Invalid value \"600001\" for kv_events_close_timeout_ms: "
                    "expected an unsigned integer from 0 to 600000");
  assert_set_fails (config, "kv_events_close_timeout_ms", "4294967295", KVEV_ERROR_INVALID_VALUE,
                    NULL);

  /* The bounds themselves are in range. */
  g_assert_true (kvev_config_set (config, "kv_events_max_batch_events", "1", NULL));
  assert_get (config, "kv_events_max_batch_events", "1");
  g_assert_true (kvev_config_set (config, "kv_events_close_timeout_ms", "0", NULL));
  assert_get (config, "kv_events_close_timeout_ms", "0");
}

static void
test_bad_booleans (void)
{
  static const char *const bad[] = {
    "",  " ", "2", "-1",    "01",    "on",   "off",       "tru",     "t",
    "f", "y", "n", " true", "true ", "yess", "truefalse", "enabled", "null",
  };
  g_autoptr (KvevConfig) config = config_new_custom ();

  for (gsize f = 0; f < G_N_ELEMENTS (boolean_flags); f++)
    for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
      {
        g_autofree char *expected
            = g_strdup_printf ("Invalid value \"%s\" for %s: expected true, false, yes, no, "
                               "1 or 0",
                               bad[i], boolean_flags[f]);

        assert_set_fails (config, boolean_flags[f], bad[i], KVEV_ERROR_INVALID_VALUE, expected);
      }
}

static void
test_words (void)
{
  static const struct
  {
    const char *text;
    const char *word;
    KvevNonUtf8 stored;
  } cases[] = {
    { "skip", "skip", KVEV_NON_UTF8_SKIP }, { "bin", "bin", KVEV_NON_UTF8_BIN },
    { "SKIP", "skip", KVEV_NON_UTF8_SKIP }, { "Bin", "bin", KVEV_NON_UTF8_BIN },
    { "sKiP", "skip", KVEV_NON_UTF8_SKIP }, { "BIN", "bin", KVEV_NON_UTF8_BIN },
  };
  g_autoptr (KvevConfig) config = kvev_config_new ();

  g_assert_cmpuint (G_N_ELEMENTS (non_utf8_words), ==, 2);
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (GError) error = NULL;

      g_test_message ("set kv_events_non_utf8=%s", cases[i].text);
      g_assert_true (kvev_config_set (config, "kv_events_non_utf8", cases[i].text, &error));
      g_assert_no_error (error);
      /* get returns the word as the table spells it. */
      assert_get (config, "kv_events_non_utf8", cases[i].word);
      /* The configuration holds the enum the publisher reads. */
      g_assert_cmpint (held (config, "kv_events_non_utf8")->word, ==, cases[i].stored);
      g_assert_cmpstr (non_utf8_words[held (config, "kv_events_non_utf8")->word], ==,
                       cases[i].word);
    }
}

static void
test_bad_words (void)
{
  static const char *const bad[] = {
    "", " ", "str", "binary", "b", "ski", "skip ", " bin", "bin,skip", "0", "1", "true", "none",
  };
  g_autoptr (KvevConfig) config = config_new_custom ();

  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autofree char *expected = g_strdup_printf (
          "Invalid value \"%s\" for kv_events_non_utf8: expected one of bin, skip", bad[i]);

      assert_set_fails (config, "kv_events_non_utf8", bad[i], KVEV_ERROR_INVALID_VALUE, expected);
    }
  /* Not UTF-8: escaped, as any value in a message. */
  assert_set_fails (config, "kv_events_non_utf8", "sk\xffip", KVEV_ERROR_INVALID_VALUE,
                    "Invalid value \"sk\\377ip\" for kv_events_non_utf8: "
                    "expected one of bin, skip");
  /* Still the value config_new_custom () set. */
  assert_get (config, "kv_events_non_utf8", "skip");
}

static void
test_bad_value_escaped (void)
{
  g_autoptr (KvevConfig) config = config_new_custom ();
  g_autoptr (GError) error = NULL;
  g_autofree char *huge = g_strnfill (1000000, '9');

  /* Not UTF-8: shown as escapes, so the message stays UTF-8. */
  assert_set_fails (config, "kv_events_dp_rank", "1\xff\xfe", KVEV_ERROR_INVALID_VALUE,
                    "Invalid value \"1\\377\\376\" for kv_events_dp_rank: "
                    "expected an unsigned integer from 0 to 4294967295");
  /* Control characters and quotes are escaped, UTF-8 stays readable. */
  assert_set_fails (config, "enable_kv_events", "是\n\"", KVEV_ERROR_INVALID_VALUE,
                    "Invalid value \"是\\n\\\"\" for enable_kv_events: "
                    "expected true, false, yes, no, 1 or 0");

  /* A huge value is cut in the message, not copied whole. */
  g_assert_false (kvev_config_set (config, "kv_events_dp_rank", huge, &error));
  g_assert_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE);
  g_assert_nonnull (strstr (error->message, "kv_events_dp_rank"));
  g_assert_nonnull (strstr (error->message, "999999..."));
  g_assert_cmpuint (strlen (error->message), <, 1000);
}

static void
test_unknown_flag_suggestion (void)
{
  static const char *const typos[][2] = {
    { "kv_events_dp_rnak", "kv_events_dp_rank" },
    { "kv_events_dprank", "kv_events_dp_rank" },
    { "kv-events-dp-rank", "kv_events_dp_rank" },
    { "kv-events-emit-object-key", "kv_events_emit_object_key" },
    { "Kv-Events-Dp-Rnak", "kv_events_dp_rank" },
    { "KV_EVENTS_TOPIC", "kv_events_topic" },
    { "enable_kv_event", "enable_kv_events" },
    { "enable-kv-events", "enable_kv_events" },
    { "kv_events_bind_endpiont", "kv_events_bind_endpoint" },
    { "kv_event_queue_capacity", "kv_events_queue_capacity" },
    { "kv_events_send_hmw", "kv_events_send_hwm" },
    /* Three edits is the farthest a guess goes. */
    { "kv_events_dp_rankxxx", "kv_events_dp_rank" },
    { "xv_events_dp_rbnc", "kv_events_dp_rank" },
  };
  g_autoptr (KvevConfig) config = config_new_custom ();

  for (gsize i = 0; i < G_N_ELEMENTS (typos); i++)
    {
      g_autofree char *expected = g_strdup_printf ("Unknown flag \"%s\" (did you mean \"%s\"?)",
                                                   typos[i][0], typos[i][1]);

      assert_set_fails (config, typos[i][0], "1", KVEV_ERROR_UNKNOWN_FLAG, expected);
    }
}

static void
test_unknown_flag_no_suggestion (void)
{
  g_autoptr (KvevConfig) config = config_new_custom ();
  g_autoptr (GError) error = NULL;
  g_autoptr (GString) long_name = g_string_new (NULL);

  assert_set_fails (config, "completely_unrelated", "1", KVEV_ERROR_UNKNOWN_FLAG,
                    "Unknown flag \"completely_unrelated\"");
  assert_set_fails (config, "", "1", KVEV_ERROR_UNKNOWN_FLAG, "Unknown flag \"\"");
  assert_set_fails (config, "rank", "1", KVEV_ERROR_UNKNOWN_FLAG, "Unknown flag \"rank\"");
  /* Four edits away is too far to guess. */
  assert_set_fails (config, "kv_events_dp_rankxxxx", "1", KVEV_ERROR_UNKNOWN_FLAG,
                    "Unknown flag \"kv_events_dp_rankxxxx\"");
  assert_set_fails (config, "xv_events_dp_rbncx", "1", KVEV_ERROR_UNKNOWN_FLAG,
                    "Unknown flag \"xv_events_dp_rbncx\"");
  /* Bytes that are not UTF-8 are escaped. */
  assert_set_fails (config, "kv_\xff\xfe", "1", KVEV_ERROR_UNKNOWN_FLAG,
                    "Unknown flag \"kv_\\377\\376\"");

  /* A very long name: no suggestion, no crash, a bounded message. */
  for (int i = 0; i < 20000; i++)
    g_string_append (long_name, "kv_events_dp_rank");
  g_assert_false (kvev_config_set (config, long_name->str, "1", &error));
  g_assert_error (error, KVEV_ERROR, KVEV_ERROR_UNKNOWN_FLAG);
  g_assert_null (strstr (error->message, "did you mean"));
  g_assert_cmpuint (strlen (error->message), <, 1000);
  g_clear_error (&error);

  /* A stray byte that is not UTF-8 still leaves a near miss. */
  g_string_assign (long_name, "kv_events_dp_rank");
  g_string_append (long_name, "\xff");
  g_assert_false (kvev_config_set (config, long_name->str, "1", &error));
  g_assert_error (error, KVEV_ERROR, KVEV_ERROR_UNKNOWN_FLAG);
  g_assert_cmpstr (error->message, ==,
                   "Unknown flag \"kv_events_dp_rank\\377\" "
                   "(did you mean \"kv_events_dp_rank\"?)");
}

static void
test_unknown_flag_any_bytes (void)
{
  g_autoptr (KvevConfig) config = kvev_config_new ();
  g_autoptr (GRand) rand = g_rand_new_with_seed (1527);

  /* Arbitrary bytes as names and values: never a crash, always a UTF-8
   * message. */
  for (int round = 0; round < 2000; round++)
    {
      char name[64];
      char value[64];
      gsize name_length = (gsize) g_rand_int_range (rand, 0, sizeof name);
      gsize value_length = (gsize) g_rand_int_range (rand, 0, sizeof value);
      g_autoptr (GError) error = NULL;

      for (gsize i = 0; i < name_length; i++)
        name[i] = (char) g_rand_int_range (rand, 1, 256);
      name[name_length] = '\0';
      for (gsize i = 0; i < value_length; i++)
        value[i] = (char) g_rand_int_range (rand, 1, 256);
      value[value_length] = '\0';

      if (!kvev_config_set (config, name, value, &error))
        {
          g_assert_nonnull (error);
          g_assert_true (g_utf8_validate (error->message, -1, NULL));
        }
      g_clear_error (&error);
      if (kvev_config_set (config, "kv_events_dp_rank", value, &error))
        {
          /* Only digits get through. */
          g_assert_cmpuint (value_length, >, 0);
          for (gsize i = 0; i < value_length; i++)
            g_assert_true (g_ascii_isdigit (value[i]));
        }
      else
        {
          g_assert_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE);
          g_assert_true (g_utf8_validate (error->message, -1, NULL));
        }
    }
}

static void
test_unchanged_after_failure (void)
{
  g_autoptr (KvevConfig) config = config_new_custom ();
  g_auto (GStrv) before = snapshot (config);
  char *endpoint = held (config, "kv_events_bind_endpoint")->string;

  g_assert_false (kvev_config_set (config, "kv_events_dp_rank", "-1", NULL));
  g_assert_false (kvev_config_set (config, "kv_events_max_batch_events", "0", NULL));
  g_assert_false (kvev_config_set (config, "enable_kv_events", "on", NULL));
  g_assert_false (kvev_config_set (config, "kv_events_bind_endpont", "ipc:///tmp/y", NULL));
  assert_snapshot (config, (const char *const *) before);
  /* Not even reallocated. */
  g_assert_true (held (config, "kv_events_bind_endpoint")->string == endpoint);
}

static void
test_copy (void)
{
  g_autoptr (KvevConfig) original = config_new_custom ();
  g_autoptr (KvevConfig) copy = kvev_config_copy (original);
  g_auto (GStrv) original_values = snapshot (original);
  g_auto (GStrv) copy_values = NULL;

  g_assert_nonnull (copy);
  g_assert_true (copy != original);
  assert_snapshot (copy, (const char *const *) original_values);
  /* Strings are the copy's own. */
  g_assert_true (held (copy, "kv_events_backend_id")->string
                 != held (original, "kv_events_backend_id")->string);
  g_assert_true (held (copy, "kv_events_topic")->string
                 != held (original, "kv_events_topic")->string);

  g_assert_true (kvev_config_set (original, "kv_events_backend_id", "other", NULL));
  g_assert_true (kvev_config_set (original, "kv_events_dp_rank", "99", NULL));
  g_assert_true (kvev_config_set (original, "enable_kv_events", "false", NULL));
  g_assert_true (kvev_config_set (original, "kv_events_non_utf8", "bin", NULL));
  assert_get (copy, "kv_events_non_utf8", "skip");
  assert_get (copy, "kv_events_backend_id", "backend-a");
  assert_get (copy, "kv_events_dp_rank", "2");
  assert_get (copy, "enable_kv_events", "true");

  copy_values = snapshot (copy);
  g_assert_true (kvev_config_set (copy, "kv_events_topic", "changed", NULL));
  assert_get (original, "kv_events_topic", "kv");

  /* Freeing one leaves the other whole. */
  g_clear_pointer (&original, kvev_config_free);
  g_assert_true (kvev_config_set (copy, "kv_events_topic", "kv", NULL));
  assert_snapshot (copy, (const char *const *) copy_values);
}

static void
test_free_null (void)
{
  kvev_config_free (NULL);
  {
    g_autoptr (KvevConfig) unset = NULL;

    (void) unset;
  }
}

static GKeyFile *
key_file_new_from (const char *data)
{
  g_autoptr (GKeyFile) key_file = g_key_file_new ();
  g_autoptr (GError) error = NULL;

  g_assert_true (g_key_file_load_from_data (key_file, data, (gsize) -1, G_KEY_FILE_NONE, &error));
  g_assert_no_error (error);
  return g_steal_pointer (&key_file);
}

static void
test_key_file_good (void)
{
  g_autoptr (KvevConfig) config = config_new_custom ();
  g_autoptr (GKeyFile) key_file
      = key_file_new_from ("# a master's configuration\n"
                           "[other]\n"
                           "kv_events_dp_rank=77\n"
                           "unrelated=1\n"
                           "[kv_events]\n"
                           "enable_kv_events=YES\n"
                           "kv_events_bind_endpoint=ipc:///tmp/kv.sock\n"
                           "kv_events_backend_id=\\sbackend with spaces\\t\n"
                           "kv_events_dp_rank=5\n"
                           "kv_events_emit_legacy_compat=false\n"
                           "kv_events_model_name=模型\n"
                           "kv_events_non_utf8=bin\n"
                           "kv_events_topic=\n");
  g_autoptr (GError) error = NULL;

  g_assert_true (kvev_config_load_key_file (config, key_file, NULL, &error));
  g_assert_no_error (error);

  assert_get (config, "enable_kv_events", "true");
  assert_get (config, "kv_events_bind_endpoint", "ipc:///tmp/kv.sock");
  /* The file's escapes are undone. */
  assert_get (config, "kv_events_backend_id", " backend with spaces\t");
  assert_get (config, "kv_events_dp_rank", "5");
  assert_get (config, "kv_events_emit_legacy_compat", "false");
  assert_get (config, "kv_events_model_name", "模型");
  /* config_new_custom () had skip: the file's word is committed. */
  assert_get (config, "kv_events_non_utf8", "bin");
  assert_get (config, "kv_events_topic", "");
  /* Keys the file does not name keep their values. */
  assert_get (config, "kv_events_block_size", "16");
  assert_get (config, "kv_events_emit_object_key", "false");
  assert_get (config, "kv_events_max_batch_events", "8");
  assert_get (config, "kv_events_send_hwm", "10000");
  g_assert_cmpstr (held (config, "kv_events_backend_id")->string, ==, " backend with spaces\t");
}

static void
test_key_file_unknown_key (void)
{
  g_autoptr (KvevConfig) config = config_new_custom ();
  g_auto (GStrv) before = snapshot (config);
  g_autoptr (GKeyFile) key_file = key_file_new_from ("[kv_events]\n"
                                                     "kv_events_backend_id=changed\n"
                                                     "kv_events_dp_rank=9\n"
                                                     "kv_events_dp_rnak=5\n"
                                                     "kv_events_topic=changed\n");
  g_autoptr (GError) error = NULL;

  g_assert_false (kvev_config_load_key_file (config, key_file, NULL, &error));
  g_assert_error (error, KVEV_ERROR, KVEV_ERROR_UNKNOWN_FLAG);
  g_assert_cmpstr (error->message, ==,
                   "Key \"kv_events_dp_rnak\" in group [kv_events]: "
                   "Unknown flag \"kv_events_dp_rnak\" "
                   "(did you mean \"kv_events_dp_rank\"?)");
  /* Nothing before the bad key stuck. */
  assert_snapshot (config, (const char *const *) before);
}

static void
test_key_file_bad_value (void)
{
  g_autoptr (KvevConfig) config = config_new_custom ();
  g_auto (GStrv) before = snapshot (config);
  g_autoptr (GKeyFile) key_file = key_file_new_from ("[kv_events]\n"
                                                     "enable_kv_events=false\n"
                                                     "kv_events_bind_endpoint=ipc:///tmp/other\n"
                                                     "kv_events_model_name=changed\n"
                                                     "kv_events_max_batch_events=4097\n"
                                                     "kv_events_dp_rank=1\n");
  g_autoptr (GError) error = NULL;

  g_assert_false (kvev_config_load_key_file (config, key_file, NULL, &error));
  g_assert_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE);
  g_assert_cmpstr (error->message, ==,
                   "Key \"kv_events_max_batch_events\" in group [kv_events]: "
                   "Invalid value \"4097\" for kv_events_max_batch_events: "
                   "expected an unsigned integer from 1 to 4096");
  assert_snapshot (config, (const char *const *) before);

  /* The same without a GError. */
  g_assert_false (kvev_config_load_key_file (config, key_file, NULL, NULL));
  assert_snapshot (config, (const char *const *) before);
}

/* A word flag from a key file: set, and refused with the accepted words,
 * leaving the configuration as it was. */
static void
test_key_file_words (void)
{
  g_autoptr (KvevConfig) config = kvev_config_new ();
  g_autoptr (GKeyFile) good = key_file_new_from ("[kv_events]\nkv_events_non_utf8=Skip\n");
  g_autoptr (GKeyFile) bad = key_file_new_from ("[kv_events]\n"
                                                "kv_events_dp_rank=3\n"
                                                "kv_events_non_utf8=str\n");
  g_autoptr (GError) error = NULL;
  g_auto (GStrv) before = NULL;

  g_assert_true (kvev_config_load_key_file (config, good, NULL, &error));
  g_assert_no_error (error);
  assert_get (config, "kv_events_non_utf8", "skip");
  g_assert_cmpint (held (config, "kv_events_non_utf8")->word, ==, KVEV_NON_UTF8_SKIP);

  before = snapshot (config);
  g_assert_false (kvev_config_load_key_file (config, bad, NULL, &error));
  g_assert_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE);
  g_assert_cmpstr (error->message, ==,
                   "Key \"kv_events_non_utf8\" in group [kv_events]: "
                   "Invalid value \"str\" for kv_events_non_utf8: expected one of bin, skip");
  assert_snapshot (config, (const char *const *) before);
  g_assert_cmpint (held (config, "kv_events_non_utf8")->word, ==, KVEV_NON_UTF8_SKIP);
}

static void
test_key_file_unreadable_value (void)
{
  g_autoptr (KvevConfig) config = config_new_custom ();
  g_auto (GStrv) before = snapshot (config);
  g_autoptr (GKeyFile) bad_escape = key_file_new_from ("[kv_events]\n"
                                                       "kv_events_model_name=changed\n"
                                                       "kv_events_topic=bad \\q escape\n");
  g_autoptr (GKeyFile) not_utf8 = key_file_new_from ("[kv_events]\n"
                                                     "kv_events_model_name=changed\n"
                                                     "kv_events_topic=\xff\xfe\n");
  /* g_key_file_get_string () would set its GError twice on this one, a
   * GLib warning that the test harness makes fatal. */
  g_autoptr (GKeyFile) two_faults = key_file_new_from ("[kv_events]\n"
                                                       "kv_events_model_name=changed\n"
                                                       "kv_events_topic=a\\q\\\n");
  g_autoptr (GKeyFile) trailing = key_file_new_from ("[kv_events]\n"
                                                     "kv_events_topic=ends in \\\n");
  g_autoptr (GError) error = NULL;

  /* The key file refuses these itself; the load still fails in our
   * domain, naming the key. */
  g_assert_false (kvev_config_load_key_file (config, bad_escape, NULL, &error));
  g_assert_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE);
  g_assert_true (g_str_has_prefix (error->message, "Key \"kv_events_topic\" in group "
                                                   "[kv_events]: "));
  assert_snapshot (config, (const char *const *) before);
  g_clear_error (&error);

  g_assert_false (kvev_config_load_key_file (config, not_utf8, NULL, &error));
  g_assert_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE);
  g_assert_true (g_str_has_prefix (error->message, "Key \"kv_events_topic\" in group "
                                                   "[kv_events]: "));
  g_assert_true (g_utf8_validate (error->message, -1, NULL));
  assert_snapshot (config, (const char *const *) before);
  g_clear_error (&error);

  g_assert_false (kvev_config_load_key_file (config, two_faults, NULL, &error));
  g_assert_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE);
  g_assert_nonnull (strstr (error->message, "\"\\q\""));
  assert_snapshot (config, (const char *const *) before);
  g_clear_error (&error);

  g_assert_false (kvev_config_load_key_file (config, trailing, NULL, &error));
  g_assert_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE);
  assert_snapshot (config, (const char *const *) before);
}

/* The key file's escapes are undone as GKeyFile documents them. */
static void
test_key_file_escapes (void)
{
  g_autoptr (KvevConfig) config = kvev_config_new ();
  g_autoptr (GKeyFile) key_file = key_file_new_from ("[kv_events]\n"
                                                     "kv_events_topic=\\sa\\tb\\nc\\rd\\\\e\\s\n"
                                                     "kv_events_model_name=m\xc3\xa9\n");
  g_autoptr (GError) error = NULL;

  g_assert_true (kvev_config_load_key_file (config, key_file, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (held (config, "kv_events_topic")->string, ==, " a\tb\nc\rd\\e ");
  g_assert_cmpstr (held (config, "kv_events_model_name")->string, ==, "m\xc3\xa9");
}

static void
test_key_file_missing_group (void)
{
  g_autoptr (KvevConfig) config = config_new_custom ();
  g_auto (GStrv) before = snapshot (config);
  g_autoptr (GKeyFile) key_file = key_file_new_from ("[master]\n"
                                                     "kv_events_dp_rank=5\n"
                                                     "bogus=1\n");
  g_autoptr (GKeyFile) empty = g_key_file_new ();
  g_autoptr (GError) error = NULL;

  g_assert_true (kvev_config_load_key_file (config, key_file, NULL, &error));
  g_assert_no_error (error);
  assert_snapshot (config, (const char *const *) before);

  g_assert_true (kvev_config_load_key_file (config, key_file, "kv_events", &error));
  g_assert_no_error (error);
  g_assert_true (kvev_config_load_key_file (config, empty, NULL, &error));
  g_assert_no_error (error);
  assert_snapshot (config, (const char *const *) before);
}

static void
test_key_file_empty_group (void)
{
  g_autoptr (KvevConfig) config = config_new_custom ();
  g_auto (GStrv) before = snapshot (config);
  g_autoptr (GKeyFile) key_file = key_file_new_from ("[kv_events]\n"
                                                     "# nothing yet\n");
  g_autoptr (GError) error = NULL;

  g_assert_true (kvev_config_load_key_file (config, key_file, NULL, &error));
  g_assert_no_error (error);
  assert_snapshot (config, (const char *const *) before);
}

static void
test_key_file_custom_group (void)
{
  g_autoptr (KvevConfig) config = kvev_config_new ();
  g_autoptr (GKeyFile) key_file = key_file_new_from ("[kv_events]\n"
                                                     "kv_events_dp_rank=1\n"
                                                     "[publisher]\n"
                                                     "kv_events_dp_rank=2\n"
                                                     "kv_events_bogus=3\n"
                                                     "[master kv]\n"
                                                     "kv_events_dp_rank=3\n"
                                                     "kv_events_backend_id=b\n");
  g_autoptr (GError) error = NULL;

  g_assert_true (kvev_config_load_key_file (config, key_file, "master kv", &error));
  g_assert_no_error (error);
  assert_get (config, "kv_events_dp_rank", "3");
  assert_get (config, "kv_events_backend_id", "b");

  /* The error names the group that was read. */
  g_assert_false (kvev_config_load_key_file (config, key_file, "publisher", &error));
  g_assert_error (error, KVEV_ERROR, KVEV_ERROR_UNKNOWN_FLAG);
  g_assert_cmpstr (error->message, ==,
                   "Key \"kv_events_bogus\" in group [publisher]: "
                   "Unknown flag \"kv_events_bogus\"");
  assert_get (config, "kv_events_dp_rank", "3");
}

/* g_option_context_parse drops what it parsed from the array without
 * freeing it, so it gets a shallow copy and @owned keeps the strings. */
static gboolean
parse_args (KvevConfig *config, const char *const *args, GStrv *rest, GError **error)
{
  g_autoptr (GOptionContext) context = g_option_context_new (NULL);
  g_auto (GStrv) owned = g_strdupv ((char **) args);
  int argc = (int) g_strv_length (owned);
  g_autofree char **argv = g_new0 (char *, (gsize) argc + 1);
  char **argv_ptr = argv;
  gboolean ok;

  for (int i = 0; i < argc; i++)
    argv[i] = owned[i];
  g_option_context_add_group (context, kvev_config_option_group (config));
  g_option_context_set_help_enabled (context, FALSE);
  ok = g_option_context_parse (context, &argc, &argv_ptr, error);
  g_assert_true (argv_ptr == argv);
  if (rest != NULL)
    *rest = g_strdupv (argv_ptr);
  return ok;
}

static void
test_option_group_parse (void)
{
  static const char *const args[] = {
    "master",
    "--enable-kv-events",
    "--kv-events-emit-object-key=false",
    "--kv-events-dp-rank=3",
    "--kv-events-bind-endpoint=ipc:///tmp/x",
    "--kv-events-backend-id",
    "backend b",
    "--kv-events-topic=",
    "--kv-events-max-batch-events",
    "4096",
    "--kv-events-non-utf8",
    "SKIP",
    "positional",
    NULL,
  };
  g_autoptr (KvevConfig) config = kvev_config_new ();
  g_autoptr (GError) error = NULL;
  g_auto (GStrv) rest = NULL;

  g_assert_true (kvev_config_set (config, "kv_events_topic", "t", NULL));
  g_assert_true (parse_args (config, args, &rest, &error));
  g_assert_no_error (error);

  assert_get (config, "enable_kv_events", "true");
  assert_get (config, "kv_events_emit_object_key", "false");
  assert_get (config, "kv_events_dp_rank", "3");
  assert_get (config, "kv_events_bind_endpoint", "ipc:///tmp/x");
  assert_get (config, "kv_events_backend_id", "backend b");
  assert_get (config, "kv_events_topic", "");
  assert_get (config, "kv_events_max_batch_events", "4096");
  assert_get (config, "kv_events_non_utf8", "skip");
  g_assert_cmpint (held (config, "kv_events_non_utf8")->word, ==, KVEV_NON_UTF8_SKIP);
  /* Untouched flags keep their defaults. */
  assert_get (config, "kv_events_emit_legacy_compat", "true");
  assert_get (config, "kv_events_queue_capacity", "65536");

  g_assert_cmpuint (g_strv_length (rest), ==, 2);
  g_assert_cmpstr (rest[0], ==, "master");
  g_assert_cmpstr (rest[1], ==, "positional");
}

static void
test_option_group_booleans (void)
{
  static const char *const args[] = {
    "master",
    "--enable-kv-events=false",
    "--kv-events-emit-object-key=YES",
    "--kv-events-emit-legacy-compat=0",
    NULL,
  };
  static const char *const again[] = {
    "master",
    "--enable-kv-events=true",
    "--enable-kv-events=no",
    NULL,
  };
  g_autoptr (KvevConfig) config = kvev_config_new ();
  g_autoptr (GError) error = NULL;

  g_assert_true (kvev_config_set (config, "enable_kv_events", "true", NULL));
  g_assert_true (kvev_config_set (config, "kv_events_emit_object_key", "false", NULL));
  g_assert_true (parse_args (config, args, NULL, &error));
  g_assert_no_error (error);
  assert_get (config, "enable_kv_events", "false");
  assert_get (config, "kv_events_emit_object_key", "true");
  assert_get (config, "kv_events_emit_legacy_compat", "false");

  /* The last one wins, as on any command line. */
  g_assert_true (kvev_config_set (config, "enable_kv_events", "true", NULL));
  g_assert_true (parse_args (config, again, NULL, &error));
  g_assert_no_error (error);
  assert_get (config, "enable_kv_events", "false");
}

static void
test_option_group_every_flag (void)
{
  const char *const *names = kvev_config_flags ();

  /* Each flag has its option, spelled with dashes. */
  for (gsize i = 0; names[i] != NULL; i++)
    {
      g_autoptr (KvevConfig) config = kvev_config_new ();
      g_autoptr (GError) error = NULL;
      g_autofree char *option = g_strdup (names[i]);
      g_autofree char *arg = NULL;
      g_autofree char *value = kvev_config_get (config, names[i]);
      const char *args[3] = { "master", NULL, NULL };
      const char *new_value;

      g_strdelimit (option, "_", '-');
      /* A value that differs from the default and suits the type. */
      if (g_strcmp0 (value, "true") == 0)
        new_value = "false";
      else if (g_strcmp0 (value, "false") == 0)
        new_value = "true";
      else if (g_ascii_isdigit (value[0]))
        new_value = strcmp (value, "1") == 0 ? "2" : "1";
      else if (strcmp (names[i], "kv_events_non_utf8") == 0)
        new_value = strcmp (value, non_utf8_words[0]) == 0 ? non_utf8_words[1] : non_utf8_words[0];
      else
        new_value = "text";
      arg = g_strdup_printf ("--%s=%s", option, new_value);
      args[1] = arg;

      g_test_message ("%s", arg);
      g_assert_true (parse_args (config, args, NULL, &error));
      g_assert_no_error (error);
      assert_get (config, names[i], new_value);
    }
}

static void
test_option_group_bad_value (void)
{
  static const struct
  {
    const char *arg;
    const char *flag;
    const char *value;
  } cases[] = {
    { "--kv-events-dp-rank=12x", "kv_events_dp_rank", "12x" },
    { "--kv-events-dp-rank=-1", "kv_events_dp_rank", "-1" },
    { "--kv-events-max-batch-events=0", "kv_events_max_batch_events", "0" },
    { "--kv-events-close-timeout-ms=600001", "kv_events_close_timeout_ms", "600001" },
    { "--enable-kv-events=maybe", "enable_kv_events", "maybe" },
    { "--kv-events-emit-object-key=", "kv_events_emit_object_key", "" },
    { "--kv-events-non-utf8=str", "kv_events_non_utf8", "str" },
    { "--kv-events-non-utf8=", "kv_events_non_utf8", "" },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (KvevConfig) config = kvev_config_new ();
      g_autoptr (KvevConfig) reference = kvev_config_new ();
      g_autoptr (GError) error = NULL;
      g_autoptr (GError) expected = NULL;
      const char *args[] = { "master", cases[i].arg, NULL };

      g_test_message ("%s", cases[i].arg);
      g_assert_false (kvev_config_set (reference, cases[i].flag, cases[i].value, &expected));
      g_assert_false (parse_args (config, args, NULL, &error));
      g_assert_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE);
      g_assert_cmpstr (error->message, ==, expected->message);
    }
}

/* A failed parse leaves the configuration as it was, whether the bad
 * option is one of ours or not, and a later good parse still works. */
static void
test_option_group_all_or_nothing (void)
{
  static const char *const ours_bad[] = {
    "master",
    "--kv-events-dp-rank=3",
    "--kv-events-topic=new",
    "--kv-events-non-utf8=skip",
    "--enable-kv-events",
    "--kv-events-max-batch-events=0",
    NULL,
  };
  static const char *const other_bad[] = {
    "master", "--kv-events-dp-rank=3", "--kv-events-topic=new", "--no-such-option", NULL,
  };
  static const char *const good[] = { "master", "--kv-events-dp-rank=5", NULL };
  g_autoptr (KvevConfig) config = kvev_config_new ();
  g_auto (GStrv) before = NULL;

  g_assert_true (kvev_config_set (config, "kv_events_topic", "t", NULL));
  before = snapshot (config);
  {
    g_autoptr (GError) error = NULL;

    g_assert_false (parse_args (config, ours_bad, NULL, &error));
    g_assert_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE);
    assert_snapshot (config, (const char *const *) before);
  }
  {
    g_autoptr (GError) error = NULL;

    g_assert_false (parse_args (config, other_bad, NULL, &error));
    g_assert_error (error, G_OPTION_ERROR, G_OPTION_ERROR_UNKNOWN_OPTION);
    assert_snapshot (config, (const char *const *) before);
  }
  {
    g_autoptr (GError) error = NULL;

    g_assert_true (parse_args (config, good, NULL, &error));
    g_assert_no_error (error);
    assert_get (config, "kv_events_dp_rank", "5");
    assert_get (config, "kv_events_topic", "t");
  }
}

static gboolean
main_group_refuses (GOptionContext *context G_GNUC_UNUSED, GOptionGroup *group G_GNUC_UNUSED,
                    gpointer data G_GNUC_UNUSED, GError **error)
{
  g_set_error_literal (error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "the program says no");
  return FALSE;
}

/* GLib runs the main group's post-parse hook after every added group's:
 * when the program's own check fails there, our values go back too. */
static void
test_option_group_main_hook_fails (void)
{
  g_autoptr (KvevConfig) config = kvev_config_new ();
  g_autoptr (GOptionContext) context = g_option_context_new (NULL);
  g_autoptr (GError) error = NULL;
  g_auto (GStrv) before = NULL;
  GOptionGroup *main_group = g_option_group_new ("master", "", "", NULL, NULL);
  static const char *const args[]
      = { "master", "--kv-events-dp-rank=7", "--kv-events-topic=new", NULL };
  g_auto (GStrv) owned = g_strdupv ((char **) args);
  g_autofree char **argv = g_memdup2 (owned, sizeof args);
  char **argv_ptr = argv;
  int argc = 3;

  g_assert_true (kvev_config_set (config, "kv_events_topic", "t", NULL));
  before = snapshot (config);
  g_option_group_set_parse_hooks (main_group, NULL, main_group_refuses);
  g_option_context_set_main_group (context, main_group);
  g_option_context_add_group (context, kvev_config_option_group (config));
  g_assert_false (g_option_context_parse (context, &argc, &argv_ptr, &error));
  g_assert_error (error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED);
  assert_snapshot (config, (const char *const *) before);
}

static void
test_option_group_help (void)
{
  g_autoptr (KvevConfig) config = kvev_config_new ();
  g_autoptr (GOptionContext) context = g_option_context_new (NULL);
  GOptionGroup *group = kvev_config_option_group (config);
  g_autofree char *help = NULL;
  g_autofree char *main_help = NULL;
  const char *const *names = kvev_config_flags ();

  g_assert_nonnull (group);
  g_option_context_add_group (context, group);
  help = g_option_context_get_help (context, FALSE, group);
  main_help = g_option_context_get_help (context, TRUE, NULL);

  g_assert_nonnull (strstr (main_help, "--help-kv-events"));
  g_assert_nonnull (strstr (help, "KV event publisher options:"));
  g_assert_nonnull (strstr (help, "--enable-kv-events"));
  g_assert_nonnull (strstr (help, "--kv-events-dp-rank=RANK"));
  g_assert_nonnull (strstr (help, "--kv-events-bind-endpoint=ENDPOINT"));
  /* A word flag shows the words it takes. */
  g_assert_nonnull (strstr (help, "--kv-events-non-utf8=bin|skip"));
  for (gsize i = 0; names[i] != NULL; i++)
    {
      g_autofree char *option = g_strdup_printf ("--%s", names[i]);

      g_strdelimit (option + 2, "_", '-');
      g_test_message ("%s", option);
      g_assert_nonnull (strstr (help, option));
    }
  /* No underscore spelling leaks into the options. */
  g_assert_null (strstr (help, "--kv_events"));
}

static void
assert_valid (KvevConfig *config, const char *endpoint)
{
  g_autoptr (GError) error = NULL;

  g_test_message ("valid: %s", endpoint);
  g_assert_true (kvev_config_set (config, "kv_events_bind_endpoint", endpoint, NULL));
  g_assert_true (kvev_config_validate (config, &error));
  g_assert_no_error (error);
}

static void
assert_invalid (KvevConfig *config, const char *endpoint)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *expected
      = g_strdup_printf ("Invalid value \"%s\" for kv_events_bind_endpoint: expected "
                         "tcp://HOST:PORT or ipc://PATH",
                         endpoint);

  g_test_message ("invalid: %s", endpoint);
  g_assert_true (kvev_config_set (config, "kv_events_bind_endpoint", endpoint, NULL));
  g_assert_false (kvev_config_validate (config, &error));
  g_assert_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE);
  g_assert_cmpstr (error->message, ==, expected);
  g_assert_false (kvev_config_validate (config, NULL));
}

static void
test_validate_disabled (void)
{
  g_autoptr (KvevConfig) config = kvev_config_new ();
  g_autoptr (GError) error = NULL;

  g_assert_true (kvev_config_validate (config, &error));
  g_assert_no_error (error);

  /* Junk does not matter while events are off. */
  g_assert_true (kvev_config_set (config, "kv_events_bind_endpoint", "not an endpoint", NULL));
  g_assert_true (kvev_config_validate (config, &error));
  g_assert_no_error (error);
  g_assert_true (kvev_config_set (config, "kv_events_bind_endpoint", "", NULL));
  g_assert_true (kvev_config_validate (config, &error));
  g_assert_no_error (error);
}

static void
test_validate_incomplete (void)
{
  g_autoptr (KvevConfig) config = kvev_config_new ();
  g_autoptr (GError) error = NULL;

  g_assert_true (kvev_config_set (config, "enable_kv_events", "true", NULL));

  /* Neither: the endpoint is reported first. */
  g_assert_false (kvev_config_validate (config, &error));
  g_assert_error (error, KVEV_ERROR, KVEV_ERROR_INCOMPLETE);
  g_assert_cmpstr (error->message, ==,
                   "kv_events_bind_endpoint must be set when "
                   "enable_kv_events is true");
  g_clear_error (&error);

  g_assert_true (kvev_config_set (config, "kv_events_backend_id", "b", NULL));
  g_assert_false (kvev_config_validate (config, &error));
  g_assert_error (error, KVEV_ERROR, KVEV_ERROR_INCOMPLETE);
  g_assert_nonnull (strstr (error->message, "kv_events_bind_endpoint"));
  g_clear_error (&error);

  g_assert_true (kvev_config_set (config, "kv_events_backend_id", "", NULL));
  g_assert_true (kvev_config_set (config, "kv_events_bind_endpoint", "ipc://kv", NULL));
  g_assert_false (kvev_config_validate (config, &error));
  g_assert_error (error, KVEV_ERROR, KVEV_ERROR_INCOMPLETE);
  g_assert_cmpstr (error->message, ==,
                   "kv_events_backend_id must be set when "
                   "enable_kv_events is true");
  g_clear_error (&error);

  g_assert_true (kvev_config_set (config, "kv_events_backend_id", "b", NULL));
  g_assert_true (kvev_config_validate (config, &error));
  g_assert_no_error (error);
}

/* The send budget must bound something: a high-water mark of 0 lets any
 * number of messages queue, and too small a share per message would send
 * events one by one. */
static gsize
message_limit (const KvevConfig *config)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (KvevSettings) settings = kvev_settings_new (config, &error);

  g_assert_no_error (error);
  return settings != NULL ? settings->message_limit : 0;
}

static void
test_validate_send_budget (void)
{
  g_autoptr (KvevConfig) config = kvev_config_new ();
  g_autoptr (GError) error = NULL;

  g_assert_true (kvev_config_set (config, "enable_kv_events", "true", NULL));
  g_assert_true (kvev_config_set (config, "kv_events_bind_endpoint", "tcp://127.0.0.1:*", NULL));
  g_assert_true (kvev_config_set (config, "kv_events_backend_id", "b", NULL));
  g_assert_true (kvev_config_validate (config, NULL));
  g_assert_cmpuint (message_limit (config), ==, 268435456 / 10000);

  g_assert_true (kvev_config_set (config, "kv_events_send_hwm", "0", NULL));
  g_assert_false (kvev_config_validate (config, &error));
  g_assert_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE);
  g_assert_nonnull (strstr (error->message, "kv_events_send_buffer_bytes=0"));
  g_clear_error (&error);
  g_assert_true (kvev_config_set (config, "kv_events_send_buffer_bytes", "0", NULL));
  g_assert_true (kvev_config_validate (config, NULL));
  g_assert_cmpuint (message_limit (config), ==, 1024 * 1024);

  g_assert_true (kvev_config_set (config, "kv_events_send_hwm", "1000", NULL));
  g_assert_true (kvev_config_set (config, "kv_events_send_buffer_bytes", "4095999", NULL));
  g_assert_false (kvev_config_validate (config, &error));
  g_assert_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE);
  g_assert_nonnull (strstr (error->message, "less than 4096 bytes"));
  g_clear_error (&error);
  g_assert_true (kvev_config_set (config, "kv_events_send_buffer_bytes", "4096000", NULL));
  g_assert_true (kvev_config_validate (config, NULL));
  g_assert_cmpuint (message_limit (config), ==, 4096);

  /* However large the budget, 1 MiB at most. */
  g_assert_true (kvev_config_set (config, "kv_events_send_hwm", "1", NULL));
  g_assert_true (kvev_config_validate (config, NULL));
  g_assert_cmpuint (message_limit (config), ==, 1024 * 1024);
}

/* Context strings are msgpack str in every event: invalid UTF-8 there
 * would make strict readers drop every payload. */
static void
test_validate_utf8 (void)
{
  static const char *const flags[] = { "kv_events_backend_id", "kv_events_model_name",
                                       "kv_events_additional_salt", "kv_events_lora_name" };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (flags); i++)
    {
      g_autoptr (KvevConfig) config = kvev_config_new ();
      g_autoptr (GError) error = NULL;

      g_assert_true (kvev_config_set (config, "enable_kv_events", "true", NULL));
      g_assert_true (kvev_config_set (config, "kv_events_bind_endpoint", "ipc://kv", NULL));
      g_assert_true (kvev_config_set (config, "kv_events_backend_id", "b", NULL));
      g_assert_true (kvev_config_set (config, flags[i], "caf\xc3\xa9", NULL));
      g_assert_true (kvev_config_validate (config, NULL));
      g_assert_true (kvev_config_set (config, flags[i], "bad\xff", NULL));
      g_assert_false (kvev_config_validate (config, &error));
      g_assert_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE);
      g_assert_nonnull (strstr (error->message, flags[i]));
      g_assert_true (g_utf8_validate (error->message, -1, NULL));
    }
}

static void
test_validate_endpoints (void)
{
  static const char *const good[] = {
    "tcp://127.0.0.1:5557",
    "tcp://127.0.0.1:*",
    "tcp://*:5557",
    "tcp://*:*",
    "tcp://[::1]:5555",
    "tcp://[::]:*",
    "tcp://[fe80::1%lo]:5555",
    "tcp://[::ffff:127.0.0.1]:5555",
    "tcp://lo:65535",
    "tcp://0:*",
    "tcp://0.0:*",
    "tcp://127.1:5557",
    "tcp://[0:0::0]:*",
    "ipc:///tmp/kv.sock",
    "ipc://@abstract",
    "ipc://relative",
    "ipc://*",
  };
  static const char *const bad[] = {
    "tcp://host",
    "tcp://host:",
    "tcp://host:0",
    "tcp://host:00",
    "tcp://host:70000",
    "tcp://host:65536",
    "tcp://host:99999999999999999999",
    "tcp://host:-1",
    "tcp://host:+1",
    "tcp://host:1x",
    "tcp://host: 1",
    "tcp://:5555",
    "tcp://",
    "tcp://::1:5555",
    "tcp://[::1]",
    "tcp://[::1]:",
    "tcp://[]:5555",
    "tcp://[::1:5555",
    "tcp://[localhost]:5555",
    "tcp://[::1]x:5555",
    "tcp://[::1]:5555]",
    "tcp://ho st:5555",
    "tcp://host/path:5555",
    "udp://x:1",
    "TCP://host:1",
    "ipc://",
    "foo",
    " tcp://host:1",
    "pgm://eth0;239.192.1.1:5555",
  };
  g_autoptr (KvevConfig) config = kvev_config_new ();

  g_assert_true (kvev_config_set (config, "enable_kv_events", "true", NULL));
  g_assert_true (kvev_config_set (config, "kv_events_backend_id", "b", NULL));
  for (gsize i = 0; i < G_N_ELEMENTS (good); i++)
    assert_valid (config, good[i]);
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    assert_invalid (config, bad[i]);
}

static void
test_validate_endpoint_escaped (void)
{
  g_autoptr (KvevConfig) config = kvev_config_new ();
  g_autoptr (GError) error = NULL;

  g_assert_true (kvev_config_set (config, "enable_kv_events", "true", NULL));
  g_assert_true (kvev_config_set (config, "kv_events_backend_id", "b", NULL));
  g_assert_true (kvev_config_set (config, "kv_events_bind_endpoint", "tcp://\xff:1", NULL));
  g_assert_false (kvev_config_validate (config, &error));
  g_assert_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE);
  g_assert_cmpstr (error->message, ==,
                   "Invalid value \"tcp://\\377:1\" for "
                   "kv_events_bind_endpoint: expected tcp://HOST:PORT or "
                   "ipc://PATH");
}

/* The message of an endpoint validation refuses, with its code checked. */
static char *
endpoint_error (KvevConfig *config, const char *endpoint)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *prefix
      = g_strdup_printf ("Invalid value \"%s\" for kv_events_bind_endpoint: ", endpoint);

  g_test_message ("invalid: %s", endpoint);
  g_assert_true (kvev_config_set (config, "kv_events_bind_endpoint", endpoint, NULL));
  g_assert_false (kvev_config_validate (config, &error));
  g_assert_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE);
  g_assert_true (g_str_has_prefix (error->message, prefix));
  return g_strdup (error->message + strlen (prefix));
}

static void
assert_endpoint_error (KvevConfig *config, const char *endpoint, const char *expected)
{
  g_autofree char *message = endpoint_error (config, endpoint);

  g_assert_cmpstr (message, ==, expected);
}

/* libzmq binds "*", numeric addresses and interface names, never a host
 * name: validation says so, and what to write, rather than leaving the
 * bind to fail with "No such device". */
static void
test_validate_endpoint_hosts (void)
{
  g_autoptr (KvevConfig) config = kvev_config_new ();

  g_assert_true (kvev_config_set (config, "enable_kv_events", "true", NULL));
  g_assert_true (kvev_config_set (config, "kv_events_backend_id", "b", NULL));

  assert_endpoint_error (config, "tcp://localhost:5557",
                         "ZeroMQ binds addresses and network interfaces, not host names: "
                         "for localhost write 127.0.0.1 or [::1]");
  assert_endpoint_error (config, "tcp://LocalHost.:*",
                         "ZeroMQ binds addresses and network interfaces, not host names: "
                         "for localhost write 127.0.0.1 or [::1]");
  assert_endpoint_error (config, "tcp://kvev-no-such-host.invalid:5557",
                         "\"kvev-no-such-host.invalid\" is neither an IP address nor a "
                         "network interface of this machine, and ZeroMQ binds no host names: "
                         "write an IP address (an IPv6 one in brackets), an interface name, or "
                         "* for every interface");
  assert_endpoint_error (config, "tcp://999.1.1.1:5557",
                         "\"999.1.1.1\" is neither an IP address nor a network interface of "
                         "this machine, and ZeroMQ binds no host names: write an IP address "
                         "(an IPv6 one in brackets), an interface name, or * for every "
                         "interface");
  assert_endpoint_error (config, "tcp://[fe80::1%kvevnosuch0]:5557",
                         "the zone \"kvevnosuch0\" is not a network interface of this machine");
  assert_endpoint_error (config, "tcp://[fe80::1%]:5557",
                         "the zone \"\" is not a network interface of this machine");
  assert_endpoint_error (config, "tcp://[fe80::1%4294967295]:5557",
                         "the zone \"4294967295\" is not a network interface of this machine");
  assert_endpoint_error (config, "tcp://[fe80::zz]:5557",
                         "\"fe80::zz\" in brackets is not an IPv6 address");
  assert_endpoint_error (config, "tcp://[::1.2.3.4.5]:5557",
                         "\"::1.2.3.4.5\" in brackets is not an IPv6 address");

  /* An interface by name, and an IPv6 zone by name and by index. */
  assert_valid (config, "tcp://lo:5557");
  assert_valid (config, "tcp://[::1%lo]:5557");
  {
    g_autofree char *by_index = g_strdup_printf ("tcp://[fe80::1%%%u]:5557", if_nametoindex ("lo"));

    assert_valid (config, by_index);
  }
}

/* Each publisher has a ZeroMQ context of its own, so nothing could ever
 * connect to an inproc:// endpoint; validation says to use ipc://. */
static void
test_validate_endpoint_inproc (void)
{
  g_autoptr (KvevConfig) config = kvev_config_new ();
  static const char *const inproc[] = { "inproc://kv", "inproc://a/b:c", "inproc://" };

  g_assert_true (kvev_config_set (config, "enable_kv_events", "true", NULL));
  g_assert_true (kvev_config_set (config, "kv_events_backend_id", "b", NULL));
  for (gsize i = 0; i < G_N_ELEMENTS (inproc); i++)
    assert_endpoint_error (config, inproc[i],
                           "inproc:// endpoints are reachable only through the publisher's own "
                           "ZeroMQ context, which nothing outside the library can use: use "
                           "ipc://PATH instead");
}

/* libzmq unlinks an ipc:// path before it finds it too long to bind; a
 * path a socket address cannot hold is refused before that. */
static void
test_validate_endpoint_ipc_length (void)
{
  g_autoptr (KvevConfig) config = kvev_config_new ();
  struct sockaddr_un address;
  gsize longest = sizeof address.sun_path - 1;
  g_autofree char *fits = g_strnfill (longest, 'p');
  g_autofree char *too_long = g_strnfill (longest + 1, 'p');
  g_autofree char *fits_endpoint = g_strconcat ("ipc://", fits, NULL);
  g_autofree char *too_long_endpoint = g_strconcat ("ipc://", too_long, NULL);
  g_autofree char *expected
      = g_strdup_printf ("an ipc:// path may be at most %u bytes long", (guint) longest);

  g_assert_true (kvev_config_set (config, "enable_kv_events", "true", NULL));
  g_assert_true (kvev_config_set (config, "kv_events_backend_id", "b", NULL));
  assert_valid (config, fits_endpoint);
  assert_endpoint_error (config, too_long_endpoint, expected);
}

static void
test_validate_security (void)
{
  g_autoptr (KvevConfig) config = kvev_config_new ();
  g_autoptr (GError) error = NULL;

  /* Off, the security flags are not read either. */
  g_assert_true (kvev_config_set (config, "kv_events_curve_secret_key_file",
                                  "/nonexistent/kvev-test.key", NULL));
  g_assert_true (kvev_config_set (config, "kv_events_allowed_addresses", "not an address", NULL));
  g_assert_true (kvev_config_validate (config, &error));
  g_assert_no_error (error);

  /* On, validate reads them, in every build. */
  g_assert_true (kvev_config_set (config, "enable_kv_events", "true", NULL));
  g_assert_true (kvev_config_set (config, "kv_events_backend_id", "b", NULL));
  g_assert_true (kvev_config_set (config, "kv_events_bind_endpoint", "tcp://127.0.0.1:*", NULL));
  g_assert_false (kvev_config_validate (config, &error));
  g_assert_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE);
  g_assert_nonnull (strstr (error->message, "kv_events_curve_secret_key_file"));
  g_clear_error (&error);

  g_assert_true (kvev_config_set (config, "kv_events_curve_secret_key_file", "", NULL));
  g_assert_false (kvev_config_validate (config, &error));
  g_assert_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE);
  g_assert_nonnull (strstr (error->message, "kv_events_allowed_addresses"));
  g_clear_error (&error);

  g_assert_true (
      kvev_config_set (config, "kv_events_allowed_addresses", "127.0.0.1, 10.0.0.0/8", NULL));
  g_assert_true (kvev_config_validate (config, &error));
  g_assert_no_error (error);

  /* The endpoint's own syntax is checked before the security flags. */
  g_assert_true (kvev_config_set (config, "kv_events_bind_endpoint", "tcp://127.0.0.1", NULL));
  g_assert_false (kvev_config_validate (config, &error));
  g_assert_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE);
  g_assert_nonnull (strstr (error->message, "kv_events_bind_endpoint"));
}

/* Preconditions: each case runs in a subprocess, where the critical is
 * made non-fatal so the return value can be checked too. */
typedef enum
{
  PRE_COPY,
  PRE_SET_CONFIG,
  PRE_SET_FLAG,
  PRE_SET_VALUE,
  PRE_GET_CONFIG,
  PRE_GET_FLAG,
  PRE_LOAD_CONFIG,
  PRE_LOAD_KEY_FILE,
  PRE_OPTION_GROUP,
  PRE_VALIDATE,
  PRE_SET_ERROR_SET,
} Precondition;

static const char *const precondition_patterns[] = {
  [PRE_COPY] = "*CRITICAL*kvev_config_copy*config != NULL*",
  [PRE_SET_CONFIG] = "*CRITICAL*kvev_config_set*config != NULL*",
  [PRE_SET_FLAG] = "*CRITICAL*kvev_config_set*flag != NULL*",
  [PRE_SET_VALUE] = "*CRITICAL*kvev_config_set*value != NULL*",
  [PRE_GET_CONFIG] = "*CRITICAL*kvev_config_get*config != NULL*",
  [PRE_GET_FLAG] = "*CRITICAL*kvev_config_get*flag != NULL*",
  [PRE_LOAD_CONFIG] = "*CRITICAL*kvev_config_load_key_file*config != NULL*",
  [PRE_LOAD_KEY_FILE] = "*CRITICAL*kvev_config_load_key_file*key_file != NULL*",
  [PRE_OPTION_GROUP] = "*CRITICAL*kvev_config_option_group*config != NULL*",
  [PRE_VALIDATE] = "*CRITICAL*kvev_config_validate*config != NULL*",
  [PRE_SET_ERROR_SET] = "*CRITICAL*kvev_config_set*error == NULL*",
};

static void
run_precondition (Precondition which)
{
  g_autoptr (KvevConfig) config = kvev_config_new ();
  g_autoptr (GKeyFile) key_file = g_key_file_new ();
  g_autoptr (GError) error = g_error_new_literal (KVEV_ERROR, 0, "set");

  switch (which)
    {
    case PRE_COPY:
      g_assert_null (kvev_config_copy (NULL));
      break;
    case PRE_SET_CONFIG:
      g_assert_false (kvev_config_set (NULL, "kv_events_dp_rank", "1", NULL));
      break;
    case PRE_SET_FLAG:
      g_assert_false (kvev_config_set (config, NULL, "1", NULL));
      break;
    case PRE_SET_VALUE:
      g_assert_false (kvev_config_set (config, "kv_events_dp_rank", NULL, NULL));
      assert_get (config, "kv_events_dp_rank", "0");
      break;
    case PRE_GET_CONFIG:
      g_assert_null (kvev_config_get (NULL, "kv_events_dp_rank"));
      break;
    case PRE_GET_FLAG:
      g_assert_null (kvev_config_get (config, NULL));
      break;
    case PRE_LOAD_CONFIG:
      g_assert_false (kvev_config_load_key_file (NULL, key_file, NULL, NULL));
      break;
    case PRE_LOAD_KEY_FILE:
      g_assert_false (kvev_config_load_key_file (config, NULL, NULL, NULL));
      break;
    case PRE_OPTION_GROUP:
      g_assert_null (kvev_config_option_group (NULL));
      break;
    case PRE_VALIDATE:
      g_assert_false (kvev_config_validate (NULL, NULL));
      break;
    case PRE_SET_ERROR_SET:
      /* An error already set is a caller's bug too. */
      g_assert_false (kvev_config_set (config, "kv_events_dp_rank", "x", &error));
      g_assert_cmpstr (error->message, ==, "set");
      break;
    }
}

static void
test_precondition (gconstpointer data)
{
  Precondition which = (Precondition) GPOINTER_TO_INT (data);

  if (g_test_subprocess ())
    {
      g_log_set_always_fatal (G_LOG_FATAL_MASK);
      run_precondition (which);
      return;
    }
  g_test_trap_subprocess (NULL, 0, 0);
  g_test_trap_assert_passed ();
  g_test_trap_assert_stderr (precondition_patterns[which]);
}

static void
test_free_null_no_critical (void)
{
  if (g_test_subprocess ())
    {
      kvev_config_free (NULL);
      return;
    }
  g_test_trap_subprocess (NULL, 0, 0);
  g_test_trap_assert_passed ();
  g_test_trap_assert_stderr ("");
}

static void
test_log_domain (void)
{
  /* The library logs in its own domain so the master can route it. */
  if (g_test_subprocess ())
    {
      g_log_set_always_fatal (G_LOG_FATAL_MASK);
      g_assert_null (kvev_config_copy (NULL));
      return;
    }
  g_test_trap_subprocess (NULL, 0, 0);
  g_test_trap_assert_passed ();
  g_test_trap_assert_stderr ("*kvevents-CRITICAL*kvev_config_copy*");
}

int
main (int argc, char **argv)
{
  static const struct
  {
    const char *name;
    Precondition which;
  } preconditions[] = {
    { "copy-null-config", PRE_COPY },
    { "set-null-config", PRE_SET_CONFIG },
    { "set-null-flag", PRE_SET_FLAG },
    { "set-null-value", PRE_SET_VALUE },
    { "set-error-already-set", PRE_SET_ERROR_SET },
    { "get-null-config", PRE_GET_CONFIG },
    { "get-null-flag", PRE_GET_FLAG },
    { "load-key-file-null-config", PRE_LOAD_CONFIG },
    { "load-key-file-null-key-file", PRE_LOAD_KEY_FILE },
    { "option-group-null-config", PRE_OPTION_GROUP },
    { "validate-null-config", PRE_VALIDATE },
  };

  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/kvevents/config/flags-list", test_flags_list);
  g_test_add_func ("/kvevents/config/defaults", test_defaults);
  g_test_add_func ("/kvevents/config/get-unknown", test_get_unknown);
  g_test_add_func ("/kvevents/config/booleans", test_booleans);
  g_test_add_func ("/kvevents/config/integers", test_integers);
  g_test_add_func ("/kvevents/config/strings", test_strings);
  g_test_add_func ("/kvevents/config/bad-integers", test_bad_integers);
  g_test_add_func ("/kvevents/config/out-of-range", test_out_of_range);
  g_test_add_func ("/kvevents/config/bad-booleans", test_bad_booleans);
  g_test_add_func ("/kvevents/config/words", test_words);
  g_test_add_func ("/kvevents/config/bad-words", test_bad_words);
  g_test_add_func ("/kvevents/config/bad-value-escaped", test_bad_value_escaped);
  g_test_add_func ("/kvevents/config/unknown-flag-suggestion", test_unknown_flag_suggestion);
  g_test_add_func ("/kvevents/config/unknown-flag-no-suggestion", test_unknown_flag_no_suggestion);
  g_test_add_func ("/kvevents/config/unknown-flag-any-bytes", test_unknown_flag_any_bytes);
  g_test_add_func ("/kvevents/config/unchanged-after-failure", test_unchanged_after_failure);
  g_test_add_func ("/kvevents/config/copy", test_copy);
  g_test_add_func ("/kvevents/config/free-null", test_free_null);
  g_test_add_func ("/kvevents/config/free-null-no-critical", test_free_null_no_critical);
  g_test_add_func ("/kvevents/config/key-file-good", test_key_file_good);
  g_test_add_func ("/kvevents/config/key-file-unknown-key", test_key_file_unknown_key);
  g_test_add_func ("/kvevents/config/key-file-bad-value", test_key_file_bad_value);
  g_test_add_func ("/kvevents/config/key-file-words", test_key_file_words);
  g_test_add_func ("/kvevents/config/key-file-unreadable-value", test_key_file_unreadable_value);
  g_test_add_func ("/kvevents/config/key-file-missing-group", test_key_file_missing_group);
  g_test_add_func ("/kvevents/config/key-file-empty-group", test_key_file_empty_group);
  g_test_add_func ("/kvevents/config/key-file-custom-group", test_key_file_custom_group);
  g_test_add_func ("/kvevents/config/key-file-escapes", test_key_file_escapes);
  g_test_add_func ("/kvevents/config/option-group-parse", test_option_group_parse);
  g_test_add_func ("/kvevents/config/option-group-all-or-nothing",
                   test_option_group_all_or_nothing);
  g_test_add_func ("/kvevents/config/option-group-booleans", test_option_group_booleans);
  g_test_add_func ("/kvevents/config/option-group-every-flag", test_option_group_every_flag);
  g_test_add_func ("/kvevents/config/option-group-bad-value", test_option_group_bad_value);
  g_test_add_func ("/kvevents/config/option-group-main-hook-fails",
                   test_option_group_main_hook_fails);
  g_test_add_func ("/kvevents/config/option-group-help", test_option_group_help);
  g_test_add_func ("/kvevents/config/validate-disabled", test_validate_disabled);
  g_test_add_func ("/kvevents/config/validate-incomplete", test_validate_incomplete);
  g_test_add_func ("/kvevents/config/validate-endpoints", test_validate_endpoints);
  g_test_add_func ("/kvevents/config/validate-utf8", test_validate_utf8);
  g_test_add_func ("/kvevents/config/validate-endpoint-escaped", test_validate_endpoint_escaped);
  g_test_add_func ("/kvevents/config/validate-endpoint-hosts", test_validate_endpoint_hosts);
  g_test_add_func ("/kvevents/config/validate-endpoint-inproc", test_validate_endpoint_inproc);
  g_test_add_func ("/kvevents/config/validate-endpoint-ipc-length",
                   test_validate_endpoint_ipc_length);
  g_test_add_func ("/kvevents/config/validate-security", test_validate_security);
  g_test_add_func ("/kvevents/config/validate-send-budget", test_validate_send_budget);
  for (gsize i = 0; i < G_N_ELEMENTS (preconditions); i++)
    {
      g_autofree char *path
          = g_strdup_printf ("/kvevents/config/precondition/%s", preconditions[i].name);

      g_test_add_data_func (path, GINT_TO_POINTER (preconditions[i].which), test_precondition);
    }
  g_test_add_func ("/kvevents/config/log-domain", test_log_domain);

  return g_test_run ();
}
