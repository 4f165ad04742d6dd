/* media.h: the library's own use of the tiers; the public functions are
 * in kvevents-media.h.
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEV_MEDIA_H
#define KVEV_MEDIA_H

#include "internal.h"

G_BEGIN_DECLS

/* How many tiers, and so keyed events of one kind, media names. */
guint kvev_media_count (KvevMedia media);

G_END_DECLS

#endif /* KVEV_MEDIA_H */
