/* z85.c: decoding Z85 keys; see z85.h.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include <base/z85.h>

#include <string.h>

static const char z85_alphabet[] = "0123456789abcdefghijklmnopqrstuvwxyz"
                                   "ABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";

gboolean
kvev_z85_decode_key (const char *z85, guint8 key[KVEV_KEY_BYTES])
{
  guint i, j;

  if (strlen (z85) != KVEV_Z85_KEY_LEN)
    return FALSE;
  for (i = 0; i < KVEV_Z85_KEY_LEN; i += 5)
    {
      guint64 value = 0;

      for (j = 0; j < 5; j++)
        {
          const char *digit = z85[i + j] != '\0' ? strchr (z85_alphabet, z85[i + j]) : NULL;

          if (digit == NULL)
            return FALSE;
          value = value * 85 + (guint64) (digit - z85_alphabet);
        }
      if (value > G_MAXUINT32)
        return FALSE;
      for (j = 0; j < 4; j++)
        key[i / 5 * 4 + j] = (guint8) (value >> (24 - 8 * j));
    }
  return TRUE;
}
