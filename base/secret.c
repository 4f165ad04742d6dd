/* secret.c: clearing secrets; see secret.h.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include <base/secret.h>

void
kvev_secret_wipe (void *data, gsize len)
{
  /* Through a volatile pointer: stores to memory about to be freed are
   * dead to the compiler, which may drop a plain memset(). */
  volatile guint8 *bytes = data;

  while (len-- > 0)
    *bytes++ = 0;
}
