/* secret.h: clearing memory that held a secret key.  Pure, with no
 * state and no messages, so the tools share it (libkvbase.la).
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEVENTS_SECRET_H
#define KVEVENTS_SECRET_H

#include <glib.h>

G_BEGIN_DECLS

/* Clears len bytes that held a secret, in a way the compiler does not
 * drop as a dead store before a free or the end of a scope. */
void kvev_secret_wipe (void *data, gsize len);

G_END_DECLS

#endif /* KVEVENTS_SECRET_H */
