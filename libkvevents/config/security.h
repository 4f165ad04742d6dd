/* security.h: the opt-in protections of the event stream: CURVE keys, the
 * allowed client keys and the allowed peer addresses, read and checked
 * from the configuration.  Parsing is transport-free, so a configuration
 * validates the same in the --without-zmq build.
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEVENTS_SECURITY_H
#define KVEVENTS_SECURITY_H

#include "internal.h"
#include "endpoint.h"
#include <base/secret.h>
#include <base/z85.h>

G_BEGIN_DECLS

typedef struct
{
  int family; /* AF_INET or AF_INET6 */
  guint8 bytes[16];
  guint prefix;
} KvevAddressRange;

typedef struct
{
  /* Empty when CURVE is off. */
  char secret_key[KVEV_Z85_KEY_LEN + 1];
  /* Binary public keys of the allowed clients; NULL when any client with
   * the server key may subscribe. */
  GHashTable *allowed_clients;
  /* NULL when any address may connect. */
  GArray *allowed_addresses;
} KvevSecurity;

/* Reads and checks the security flags: kv_events_curve_secret_key_file,
 * kv_events_curve_allowed_clients_file and kv_events_allowed_addresses,
 * each "" when not set, for a publisher bound to @bind_endpoint.  Returns
 * NULL with a KVEV_ERROR naming the flag (and the line of a file) when
 * one is wrong.  With no security flag set, returns an empty policy. */
KvevSecurity *kvev_security_load (const char *secret_key_file, const char *allowed_clients_file,
                                  const char *allowed_addresses, const KvevEndpoint *bind_endpoint,
                                  GError **error);
void kvev_security_free (KvevSecurity *security);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (KvevSecurity, kvev_security_free)

/* Whether a peer address as ZeroMQ's ZAP reports it ("127.0.0.1",
 * "::1", "::ffff:10.0.0.1") is allowed. */
gboolean kvev_security_address_allowed (const KvevSecurity *security, const char *address);

/* One warning when the stream would be open to any host: an endpoint
 * that binds every interface (kvev_endpoint_is_wildcard ()) with neither
 * CURVE nor an address allow-list. */
void kvev_security_warn_if_exposed (const KvevEndpoint *bind_endpoint,
                                    const KvevSecurity *security);

G_END_DECLS

#endif /* KVEVENTS_SECURITY_H */
