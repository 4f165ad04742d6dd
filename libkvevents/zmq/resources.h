/* resources.h: the process resources a publisher's transport takes,
 * checked before it is started.  Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEVENTS_RESOURCES_H
#define KVEVENTS_RESOURCES_H

#include "config/settings.h"

G_BEGIN_DECLS

/* Checks that the process can still give the ZeroMQ transport of a
 * publisher on settings the file descriptors and threads it takes, all at
 * once.  libzmq aborts the process when it cannot get one of them; this
 * fails first, with a KVEV_ERROR_TRANSPORT naming what is short. */
gboolean kvev_resources_check (const KvevSettings *settings, GError **error);

G_END_DECLS

#endif /* KVEVENTS_RESOURCES_H */
