/* kvevents-keygen: make a CURVE key pair for a publisher or a subscriber.
 *
 * PREFIX.key gets the Z85 secret key, readable by its owner only, the way
 * kv_events_curve_secret_key_file and kvevents-sub --curve-secret-key-file
 * want it; PREFIX.pub the public key, for the other side: the server key
 * of the subscribers, or a line of the publisher's allowed-clients file.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <zmq.h>

#include <kvevents/kvevents.h>

#include "kvtool.h"
#include <base/secret.h>
#include <base/z85.h>

#ifndef O_CLOEXEC
#define O_CLOEXEC 0
#endif

/* A Z85 key and its NUL. */
#define KEY_TEXT_SIZE (KVEV_Z85_KEY_LEN + 1)

static gboolean
write_all (int fd, const char *text, gsize len)
{
  while (len > 0)
    {
      ssize_t written = write (fd, text, len);

      if (written < 0 && errno == EINTR)
        continue;
      if (written <= 0)
        return FALSE;
      text += written;
      len -= (gsize) written;
    }
  return TRUE;
}

/* Writes key and a newline into a file opened on fd, with exactly the
 * given mode whatever the umask, and closes fd. */
static gboolean
fill_file (int fd, const char *path, const char *key, mode_t mode, GError **error)
{
  char line[KEY_TEXT_SIZE + 1];
  gboolean ok;
  int saved;

  g_snprintf (line, sizeof line, "%s\n", key);
  ok = fchmod (fd, mode) == 0 && write_all (fd, line, strlen (line)) && fsync (fd) == 0;
  saved = errno;
  kvev_secret_wipe (line, sizeof line);
  if (close (fd) != 0 && ok)
    {
      ok = FALSE;
      saved = errno;
    }
  if (!ok)
    g_set_error (error, KVT_ERROR, KVT_ERROR_FAILED, _ ("Cannot write %s: %s"), path,
                 g_strerror (saved));
  return ok;
}

/* A key file in the making.  With --force the key goes to a temporary
 * file beside path, renamed over it once both files are written: an old
 * file is replaced whole, and whatever its mode was, the new one has
 * mode. */
typedef struct
{
  char *path;
  char *temporary; /* NULL when path was created in place */
  gboolean created;
} KeyFile;

static gboolean
key_file_write (KeyFile *file, const char *key, mode_t mode, gboolean force, GError **error)
{
  int fd;

  if (force)
    {
      file->temporary = g_strdup_printf ("%s.XXXXXX", file->path);
      fd = g_mkstemp_full (file->temporary, O_WRONLY | O_CLOEXEC, 0600);
      if (fd < 0)
        {
          int saved = errno;

          g_set_error (error, KVT_ERROR, KVT_ERROR_FAILED, _ ("Cannot create a file beside %s: %s"),
                       file->path, g_strerror (saved));
          g_clear_pointer (&file->temporary, g_free);
          return FALSE;
        }
    }
  else
    {
      /* O_EXCL: an existing file, or a symbolic link, is never written
       * through. */
      fd = open (file->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
      if (fd < 0)
        {
          int saved = errno;

          if (saved == EEXIST)
            g_set_error (error, KVT_ERROR, KVT_ERROR_FAILED,
                         _ ("%s already exists; --force replaces it"), file->path);
          else
            g_set_error (error, KVT_ERROR, KVT_ERROR_FAILED, _ ("Cannot create %s: %s"), file->path,
                         g_strerror (saved));
          return FALSE;
        }
    }
  file->created = TRUE;
  return fill_file (fd, file->temporary != NULL ? file->temporary : file->path, key, mode, error);
}

static gboolean
key_file_commit (KeyFile *file, GError **error)
{
  if (file->temporary == NULL)
    return TRUE;
  if (g_rename (file->temporary, file->path) != 0)
    {
      int saved = errno;

      g_set_error (error, KVT_ERROR, KVT_ERROR_FAILED, _ ("Cannot replace %s: %s"), file->path,
                   g_strerror (saved));
      return FALSE;
    }
  g_clear_pointer (&file->temporary, g_free);
  return TRUE;
}

/* Removes what a failed run left: a temporary file, or a file it
 * created in place. */
static void
key_file_abandon (KeyFile *file)
{
  if (file->created)
    g_unlink (file->temporary != NULL ? file->temporary : file->path);
  file->created = FALSE;
}

static void
key_file_clear (KeyFile *file)
{
  g_free (file->path);
  g_free (file->temporary);
}

/* Puts back the public key file as it was before a failed --force run
 * replaced it: old_public is its former text, or NULL if it had none. */
static void
restore_public (KeyFile *public, const char *secret_path, const char *old_public)
{
  g_autoptr (GError) error = NULL;
  KeyFile again = { g_strdup (public->path), NULL, FALSE };
  g_autofree char *key = old_public != NULL ? g_strchomp (g_strdup (old_public)) : NULL;

  if (key == NULL)
    g_unlink (public->path);
  else if (!key_file_write (&again, key, 0644, TRUE, &error) || !key_file_commit (&again, &error))
    {
      g_printerr (_ ("%s: %s; %s no longer matches %s\n"), g_get_prgname (), error->message,
                  public->path, secret_path);
      key_file_abandon (&again);
    }
  key_file_clear (&again);
}

/* Writes PREFIX.key (mode 0600) and PREFIX.pub (mode 0644): both, or
 * neither.  With --force both are written beside their paths first, and
 * the public key is renamed into place before the secret key: if the
 * second rename fails, the old public key, which is no secret and which
 * was read beforehand, is put back, and the old pair stays whole. */
static gboolean
write_pair (const char *prefix, const char *public_key, const char *secret_key, gboolean force,
            GError **error)
{
  KeyFile secret = { g_strconcat (prefix, ".key", NULL), NULL, FALSE };
  KeyFile public = { g_strconcat (prefix, ".pub", NULL), NULL, FALSE };
  g_autofree char *old_public = NULL;
  gboolean ok;

  ok = key_file_write (&secret, secret_key, 0600, force, error)
       && key_file_write (&public, public_key, 0644, force, error);
  if (ok && force && g_file_test (public.path, G_FILE_TEST_EXISTS))
    ok = g_file_get_contents (public.path, &old_public, NULL, error);
  ok = ok && key_file_commit (&public, error);
  if (ok && !key_file_commit (&secret, error))
    {
      ok = FALSE;
      restore_public (&public, secret.path, old_public);
      /* Committed, then put back: not ours to remove any more. */
      public.created = FALSE;
    }
  if (!ok)
    {
      key_file_abandon (&secret);
      key_file_abandon (&public);
    }
  else
    g_printerr (_ ("%s: wrote %s (secret key, mode 0600) and %s (public key)\n"), g_get_prgname (),
                secret.path, public.path);
  key_file_clear (&secret);
  key_file_clear (&public);
  return ok;
}

int
main (int argc, char **argv)
{
  g_autoptr (GOptionContext) context = NULL;
  g_autoptr (GError) error = NULL;
  gboolean force = FALSE, print = FALSE, version = FALSE, wrote_pair = FALSE;
  char public_key[KEY_TEXT_SIZE], secret_key[KEY_TEXT_SIZE];
  int status = KVT_EXIT_OK;
  const GOptionEntry entries[] = {
    { "force", 'f', 0, G_OPTION_ARG_NONE, &force,
      N_ ("Replace PREFIX.key and PREFIX.pub if they exist"), NULL },
    { "print", 'p', 0, G_OPTION_ARG_NONE, &print,
      N_ ("Write no file: print the public key, then the secret key"), NULL },
    { "version", 'V', 0, G_OPTION_ARG_NONE, &version, N_ ("Print the version and exit"), NULL },
    { NULL },
  };

  /* A closed standard output is reported, not a silent death after the
   * files were written. */
  signal (SIGPIPE, SIG_IGN);
  kvt_init_i18n ();
  g_set_prgname ("kvevents-keygen");

  /* TRANSLATORS: the argument of kvevents-keygen; the files are
   * PREFIX.key and PREFIX.pub. */
  context = g_option_context_new (N_ ("PREFIX"));
  g_option_context_set_translation_domain (context, KVT_GETTEXT_PACKAGE);
  g_option_context_set_summary (
      context, N_ ("Make a CURVE key pair for the KV-cache event stream: the secret key goes to\n"
                   "PREFIX.key (mode 0600), the public key to PREFIX.pub, and the public key\n"
                   "is printed."));
  g_option_context_add_main_entries (context, entries, KVT_GETTEXT_PACKAGE);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("%s: %s\n", g_get_prgname (), error->message);
      return KVT_EXIT_USAGE;
    }
  if (version)
    {
      g_print ("kvevents-keygen (%s) %s\n", PACKAGE_NAME, kvev_version ());
      return KVT_EXIT_OK;
    }
  if (print && argc > 1)
    {
      g_printerr (_ ("%s: --print writes no file and takes no PREFIX\n"), g_get_prgname ());
      return KVT_EXIT_USAGE;
    }
  if (!print && argc < 2)
    {
      g_printerr (_ ("%s: no PREFIX given (try --help)\n"), g_get_prgname ());
      return KVT_EXIT_USAGE;
    }
  if (argc > 2)
    {
      g_printerr (_ ("%s: unexpected argument \"%s\"\n"), g_get_prgname (), argv[2]);
      return KVT_EXIT_USAGE;
    }
  if (!print && argv[1][0] == '\0')
    {
      g_printerr (_ ("%s: the PREFIX is empty\n"), g_get_prgname ());
      return KVT_EXIT_USAGE;
    }

  if (!zmq_has ("curve"))
    {
      g_printerr (_ ("%s: this ZeroMQ library was built without CURVE support\n"),
                  g_get_prgname ());
      return KVT_EXIT_FAILURE;
    }
  if (zmq_curve_keypair (public_key, secret_key) != 0)
    {
      g_printerr (_ ("%s: cannot make a key pair: %s\n"), g_get_prgname (),
                  zmq_strerror (zmq_errno ()));
      return KVT_EXIT_FAILURE;
    }

  if (print)
    g_print ("%s\n%s\n", public_key, secret_key);
  else if (write_pair (argv[1], public_key, secret_key, force, &error))
    {
      wrote_pair = TRUE;
      g_print ("%s\n", public_key);
    }
  else
    {
      g_printerr ("%s: %s\n", g_get_prgname (), error->message);
      status = KVT_EXIT_FAILURE;
    }
  kvev_secret_wipe (secret_key, sizeof secret_key);

  if (fflush (stdout) != 0 || ferror (stdout))
    {
      /* The files are written by then: say so, or a retry would meet
       * "already exists" with no idea why. */
      if (wrote_pair)
        g_printerr (_ ("%s: cannot print the public key: %s; the key pair is written\n"),
                    g_get_prgname (), g_strerror (errno));
      else
        g_printerr (_ ("%s: cannot write the key: %s\n"), g_get_prgname (), g_strerror (errno));
      status = KVT_EXIT_FAILURE;
    }
  return status;
}
