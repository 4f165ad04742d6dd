/* fork.h: publishers in a process forked from the one that created them.
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEVENTS_FORK_H
#define KVEVENTS_FORK_H

#include "internal.h"

G_BEGIN_DECLS

/* A publisher's place in the registry the child handler walks; the
 * publisher embeds it, fork.c alone links it. */
typedef struct _KvevForkEntry KvevForkEntry;
struct _KvevForkEntry
{
  KvevForkEntry *prev;
  KvevForkEntry *next;
  gint *accepting;    /* the publisher's: set to 0 in the child */
  gboolean inherited; /* TRUE in a child, before anything else runs */
};

/* Installs the fork handlers, once per process; FALSE with a
 * KVEV_ERROR_TRANSPORT if the C library cannot take them. */
gboolean kvev_fork_watch (GError **error);

/* From kvev_fork_track() until kvev_fork_untrack(), a fork() marks the
 * child's copy of entry inherited and clears *accepting there.  Only for
 * a publisher whose worker runs, after kvev_fork_watch() succeeded. */
void kvev_fork_track (KvevForkEntry *entry, gint *accepting);
void kvev_fork_untrack (KvevForkEntry *entry);

G_END_DECLS

#endif /* KVEVENTS_FORK_H */
