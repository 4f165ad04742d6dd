/* escape.c: values quoted in messages.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "internal.h"

#include <string.h>

/* A value quoted in a message is cut here: the point is to recognise it,
 * and a megabyte of it would drown the log line. */
#define SHOWN_VALUE_MAX 200

/* Values and names come from files and command lines in any encoding,
 * but a GError message must be UTF-8 a log or a terminal can take: keep
 * valid UTF-8 readable, turn everything else into C escapes. */
char *
kvev_escape_for_message (const char *text)
{
  char high_bytes[129];
  gsize length = strlen (text);
  gboolean valid = g_utf8_validate (text, (gssize) length, NULL);
  gboolean cut = length > SHOWN_VALUE_MAX;
  g_autofree char *head = NULL;
  g_autofree char *escaped = NULL;

  if (cut)
    {
      length = SHOWN_VALUE_MAX;
      /* Back off to a character boundary so the cut stays UTF-8. */
      if (valid)
        while (length > 0 && ((guchar) text[length] & 0xc0) == 0x80)
          length--;
    }
  head = g_strndup (text, length);

  for (int i = 0; i < 128; i++)
    high_bytes[i] = (char) (0x80 + i);
  high_bytes[128] = '\0';

  escaped = g_strescape (head, valid ? high_bytes : NULL);
  if (cut)
    return g_strconcat (escaped, "...", NULL);
  return g_steal_pointer (&escaped);
}
