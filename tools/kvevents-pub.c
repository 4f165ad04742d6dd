/* kvevents-pub: publish KV-cache events through libkvevents from a script
 * of commands, one a line.
 *
 * Each command is one library call, so the tool doubles as a way to try
 * the library's behaviour by hand and as the publisher of the tool tests.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <glib/gi18n.h>

#include <kvevents/kvevents.h>

#include "kvtool.h"

/* The library refuses longer strings with a critical; the tool says why
 * instead. */
#define MAX_STRING_LEN (1024 * 1024)

typedef struct
{
  KvevPublisher *publisher;
  gint64 close_timeout_ms;
  const char *input_name;
  guint line_number;
  KvevClearScope *scope;
  guint scope_line;
} Pub;

typedef gboolean (*CommandFunc) (Pub *pub, char **args, guint n_args, GError **error);

typedef struct
{
  const char *name;
  guint min_args;
  guint max_args;
  const char *usage;
  CommandFunc func;
} Command;

/* "-" is the empty string; %XX is the byte 0xXX.  Fills out and returns
 * TRUE, or FALSE with an error naming what. */
static gboolean
unescape (const char *arg, const char *what, GString *out, GError **error)
{
  const char *p;

  g_string_truncate (out, 0);
  if (strcmp (arg, "-") == 0)
    return TRUE;
  for (p = arg; *p != '\0'; p++)
    {
      int high, low;

      if (*p != '%')
        {
          g_string_append_c (out, *p);
          continue;
        }
      high = g_ascii_xdigit_value (p[1]);
      low = high < 0 ? -1 : g_ascii_xdigit_value (p[2]);
      if (low < 0)
        {
          g_set_error (error, KVT_ERROR, KVT_ERROR_FAILED,
                       /* TRANSLATORS: the first %s is TENANT, KEY or GROUP, as in
                        * the command syntax; the second what the line says. */
                       _ ("%s \"%s\" has a %% that is not followed by two hexadecimal digits"),
                       what, arg);
          return FALSE;
        }
      g_string_append_c (out, (char) (high << 4 | low));
      p += 2;
    }
  if (out->len > MAX_STRING_LEN)
    {
      /* TRANSLATORS: %s is TENANT, KEY or GROUP, as in the command syntax. */
      g_set_error (error, KVT_ERROR, KVT_ERROR_FAILED, _ ("%s is longer than 1 MiB"), what);
      return FALSE;
    }
  return TRUE;
}

/* A tenant or group: the library takes them NUL-terminated. */
static gboolean
parse_name (const char *arg, const char *what, GString *out, GError **error)
{
  if (!unescape (arg, what, out, error))
    return FALSE;
  if (memchr (out->str, '\0', out->len) != NULL)
    {
      /* TRANSLATORS: the first %s is TENANT or GROUP, as in the command
       * syntax, and KEY is the command syntax's too. */
      g_set_error (error, KVT_ERROR, KVT_ERROR_FAILED,
                   _ ("%s \"%s\" contains a NUL byte, which only KEY may"), what, arg);
      return FALSE;
    }
  return TRUE;
}

static gboolean
parse_media (const char *arg, KvevMedia *media, GError **error)
{
  if (strcmp (arg, "cpu") == 0)
    *media = KVEV_MEDIA_CPU;
  else if (strcmp (arg, "disk") == 0)
    *media = KVEV_MEDIA_DISK;
  else if (strcmp (arg, "cpu,disk") == 0 || strcmp (arg, "disk,cpu") == 0)
    *media = KVEV_MEDIA_CPU | KVEV_MEDIA_DISK;
  else if (strcmp (arg, "none") == 0)
    *media = KVEV_MEDIA_NONE;
  else
    {
      g_set_error (error, KVT_ERROR, KVT_ERROR_FAILED,
                   _ ("unknown media \"%s\": expected cpu, disk, cpu,disk or none"), arg);
      return FALSE;
    }
  return TRUE;
}

static gboolean
parse_milliseconds (const char *arg, guint64 *ms, GError **error)
{
  /* An hour: a script that sleeps longer is a mistake. */
  if (!kvt_parse_uint (arg, 0, 3600 * 1000, ms))
    {
      g_set_error (error, KVT_ERROR, KVT_ERROR_FAILED,
                   _ ("\"%s\" is not a number of milliseconds from 0 to 3600000"), arg);
      return FALSE;
    }
  return TRUE;
}

/* NULL for the empty string: the library's default for tenant and group. */
static const char *
or_null (const GString *string)
{
  return string->len > 0 ? string->str : NULL;
}

/* stored, removed and delta share their arguments:
 * TENANT KEY MEDIA [MEDIA] [GROUP]. */
typedef struct
{
  GString *tenant;
  GString *key;
  GString *group;
  KvevMedia media[2];
} KeyedArgs;

static void
keyed_args_clear (KeyedArgs *keyed)
{
  g_string_free (keyed->tenant, TRUE);
  g_string_free (keyed->key, TRUE);
  g_string_free (keyed->group, TRUE);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (KeyedArgs, keyed_args_clear)

static gboolean
parse_keyed (char **args, guint n_args, guint n_media, KeyedArgs *keyed, GError **error)
{
  guint i;

  keyed->tenant = g_string_new (NULL);
  keyed->key = g_string_new (NULL);
  keyed->group = g_string_new (NULL);
  if (!parse_name (args[0], "TENANT", keyed->tenant, error)
      || !unescape (args[1], "KEY", keyed->key, error))
    return FALSE;
  for (i = 0; i < n_media; i++)
    if (!parse_media (args[2 + i], &keyed->media[i], error))
      return FALSE;
  return n_args <= 2 + n_media || parse_name (args[2 + n_media], "GROUP", keyed->group, error);
}

static gboolean
command_stored (Pub *pub, char **args, guint n_args, GError **error)
{
  g_auto (KeyedArgs) keyed = { 0 };

  if (!parse_keyed (args, n_args, 1, &keyed, error))
    return FALSE;
  kvev_publish_stored (pub->publisher, or_null (keyed.tenant), keyed.key->str,
                       (gssize) keyed.key->len, or_null (keyed.group), keyed.media[0]);
  return TRUE;
}

static gboolean
command_removed (Pub *pub, char **args, guint n_args, GError **error)
{
  g_auto (KeyedArgs) keyed = { 0 };

  if (!parse_keyed (args, n_args, 1, &keyed, error))
    return FALSE;
  kvev_publish_removed (pub->publisher, or_null (keyed.tenant), keyed.key->str,
                        (gssize) keyed.key->len, or_null (keyed.group), keyed.media[0]);
  return TRUE;
}

static gboolean
command_delta (Pub *pub, char **args, guint n_args, GError **error)
{
  g_auto (KeyedArgs) keyed = { 0 };

  if (!parse_keyed (args, n_args, 2, &keyed, error))
    return FALSE;
  kvev_publish_delta (pub->publisher, or_null (keyed.tenant), keyed.key->str,
                      (gssize) keyed.key->len, or_null (keyed.group), keyed.media[0],
                      keyed.media[1]);
  return TRUE;
}

static gboolean
command_cleared (Pub *pub, char **args, guint n_args, GError **error)
{
  g_autoptr (GString) tenant = g_string_new (NULL);

  if (!parse_name (args[0], "TENANT", tenant, error))
    return FALSE;
  kvev_publish_cleared (pub->publisher, or_null (tenant));
  return TRUE;
}

static gboolean
command_removeall (Pub *pub, char **args, guint n_args, GError **error)
{
  g_autoptr (GString) tenant = g_string_new (NULL);

  if (pub->scope != NULL)
    {
      g_set_error (error, KVT_ERROR, KVT_ERROR_FAILED,
                   _ ("the removeall of line %u is not ended yet"), pub->scope_line);
      return FALSE;
    }
  if (!parse_name (args[0], "TENANT", tenant, error))
    return FALSE;
  pub->scope = kvev_clear_begin (pub->publisher, or_null (tenant));
  pub->scope_line = pub->line_number;
  return TRUE;
}

static gboolean
need_scope (Pub *pub, const char *command, GError **error)
{
  if (pub->scope != NULL)
    return TRUE;
  g_set_error (error, KVT_ERROR, KVT_ERROR_FAILED, _ ("%s outside a removeall"), command);
  return FALSE;
}

static gboolean
command_removeall_object (Pub *pub, char **args, guint n_args, GError **error)
{
  g_autoptr (GString) key = g_string_new (NULL);
  g_autoptr (GString) group = g_string_new (NULL);
  KvevMedia before;

  if (!need_scope (pub, "removeall-object", error) || !unescape (args[0], "KEY", key, error)
      || !parse_media (args[1], &before, error)
      || (n_args > 2 && !parse_name (args[2], "GROUP", group, error)))
    return FALSE;
  kvev_clear_object_removed (pub->scope, key->str, (gssize) key->len, or_null (group), before);
  return TRUE;
}

static const struct
{
  const char *name;
  KvevSkipReason reason;
} skip_reasons[] = {
  { "leased", KVEV_SKIP_LEASED },
  { "incomplete-replicas", KVEV_SKIP_INCOMPLETE_REPLICAS },
  { "pending-replication", KVEV_SKIP_PENDING_REPLICATION },
  { "oplog-reserve-failed", KVEV_SKIP_OPLOG_RESERVE_FAILED },
  { "oplog-append-failed", KVEV_SKIP_OPLOG_APPEND_FAILED },
  { "other", KVEV_SKIP_OTHER },
};

static gboolean
command_removeall_skip (Pub *pub, char **args, guint n_args, GError **error)
{
  guint i;

  if (!need_scope (pub, "removeall-skip", error))
    return FALSE;
  for (i = 0; i < G_N_ELEMENTS (skip_reasons); i++)
    if (strcmp (args[0], skip_reasons[i].name) == 0)
      {
        kvev_clear_skipped (pub->scope, skip_reasons[i].reason);
        return TRUE;
      }
  g_set_error (error, KVT_ERROR, KVT_ERROR_FAILED,
               _ ("unknown REASON \"%s\": expected leased, incomplete-replicas, "
                  "pending-replication, oplog-reserve-failed, oplog-append-failed or other"),
               args[0]);
  return FALSE;
}

static gboolean
command_removeall_end (Pub *pub, char **args, guint n_args, GError **error)
{
  if (!need_scope (pub, "removeall-end", error))
    return FALSE;
  kvev_clear_end (g_steal_pointer (&pub->scope));
  return TRUE;
}

static gboolean
command_flush (Pub *pub, char **args, guint n_args, GError **error)
{
  guint64 timeout_ms = (guint64) pub->close_timeout_ms;

  if (n_args > 0 && !parse_milliseconds (args[0], &timeout_ms, error))
    return FALSE;
  /* Not a bad line: the line was right, the network was slow. */
  if (!kvev_publisher_flush (pub->publisher, (gint64) timeout_ms))
    g_printerr (_ ("%s:%u: flush timed out after %" PRIu64 " ms\n"), pub->input_name,
                pub->line_number, timeout_ms);
  return TRUE;
}

static gboolean
command_sleep (Pub *pub, char **args, guint n_args, GError **error)
{
  guint64 ms;

  if (!parse_milliseconds (args[0], &ms, error))
    return FALSE;
  g_usleep ((gulong) ms * 1000);
  return TRUE;
}

static gboolean
command_stats (Pub *pub, char **args, guint n_args, GError **error)
{
  g_autofree char *json = kvev_publisher_stats_json (pub->publisher);

  g_print ("%s\n", json);
  fflush (stdout);
  return TRUE;
}

static const Command commands[] = {
  { "stored", 3, 4, "stored TENANT KEY MEDIA [GROUP]", command_stored },
  { "removed", 3, 4, "removed TENANT KEY MEDIA [GROUP]", command_removed },
  { "delta", 4, 5, "delta TENANT KEY BEFORE AFTER [GROUP]", command_delta },
  { "cleared", 1, 1, "cleared TENANT", command_cleared },
  { "removeall", 1, 1, "removeall TENANT", command_removeall },
  { "removeall-object", 2, 3, "removeall-object KEY BEFORE [GROUP]", command_removeall_object },
  { "removeall-skip", 1, 1, "removeall-skip REASON", command_removeall_skip },
  { "removeall-end", 0, 0, "removeall-end", command_removeall_end },
  { "flush", 0, 1, "flush [TIMEOUT_MS]", command_flush },
  { "sleep", 1, 1, "sleep MS", command_sleep },
  { "stats", 0, 0, "stats", command_stats },
};

static gboolean
run_line (Pub *pub, char *line, gsize len, GError **error)
{
  g_autoptr (GPtrArray) words = g_ptr_array_new ();
  char *comment, *word, *save = NULL;
  const Command *command = NULL;
  guint i, n_args;

  if (strlen (line) != len)
    {
      g_set_error (error, KVT_ERROR, KVT_ERROR_FAILED,
                   _ ("the line contains a NUL byte (write %%00)"));
      return FALSE;
    }
  comment = strchr (line, '#');
  if (comment != NULL)
    *comment = '\0';
  for (word = strtok_r (line, " \t\r\n\v\f", &save); word != NULL;
       word = strtok_r (NULL, " \t\r\n\v\f", &save))
    g_ptr_array_add (words, word);
  if (words->len == 0)
    return TRUE;

  for (i = 0; i < G_N_ELEMENTS (commands) && command == NULL; i++)
    if (strcmp (commands[i].name, g_ptr_array_index (words, 0)) == 0)
      command = &commands[i];
  if (command == NULL)
    {
      g_set_error (error, KVT_ERROR, KVT_ERROR_FAILED, _ ("unknown command \"%s\""),
                   (const char *) g_ptr_array_index (words, 0));
      return FALSE;
    }
  n_args = words->len - 1;
  if (n_args < command->min_args || n_args > command->max_args)
    {
      g_set_error (error, KVT_ERROR, KVT_ERROR_FAILED, _ ("wrong number of arguments; usage: %s"),
                   command->usage);
      return FALSE;
    }
  g_ptr_array_add (words, NULL);
  return command->func (pub, (char **) words->pdata + 1, n_args, error);
}

/* Runs every line of input.  Returns the number of bad lines; with strict
 * it stops at the first.  *read_failed says whether the input ended
 * early, which is a failure also without strict: a cut-short script must
 * not look like a finished one. */
static guint
run_input (Pub *pub, FILE *input, gboolean strict, gboolean *read_failed)
{
  g_autofree char *line = NULL;
  size_t size = 0;
  ssize_t len;
  guint bad = 0;

  while ((len = getline (&line, &size, input)) >= 0)
    {
      g_autoptr (GError) error = NULL;

      pub->line_number++;
      if (run_line (pub, line, (gsize) len, &error))
        continue;
      g_printerr ("%s:%u: %s\n", pub->input_name, pub->line_number, error->message);
      bad++;
      if (strict)
        return bad;
    }
  *read_failed = ferror (input) != 0;
  if (*read_failed)
    {
      g_printerr (_ ("%s: cannot read: %s\n"), pub->input_name, g_strerror (errno));
      bad++;
    }
  return bad;
}

/* A wildcard endpoint is of use only once its resolved form is known,
 * and subscribers waited for can come only once it is: said before the
 * wait. */
static void
announce_endpoint (const KvevConfig *config, KvevPublisher *publisher)
{
  g_autofree char *configured = kvev_config_get (config, "kv_events_bind_endpoint");
  const char *bound = kvev_publisher_get_endpoint (publisher);

  if (bound != NULL && strchr (configured, '*') != NULL)
    g_printerr (_ ("%s: publishing on %s\n"), g_get_prgname (), bound);
}

/* --wait-subscribers, on the library's own socket: FALSE, said, when
 * fewer than n subscriptions arrived within timeout_ms. */
static gboolean
wait_for_subscribers (KvevPublisher *publisher, guint n, gint64 timeout_ms)
{
  if (!kvev_publisher_is_enabled (publisher))
    {
      g_printerr (_ ("%s: nothing is published, so --wait-subscribers does not wait\n"),
                  g_get_prgname ());
      return TRUE;
    }
  if (kvev_publisher_wait_subscribers (publisher, n, timeout_ms))
    return TRUE;
  g_printerr (
      g_dngettext (KVT_GETTEXT_PACKAGE,
                   "%s: only %" PRIu64 " of %u subscription arrived within %" PRId64 " ms\n",
                   "%s: only %" PRIu64 " of %u subscriptions arrived within %" PRId64 " ms\n", n),
      g_get_prgname (), kvev_publisher_stat (publisher, KVEV_STAT_SUBSCRIPTIONS), n, timeout_ms);
  return FALSE;
}

int
main (int argc, char **argv)
{
  g_autoptr (KvevConfig) config = kvev_config_new ();
  g_autoptr (GOptionContext) context = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (KvevPublisher) publisher = NULL;
  g_autofree char *input_path = NULL;
  g_autofree char *close_timeout = NULL;
  g_autofree char *enabled = NULL;
  gboolean strict = FALSE, stats = FALSE, version = FALSE;
  gint wait_subscribers = 0;
  gint64 wait_timeout_ms = G_MININT64; /* not given: no bound */
  guint64 close_timeout_ms;
  FILE *input = stdin;
  Pub pub = { 0 };
  gboolean read_failed = FALSE;
  guint bad;
  int status = KVT_EXIT_OK;
  const GOptionEntry entries[] = {
    { "input", 'i', 0, G_OPTION_ARG_FILENAME, &input_path,
      N_ ("Read commands from FILE instead of standard input"), N_ ("FILE") },
    { "wait-subscribers", 'w', 0, G_OPTION_ARG_INT, &wait_subscribers,
      N_ ("Before the first command, wait until N subscribers have subscribed"), N_ ("N") },
    { "wait-timeout-ms", 0, 0, G_OPTION_ARG_INT64, &wait_timeout_ms,
      N_ ("Give up waiting for subscribers after T milliseconds (default: no limit)"), N_ ("T") },
    { "strict", 0, 0, G_OPTION_ARG_NONE, &strict,
      N_ ("Stop at the first bad line and exit with status 1"), NULL },
    { "stats", 0, 0, G_OPTION_ARG_NONE, &stats,
      N_ ("Print the publisher's statistics as JSON at the end"), NULL },
    { "version", 'V', 0, G_OPTION_ARG_NONE, &version, N_ ("Print the version and exit"), NULL },
    { NULL },
  };

  /* A closed standard output is a write error, reported at the end with
   * status 1, not a silent death before the rest of the script ran. */
  signal (SIGPIPE, SIG_IGN);
  kvt_init_i18n ();
  g_set_prgname ("kvevents-pub");

  context = g_option_context_new (NULL);
  g_option_context_set_translation_domain (context, KVT_GETTEXT_PACKAGE);
  g_option_context_set_summary (
      context,
      /* xgettext:no-c-format */
      N_ ("Publish KV-cache events through libkvevents, one command a line:\n"
          "  stored TENANT KEY MEDIA [GROUP]     removed TENANT KEY MEDIA [GROUP]\n"
          "  delta TENANT KEY BEFORE AFTER [GROUP]   cleared TENANT\n"
          "  removeall TENANT, then removeall-object KEY BEFORE [GROUP] and\n"
          "    removeall-skip REASON lines, then removeall-end\n"
          "  flush [TIMEOUT_MS]   sleep MS   stats\n"
          "MEDIA is cpu, disk, cpu,disk or none; - is an empty TENANT, KEY or GROUP;\n"
          "%XX is the byte 0xXX; # starts a comment."));
  g_option_context_add_main_entries (context, entries, KVT_GETTEXT_PACKAGE);
  g_option_context_add_group (context, kvev_config_option_group_with_file (config));
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("%s: %s\n", g_get_prgname (), error->message);
      /* A --kv-events-config-file that cannot be read is status 1, as for
       * --input; one that was read but is wrong is the configuration's
       * fault. */
      return error->domain == G_FILE_ERROR ? KVT_EXIT_FAILURE : KVT_EXIT_USAGE;
    }
  if (version)
    {
      g_print ("kvevents-pub (%s) %s\n", PACKAGE_NAME, kvev_version ());
      return KVT_EXIT_OK;
    }
  if (argc > 1)
    {
      g_printerr (_ ("%s: unexpected argument \"%s\"\n"), g_get_prgname (), argv[1]);
      return KVT_EXIT_USAGE;
    }
  if (wait_subscribers < 0)
    {
      g_printerr (_ ("%s: --wait-subscribers takes a number of at least 0\n"), g_get_prgname ());
      return KVT_EXIT_USAGE;
    }
  /* Bounded so that the deadline in microseconds cannot overflow. */
  if (wait_timeout_ms != G_MININT64 && (wait_timeout_ms < 0 || wait_timeout_ms > G_MAXINT))
    {
      g_printerr (_ ("%s: --wait-timeout-ms takes a number from 0 to %d\n"), g_get_prgname (),
                  G_MAXINT);
      return KVT_EXIT_USAGE;
    }
  if (wait_timeout_ms == G_MININT64)
    wait_timeout_ms = -1;
  if (!kvev_config_validate (config, &error))
    {
      g_printerr ("%s: %s\n", g_get_prgname (), error->message);
      return KVT_EXIT_USAGE;
    }

  if (input_path != NULL && strcmp (input_path, "-") != 0)
    {
      input = fopen (input_path, "r");
      if (input == NULL)
        {
          g_printerr (_ ("%s: cannot open %s: %s\n"), g_get_prgname (), input_path,
                      g_strerror (errno));
          return KVT_EXIT_FAILURE;
        }
      pub.input_name = input_path;
    }
  else
    pub.input_name = _ ("<stdin>");

  close_timeout = kvev_config_get (config, "kv_events_close_timeout_ms");
  if (!kvt_parse_uint (close_timeout, 0, G_MAXUINT32, &close_timeout_ms))
    close_timeout_ms = 1000;
  pub.close_timeout_ms = (gint64) close_timeout_ms;

  enabled = kvev_config_get (config, "enable_kv_events");
  if (g_strcmp0 (enabled, "true") != 0)
    g_printerr (_ ("%s: enable_kv_events is false: commands are checked, nothing is published\n"),
                g_get_prgname ());

  publisher = kvev_publisher_new (config, &error);
  if (publisher == NULL)
    {
      g_printerr ("%s: %s\n", g_get_prgname (), error->message);
      if (input != stdin)
        fclose (input);
      return KVT_EXIT_FAILURE;
    }
  announce_endpoint (config, publisher);
  if (wait_subscribers > 0
      && !wait_for_subscribers (publisher, (guint) wait_subscribers, wait_timeout_ms))
    {
      if (input != stdin)
        fclose (input);
      return KVT_EXIT_FAILURE;
    }
  pub.publisher = publisher;

  bad = run_input (&pub, input, strict, &read_failed);
  if (input != stdin)
    fclose (input);
  /* The script never said how its loop ended, so it may have left
   * objects behind: cleared would make subscribers drop them all.  One
   * skip ends the scope without it, and the statistics show why. */
  if (pub.scope != NULL)
    {
      if ((bad > 0 && strict) || read_failed)
        g_printerr (_ ("%s:%u: stopped inside the removeall of line %u; ending it without "
                       "cleared\n"),
                    pub.input_name, pub.line_number, pub.scope_line);
      else
        g_printerr (_ ("%s:%u: the input ended inside the removeall of line %u; ending it "
                       "without cleared\n"),
                    pub.input_name, pub.line_number, pub.scope_line);
      kvev_clear_skipped (pub.scope, KVEV_SKIP_OTHER);
      kvev_clear_end (g_steal_pointer (&pub.scope));
      bad++;
    }
  if ((bad > 0 && strict) || read_failed)
    status = KVT_EXIT_FAILURE;

  /* Everything accepted goes out before the statistics are read. */
  if (!kvev_publisher_flush (publisher, pub.close_timeout_ms))
    g_printerr (_ ("%s: the last events were not all sent within %" PRId64 " ms\n"),
                g_get_prgname (), pub.close_timeout_ms);
  if (stats)
    {
      g_autofree char *json = kvev_publisher_stats_json (publisher);

      g_print ("%s\n", json);
    }
  g_clear_pointer (&publisher, kvev_publisher_free);

  if (fflush (stdout) != 0 || ferror (stdout))
    {
      g_printerr (_ ("%s: cannot write: %s\n"), g_get_prgname (), g_strerror (errno));
      status = KVT_EXIT_FAILURE;
    }
  return status;
}
