/* call.c: a publish call as one queue item: its layout (call.h), the
 * events it stands for, and whether its strings are UTF-8.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "call.h"
#include <base/utf8.h>

#include <string.h>

/* See call.h: the memory per queued event depends on it. */
G_STATIC_ASSERT (sizeof (KvevCall) <= 24);

static KvevCall *
call_new (KvevMedia removed, KvevMedia stored, const char *tenant, gsize tenant_len,
          const char *key, gsize key_len, const char *group, gsize group_len)
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
  call->n_events = (guint8) MAX (kvev_media_count (removed) + kvev_media_count (stored), 1);
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
kvev_call_new_keyed (KvevMedia removed, KvevMedia stored, const char *tenant, gsize tenant_len,
                     const char *key, gsize key_len, const char *group, gsize group_len)
{
  g_assert ((removed | stored) != KVEV_MEDIA_NONE);
  return call_new (removed, stored, tenant, tenant_len, key, key_len, group, group_len);
}

KvevCall *
kvev_call_new_cleared (const char *tenant, gsize tenant_len)
{
  return call_new (KVEV_MEDIA_NONE, KVEV_MEDIA_NONE, tenant, tenant_len, NULL, 0, NULL, 0);
}

/* A call's tiers as bits, removed then stored, cpu first: */
G_STATIC_ASSERT (KVEV_MEDIA_CPU == 1 && KVEV_MEDIA_DISK == 2);

guint
kvev_call_events (const KvevCall *call, guint index, gboolean not_utf8, KvevEvent *events)
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
      events[0] = (KvevEvent){ call, call->first_event_id, KVEV_EVENT_CLEARED, KVEV_MEDIA_NONE,
                               (guint8) not_utf8 };
      return 1;
    }
  /* Bit i of tiers is order[i]. */
  for (i = 0; i < G_N_ELEMENTS (order); i++)
    if (tiers & (1u << i))
      {
        if (k >= index)
          events[n++] = (KvevEvent){ call, call->first_event_id + k, order[i].type, order[i].medium,
                                     (guint8) not_utf8 };
        k++;
      }
  return n;
}

gboolean
kvev_call_is_utf8 (const KvevCall *call)
{
  return kvev_bytes_are_utf8 (kvev_call_tenant (call), call->tenant_len)
         && kvev_bytes_are_utf8 (kvev_call_key (call), call->key_len)
         && kvev_bytes_are_utf8 (kvev_call_group (call), call->group_len);
}
