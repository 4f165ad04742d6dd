/* media.c: logical tiers and how replica types collapse onto them.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "media.h"

KvevMedia
kvev_media_of_replica (KvevReplicaType type)
{
  /* Any type but memory, including ones added after this library was
   * built, is disk: the replica taxonomy can grow without a protocol
   * change. */
  return type == KVEV_REPLICA_MEMORY ? KVEV_MEDIA_CPU : KVEV_MEDIA_DISK;
}

const char *
kvev_media_name (KvevMedia single_medium)
{
  switch (single_medium)
    {
    case KVEV_MEDIA_CPU:
      return "cpu";
    case KVEV_MEDIA_DISK:
      return "disk";
    case KVEV_MEDIA_NONE:
    default:
      return NULL;
    }
}

guint
kvev_media_count (KvevMedia media)
{
  return ((media & KVEV_MEDIA_CPU) != 0) + ((media & KVEV_MEDIA_DISK) != 0);
}
