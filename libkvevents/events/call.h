/* call.h: one publish call's events, as the hot path queues them, and the
 * one-event view the encoder reads.
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEVENTS_CALL_H
#define KVEVENTS_CALL_H

#include "internal.h"
#include "media.h"

G_BEGIN_DECLS

typedef enum
{
  KVEV_EVENT_STORED,
  KVEV_EVENT_REMOVED,
  KVEV_EVENT_CLEARED,
} KvevEventType;

/* removed and stored for two tiers each: the most one call produces. */
#define KVEV_MAX_EVENTS_PER_CALL 4

/* Keys longer than this are refused: a Store key is a name, not a value. */
#define KVEV_MAX_KEY_LEN (1024 * 1024)

/* One call's events travel through the queue as one item: one allocation
 * and one push however many tiers the call names, which is what keeps a
 * two-tier call near the cost of a one-tier call.  The events are, in
 * order, removed for the tiers in removed (cpu first), then stored for the
 * tiers in stored; a cleared call is one event and names no tier (both
 * sets empty, which a keyed call never has).
 *
 * The strings follow the header, back to back: tenant (tenant_len bytes),
 * then key, then group.  A length of 0 means the wire default: tenant
 * "default", key and group absent (cleared) or group nil.  Strings are
 * not NUL-terminated.
 *
 * The header stays at 24 bytes so that a one-tier call with a 40-byte key
 * still fits malloc's 80-byte chunk. */
typedef struct
{
  /* Of the call's first event; the others follow one by one.  Given
   * under the queue lock when the call is accepted. */
  guint64 first_event_id;
  guint32 tenant_len;
  guint32 key_len;
  guint32 group_len;
  guint8 removed;  /* KvevMedia */
  guint8 stored;   /* KvevMedia */
  guint8 n_events; /* dropped ones included: the queue and worker ask often */
  /* Leading events a full queue dropped: they are gone, the rest is
   * still queued.  Changed only under the queue lock. */
  guint8 dropped;
  char strings[];
} KvevCall;

/* One event of a call, as it goes into a message. */
typedef struct
{
  const KvevCall *call;
  guint64 event_id;
  guint8 type;   /* KvevEventType */
  guint8 medium; /* one KvevMedia bit; KVEV_MEDIA_NONE for cleared */
  /* Some string of the call is not UTF-8 (kvev_call_is_utf8(), asked
   * once per call): the encoder then looks at each string, and sends as
   * bin those that are not. */
  guint8 not_utf8;
} KvevEvent;

static inline const char *
kvev_call_tenant (const KvevCall *call)
{
  return call->strings;
}

static inline const char *
kvev_call_key (const KvevCall *call)
{
  return call->strings + call->tenant_len;
}

static inline const char *
kvev_call_group (const KvevCall *call)
{
  return call->strings + call->tenant_len + call->key_len;
}

/* Allocates one call with copies of the strings (lengths already checked
 * by the caller); free with g_free().  removed and stored must not both be
 * KVEV_MEDIA_NONE. */
KvevCall *kvev_call_new_keyed (KvevMedia removed, KvevMedia stored, const char *tenant,
                               gsize tenant_len, const char *key, gsize key_len, const char *group,
                               gsize group_len);

KvevCall *kvev_call_new_cleared (const char *tenant, gsize tenant_len);

static inline gboolean
kvev_call_is_cleared (const KvevCall *call)
{
  return (call->removed | call->stored) == KVEV_MEDIA_NONE;
}

/* Writes the call's events from the index-th on into events, in order;
 * returns how many.  Their not_utf8 is not_utf8. */
guint kvev_call_events (const KvevCall *call, guint index, gboolean not_utf8, KvevEvent *events);

/* Whether every string of the call is valid UTF-8 (embedded NULs
 * allowed).  Each event of a call that is not travels in a message of its
 * own, with those strings as msgpack bin. */
gboolean kvev_call_is_utf8 (const KvevCall *call);

G_END_DECLS

#endif /* KVEVENTS_CALL_H */
