/* fuzz-flags.c: configuration helpers for fuzz-config and fuzz-keyfile
 * (see fuzz.h).
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include "fuzz.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const file_flags[] = {
  "kv_events_curve_secret_key_file",
  "kv_events_curve_allowed_clients_file",
};

gboolean
kvev_fuzz_is_file_flag (const char *name)
{
  for (gsize i = 0; i < G_N_ELEMENTS (file_flags); i++)
    if (strcmp (name, file_flags[i]) == 0)
      return TRUE;
  return FALSE;
}

/* \n, \t, \0 and \\; any other byte, a lone backslash included, as it
 * is. */
static GString *
unescape (const char *text)
{
  GString *out = g_string_new (NULL);

  for (const char *p = text; *p != '\0'; p++)
    {
      if (p[0] == '\\' && p[1] != '\0' && strchr ("nt0\\", p[1]) != NULL)
        {
          p++;
          g_string_append_c (out, *p == 'n' ? '\n' : *p == 't' ? '\t' : *p == '0' ? '\0' : '\\');
        }
      else
        g_string_append_c (out, *p);
    }
  return out;
}

static void
write_file (const char *path, const char *contents, gsize len, mode_t mode)
{
  int fd;

  /* Not g_file_set_contents (): it may fsync, a hundred times a second. */
  g_unlink (path);
  fd = g_open (path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0)
    kvev_fuzz_fail (__FILE__, __LINE__, g_strerror (errno));
  while (len > 0)
    {
      ssize_t n = write (fd, contents, len);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        kvev_fuzz_fail (__FILE__, __LINE__, "write");
      contents += n;
      len -= (gsize) n;
    }
  /* The umask may have taken bits the test wants. */
  if (fchmod (fd, mode) != 0)
    kvev_fuzz_fail (__FILE__, __LINE__, "fchmod");
  close (fd);
}

char *
kvev_fuzz_file_value (const char *name, const char *value)
{
  g_autofree char *path = NULL;
  g_autoptr (GString) contents = NULL;
  mode_t mode = 0600;

  g_return_val_if_fail (kvev_fuzz_is_file_flag (name), NULL);

  if (value[0] == '\0')
    return g_strdup ("");
  path = g_build_filename (kvev_fuzz_private_dir (), name, NULL);
  if (value[0] == '?')
    {
      g_unlink (path);
      return g_steal_pointer (&path);
    }
  if (value[0] == '!')
    {
      mode = 0644;
      value++;
    }
  contents = unescape (value);
  write_file (path, contents->str, contents->len, mode);
  return g_steal_pointer (&path);
}

void
kvev_fuzz_redirect_files (KvevConfig *config)
{
  for (gsize i = 0; i < G_N_ELEMENTS (file_flags); i++)
    {
      g_autofree char *value = kvev_config_get (config, file_flags[i]);
      g_autofree char *path = NULL;
      g_autoptr (GError) error = NULL;

      kvev_fuzz_assert (value != NULL);
      path = kvev_fuzz_file_value (file_flags[i], value);
      kvev_fuzz_assert (kvev_config_set (config, file_flags[i], path, &error));
    }
}

GStrv
kvev_fuzz_snapshot (const KvevConfig *config)
{
  const char *const *names = kvev_config_flags ();
  GPtrArray *values = g_ptr_array_new ();

  for (gsize i = 0; names[i] != NULL; i++)
    {
      char *value = kvev_config_get (config, names[i]);

      kvev_fuzz_assert (value != NULL);
      g_ptr_array_add (values, value);
    }
  g_ptr_array_add (values, NULL);
  return (GStrv) g_ptr_array_free (values, FALSE);
}

gboolean
kvev_fuzz_snapshot_equal (const char *const *a, const char *const *b)
{
  return g_strv_equal (a, b);
}

void
kvev_fuzz_check_error (gboolean ok, const GError *error, guint allowed_codes)
{
  if (ok)
    {
      kvev_fuzz_assert (error == NULL);
      return;
    }
  kvev_fuzz_assert (error != NULL);
  kvev_fuzz_assert (error->domain == KVEV_ERROR);
  kvev_fuzz_assert (error->code >= 0 && error->code < 32);
  kvev_fuzz_assert ((allowed_codes & KVEV_FUZZ_CODE (error->code)) != 0);
  kvev_fuzz_assert (error->message != NULL && error->message[0] != '\0');
  kvev_fuzz_assert (g_utf8_validate (error->message, -1, NULL));
}
