/* kvtool.h: small helpers shared by the command-line tools and the
 * programs the tests run (tools/common/libkvtool.la).  Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVTOOL_H
#define KVTOOL_H

#include <glib.h>

G_BEGIN_DECLS

/* Exit statuses shared by the tools. */
#define KVT_EXIT_OK 0
#define KVT_EXIT_FAILURE 1 /* something went wrong while running */
#define KVT_EXIT_USAGE 2   /* the command line or configuration is wrong */

/* The tools' own errors, for what is not the library's. */
#define KVT_ERROR (kvt_error_quark ())
GQuark kvt_error_quark (void);

typedef enum
{
  KVT_ERROR_FAILED, /* KVT_EXIT_FAILURE */
  KVT_ERROR_USAGE,  /* KVT_EXIT_USAGE */
} KvtError;

/* Sets the locale from the environment and makes the tools' text domain
 * the program's, read from LOCALEDIR or from $KVEVENTS_LOCALEDIR, where
 * the library's is then read from too. */
void kvt_init_i18n (void);

/* Writes text to path in place, not replacing it: the path may be a
 * symbolic link, a FIFO or /dev/stdout, which a write-and-rename would
 * replace.  FALSE with error set when any of it could not be written. */
gboolean kvt_write_in_place (const char *path, const GString *text, GError **error);

/* Appends len bytes as lowercase hexadecimal digits. */
void kvt_append_hex (GString *out, const void *data, gsize len);

/* Appends len bytes of valid UTF-8 (kvev_bytes_are_utf8 (): NULs
 * included) as a JSON string, quotes included, escaping what RFC 8259
 * requires. */
void kvt_json_append_utf8 (GString *out, const char *data, gsize len);

/* Appends bytes the way the tools print every byte string: valid UTF-8
 * that arrived as text becomes a JSON string, anything else
 * {"hex": "..."}, with "invalid_utf8": true when it was meant as text. */
void kvt_json_append_bytes (GString *out, const char *data, gsize len, gboolean is_text);

/* Parses a whole decimal number into a guint64 within [min, max]; no sign,
 * no spaces, no trailing garbage. */
gboolean kvt_parse_uint (const char *text, guint64 min, guint64 max, guint64 *value);

G_END_DECLS

#endif /* KVTOOL_H */
