/* transport-none.c: the transport of a library built --without-zmq.
 * kvev_has_transport() is FALSE there, so kvev_publisher_new() never asks
 * for one; these bodies only keep the same code linking in both builds.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "publisher-private.h"

KvevTransport *
kvev_transport_start (KvevPublisher *publisher, char **endpoint,
                      GError **error)
{
  g_set_error_literal (error, KVEV_ERROR, KVEV_ERROR_TRANSPORT,
                       _("This libkvevents was built without a transport"));
  return NULL;
}

void
kvev_transport_stop (KvevTransport *transport, gint64 deadline)
{
}
