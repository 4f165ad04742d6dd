/* quote.h: a string as a quoted JSON string or OpenMetrics label value,
 * for the publisher's and the subscriber's statistics alike.
 * Pure, with no state and no messages (libkvbase.la).
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEVENTS_QUOTE_H
#define KVEVENTS_QUOTE_H

#include <glib.h>

G_BEGIN_DECLS

/* @text between double quotes, with quotes, backslashes and newlines
 * escaped, other control characters as \uXXXX for JSON (@json) or as a
 * space for OpenMetrics, which has no such escape, and bytes that are
 * not UTF-8 replaced.  A string to g_free ().  It allocates with
 * g_malloc () alone, never GString, so a forked child may call it while
 * GLib's slice allocator is locked (kvevents(7), THE MASTER'S PROCESS). */
char *kvev_quote (const char *text, gboolean json);

G_END_DECLS

#endif /* KVEVENTS_QUOTE_H */
