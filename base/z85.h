/* z85.h: CURVE keys in ZeroMQ's Z85 text form.  Written out rather than
 * taken from libzmq, so that a key validates the same in the
 * --without-zmq build; pure, with no state and no messages, so the tools
 * share it (libkvbase.la).
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEVENTS_Z85_H
#define KVEVENTS_Z85_H

#include <glib.h>

G_BEGIN_DECLS

/* A CURVE key: 32 bytes, written as 40 Z85 characters. */
#define KVEV_Z85_KEY_LEN 40
#define KVEV_KEY_BYTES 32

/* Decodes exactly 40 Z85 characters into 32 bytes; FALSE if z85 is not
 * that (another length, a character outside the alphabet, a group over
 * 2^32 - 1), and then key may hold part of a result. */
gboolean kvev_z85_decode_key (const char *z85, guint8 key[KVEV_KEY_BYTES]);

G_END_DECLS

#endif /* KVEVENTS_Z85_H */
