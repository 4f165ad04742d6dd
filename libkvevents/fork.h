/* fork.h: publishers in a process forked from the one that created them.
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEVENTS_FORK_H
#define KVEVENTS_FORK_H

#include "publisher-private.h"

G_BEGIN_DECLS

/* Installs the fork handlers, once per process; FALSE with a
 * KVEV_ERROR_TRANSPORT if the C library cannot take them. */
gboolean kvev_fork_watch (GError **error);

/* From kvev_fork_track() until kvev_fork_untrack(), a fork() marks the
 * child's copy of publisher inherited.  Only for a publisher whose
 * transport runs, after kvev_fork_watch() succeeded. */
void kvev_fork_track (KvevPublisher *publisher);
void kvev_fork_untrack (KvevPublisher *publisher);

G_END_DECLS

#endif /* KVEVENTS_FORK_H */
