/* quote.c: see quote.h.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include "quote.h"

#include <string.h>

char *
kvev_quote (const char *text, gboolean json)
{
  g_autofree char *valid = g_utf8_make_valid (text, -1);
  gsize len = strlen (valid);
  /* The longest escape, \u001f, is six bytes for one. */
  char *quoted = g_malloc (len * 6 + 3);
  char *out = quoted;
  const char *p;

  *out++ = '"';
  for (p = valid; *p != '\0'; p++)
    {
      guchar c = (guchar) *p;

      if (c == '"' || c == '\\')
        {
          *out++ = '\\';
          *out++ = (char) c;
        }
      else if (c == '\n')
        {
          *out++ = '\\';
          *out++ = 'n';
        }
      else if (c < 0x20 && json)
        out += g_snprintf (out, 7, "\\u%04x", c);
      else if (c < 0x20)
        *out++ = ' ';
      else
        *out++ = (char) c;
    }
  *out++ = '"';
  *out = '\0';
  return quoted;
}
