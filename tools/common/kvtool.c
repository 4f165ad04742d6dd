/* kvtool.c: small helpers shared by the command-line tools and the
 * programs the tests run; see kvtool.h.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include "kvtool.h"
#include <base/utf8.h>

#include <errno.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>

/* The quark's name is a token clang-format would read as a subtraction. */
/* clang-format off */
G_DEFINE_QUARK (kvt-error-quark, kvt_error)
/* clang-format on */

/* The tools' messages are their own domain's, which kvevents-tools ships;
 * the library binds its domain itself, at its first message, to where
 * libkvevents1 installed it.  KVEVENTS_LOCALEDIR moves both catalogues
 * (programs run from the build tree, as the tests do): the library keeps
 * a binding made before its first message. */
void
kvt_init_i18n (void)
{
  const char *dir = g_getenv ("KVEVENTS_LOCALEDIR");
  gboolean moved = dir != NULL && dir[0] != '\0';
  gboolean usable = moved && g_file_test (dir, G_FILE_TEST_IS_DIR);

  setlocale (LC_ALL, "");
  bindtextdomain (KVT_GETTEXT_PACKAGE, usable ? dir : LOCALEDIR);
  bind_textdomain_codeset (KVT_GETTEXT_PACKAGE, "UTF-8");
  textdomain (KVT_GETTEXT_PACKAGE);
  if (usable)
    bindtextdomain (GETTEXT_PACKAGE, dir);
  else if (moved)
    g_printerr (_ ("KVEVENTS_LOCALEDIR: %s is not a directory; translations come from %s\n"), dir,
                LOCALEDIR);
}

void
kvt_append_hex (GString *out, const void *data, gsize len)
{
  static const char digits[] = "0123456789abcdef";
  const guint8 *bytes = data;
  gsize i;

  for (i = 0; i < len; i++)
    {
      g_string_append_c (out, digits[bytes[i] >> 4]);
      g_string_append_c (out, digits[bytes[i] & 0xf]);
    }
}

void
kvt_json_append_utf8 (GString *out, const char *data, gsize len)
{
  gsize i;

  g_string_append_c (out, '"');
  for (i = 0; i < len; i++)
    {
      guchar c = (guchar) data[i];

      switch (c)
        {
        case '"':
          g_string_append (out, "\\\"");
          break;
        case '\\':
          g_string_append (out, "\\\\");
          break;
        case '\n':
          g_string_append (out, "\\n");
          break;
        case '\r':
          g_string_append (out, "\\r");
          break;
        case '\t':
          g_string_append (out, "\\t");
          break;
        default:
          /* DEL is legal JSON, but escaping it keeps a terminal sane. */
          if (c < 0x20 || c == 0x7f)
            g_string_append_printf (out, "\\u%04x", c);
          else
            g_string_append_c (out, (char) c);
        }
    }
  g_string_append_c (out, '"');
}

void
kvt_json_append_bytes (GString *out, const char *data, gsize len, gboolean is_text)
{
  if (is_text && kvev_bytes_are_utf8 (data, len))
    {
      kvt_json_append_utf8 (out, data, len);
      return;
    }
  g_string_append (out, "{\"hex\": \"");
  kvt_append_hex (out, data, len);
  g_string_append_c (out, '"');
  if (is_text)
    g_string_append (out, ", \"invalid_utf8\": true");
  g_string_append_c (out, '}');
}

gboolean
kvt_parse_uint (const char *text, guint64 min, guint64 max, guint64 *value)
{
  guint64 parsed;

  /* g_ascii_string_to_unsigned () accepts a leading '+' and spaces. */
  if (text == NULL || !g_ascii_isdigit (text[0]))
    return FALSE;
  if (!g_ascii_string_to_unsigned (text, 10, min, max, &parsed, NULL))
    return FALSE;
  *value = parsed;
  return TRUE;
}

gboolean
kvt_write_in_place (const char *path, const GString *text, GError **error)
{
  gboolean written;
  int saved_errno;
  FILE *file;

  /* fclose() reports what the buffered write could not flush. */
  file = g_fopen (path, "w");
  written = file != NULL && fwrite (text->str, 1, text->len, file) == text->len;
  saved_errno = errno;
  if (file != NULL && fclose (file) != 0 && written)
    {
      written = FALSE;
      saved_errno = errno;
    }
  if (!written)
    g_set_error (error, KVT_ERROR, KVT_ERROR_FAILED, _ ("Cannot write %s: %s"), path,
                 g_strerror (saved_errno));
  return written;
}
