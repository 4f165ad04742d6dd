/* test-media.c: replica types onto tiers, and tier names.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include <kvevents/kvevents.h>

static void
test_replica_memory (void)
{
  g_assert_cmpint (kvev_media_of_replica (KVEV_REPLICA_MEMORY), ==, KVEV_MEDIA_CPU);
}

static void
test_replica_disk_types (void)
{
  static const KvevReplicaType disk_types[] = {
    KVEV_REPLICA_DISK,
    KVEV_REPLICA_LOCAL_DISK,
    KVEV_REPLICA_NOF_SSD,
    KVEV_REPLICA_DFS,
  };

  for (gsize i = 0; i < G_N_ELEMENTS (disk_types); i++)
    {
      g_test_message ("replica type %d", (int) disk_types[i]);
      g_assert_cmpint (kvev_media_of_replica (disk_types[i]), ==, KVEV_MEDIA_DISK);
    }
}

static void
test_replica_values_are_abi (void)
{
  /* The enum is ABI: a renumbering would silently remap a master's
   * replicas, so pin every value. */
  g_assert_cmpint (KVEV_REPLICA_MEMORY, ==, 0);
  g_assert_cmpint (KVEV_REPLICA_DISK, ==, 1);
  g_assert_cmpint (KVEV_REPLICA_LOCAL_DISK, ==, 2);
  g_assert_cmpint (KVEV_REPLICA_NOF_SSD, ==, 3);
  g_assert_cmpint (KVEV_REPLICA_DFS, ==, 4);
  g_assert_cmpint (KVEV_MEDIA_NONE, ==, 0);
  g_assert_cmpint (KVEV_MEDIA_CPU, ==, 1);
  g_assert_cmpint (KVEV_MEDIA_DISK, ==, 2);
}

static void
test_replica_unknown (void)
{
  /* A replica type newer than the library is a disk tier, not an error. */
  g_assert_cmpint (kvev_media_of_replica ((KvevReplicaType) 5), ==, KVEV_MEDIA_DISK);
  g_assert_cmpint (kvev_media_of_replica ((KvevReplicaType) 99), ==, KVEV_MEDIA_DISK);
  g_assert_cmpint (kvev_media_of_replica ((KvevReplicaType) -1), ==, KVEV_MEDIA_DISK);
}

static void
test_media_name_single (void)
{
  g_assert_cmpstr (kvev_media_name (KVEV_MEDIA_CPU), ==, "cpu");
  g_assert_cmpstr (kvev_media_name (KVEV_MEDIA_DISK), ==, "disk");
}

static void
test_media_name_not_single (void)
{
  g_assert_null (kvev_media_name (KVEV_MEDIA_NONE));
  g_assert_null (kvev_media_name (KVEV_MEDIA_CPU | KVEV_MEDIA_DISK));
  g_assert_null (kvev_media_name (KVEV_MEDIA_ALL));
  g_assert_null (kvev_media_name ((KvevMedia) (1 << 2)));
  g_assert_null (kvev_media_name ((KvevMedia) (1 << 2 | KVEV_MEDIA_CPU)));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/kvevents/media/replica-memory", test_replica_memory);
  g_test_add_func ("/kvevents/media/replica-disk-types", test_replica_disk_types);
  g_test_add_func ("/kvevents/media/replica-values-are-abi", test_replica_values_are_abi);
  g_test_add_func ("/kvevents/media/replica-unknown", test_replica_unknown);
  g_test_add_func ("/kvevents/media/name-single", test_media_name_single);
  g_test_add_func ("/kvevents/media/name-not-single", test_media_name_not_single);

  return g_test_run ();
}
