/* state.h: the cache availability a subscriber rebuilds from events, as
 * a set of (backend_id, tenant_id, object_key, medium).  stored adds,
 * removed takes away (a removed for something never stored is fine),
 * cleared takes away every entry of its backend and tenant; a snapshot
 * replaces everything known of its backend.  The members are kept as the
 * decoder renders them, in JSON.  Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVT_STATE_H
#define KVT_STATE_H

#include <glib.h>

#include "decode.h"

G_BEGIN_DECLS

typedef struct _KvtState KvtState;

KvtState *kvt_state_new (void);
void kvt_state_free (KvtState *state);

/* Applies one decoded event.  FALSE, with nothing changed, when the event
 * does not say what it is about (a vLLM tagged event, or a map without
 * backend_id, tenant_id, or a stored or removed without object_key and
 * medium). */
gboolean kvt_state_apply (KvtState *state, const KvtEvent *event);

/* Replaces every entry of backend (as JSON) with those of snapshot, which
 * is emptied. */
void kvt_state_replace_backend (KvtState *state, const char *backend, KvtState *snapshot);

guint kvt_state_size (const KvtState *state);

/* One JSON object a line, {"backend_id", "tenant_id", "object_key",
 * "medium"}, in a stable order.  Written in place, not replaced: the path
 * may be a FIFO or /dev/stdout. */
gboolean kvt_state_write (const KvtState *state, const char *path, GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (KvtState, kvt_state_free)

G_END_DECLS

#endif /* KVT_STATE_H */
