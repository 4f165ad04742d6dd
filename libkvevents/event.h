/* event.h: one queued event, as the hot path builds it.
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEVENTS_EVENT_H
#define KVEVENTS_EVENT_H

#include "kvevents-private.h"

G_BEGIN_DECLS

typedef enum
{
  KVEV_EVENT_STORED,
  KVEV_EVENT_REMOVED,
  KVEV_EVENT_CLEARED,
} KvevEventType;

/* One allocation holds the event and its strings, back to back in
 * strings[]: tenant (tenant_len bytes), then key, then group.  A length
 * of 0 means the wire default: tenant "default", key and group absent
 * (cleared) or group nil.  Strings are not NUL-terminated.  The event_id
 * is assigned under the queue lock when the event is accepted. */
typedef struct
{
  guint64 event_id;
  guint32 tenant_len;
  guint32 key_len;
  guint32 group_len;
  guint8 type;   /* KvevEventType */
  guint8 medium; /* one KvevMedia bit; KVEV_MEDIA_NONE for cleared */
  char strings[];
} KvevEvent;

static inline const char *
kvev_event_tenant (const KvevEvent *event)
{
  return event->strings;
}

static inline const char *
kvev_event_key (const KvevEvent *event)
{
  return event->strings + event->tenant_len;
}

static inline const char *
kvev_event_group (const KvevEvent *event)
{
  return event->strings + event->tenant_len + event->key_len;
}

/* Allocates one event with copies of the strings (lengths already
 * checked by the caller); free with g_free(). */
KvevEvent *kvev_event_new (KvevEventType type, KvevMedia medium,
                           const char *tenant, gsize tenant_len,
                           const char *key, gsize key_len, const char *group,
                           gsize group_len);

G_END_DECLS

#endif /* KVEVENTS_EVENT_H */
