/* mpread.c: the msgpack reader; see mpread.h.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include <base/mpread.h>

#include <string.h>

void
kvev_mp_reader_init (KvevMpReader *reader, const void *data, gsize len)
{
  reader->data = data;
  reader->len = len;
  reader->pos = 0;
  reader->status = KVEV_MP_OK;
}

gboolean
kvev_mp_fail (KvevMpReader *reader, KvevMpStatus status)
{
  if (reader->status == KVEV_MP_OK)
    reader->status = status;
  return FALSE;
}

static gboolean
take (KvevMpReader *reader, gsize n, const guint8 **bytes)
{
  if (reader->len - reader->pos < n)
    return kvev_mp_fail (reader, KVEV_MP_TRUNCATED);
  *bytes = reader->data + reader->pos;
  reader->pos += n;
  return TRUE;
}

static gboolean
take_be (KvevMpReader *reader, guint n, guint64 *value)
{
  const guint8 *bytes;
  guint i;

  if (!take (reader, n, &bytes))
    return FALSE;
  *value = 0;
  for (i = 0; i < n; i++)
    *value = (*value << 8) | bytes[i];
  return TRUE;
}

static gboolean
take_payload (KvevMpReader *reader, gsize n, KvevMpItem *item)
{
  const guint8 *bytes;

  if (!take (reader, n, &bytes))
    return FALSE;
  item->bytes = (const char *) bytes;
  item->size = n;
  return TRUE;
}

/* A container promises elements that each take at least one byte, so a
 * count beyond the bytes left is a lie told by a truncated or hostile
 * input, refused before anything loops over it. */
static gboolean
set_count (KvevMpReader *reader, KvevMpItem *item, KvevMpType type, guint64 count)
{
  gsize left = reader->len - reader->pos;

  if ((type == KVEV_MP_ARRAY && count > left) || (type == KVEV_MP_MAP && count > left / 2))
    return kvev_mp_fail (reader, KVEV_MP_TRUNCATED);
  item->type = type;
  item->size = (gsize) count;
  return TRUE;
}

static gint64
sign_extend (guint64 value, guint bytes)
{
  guint shift = 64 - 8 * bytes;

  return (gint64) (value << shift) >> shift;
}

gboolean
kvev_mp_read_item (KvevMpReader *reader, KvevMpItem *item)
{
  const guint8 *head;
  guint64 value;
  guint8 byte;

  memset (item, 0, sizeof *item);
  if (!take (reader, 1, &head))
    return FALSE;
  byte = head[0];

  if (byte <= 0x7f)
    {
      item->type = KVEV_MP_UINT;
      item->uint_value = byte;
      return TRUE;
    }
  if (byte >= 0xe0)
    {
      item->type = KVEV_MP_INT;
      item->int_value = (gint8) byte;
      return TRUE;
    }
  if ((byte & 0xf0) == 0x80)
    return set_count (reader, item, KVEV_MP_MAP, byte & 0x0f);
  if ((byte & 0xf0) == 0x90)
    return set_count (reader, item, KVEV_MP_ARRAY, byte & 0x0f);
  if ((byte & 0xe0) == 0xa0)
    {
      item->type = KVEV_MP_STR;
      return take_payload (reader, byte & 0x1f, item);
    }

  switch (byte)
    {
    case 0xc0:
      item->type = KVEV_MP_NIL;
      return TRUE;
    case 0xc2:
    case 0xc3:
      item->type = KVEV_MP_BOOL;
      item->boolean = byte == 0xc3;
      return TRUE;
    case 0xc4:
    case 0xc5:
    case 0xc6:
      item->type = KVEV_MP_BIN;
      return take_be (reader, 1u << (byte - 0xc4), &value)
             && take_payload (reader, (gsize) value, item);
    case 0xc7:
    case 0xc8:
    case 0xc9:
      {
        const guint8 *type;

        item->type = KVEV_MP_EXT;
        if (!take_be (reader, 1u << (byte - 0xc7), &value) || !take (reader, 1, &type))
          return FALSE;
        item->ext_type = (gint8) type[0];
        return take_payload (reader, (gsize) value, item);
      }
    case 0xca:
      {
        guint32 bits;
        float f;

        if (!take_be (reader, 4, &value))
          return FALSE;
        bits = (guint32) value;
        memcpy (&f, &bits, sizeof f);
        item->type = KVEV_MP_FLOAT;
        item->float_value = f;
        return TRUE;
      }
    case 0xcb:
      if (!take_be (reader, 8, &value))
        return FALSE;
      item->type = KVEV_MP_FLOAT;
      memcpy (&item->float_value, &value, sizeof item->float_value);
      return TRUE;
    case 0xcc:
    case 0xcd:
    case 0xce:
    case 0xcf:
      item->type = KVEV_MP_UINT;
      return take_be (reader, 1u << (byte - 0xcc), &item->uint_value);
    case 0xd0:
    case 0xd1:
    case 0xd2:
    case 0xd3:
      item->type = KVEV_MP_INT;
      if (!take_be (reader, 1u << (byte - 0xd0), &value))
        return FALSE;
      item->int_value = sign_extend (value, 1u << (byte - 0xd0));
      return TRUE;
    case 0xd4:
    case 0xd5:
    case 0xd6:
    case 0xd7:
    case 0xd8:
      {
        const guint8 *type;

        item->type = KVEV_MP_EXT;
        if (!take (reader, 1, &type))
          return FALSE;
        item->ext_type = (gint8) type[0];
        return take_payload (reader, (gsize) 1 << (byte - 0xd4), item);
      }
    case 0xd9:
    case 0xda:
    case 0xdb:
      item->type = KVEV_MP_STR;
      return take_be (reader, 1u << (byte - 0xd9), &value)
             && take_payload (reader, (gsize) value, item);
    case 0xdc:
    case 0xdd:
      return take_be (reader, 2u << (byte - 0xdc), &value)
             && set_count (reader, item, KVEV_MP_ARRAY, value);
    case 0xde:
    case 0xdf:
      return take_be (reader, 2u << (byte - 0xde), &value)
             && set_count (reader, item, KVEV_MP_MAP, value);
    default:
      return kvev_mp_fail (reader, KVEV_MP_INVALID);
    }
}

gboolean
kvev_mp_is_number (const KvevMpItem *item)
{
  return item->type == KVEV_MP_UINT || item->type == KVEV_MP_INT || item->type == KVEV_MP_FLOAT;
}

gboolean
kvev_mp_get_uint (const KvevMpItem *item, guint64 *value)
{
  if (item->type == KVEV_MP_UINT)
    *value = item->uint_value;
  else if (item->type == KVEV_MP_INT && item->int_value >= 0)
    *value = (guint64) item->int_value;
  else
    return FALSE;
  return TRUE;
}

gboolean
kvev_mp_is_str (const KvevMpItem *item, const char *text)
{
  gsize len = strlen (text);

  return item->type == KVEV_MP_STR && item->size == len && memcmp (item->bytes, text, len) == 0;
}

/* The bytes an item's header says follow it, for kvev_mp_skip (): its
 * own payload, or in *elements the items a container holds.  FALSE for
 * 0xc1, or a header cut short. */
static gboolean
header_size (const guint8 *p, gsize left, gsize *head, guint64 *payload, guint64 *elements)
{
  guint8 byte = p[0];
  guint n = 0, i;
  guint64 value = 0;

  *payload = 0;
  *elements = 0;
  *head = 1;
  if (byte <= 0x7f || byte >= 0xe0 || byte == 0xc0 || byte == 0xc2 || byte == 0xc3)
    return TRUE;
  if ((byte & 0xe0) == 0xa0)
    {
      *payload = byte & 0x1f;
      return TRUE;
    }
  if ((byte & 0xf0) == 0x80)
    {
      *elements = (guint64) (byte & 0x0f) * 2;
      return TRUE;
    }
  if ((byte & 0xf0) == 0x90)
    {
      *elements = byte & 0x0f;
      return TRUE;
    }
  switch (byte)
    {
    case 0xc4:
    case 0xc5:
    case 0xc6: /* bin 8-32 */
      n = 1u << (byte - 0xc4);
      break;
    case 0xc7:
    case 0xc8:
    case 0xc9: /* ext 8-32: then the type */
      n = 1u << (byte - 0xc7);
      *payload = 1;
      break;
    case 0xca:
      *payload = 4;
      return TRUE;
    case 0xcb:
      *payload = 8;
      return TRUE;
    case 0xcc:
    case 0xcd:
    case 0xce:
    case 0xcf:
      *payload = 1u << (byte - 0xcc);
      return TRUE;
    case 0xd0:
    case 0xd1:
    case 0xd2:
    case 0xd3:
      *payload = 1u << (byte - 0xd0);
      return TRUE;
    case 0xd4:
    case 0xd5:
    case 0xd6:
    case 0xd7:
    case 0xd8: /* fixext: type, data */
      *payload = 1 + ((guint64) 1 << (byte - 0xd4));
      return TRUE;
    case 0xd9:
    case 0xda:
    case 0xdb: /* str 8-32 */
      n = 1u << (byte - 0xd9);
      break;
    case 0xdc:
    case 0xdd: /* array 16, 32 */
    case 0xde:
    case 0xdf: /* map 16, 32 */
      n = 2u << ((byte - 0xdc) & 1);
      break;
    default:
      return FALSE;
    }
  if (left < 1 + (gsize) n)
    return FALSE;
  for (i = 0; i < n; i++)
    value = (value << 8) | p[1 + i];
  *head = 1 + n;
  if (byte >= 0xdc)
    *elements = byte >= 0xde ? value * 2 : value;
  else
    *payload += value;
  return TRUE;
}

/* Iterative, with a stack of the elements each open container still
 * owes: the depth bound keeps the stack small and fixed.  It reads only
 * headers, without filling a KvevMpItem, since every message is walked so
 * before any of it is delivered. */
gboolean
kvev_mp_skip (KvevMpReader *reader, guint depth)
{
  guint64 owed[KVEV_MP_MAX_DEPTH + 2];
  guint top = 0;

  if (depth > KVEV_MP_MAX_DEPTH)
    return kvev_mp_fail (reader, KVEV_MP_TOO_DEEP);
  owed[0] = 1;
  for (;;)
    {
      gsize left = reader->len - reader->pos, head;
      guint64 payload, elements;

      while (top > 0 && owed[top] == 0)
        top--;
      if (top == 0 && owed[0] == 0)
        return TRUE;
      if (left == 0)
        return kvev_mp_fail (reader, KVEV_MP_TRUNCATED);
      if (!header_size (reader->data + reader->pos, left, &head, &payload, &elements))
        return kvev_mp_fail (reader, reader->data[reader->pos] == 0xc1 ? KVEV_MP_INVALID
                                                                       : KVEV_MP_TRUNCATED);
      /* A payload or a count beyond the bytes left is a lie told by a
       * truncated or hostile input, refused before anything loops over
       * it: every element takes at least one byte. */
      if (payload > left - head || elements > left - head)
        return kvev_mp_fail (reader, KVEV_MP_TRUNCATED);
      reader->pos += head + (gsize) payload;
      owed[top]--;
      if (elements > 0)
        {
          if (depth + top + 1 > KVEV_MP_MAX_DEPTH)
            return kvev_mp_fail (reader, KVEV_MP_TOO_DEEP);
          owed[++top] = elements;
        }
    }
}

gboolean
kvev_mp_skip_elements (KvevMpReader *reader, const KvevMpItem *item, guint depth)
{
  gsize n = item->type == KVEV_MP_MAP     ? item->size * 2
            : item->type == KVEV_MP_ARRAY ? item->size
                                          : 0;
  gsize i;

  for (i = 0; i < n; i++)
    if (!kvev_mp_skip (reader, depth + 1))
      return FALSE;
  return TRUE;
}
