/* test-config-file.c: a configuration read from a key file by its path,
 * and the option group in which --kv-events-config-file goes under the
 * command line.  The public API through the shared library, in both
 * builds.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <kvevents/kvevents.h>

#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

/* A valid server secret key and a client public key, Z85. */
#define SERVER_SECRET "JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6"
#define CLIENT_PUBLIC "Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID"

/* A master's configuration directory, and another directory to start the
 * master from, where none of its files are. */
typedef struct
{
  char *top;
  char *etc;
  char *elsewhere;
  char *saved_cwd;
  char *conf;
} Fixture;

static void
write_file (const char *path, const char *contents, int mode)
{
  g_autoptr (GError) error = NULL;

  g_assert_true (g_file_set_contents (path, contents, -1, &error));
  g_assert_no_error (error);
  g_assert_cmpint (g_chmod (path, mode), ==, 0);
}

static char *
read_conf (const char *etc, const char *name, const char *body)
{
  char *path = g_build_filename (etc, name, NULL);
  g_autofree char *text = g_strdup_printf ("[kv_events]\n%s", body);

  write_file (path, text, 0644);
  return path;
}

static void
fixture_set_up (Fixture *fixture, gconstpointer data G_GNUC_UNUSED)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *key = NULL;
  g_autofree char *clients = NULL;
  g_autofree char *body = NULL;

  fixture->top = g_dir_make_tmp ("test-config-file.XXXXXX", &error);
  g_assert_no_error (error);
  fixture->etc = g_build_filename (fixture->top, "etc", NULL);
  fixture->elsewhere = g_build_filename (fixture->top, "elsewhere", NULL);
  g_assert_cmpint (g_mkdir (fixture->etc, 0700), ==, 0);
  g_assert_cmpint (g_mkdir (fixture->elsewhere, 0700), ==, 0);
  key = g_build_filename (fixture->etc, "server.key", NULL);
  clients = g_build_filename (fixture->etc, "allowed-clients", NULL);
  write_file (key, SERVER_SECRET "\n", 0600);
  write_file (clients, CLIENT_PUBLIC "\n", 0644);
  body = g_strdup_printf ("enable_kv_events=true\n"
                          "kv_events_bind_endpoint=ipc://%s/pub.sock\n"
                          "kv_events_backend_id=from-file\n"
                          "kv_events_model_name=file-model\n"
                          "kv_events_dp_rank=7\n"
                          "kv_events_curve_secret_key_file=server.key\n"
                          "kv_events_curve_allowed_clients_file=allowed-clients\n",
                          fixture->top);
  fixture->conf = read_conf (fixture->etc, "master.conf", body);
  fixture->saved_cwd = g_get_current_dir ();
  g_assert_cmpint (g_chdir (fixture->elsewhere), ==, 0);
}

static void
fixture_tear_down (Fixture *fixture, gconstpointer data G_GNUC_UNUSED)
{
  g_autoptr (GDir) dir = NULL;
  const char *name;

  g_assert_cmpint (g_chdir (fixture->saved_cwd), ==, 0);
  dir = g_dir_open (fixture->etc, 0, NULL);
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = g_build_filename (fixture->etc, name, NULL);

      g_assert_cmpint (g_unlink (path), ==, 0);
    }
  g_assert_cmpint (g_rmdir (fixture->etc), ==, 0);
  g_assert_cmpint (g_rmdir (fixture->elsewhere), ==, 0);
  g_assert_cmpint (g_rmdir (fixture->top), ==, 0);
  g_free (fixture->top);
  g_free (fixture->etc);
  g_free (fixture->elsewhere);
  g_free (fixture->saved_cwd);
  g_free (fixture->conf);
}

static void
assert_get (const KvevConfig *config, const char *flag, const char *expected)
{
  g_autofree char *value = kvev_config_get (config, flag);

  g_assert_cmpstr (value, ==, expected);
}

static void
assert_get_in (const KvevConfig *config, const char *flag, const char *dir, const char *name)
{
  g_autofree char *expected = g_build_filename (dir, name, NULL);

  assert_get (config, flag, expected);
}

/* The master starts in another directory than its configuration's, and
 * the key file names its keys relatively: they are found beside it. */
static void
test_load_file_relative_paths (Fixture *fixture, gconstpointer data G_GNUC_UNUSED)
{
  g_autoptr (KvevConfig) config = kvev_config_new ();
  g_autoptr (GError) error = NULL;

  g_assert_true (kvev_config_load_file (config, fixture->conf, NULL, &error));
  g_assert_no_error (error);
  assert_get_in (config, "kv_events_curve_secret_key_file", fixture->etc, "server.key");
  assert_get_in (config, "kv_events_curve_allowed_clients_file", fixture->etc, "allowed-clients");
  assert_get (config, "kv_events_backend_id", "from-file");
  g_assert_true (kvev_config_validate (config, &error));
  g_assert_no_error (error);
}

/* A configuration file named relatively is found from the current
 * directory, and what it names stays found once the master has changed
 * directory, as a daemon does. */
static void
test_load_file_relative_file (Fixture *fixture, gconstpointer data G_GNUC_UNUSED)
{
  g_autoptr (KvevConfig) config = kvev_config_new ();
  g_autoptr (GError) error = NULL;

  g_assert_cmpint (g_chdir (fixture->top), ==, 0);
  g_assert_true (kvev_config_load_file (config, "etc/master.conf", NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (g_chdir (fixture->elsewhere), ==, 0);
  g_assert_true (kvev_config_validate (config, &error));
  g_assert_no_error (error);
}

/* Only relative values of path flags move: an absolute one, an empty one
 * and every other string are stored as written. */
static void
test_load_file_other_values (Fixture *fixture, gconstpointer data G_GNUC_UNUSED)
{
  g_autoptr (KvevConfig) config = kvev_config_new ();
  g_autoptr (GError) error = NULL;
  g_autofree char *conf = read_conf (fixture->etc, "other.conf",
                                     "kv_events_curve_secret_key_file=/nonexistent/server.key\n"
                                     "kv_events_curve_allowed_clients_file=\n"
                                     "kv_events_topic=topic.key\n"
                                     "kv_events_bind_endpoint=ipc://relative.sock\n");

  g_assert_true (kvev_config_set (config, "kv_events_curve_allowed_clients_file", "x", NULL));
  g_assert_true (kvev_config_load_file (config, conf, NULL, &error));
  g_assert_no_error (error);
  assert_get (config, "kv_events_curve_secret_key_file", "/nonexistent/server.key");
  assert_get (config, "kv_events_curve_allowed_clients_file", "");
  assert_get (config, "kv_events_topic", "topic.key");
  assert_get (config, "kv_events_bind_endpoint", "ipc://relative.sock");
}

/* kvev_config_set() and a GKeyFile, which knows no path, keep a
 * relative path relative to the current directory. */
static void
test_relative_elsewhere (Fixture *fixture, gconstpointer data G_GNUC_UNUSED)
{
  g_autoptr (KvevConfig) config = kvev_config_new ();
  g_autoptr (GKeyFile) key_file = g_key_file_new ();
  g_autoptr (GError) error = NULL;

  g_assert_true (kvev_config_set (config, "kv_events_curve_secret_key_file", "server.key", NULL));
  assert_get (config, "kv_events_curve_secret_key_file", "server.key");
  g_assert_true (g_key_file_load_from_file (key_file, fixture->conf, G_KEY_FILE_NONE, &error));
  g_assert_true (kvev_config_load_key_file (config, key_file, NULL, &error));
  g_assert_no_error (error);
  assert_get (config, "kv_events_curve_allowed_clients_file", "allowed-clients");
}

/* A file that is not there names itself; one with a bad key names the
 * file and the key; either leaves the configuration as it was. */
static void
test_load_file_errors (Fixture *fixture, gconstpointer data G_GNUC_UNUSED)
{
  g_autoptr (KvevConfig) config = kvev_config_new ();
  g_autoptr (GError) error = NULL;
  g_autofree char *missing = g_build_filename (fixture->etc, "missing.conf", NULL);
  g_autofree char *bad
      = read_conf (fixture->etc, "bad.conf", "kv_events_model_name=changed\nkv_events_dp_rnak=1\n");
  g_autofree char *garbage = g_build_filename (fixture->etc, "garbage.conf", NULL);

  g_assert_true (kvev_config_set (config, "kv_events_model_name", "before", NULL));
  g_assert_false (kvev_config_load_file (config, missing, NULL, &error));
  g_assert_error (error, G_FILE_ERROR, G_FILE_ERROR_NOENT);
  g_assert_nonnull (strstr (error->message, missing));
  g_clear_error (&error);

  g_assert_false (kvev_config_load_file (config, bad, NULL, &error));
  g_assert_error (error, KVEV_ERROR, KVEV_ERROR_UNKNOWN_FLAG);
  g_assert_true (g_str_has_prefix (error->message, bad));
  g_assert_nonnull (strstr (error->message, "kv_events_dp_rnak"));
  g_clear_error (&error);

  write_file (garbage, "not a key file\n", 0644);
  g_assert_false (kvev_config_load_file (config, garbage, NULL, &error));
  g_assert_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_PARSE);
  g_assert_true (g_str_has_prefix (error->message, garbage));
  assert_get (config, "kv_events_model_name", "before");
}

/* g_option_context_parse drops what it parsed from the array without
 * freeing it, so it gets a shallow copy and @owned keeps the strings. */
static gboolean
parse_args (KvevConfig *config, const char *const *args, GError **error)
{
  g_autoptr (GOptionContext) context = g_option_context_new (NULL);
  g_auto (GStrv) owned = g_strdupv ((char **) args);
  int argc = (int) g_strv_length (owned);
  g_autofree char **argv = g_new0 (char *, (gsize) argc + 1);
  char **argv_ptr = argv;

  for (int i = 0; i < argc; i++)
    argv[i] = owned[i];
  g_option_context_add_group (context, kvev_config_option_group_with_file (config));
  g_option_context_set_help_enabled (context, FALSE);
  return g_option_context_parse (context, &argc, &argv_ptr, error);
}

static char *
file_option (const char *path)
{
  return g_strdup_printf ("--kv-events-config-file=%s", path);
}

static void
test_option_file_alone (Fixture *fixture, gconstpointer data G_GNUC_UNUSED)
{
  g_autoptr (KvevConfig) config = kvev_config_new ();
  g_autoptr (GError) error = NULL;
  g_autofree char *file = file_option (fixture->conf);
  const char *const args[] = { "master", file, NULL };

  g_assert_true (parse_args (config, args, &error));
  g_assert_no_error (error);
  assert_get (config, "enable_kv_events", "true");
  assert_get (config, "kv_events_backend_id", "from-file");
  assert_get (config, "kv_events_dp_rank", "7");
  assert_get_in (config, "kv_events_curve_secret_key_file", fixture->etc, "server.key");
  g_assert_true (kvev_config_validate (config, &error));
  g_assert_no_error (error);
}

/* The command line wins over the file wherever the file stands on it;
 * what neither names keeps the value it had before the parse, and a
 * path given on the command line stays relative to the current
 * directory. */
static void
test_option_command_line_overrides (Fixture *fixture, gconstpointer data G_GNUC_UNUSED)
{
  g_autofree char *file = file_option (fixture->conf);
  const char *const file_first[] = {
    "master",
    file,
    "--kv-events-backend-id=cli",
    "--enable-kv-events=false",
    "--kv-events-curve-secret-key-file=cli.key",
    NULL,
  };
  const char *const file_last[] = {
    "master",
    "--kv-events-backend-id=cli",
    "--enable-kv-events=false",
    "--kv-events-curve-secret-key-file=cli.key",
    file,
    NULL,
  };
  const char *const *orders[] = { file_first, file_last };

  for (gsize i = 0; i < G_N_ELEMENTS (orders); i++)
    {
      g_autoptr (KvevConfig) config = kvev_config_new ();
      g_autoptr (GError) error = NULL;

      g_assert_true (kvev_config_set (config, "kv_events_topic", "set-before", NULL));
      g_assert_true (parse_args (config, orders[i], &error));
      g_assert_no_error (error);
      assert_get (config, "kv_events_backend_id", "cli");
      assert_get (config, "enable_kv_events", "false");
      assert_get (config, "kv_events_curve_secret_key_file", "cli.key");
      assert_get (config, "kv_events_model_name", "file-model");
      assert_get_in (config, "kv_events_curve_allowed_clients_file", fixture->etc,
                     "allowed-clients");
      assert_get (config, "kv_events_topic", "set-before");
    }
}

/* Given twice, the last file counts, and only that one is read. */
static void
test_option_last_file (Fixture *fixture, gconstpointer data G_GNUC_UNUSED)
{
  g_autoptr (KvevConfig) config = kvev_config_new ();
  g_autoptr (GError) error = NULL;
  g_autofree char *missing = g_build_filename (fixture->etc, "missing.conf", NULL);
  g_autofree char *other = read_conf (fixture->etc, "other.conf", "kv_events_dp_rank=9\n");
  g_autofree char *first = file_option (missing);
  g_autofree char *last = file_option (other);
  const char *const args[] = { "master", first, last, NULL };

  g_assert_true (parse_args (config, args, &error));
  g_assert_no_error (error);
  assert_get (config, "kv_events_dp_rank", "9");
  assert_get (config, "kv_events_backend_id", "");
}

/* A file that cannot be read fails the parse with an error that names
 * the option and the file, and the configuration is as before the parse,
 * the other options' values included. */
static void
test_option_missing_file (Fixture *fixture, gconstpointer data G_GNUC_UNUSED)
{
  g_autoptr (KvevConfig) config = kvev_config_new ();
  g_autoptr (GError) error = NULL;
  g_autofree char *missing = g_build_filename (fixture->etc, "missing.conf", NULL);
  g_autofree char *file = file_option (missing);
  g_autofree char *expected_prefix = NULL;
  const char *const args[] = { "master", "--kv-events-dp-rank=3", file, NULL };

  g_assert_true (kvev_config_set (config, "kv_events_dp_rank", "1", NULL));
  g_assert_false (parse_args (config, args, &error));
  g_assert_error (error, G_FILE_ERROR, G_FILE_ERROR_NOENT);
  g_assert_true (g_str_has_prefix (error->message, "--kv-events-config-file: "));
  g_assert_nonnull (strstr (error->message, missing));
  assert_get (config, "kv_events_dp_rank", "1");
  g_clear_error (&error);

  {
    g_autofree char *bad = read_conf (fixture->etc, "bad.conf", "kv_events_queue_capacity=lots\n");
    g_autofree char *bad_file = file_option (bad);
    const char *const bad_args[] = { "master", bad_file, "--kv-events-dp-rank=3", NULL };

    g_assert_false (parse_args (config, bad_args, &error));
    g_assert_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE);
    expected_prefix = g_strdup_printf ("--kv-events-config-file: %s: ", bad);
    g_assert_true (g_str_has_prefix (error->message, expected_prefix));
    g_assert_nonnull (strstr (error->message, "kv_events_queue_capacity"));
    assert_get (config, "kv_events_dp_rank", "1");
    assert_get (config, "kv_events_queue_capacity", "65536");
  }
}

/* Without the option the group is kvev_config_option_group()'s; --help
 * lists the option first. */
static void
test_option_without_file (void)
{
  g_autoptr (KvevConfig) config = kvev_config_new ();
  g_autoptr (GError) error = NULL;
  g_autoptr (GOptionContext) context = g_option_context_new (NULL);
  GOptionGroup *group = kvev_config_option_group_with_file (config);
  const char *const args[] = { "master", "--kv-events-dp-rank=4", NULL };
  g_autofree char *help = NULL;
  const char *file_line;
  const char *first_flag;

  g_assert_true (parse_args (config, args, &error));
  g_assert_no_error (error);
  assert_get (config, "kv_events_dp_rank", "4");

  g_option_context_add_group (context, group);
  help = g_option_context_get_help (context, FALSE, group);
  file_line = strstr (help, "--kv-events-config-file=FILE");
  first_flag = strstr (help, "--enable-kv-events");
  g_assert_nonnull (file_line);
  g_assert_nonnull (first_flag);
  g_assert_true (file_line < first_flag);
}

static void
test_preconditions (void)
{
  g_autoptr (GError) error = g_error_new_literal (KVEV_ERROR, 0, "set");
  g_autoptr (KvevConfig) config = kvev_config_new ();

  g_test_expect_message ("kvevents", G_LOG_LEVEL_CRITICAL, "*config != NULL*");
  g_assert_false (kvev_config_load_file (NULL, "x", NULL, NULL));
  g_test_expect_message ("kvevents", G_LOG_LEVEL_CRITICAL, "*path != NULL*");
  g_assert_false (kvev_config_load_file (config, NULL, NULL, NULL));
  g_test_expect_message ("kvevents", G_LOG_LEVEL_CRITICAL, "*error == NULL*");
  g_assert_false (kvev_config_load_file (config, "x", NULL, &error));
  g_test_expect_message ("kvevents", G_LOG_LEVEL_CRITICAL, "*config != NULL*");
  g_assert_null (kvev_config_option_group_with_file (NULL));
  g_test_assert_expected_messages ();
  g_assert_cmpstr (error->message, ==, "set");
}

#define ADD(path, func)                                                                            \
  g_test_add ((path), Fixture, NULL, fixture_set_up, (func), fixture_tear_down)

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  ADD ("/kvevents/config-file/load-relative-paths", test_load_file_relative_paths);
  ADD ("/kvevents/config-file/load-relative-file", test_load_file_relative_file);
  ADD ("/kvevents/config-file/load-other-values", test_load_file_other_values);
  ADD ("/kvevents/config-file/relative-elsewhere", test_relative_elsewhere);
  ADD ("/kvevents/config-file/load-errors", test_load_file_errors);
  ADD ("/kvevents/config-file/option-file-alone", test_option_file_alone);
  ADD ("/kvevents/config-file/option-command-line-overrides", test_option_command_line_overrides);
  ADD ("/kvevents/config-file/option-last-file", test_option_last_file);
  ADD ("/kvevents/config-file/option-missing-file", test_option_missing_file);
  g_test_add_func ("/kvevents/config-file/option-without-file", test_option_without_file);
  g_test_add_func ("/kvevents/config-file/preconditions", test_preconditions);
  return g_test_run ();
}
