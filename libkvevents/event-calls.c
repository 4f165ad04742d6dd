/* event-calls.c: the event calls of the public API.  Each checks its
 * arguments and says which events one call of the master stands for
 * (kvevents(7), PUBLICATION POINTS); the publisher queues them together.
 * The library keeps no per-object state: the caller's media sets are the
 * whole truth.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "publisher.h"

#include <string.h>

struct _KvevClearScope
{
  KvevPublisher *publisher;
  char *tenant_id;
  guint64 removed_objects;
  guint64 skipped_objects;
};

/* Length of an optional string, or G_MAXSIZE when it is too long. */
static gsize
optional_len (const char *string)
{
  if (string == NULL)
    return 0;
  return strnlen (string, KVEV_MAX_KEY_LEN + 1);
}

static gboolean
check_strings (KvevPublisher *publisher, const char *function, const char *tenant_id,
               gsize *tenant_len, const char *object_key, gssize key_len, gsize *key_bytes,
               const char *group_id, gsize *group_len)
{
  if (G_UNLIKELY (key_len < -1))
    {
      kvev_publisher_reject (publisher, function, "key_len must be -1 or a length");
      return FALSE;
    }
  *key_bytes = key_len == -1 ? optional_len (object_key) : (gsize) key_len;
  *tenant_len = optional_len (tenant_id);
  *group_len = optional_len (group_id);
  if (G_UNLIKELY (*key_bytes > KVEV_MAX_KEY_LEN || *tenant_len > KVEV_MAX_KEY_LEN
                  || *group_len > KVEV_MAX_KEY_LEN))
    {
      kvev_publisher_reject (publisher, function, "object key, tenant or group longer than 1 MiB");
      return FALSE;
    }
  return TRUE;
}

static gboolean
check_media (KvevPublisher *publisher, const char *function, KvevMedia media)
{
  if (G_UNLIKELY ((media & ~KVEV_MEDIA_ALL) != 0))
    {
      kvev_publisher_reject (publisher, function, "media has bits outside KVEV_MEDIA_ALL");
      return FALSE;
    }
  return TRUE;
}

/* The one path every keyed call takes: removed for the tiers in removed,
 * then stored for the tiers in stored, queued as one call. */
static void
publish_keyed (KvevPublisher *publisher, const char *function, const char *tenant_id,
               const char *object_key, gssize key_len, const char *group_id, KvevMedia removed,
               KvevMedia stored)
{
  gsize tenant_len, key_bytes, group_len;

  if (!check_strings (publisher, function, tenant_id, &tenant_len, object_key, key_len, &key_bytes,
                      group_id, &group_len))
    return;
  if ((removed | stored) != KVEV_MEDIA_NONE)
    kvev_publisher_queue_keyed (publisher, removed, stored, tenant_id, tenant_len, object_key,
                                key_bytes, group_id, group_len);
}

void
kvev_publish_stored (KvevPublisher *publisher, const char *tenant_id, const char *object_key,
                     gssize key_len, const char *group_id, KvevMedia media)
{
  kvev_return_if_fail (publisher != NULL);
  kvev_publisher_return_if_fail (publisher, object_key != NULL);

  if (check_media (publisher, G_STRFUNC, media))
    publish_keyed (publisher, G_STRFUNC, tenant_id, object_key, key_len, group_id, KVEV_MEDIA_NONE,
                   media);
}

void
kvev_publish_removed (KvevPublisher *publisher, const char *tenant_id, const char *object_key,
                      gssize key_len, const char *group_id, KvevMedia media)
{
  kvev_return_if_fail (publisher != NULL);
  kvev_publisher_return_if_fail (publisher, object_key != NULL);

  if (check_media (publisher, G_STRFUNC, media))
    publish_keyed (publisher, G_STRFUNC, tenant_id, object_key, key_len, group_id, media,
                   KVEV_MEDIA_NONE);
}

void
kvev_publish_delta (KvevPublisher *publisher, const char *tenant_id, const char *object_key,
                    gssize key_len, const char *group_id, KvevMedia media_before,
                    KvevMedia media_after)
{
  kvev_return_if_fail (publisher != NULL);
  kvev_publisher_return_if_fail (publisher, object_key != NULL);

  if (check_media (publisher, G_STRFUNC, media_before)
      && check_media (publisher, G_STRFUNC, media_after))
    publish_keyed (publisher, G_STRFUNC, tenant_id, object_key, key_len, group_id,
                   media_before & ~media_after, media_after & ~media_before);
}

/* TRUE when cleared is queued or, by a disabled publisher, would have
 * been: kvev_clear_end() reports what happened, a rejection or a skip
 * included. */
static gboolean
publish_cleared (KvevPublisher *publisher, const char *function, const char *tenant_id)
{
  gsize tenant_len = optional_len (tenant_id);

  if (G_UNLIKELY (tenant_len > KVEV_MAX_KEY_LEN))
    {
      kvev_publisher_reject (publisher, function, "tenant longer than 1 MiB");
      return FALSE;
    }
  return kvev_publisher_queue_cleared (publisher, tenant_id, tenant_len);
}

void
kvev_publish_cleared (KvevPublisher *publisher, const char *tenant_id)
{
  kvev_return_if_fail (publisher != NULL);

  publish_cleared (publisher, G_STRFUNC, tenant_id);
}

KvevClearScope *
kvev_clear_begin (KvevPublisher *publisher, const char *tenant_id)
{
  KvevClearScope *scope;

  kvev_return_val_if_fail (publisher != NULL, NULL);

  scope = g_new0 (KvevClearScope, 1);
  scope->publisher = publisher;
  scope->tenant_id = g_strdup (tenant_id);
  return scope;
}

void
kvev_clear_object_removed (KvevClearScope *scope, const char *object_key, gssize key_len,
                           const char *group_id, KvevMedia media_before)
{
  kvev_return_if_fail (scope != NULL);
  kvev_publisher_return_if_fail (scope->publisher, object_key != NULL);

  if (!check_media (scope->publisher, G_STRFUNC, media_before))
    return;
  /* The object counts as held even when it had no tier left: the removal
   * loop accepted it, which is what the cleared decision rests on. */
  scope->removed_objects++;
  publish_keyed (scope->publisher, G_STRFUNC, scope->tenant_id, object_key, key_len, group_id,
                 media_before, KVEV_MEDIA_NONE);
}

void
kvev_clear_skipped (KvevClearScope *scope, KvevSkipReason reason)
{
  kvev_return_if_fail (scope != NULL);

  /* Every skip holds the cleared back, also one for a reason newer than
   * this library (the enum only grows): it counts as OTHER. */
  if ((guint) reason >= KVEV_N_SKIP_REASONS)
    reason = KVEV_SKIP_OTHER;
  scope->skipped_objects++;
  kvev_publisher_count_skip (scope->publisher, reason);
}

gboolean
kvev_clear_end (KvevClearScope *scope)
{
  KvevPublisher *publisher;
  gboolean clear;

  kvev_return_val_if_fail (scope != NULL, FALSE);

  publisher = scope->publisher;
  /* A tenant that held nothing, or a RemoveAll that left an object
   * behind, must not tell indexers that the tenant is empty. */
  clear = scope->removed_objects > 0 && scope->skipped_objects == 0
          && publish_cleared (publisher, G_STRFUNC, scope->tenant_id);
  if (!clear)
    kvev_publisher_count_cleared_suppressed (publisher);
  g_free (scope->tenant_id);
  g_free (scope);
  return clear;
}
