/* socket.h: what the tools do alike on their ZeroMQ sockets: set an
 * integer option with an error that names it, and take a multipart
 * message whole.  Only in a build with the transport.  Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVT_SOCKET_H
#define KVT_SOCKET_H

#include <glib.h>

G_BEGIN_DECLS

/* zmq_setsockopt () of an int; FALSE with a KVT_ERROR_FAILED naming the
 * option (name, such as "ZMQ_LINGER") when ZeroMQ refuses it. */
gboolean kvt_socket_set_int (void *socket, int option, const char *name, int value, GError **error);

/* Appends the parts of one message (zmq_msg_t, owned by the array) to
 * parts, without waiting for a first one.  FALSE when none was waiting.
 * The parts of a message arrive together, so only the first can be
 * missing; should a later one fail, the parts received are kept. */
gboolean kvt_socket_receive_parts (void *socket, GArray *parts);

/* Closes every part of parts and empties it. */
void kvt_parts_clear (GArray *parts);

/* An array for kvt_socket_receive_parts (). */
GArray *kvt_parts_new (void);

G_END_DECLS

#endif /* KVT_SOCKET_H */
