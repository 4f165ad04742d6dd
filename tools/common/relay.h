/* relay.h: --wait-subscribers for programs that publish through
 * libkvevents (kvevents-pub, and tests/oracle-master for the tests).
 *
 * A PUB socket drops what it sends before a subscriber's subscription has
 * arrived, so a test that starts publishing as soon as it can loses the
 * first events.  The library owns its socket and tells nobody about
 * subscriptions, so the waiting is done in front of it: the relay binds the
 * endpoint subscribers connect to with an XPUB socket of its own, which
 * hands it every subscription, and the library binds a private ipc
 * endpoint that only the relay reads.  The relay proves its own link to the
 * library by publishing probe events (cleared for tenant
 * KVT_RELAY_PROBE_TENANT) until one comes through, waits for the
 * subscriptions, and then passes on the last probe followed by everything
 * else, frames untouched: subscribers see the library's stream from its
 * first real message on, with a baseline sequence and event_id before it.
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVT_RELAY_H
#define KVT_RELAY_H

#include <kvevents/kvevents.h>

G_BEGIN_DECLS

#define KVT_RELAY_PROBE_TENANT "kvevents-relay-probe"

typedef struct _KvtRelay KvtRelay;

/* Creates the publisher for config.  With n_subscribers 0, or when
 * nothing would be published (events disabled, or a library without a
 * transport; a message says the wait is skipped), that is
 * kvev_publisher_new () and *relay is NULL.  Otherwise the relay binds
 * config's endpoint, the publisher a private one, and this returns once
 * n_subscribers subscriptions have arrived; failing that within
 * wait_timeout_ms (negative: no bound) it fails and leaves nothing
 * behind. */
KvevPublisher *kvt_relay_publisher_new (const KvevConfig *config, guint n_subscribers,
                                        gint64 wait_timeout_ms, KvtRelay **relay, GError **error);

/* The endpoint subscribers connect to, wildcards resolved. */
const char *kvt_relay_get_endpoint (const KvtRelay *relay);

/* Call after the last kvev_publisher_flush () and before
 * kvev_publisher_free (): waits up to timeout_ms for the relay to pass on
 * the last message the publisher sent.  TRUE when it did. */
gboolean kvt_relay_finish (KvtRelay *relay, KvevPublisher *publisher, gint64 timeout_ms);

/* Closes the relay, letting its socket deliver for at most the library's
 * kv_events_close_timeout_ms.  NULL is ignored. */
void kvt_relay_free (KvtRelay *relay);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (KvtRelay, kvt_relay_free)

G_END_DECLS

#endif /* KVT_RELAY_H */
