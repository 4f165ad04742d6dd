/* snapshot-source.c: the master's snapshot function, as the publisher keeps it;
 * see snapshot-source.h.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "snapshot-source.h"

#include <string.h>

void
kvev_snapshot_source_init (KvevSnapshotSource *source)
{
  memset (source, 0, sizeof *source);
  g_mutex_init (&source->lock);
}

gboolean
kvev_snapshot_source_set (KvevSnapshotSource *source, KvevSnapshotFunc func, gpointer user_data,
                          GDestroyNotify destroy)
{
  GDestroyNotify old_destroy;
  gpointer old_data;

  if (g_atomic_pointer_get (&source->walker) == (gpointer) g_thread_self ())
    return FALSE;
  g_atomic_int_inc (&source->replacing);
  g_mutex_lock (&source->lock);
  g_atomic_int_add (&source->replacing, -1);
  old_destroy = source->destroy;
  old_data = source->user_data;
  source->func = func;
  source->user_data = user_data;
  source->destroy = destroy;
  g_mutex_unlock (&source->lock);
  if (old_destroy != NULL)
    old_destroy (old_data);
  return TRUE;
}

void
kvev_snapshot_source_clear (KvevSnapshotSource *source)
{
  kvev_snapshot_source_set (source, NULL, NULL, NULL);
  g_mutex_clear (&source->lock);
}

gboolean
kvev_snapshot_source_walk (KvevSnapshotSource *source, KvevSnapshot *snapshot,
                           KvevSnapshotBegin begin, gpointer data, gboolean *found, GError **error)
{
  gboolean complete;

  g_mutex_lock (&source->lock);
  *found = source->func != NULL;
  if (!*found || !begin (snapshot, data))
    {
      g_mutex_unlock (&source->lock);
      return FALSE;
    }
  g_atomic_pointer_set (&source->walker, g_thread_self ());
  complete = source->func (snapshot, source->user_data, error);
  g_atomic_pointer_set (&source->walker, NULL);
  g_mutex_unlock (&source->lock);
  return complete;
}

gboolean
kvev_snapshot_source_replacing (KvevSnapshotSource *source)
{
  return g_atomic_int_get (&source->replacing) > 0;
}
