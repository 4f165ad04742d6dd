/* utf8.h: whether a string goes on the wire as msgpack str.  Shared by
 * the encoder and by the event calls, which check only when
 * kv_events_non_utf8 is skip; inline, since both call it on hot paths.
 * Pure, with no state and no messages, so the tools and tests that must
 * tell str from bin as the library does use it too
 * (libkvbase.la).
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEVENTS_UTF8_H
#define KVEVENTS_UTF8_H

#include <glib.h>
#include <string.h>

G_BEGIN_DECLS

/* UTF-8 with embedded NULs allowed, as msgpack str takes it.  s may be
 * NULL when len is 0, as an absent tenant or group is. */
static inline gboolean
kvev_bytes_are_utf8 (const char *s, gsize len)
{
  const char *p = s;
  const char *end;

  if (len == 0)
    return TRUE;
  end = s + len;

  /* Keys are nearly always ASCII: test eight bytes at a time until one
   * has its high bit set.  memcpy() keeps the load alignment-safe and
   * compiles to a single move. */
  while ((gsize) (end - p) >= sizeof (guint64))
    {
      guint64 word;

      memcpy (&word, p, sizeof word);
      if (word & G_GUINT64_CONSTANT (0x8080808080808080))
        break;
      p += sizeof word;
    }
  while (p < end && (guchar) *p < 0x80)
    p++;

  /* p now starts a character.  GLib's validator refuses NUL, which is
   * valid UTF-8 and may sit inside a Store key, so validate the runs
   * between NULs. */
  while (p < end)
    {
      const char *nul = memchr (p, '\0', (gsize) (end - p));
      const char *stop = nul ? nul : end;

      if (!g_utf8_validate_len (p, (gsize) (stop - p), NULL))
        return FALSE;
      p = nul ? nul + 1 : end;
    }
  return TRUE;
}

G_END_DECLS

#endif /* KVEVENTS_UTF8_H */
