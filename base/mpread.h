/* mpread.h: a small msgpack reader that reads only inside the bytes it is
 * given, never allocates and bounds nothing by itself: a caller that
 * walks containers passes a depth and stops at KVEV_MP_MAX_DEPTH.
 * Shared by kvevents-sub's printer (tools/common/decode.c) and the
 * library's subscriber (libkvevents/sub/decode.c).  No messages of its
 * own: a failure is a status the caller words.
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEVENTS_MPREAD_H
#define KVEVENTS_MPREAD_H

#include <glib.h>

G_BEGIN_DECLS

/* Deeper nesting is refused: a few bytes of [[[[... would otherwise
 * exhaust the stack.  Real events nest three or four levels. */
#define KVEV_MP_MAX_DEPTH 64

typedef enum
{
  KVEV_MP_NIL,
  KVEV_MP_BOOL,
  KVEV_MP_UINT, /* positive fixint and uint 8-64 */
  KVEV_MP_INT,  /* negative fixint and int 8-64 */
  KVEV_MP_FLOAT,
  KVEV_MP_STR,
  KVEV_MP_BIN,
  KVEV_MP_ARRAY,
  KVEV_MP_MAP,
  KVEV_MP_EXT,
} KvevMpType;

typedef struct
{
  KvevMpType type;
  gboolean boolean;
  guint64 uint_value;
  gint64 int_value;
  double float_value;
  const char *bytes; /* str, bin and ext payload, inside the input */
  gsize size;        /* payload bytes; elements of an array; pairs of a map */
  gint8 ext_type;
} KvevMpItem;

typedef enum
{
  KVEV_MP_OK,
  KVEV_MP_TRUNCATED,
  KVEV_MP_INVALID, /* the one byte msgpack never uses, 0xc1 */
  KVEV_MP_TOO_DEEP,
} KvevMpStatus;

typedef struct
{
  const guint8 *data;
  gsize len;
  gsize pos;
  KvevMpStatus status; /* the first failure, kept for the message */
} KvevMpReader;

void kvev_mp_reader_init (KvevMpReader *reader, const void *data, gsize len);

/* Records the first failure; always FALSE, for "return kvev_mp_fail ()". */
gboolean kvev_mp_fail (KvevMpReader *reader, KvevMpStatus status);

/* Reads one item's header, and the payload of a str, bin or ext.  The
 * elements of an array or a map are left for the caller.  A container
 * that promises more elements than bytes are left is refused. */
gboolean kvev_mp_read_item (KvevMpReader *reader, KvevMpItem *item);

/* Walks one whole value (depth: the nesting the caller is at). */
gboolean kvev_mp_skip (KvevMpReader *reader, guint depth);

/* Walks the elements (pairs) of the array (map) whose header item is;
 * nothing for another item. */
gboolean kvev_mp_skip_elements (KvevMpReader *reader, const KvevMpItem *item, guint depth);

gboolean kvev_mp_is_number (const KvevMpItem *item);
/* A uint, or an int that is not negative. */
gboolean kvev_mp_get_uint (const KvevMpItem *item, guint64 *value);
/* A str of exactly these bytes. */
gboolean kvev_mp_is_str (const KvevMpItem *item, const char *text);

G_END_DECLS

#endif /* KVEVENTS_MPREAD_H */
