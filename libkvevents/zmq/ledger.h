/* ledger.h: the bytes a ROUTER socket holds for its peers, counted until
 * libzmq lets go of them.
 *
 * A message sent to a peer that does not read stays in that peer's pipe:
 * the sender's memory, which only the peer's reading or leaving frees.
 * zmq_msg_init_data()'s free function is the one moment libzmq says it is
 * done with a message's bytes, so a ledger counts a message from the
 * moment it is made until then: the replay and snapshot services bound
 * what one peer, and all of them, may hold before they send more, and
 * learn that a peer has read when its count falls.  A peer's ledger
 * counts in a total as well.  Thread-safe: libzmq frees a message on
 * whichever thread drops it last, an I/O thread or one closing a socket,
 * possibly after the service that sent it is gone, so a message keeps
 * its ledgers alive.
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEVENTS_LEDGER_H
#define KVEVENTS_LEDGER_H

#include <glib.h>
#include <zmq.h>

G_BEGIN_DECLS

typedef struct _KvevLedger KvevLedger;

/* A ledger at 0 bytes that also counts in total (and keeps it alive), or
 * a total of its own when total is NULL. */
KvevLedger *kvev_ledger_new (KvevLedger *total);
KvevLedger *kvev_ledger_ref (KvevLedger *ledger);
void kvev_ledger_unref (KvevLedger *ledger);

/* The bytes of the messages made with it that libzmq still holds. */
gsize kvev_ledger_bytes (const KvevLedger *ledger);

/* Makes message carry size bytes at data, counted in ledger until libzmq
 * frees it, when release (release_data) runs.  FALSE when libzmq cannot
 * (out of memory): nothing is counted and release has run. */
gboolean kvev_ledger_init_data (KvevLedger *ledger, zmq_msg_t *message, void *data, gsize size,
                                GDestroyNotify release, gpointer release_data);

/* The same for the bytes of payload, shared rather than copied: message
 * keeps a copy of payload until libzmq frees it. */
gboolean kvev_ledger_init_shared (KvevLedger *ledger, zmq_msg_t *message, zmq_msg_t *payload);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (KvevLedger, kvev_ledger_unref)

G_END_DECLS

#endif /* KVEVENTS_LEDGER_H */
