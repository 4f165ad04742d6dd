/* kvevents-media.h: logical storage tiers and replica types.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEVENTS_MEDIA_H
#define KVEVENTS_MEDIA_H

#if !defined(KVEVENTS_H_INSIDE) && !defined(KVEVENTS_COMPILATION)
#error "Only <kvevents/kvevents.h> can be included directly."
#endif

#include <kvevents/kvevents-common.h>

G_BEGIN_DECLS

/**
 * KvevMedia:
 * @KVEV_MEDIA_NONE: no tier.
 * @KVEV_MEDIA_CPU: the memory tier, "cpu" on the wire.
 * @KVEV_MEDIA_DISK: every non-memory tier, "disk" on the wire.
 * @KVEV_MEDIA_ALL: every tier this version knows; bits outside it are a
 *   caller error.
 *
 * A set of logical tiers, as bits.  Subscribers see one event per tier and
 * never the store's internal replica taxonomy.  Values are ABI.
 *
 * %KVEV_MEDIA_ALL is an enumerator, as GLib's G_PARAM_READWRITE is, so
 * that a switch over a #KvevMedia may name it under -Wswitch: the value
 * is a set the type holds.  A switch that lists the single tiers without
 * a default is told it misses the set of both, which a publish call may
 * pass.
 */
typedef enum
{
  KVEV_MEDIA_NONE = 0,
  KVEV_MEDIA_CPU = 1 << 0,
  KVEV_MEDIA_DISK = 1 << 1,
  /* Within the braces the enumerators are ints in C++ too, so this
   * needs none of the operators below and stays a constant expression
   * in C++98. */
  KVEV_MEDIA_ALL = KVEV_MEDIA_CPU | KVEV_MEDIA_DISK,
} KvevMedia;

/**
 * KvevReplicaType:
 * @KVEV_REPLICA_MEMORY: a memory replica (tier cpu).
 * @KVEV_REPLICA_DISK: a disk replica (tier disk).
 * @KVEV_REPLICA_LOCAL_DISK: a local disk replica (tier disk).
 * @KVEV_REPLICA_NOF_SSD: an NVMe-oF SSD replica (tier disk).
 * @KVEV_REPLICA_DFS: a distributed file system replica (tier disk).
 *
 * The store's replica types.  Values are ABI: new types are only ever
 * appended, and every type but memory maps to disk.
 */
typedef enum
{
  KVEV_REPLICA_MEMORY = 0,
  KVEV_REPLICA_DISK = 1,
  KVEV_REPLICA_LOCAL_DISK = 2,
  KVEV_REPLICA_NOF_SSD = 3,
  KVEV_REPLICA_DFS = 4,
} KvevReplicaType;

/**
 * kvev_media_of_replica:
 * @type: a replica type, including values newer than this library.
 *
 * Collapses a replica type onto its logical tier: memory is
 * %KVEV_MEDIA_CPU; every other value, known or not, is %KVEV_MEDIA_DISK,
 * so a store that grows a replica type needs no protocol change.
 *
 * Returns: exactly one tier.
 * Thread-safe.
 */
KVEV_API KvevMedia kvev_media_of_replica (KvevReplicaType type);

/**
 * kvev_media_name:
 * @single_medium: exactly one tier.
 *
 * Names a tier as events name it on the wire.
 *
 * Returns: (transfer none) (nullable): "cpu" or "disk", the wire name of
 *   the tier; %NULL for %KVEV_MEDIA_NONE, a set of several tiers or an
 *   unknown bit.
 * Thread-safe.
 */
KVEV_API const char *kvev_media_name (KvevMedia single_medium);

G_END_DECLS

#ifdef __cplusplus
/* C++ does not turn an int back into an enum, so without these a set of
 * tiers (KVEV_MEDIA_CPU | KVEV_MEDIA_DISK) could not be passed to a
 * publish call.  Inline: they add nothing to the ABI.  ~ stays within
 * KVEV_MEDIA_ALL, because a value outside an enum's range is undefined
 * behaviour in C++. */
#if __cplusplus >= 201103L
#define KVEV_MEDIA_CONSTEXPR_ constexpr
#else
#define KVEV_MEDIA_CONSTEXPR_
#endif

inline KVEV_MEDIA_CONSTEXPR_ KvevMedia
operator| (KvevMedia a, KvevMedia b)
{
  return static_cast<KvevMedia> (static_cast<int> (a) | static_cast<int> (b));
}

inline KVEV_MEDIA_CONSTEXPR_ KvevMedia
operator& (KvevMedia a, KvevMedia b)
{
  return static_cast<KvevMedia> (static_cast<int> (a) & static_cast<int> (b));
}

inline KVEV_MEDIA_CONSTEXPR_ KvevMedia
operator^ (KvevMedia a, KvevMedia b)
{
  return static_cast<KvevMedia> (static_cast<int> (a) ^ static_cast<int> (b));
}

inline KVEV_MEDIA_CONSTEXPR_ KvevMedia
operator~(KvevMedia a)
{
  return static_cast<KvevMedia> (~static_cast<int> (a) & static_cast<int> (KVEV_MEDIA_ALL));
}

inline KvevMedia &
operator|= (KvevMedia &a, KvevMedia b)
{
  return a = a | b;
}

inline KvevMedia &
operator&= (KvevMedia &a, KvevMedia b)
{
  return a = a & b;
}

inline KvevMedia &
operator^= (KvevMedia &a, KvevMedia b)
{
  return a = a ^ b;
}

#undef KVEV_MEDIA_CONSTEXPR_
#endif /* __cplusplus */

#endif /* KVEVENTS_MEDIA_H */
