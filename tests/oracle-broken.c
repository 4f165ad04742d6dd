/* oracle-broken.c: what makes oracle-master into oracle-master-broken, a
 * master with a bug the oracle test must catch.
 *
 * Linked with -Wl,--wrap=kvev_publish_delta, so that the store's every
 * delta comes here first: this one drops each delta that only withdraws
 * tiers from an object that stays available, the announcement of an
 * eviction, a replica clear or a client cleanup.  Subscribers then go on
 * believing the object is on a tier it left.  The store's own code, the
 * example's, stays as it is.
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include <kvevents/kvevents.h>

void __real_kvev_publish_delta (KvevPublisher *publisher, const char *tenant_id,
                                const char *object_key, gssize key_len, const char *group_id,
                                KvevMedia before, KvevMedia after);
void __wrap_kvev_publish_delta (KvevPublisher *publisher, const char *tenant_id,
                                const char *object_key, gssize key_len, const char *group_id,
                                KvevMedia before, KvevMedia after);

void
__wrap_kvev_publish_delta (KvevPublisher *publisher, const char *tenant_id, const char *object_key,
                           gssize key_len, const char *group_id, KvevMedia before, KvevMedia after)
{
  gboolean only_withdraws = (before & ~after) != 0 && (after & ~before) == 0;

  if (only_withdraws && after != KVEV_MEDIA_NONE)
    return;
  __real_kvev_publish_delta (publisher, tenant_id, object_key, key_len, group_id, before, after);
}
