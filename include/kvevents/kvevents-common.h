/* kvevents-common.h: export macro, version, errors.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEVENTS_COMMON_H
#define KVEVENTS_COMMON_H

#if !defined(KVEVENTS_H_INSIDE) && !defined(KVEVENTS_COMPILATION)
#error "Only <kvevents/kvevents.h> can be included directly."
#endif

#include <glib.h>

G_BEGIN_DECLS

/**
 * KVEV_API:
 *
 * Marks a function exported from libkvevents.  Everything else in the
 * library is hidden (built with -fvisibility=hidden and a version script).
 */
#if defined(__GNUC__) && __GNUC__ >= 4
#define KVEV_API __attribute__ ((visibility ("default"))) extern
#else
#define KVEV_API extern
#endif

/**
 * kvev_version:
 *
 * The version of the library that is running, as "MAJOR.MINOR.MICRO".  It
 * matches KVEV_VERSION_MAJOR, KVEV_VERSION_MINOR and KVEV_VERSION_MICRO of
 * the headers it was built with.
 *
 * Returns: (transfer none): a static string owned by the library.
 * Thread-safe.
 */
KVEV_API const char *kvev_version (void);

/**
 * kvev_has_transport:
 *
 * Whether this build can publish.  A library configured --without-zmq
 * keeps the same ABI, but every publisher it creates is disabled and every
 * event call is a no-op.
 *
 * Returns: %TRUE when built with the ZeroMQ transport.
 * Thread-safe.
 */
KVEV_API gboolean kvev_has_transport (void);

/**
 * KVEV_ERROR:
 *
 * The #GError domain of libkvevents; codes are #KvevError.
 */
#define KVEV_ERROR (kvev_error_quark ())

/**
 * KvevError:
 * @KVEV_ERROR_UNKNOWN_FLAG: a flag name that is not in the table.
 * @KVEV_ERROR_INVALID_VALUE: a value that does not parse or is out of range.
 * @KVEV_ERROR_INCOMPLETE: events are enabled, but a required flag is empty.
 * @KVEV_ERROR_TRANSPORT: the socket could not be created or bound, or the
 *   worker thread could not be started.
 *
 * Error codes in the %KVEV_ERROR domain.  Values are ABI: new codes are
 * only ever appended.
 */
typedef enum
{
  KVEV_ERROR_UNKNOWN_FLAG = 0,
  KVEV_ERROR_INVALID_VALUE = 1,
  KVEV_ERROR_INCOMPLETE = 2,
  KVEV_ERROR_TRANSPORT = 3,
} KvevError;

/**
 * kvev_error_quark:
 *
 * The error domain of libkvevents, for g_error_matches(); %KVEV_ERROR
 * calls it.
 *
 * Returns: the quark of the %KVEV_ERROR domain.
 * Thread-safe.
 */
KVEV_API GQuark kvev_error_quark (void);

G_END_DECLS

#endif /* KVEVENTS_COMMON_H */
