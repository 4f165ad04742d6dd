/* events.c: the event calls.  Each turns one call of the master into the
 * events the seed prescribes and queues them together.  The publisher keeps
 * no per-object state: the caller's media sets are the whole truth.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "publisher-private.h"
#include "utf8.h"

#include <string.h>

struct _KvevClearScope
{
  KvevPublisher *publisher;
  char *tenant_id;
  guint64 removed_objects;
  guint64 skipped_objects;
};

static guint
count_tiers (KvevMedia media)
{
  return ((media & KVEV_MEDIA_CPU) != 0) + ((media & KVEV_MEDIA_DISK) != 0);
}

/* See event.h: the memory per queued event depends on it. */
G_STATIC_ASSERT (sizeof (KvevCall) <= 24);

static KvevCall *
call_new (KvevMedia removed, KvevMedia stored, const char *tenant,
          gsize tenant_len, const char *key, gsize key_len, const char *group,
          gsize group_len)
{
  KvevCall *call = g_malloc (sizeof (KvevCall) + tenant_len + key_len + group_len);
  char *strings = call->strings;

  call->first_event_id = 0;
  call->tenant_len = (guint32) tenant_len;
  call->key_len = (guint32) key_len;
  call->group_len = (guint32) group_len;
  call->removed = (guint8) removed;
  call->stored = (guint8) stored;
  /* A cleared call names no tier and is one event. */
  call->n_events = (guint8) MAX (count_tiers (removed) + count_tiers (stored), 1);
  call->dropped = 0;
  /* memcpy with a NULL source is undefined even for 0 bytes. */
  if (tenant_len > 0)
    memcpy (strings, tenant, tenant_len);
  if (key_len > 0)
    memcpy (strings + tenant_len, key, key_len);
  if (group_len > 0)
    memcpy (strings + tenant_len + key_len, group, group_len);
  return call;
}

KvevCall *
kvev_call_new_keyed (KvevMedia removed, KvevMedia stored, const char *tenant,
                     gsize tenant_len, const char *key, gsize key_len,
                     const char *group, gsize group_len)
{
  g_assert ((removed | stored) != KVEV_MEDIA_NONE);
  return call_new (removed, stored, tenant, tenant_len, key, key_len, group,
                   group_len);
}

KvevCall *
kvev_call_new_cleared (const char *tenant, gsize tenant_len)
{
  return call_new (KVEV_MEDIA_NONE, KVEV_MEDIA_NONE, tenant, tenant_len, NULL,
                   0, NULL, 0);
}

/* A call's tiers as bits, removed then stored, cpu first: */
G_STATIC_ASSERT (KVEV_MEDIA_CPU == 1 && KVEV_MEDIA_DISK == 2);

guint
kvev_call_events (const KvevCall *call, guint index, KvevEvent *events)
{
  static const struct
  {
    guint8 type;
    guint8 medium;
  } order[] = {
    { KVEV_EVENT_REMOVED, KVEV_MEDIA_CPU },
    { KVEV_EVENT_REMOVED, KVEV_MEDIA_DISK },
    { KVEV_EVENT_STORED, KVEV_MEDIA_CPU },
    { KVEV_EVENT_STORED, KVEV_MEDIA_DISK },
  };
  guint tiers = (guint) call->removed | (guint) call->stored << 2;
  guint i, k = 0, n = 0;

  if (kvev_call_is_cleared (call))
    {
      if (index > 0)
        return 0;
      events[0] = (KvevEvent){ call, call->first_event_id, KVEV_EVENT_CLEARED,
                               KVEV_MEDIA_NONE };
      return 1;
    }
  /* Bit i of tiers is order[i]. */
  for (i = 0; i < G_N_ELEMENTS (order); i++)
    if (tiers & (1u << i))
      {
        if (k >= index)
          events[n++] = (KvevEvent){ call, call->first_event_id + k,
                                     order[i].type, order[i].medium };
        k++;
      }
  return n;
}

/* A refused call on a live publisher is a programmer error that the
 * master's operators should also see in the statistics. */
static void
reject (KvevPublisher *publisher, const char *function, const char *reason)
{
  g_critical ("%s: %s", function, reason);
  if (publisher->enabled)
    kvev_counter_add (&publisher->rejected_events, 1);
}

/* Length of an optional string, or G_MAXSIZE when it is too long. */
static gsize
optional_len (const char *string)
{
  if (string == NULL)
    return 0;
  return strnlen (string, KVEV_MAX_KEY_LEN + 1);
}

static gboolean
check_strings (KvevPublisher *publisher, const char *function,
               const char *tenant_id, gsize *tenant_len, const char *object_key,
               gssize key_len, gsize *key_bytes, const char *group_id,
               gsize *group_len)
{
  if (G_UNLIKELY (key_len < -1))
    {
      reject (publisher, function, "key_len must be -1 or a length");
      return FALSE;
    }
  *key_bytes = key_len == -1 ? optional_len (object_key) : (gsize) key_len;
  *tenant_len = optional_len (tenant_id);
  *group_len = optional_len (group_id);
  if (G_UNLIKELY (*key_bytes > KVEV_MAX_KEY_LEN || *tenant_len > KVEV_MAX_KEY_LEN
                  || *group_len > KVEV_MAX_KEY_LEN))
    {
      reject (publisher, function, "object key, tenant or group longer than 1 MiB");
      return FALSE;
    }
  return TRUE;
}

static gboolean
check_media (KvevPublisher *publisher, const char *function, KvevMedia media)
{
  if (G_UNLIKELY ((media & ~KVEV_MEDIA_ALL) != 0))
    {
      reject (publisher, function, "media has bits outside KVEV_MEDIA_ALL");
      return FALSE;
    }
  return TRUE;
}

/* With kv_events_non_utf8 skip, whether the call's strings keep it off
 * the wire (kvevents(7), "Strings that are not UTF-8").  Decided here,
 * before the call is queued, so that it takes no event_id and no
 * sequence number and no reader sees a loss.  The default, bin, reads
 * only the policy: the worker sorts such calls out as it encodes. */
static gboolean
skipped_non_utf8 (const KvevPublisher *publisher, const char *tenant_id, gsize tenant_len,
                  const char *object_key, gsize key_len, const char *group_id, gsize group_len)
{
  if (G_LIKELY (publisher->config->non_utf8 != KVEV_NON_UTF8_SKIP))
    return FALSE;
  return !kvev_bytes_are_utf8 (tenant_id, tenant_len)
         || !kvev_bytes_are_utf8 (object_key, key_len)
         || !kvev_bytes_are_utf8 (group_id, group_len);
}

/* The one path every keyed call takes: removed for the tiers in removed,
 * then stored for the tiers in stored, queued as one call. */
static void
publish_keyed (KvevPublisher *publisher, const char *function,
               const char *tenant_id, const char *object_key, gssize key_len,
               const char *group_id, KvevMedia removed, KvevMedia stored)
{
  gsize tenant_len, key_bytes, group_len;

  if (!check_strings (publisher, function, tenant_id, &tenant_len, object_key,
                      key_len, &key_bytes, group_id, &group_len))
    return;
  if (!publisher->enabled || (removed | stored) == KVEV_MEDIA_NONE)
    return;
  if (G_UNLIKELY (!g_atomic_int_get (&publisher->accepting)))
    return;

  /* Without its key an event names nothing a subscriber can act on. */
  if (key_bytes == 0 || !publisher->config->emit_object_key)
    {
      kvev_counter_add (&publisher->skipped_keyless_events,
                        count_tiers (removed) + count_tiers (stored));
      return;
    }
  if (G_UNLIKELY (skipped_non_utf8 (publisher, tenant_id, tenant_len, object_key,
                                    key_bytes, group_id, group_len)))
    {
      kvev_counter_add (&publisher->skipped_non_utf8_events,
                        count_tiers (removed) + count_tiers (stored));
      return;
    }

  kvev_queue_push (publisher->queue,
                   kvev_call_new_keyed (removed, stored, tenant_id, tenant_len,
                                        object_key, key_bytes, group_id,
                                        group_len));
}

void
kvev_publish_stored (KvevPublisher *publisher, const char *tenant_id,
                     const char *object_key, gssize key_len,
                     const char *group_id, KvevMedia media)
{
  g_return_if_fail (publisher != NULL);
  g_return_if_fail (object_key != NULL);

  if (check_media (publisher, G_STRFUNC, media))
    publish_keyed (publisher, G_STRFUNC, tenant_id, object_key, key_len,
                   group_id, KVEV_MEDIA_NONE, media);
}

void
kvev_publish_removed (KvevPublisher *publisher, const char *tenant_id,
                      const char *object_key, gssize key_len,
                      const char *group_id, KvevMedia media)
{
  g_return_if_fail (publisher != NULL);
  g_return_if_fail (object_key != NULL);

  if (check_media (publisher, G_STRFUNC, media))
    publish_keyed (publisher, G_STRFUNC, tenant_id, object_key, key_len,
                   group_id, media, KVEV_MEDIA_NONE);
}

void
kvev_publish_delta (KvevPublisher *publisher, const char *tenant_id,
                    const char *object_key, gssize key_len,
                    const char *group_id, KvevMedia media_before,
                    KvevMedia media_after)
{
  g_return_if_fail (publisher != NULL);
  g_return_if_fail (object_key != NULL);

  if (check_media (publisher, G_STRFUNC, media_before)
      && check_media (publisher, G_STRFUNC, media_after))
    publish_keyed (publisher, G_STRFUNC, tenant_id, object_key, key_len,
                   group_id, media_before & ~media_after,
                   media_after & ~media_before);
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
      reject (publisher, function, "tenant longer than 1 MiB");
      return FALSE;
    }
  if (G_UNLIKELY (skipped_non_utf8 (publisher, tenant_id, tenant_len, NULL, 0, NULL, 0)))
    {
      if (publisher->enabled)
        kvev_counter_add (&publisher->skipped_non_utf8_events, 1);
      return FALSE;
    }
  if (!publisher->enabled)
    return TRUE;
  if (G_UNLIKELY (!g_atomic_int_get (&publisher->accepting)))
    return FALSE;

  /* cleared is tenant-scoped: emit_object_key does not apply. */
  kvev_queue_push (publisher->queue,
                   kvev_call_new_cleared (tenant_id, tenant_len));
  return TRUE;
}

void
kvev_publish_cleared (KvevPublisher *publisher, const char *tenant_id)
{
  g_return_if_fail (publisher != NULL);

  publish_cleared (publisher, G_STRFUNC, tenant_id);
}

KvevClearScope *
kvev_clear_begin (KvevPublisher *publisher, const char *tenant_id)
{
  KvevClearScope *scope;

  g_return_val_if_fail (publisher != NULL, NULL);

  scope = g_new0 (KvevClearScope, 1);
  scope->publisher = publisher;
  scope->tenant_id = g_strdup (tenant_id);
  return scope;
}

void
kvev_clear_object_removed (KvevClearScope *scope, const char *object_key,
                           gssize key_len, const char *group_id,
                           KvevMedia media_before)
{
  g_return_if_fail (scope != NULL);
  g_return_if_fail (object_key != NULL);

  if (!check_media (scope->publisher, G_STRFUNC, media_before))
    return;
  /* The object counts as held even when it had no tier left: the removal
   * loop accepted it, which is what the cleared decision rests on. */
  scope->removed_objects++;
  publish_keyed (scope->publisher, G_STRFUNC, scope->tenant_id, object_key,
                 key_len, group_id, media_before, KVEV_MEDIA_NONE);
}

void
kvev_clear_skipped (KvevClearScope *scope, KvevSkipReason reason)
{
  g_return_if_fail (scope != NULL);

  /* Every skip holds the cleared back, also one for a reason newer than
   * this library (the enum only grows): it counts as OTHER. */
  if ((guint) reason >= KVEV_N_SKIP_REASONS)
    reason = KVEV_SKIP_OTHER;
  scope->skipped_objects++;
  if (scope->publisher->enabled)
    kvev_counter_add (&scope->publisher->skipped_by_reason[reason], 1);
}

gboolean
kvev_clear_end (KvevClearScope *scope)
{
  KvevPublisher *publisher;
  gboolean clear;

  g_return_val_if_fail (scope != NULL, FALSE);

  publisher = scope->publisher;
  /* A tenant that held nothing, or a RemoveAll that left an object
   * behind, must not tell indexers that the tenant is empty. */
  clear = scope->removed_objects > 0 && scope->skipped_objects == 0
          && publish_cleared (publisher, G_STRFUNC, scope->tenant_id);
  if (!clear && publisher->enabled)
    kvev_counter_add (&publisher->cleared_suppressed, 1);
  g_free (scope->tenant_id);
  g_free (scope);
  return clear;
}
