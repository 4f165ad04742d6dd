/* zap.h: the ZeroMQ authentication (ZAP) handler of one publisher.
 * Not installed.  Built only with the transport.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEVENTS_ZAP_H
#define KVEVENTS_ZAP_H

#include "config/security.h"

G_BEGIN_DECLS

typedef struct _KvevZap KvevZap;

/* Binds the context's ZAP endpoint and answers every handshake of its
 * sockets from security (which must outlive the handler).  Must start
 * before the PUB socket binds.  Stopped by kvev_zap_stop(), then
 * zmq_ctx_term() on the context, then kvev_zap_join(): the first lets a
 * handler that cannot receive leave, the second ends a waiting one. */
KvevZap *kvev_zap_start (void *context, const KvevSecurity *security, GError **error);
void kvev_zap_stop (KvevZap *zap);
void kvev_zap_join (KvevZap *zap);

/* How many handshakes the handler refused so far, for their address and
 * for their CURVE client key.  Thread-safe; a NULL zap refused none. */
void kvev_zap_refusals (const KvevZap *zap, guint64 *addresses, guint64 *keys);

G_END_DECLS

#endif /* KVEVENTS_ZAP_H */
