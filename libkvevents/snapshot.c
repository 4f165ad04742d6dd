/* snapshot.c: the master's snapshot function, as the publisher keeps it;
 * see snapshot.h.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "snapshot.h"

#include <string.h>

void
kvev_snapshot_source_init (KvevSnapshotSource *source)
{
  memset (source, 0, sizeof *source);
  g_mutex_init (&source->lock);
}

void
kvev_snapshot_source_set (KvevSnapshotSource *source, KvevSnapshotFunc func,
                          gpointer user_data, GDestroyNotify destroy)
{
  GDestroyNotify old_destroy;
  gpointer old_data;

  g_mutex_lock (&source->lock);
  old_destroy = source->destroy;
  old_data = source->user_data;
  source->func = func;
  source->user_data = user_data;
  source->destroy = destroy;
  g_mutex_unlock (&source->lock);
  if (old_destroy != NULL)
    old_destroy (old_data);
}

void
kvev_snapshot_source_clear (KvevSnapshotSource *source)
{
  kvev_snapshot_source_set (source, NULL, NULL, NULL);
  g_mutex_clear (&source->lock);
}
