/* fuzz-decode.c: kvevents-sub's decoder (tools/decode.h) on any frames.
 *
 * Input: one control byte, then the frames.
 *   control & 7     number of frames handed over: 0 to 4; 5, 6 and 7 mean 3
 *   control & 0x10  no endpoint (NULL) instead of a tcp:// one
 *   control & 0x20  an empty frame has data NULL instead of a pointer
 *   then            topic length (1 byte), topic, sequence length (1 byte),
 *                   sequence, and the payload is the rest.  What the input
 *                   runs out of is empty; a fourth frame is always empty.
 * Each frame is copied into a buffer of its own exact size, so a read past
 * any frame is an AddressSanitizer report, not a read of the next one.
 *
 * Besides crashes and leaks it checks what decode.h promises: a message
 * with an error has no events; every line and message is UTF-8 on one
 * line, and no longer than a fixed multiple of the input ("allocates in
 * proportion to its input": the worst escape, a NUL as \u0000, is 6
 * bytes for 1); a JSON line is one valid JSON object (RFC 8259); both
 * formats decode the same events.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include "decode.h"
#include "fuzz.h"

#include <stdlib.h>
#include <string.h>

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  kvev_fuzz_init ();
  return 0;
}

/* A strict RFC 8259 checker, enough to tell whether a line is JSON. */
typedef struct
{
  const char *p;
  const char *end;
} Json;

#define JSON_MAX_DEPTH 256

static gboolean json_value (Json *json, guint depth);

static void
json_space (Json *json)
{
  while (json->p < json->end
         && (*json->p == ' ' || *json->p == '\t' || *json->p == '\n' || *json->p == '\r'))
    json->p++;
}

static gboolean
json_literal (Json *json, const char *word)
{
  gsize len = strlen (word);

  if ((gsize) (json->end - json->p) < len || memcmp (json->p, word, len) != 0)
    return FALSE;
  json->p += len;
  return TRUE;
}

static gboolean
json_string (Json *json)
{
  if (json->p >= json->end || *json->p != '"')
    return FALSE;
  json->p++;
  while (json->p < json->end)
    {
      guchar c = (guchar) *json->p++;

      if (c == '"')
        return TRUE;
      if (c < 0x20)
        return FALSE;
      if (c == '\\')
        {
          if (json->p >= json->end)
            return FALSE;
          c = (guchar) *json->p++;
          if (c == 'u')
            {
              for (int i = 0; i < 4; i++)
                if (json->p >= json->end || !g_ascii_isxdigit (*json->p++))
                  return FALSE;
            }
          else if (strchr ("\"\\/bfnrt", c) == NULL || c == '\0')
            return FALSE;
        }
    }
  return FALSE;
}

static gboolean
json_digits (Json *json)
{
  const char *start = json->p;

  while (json->p < json->end && g_ascii_isdigit (*json->p))
    json->p++;
  return json->p > start;
}

static gboolean
json_number (Json *json)
{
  if (json->p < json->end && *json->p == '-')
    json->p++;
  if (json->p < json->end && *json->p == '0')
    json->p++;
  else if (!json_digits (json))
    return FALSE;
  if (json->p < json->end && *json->p == '.')
    {
      json->p++;
      if (!json_digits (json))
        return FALSE;
    }
  if (json->p < json->end && (*json->p == 'e' || *json->p == 'E'))
    {
      json->p++;
      if (json->p < json->end && (*json->p == '+' || *json->p == '-'))
        json->p++;
      if (!json_digits (json))
        return FALSE;
    }
  return TRUE;
}

static gboolean
json_container (Json *json, guint depth, char close, gboolean is_object)
{
  json->p++;
  json_space (json);
  if (json->p < json->end && *json->p == close)
    {
      json->p++;
      return TRUE;
    }
  for (;;)
    {
      if (is_object)
        {
          json_space (json);
          if (!json_string (json))
            return FALSE;
          json_space (json);
          if (json->p >= json->end || *json->p++ != ':')
            return FALSE;
        }
      if (!json_value (json, depth + 1))
        return FALSE;
      json_space (json);
      if (json->p >= json->end)
        return FALSE;
      if (*json->p == close)
        {
          json->p++;
          return TRUE;
        }
      if (*json->p++ != ',')
        return FALSE;
    }
}

static gboolean
json_value (Json *json, guint depth)
{
  if (depth > JSON_MAX_DEPTH)
    return FALSE;
  json_space (json);
  if (json->p >= json->end)
    return FALSE;
  switch (*json->p)
    {
    case '{':
      return json_container (json, depth, '}', TRUE);
    case '[':
      return json_container (json, depth, ']', FALSE);
    case '"':
      return json_string (json);
    case 't':
      return json_literal (json, "true");
    case 'f':
      return json_literal (json, "false");
    case 'n':
      return json_literal (json, "null");
    default:
      return json_number (json);
    }
}

static gboolean
is_json_object (const char *line)
{
  Json json = { line, line + strlen (line) };

  json_space (&json);
  if (json.p >= json.end || *json.p != '{' || !json_value (&json, 0))
    return FALSE;
  json_space (&json);
  return json.p == json.end;
}

/* Longest line allowed for an input of input_len bytes: linear, with
 * room for the endpoint, the batch prefix and an event's worst escapes. */
#define MAX_LINE(input_len) (32 * (input_len) + 4096)

/* One line of text for a terminal or a log. */
static void
check_line (const char *line, gsize input_len)
{
  kvev_fuzz_assert (line != NULL);
  kvev_fuzz_assert (strlen (line) <= MAX_LINE (input_len));
  kvev_fuzz_assert (g_utf8_validate (line, -1, NULL));
  kvev_fuzz_assert (strchr (line, '\n') == NULL);
}

static void
check_message (const KvtMessage *message, gsize n_frames, KvtFormat format, gsize input_len)
{
  kvev_fuzz_assert (message != NULL);
  kvev_fuzz_assert (message->events != NULL);
  if (n_frames != 3)
    {
      kvev_fuzz_assert (message->error != NULL);
      kvev_fuzz_assert (!message->has_sequence);
    }
  if (message->error != NULL)
    {
      check_line (message->error, input_len);
      kvev_fuzz_assert (message->events->len == 0);
    }
  for (guint i = 0; i < message->events->len; i++)
    {
      const KvtEvent *event = g_ptr_array_index (message->events, i);

      /* Exactly one of a line and an error. */
      kvev_fuzz_assert ((event->line == NULL) != (event->error == NULL));
      if (event->error != NULL)
        {
          check_line (event->error, input_len);
          continue;
        }
      kvev_fuzz_assert ((guint) event->kind < KVT_N_EVENT_KINDS);
      check_line (event->line, input_len);
      if (format == KVT_FORMAT_JSON)
        kvev_fuzz_assert (is_json_object (event->line));
    }
}

/* The format changes how events look, never which ones decode. */
static void
check_same_events (const KvtMessage *a, const KvtMessage *b)
{
  kvev_fuzz_assert ((a->error == NULL) == (b->error == NULL));
  kvev_fuzz_assert (a->has_sequence == b->has_sequence);
  kvev_fuzz_assert (!a->has_sequence || a->sequence == b->sequence);
  kvev_fuzz_assert (a->events->len == b->events->len);
  for (guint i = 0; i < a->events->len; i++)
    {
      const KvtEvent *x = g_ptr_array_index (a->events, i);
      const KvtEvent *y = g_ptr_array_index (b->events, i);

      kvev_fuzz_assert ((x->error == NULL) == (y->error == NULL));
      kvev_fuzz_assert (x->kind == y->kind);
      kvev_fuzz_assert (x->has_event_id == y->has_event_id);
      kvev_fuzz_assert (!x->has_event_id || x->event_id == y->event_id);
    }
}

/* The next frame of the input: a length byte, then up to that many bytes. */
static gsize
take_frame (const uint8_t **p, const uint8_t *end, const uint8_t **frame)
{
  gsize len;

  if (*p >= end)
    {
      *frame = *p;
      return 0;
    }
  len = MIN (**p, (gsize) (end - *p - 1));
  *frame = *p + 1;
  *p += 1 + len;
  return len;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static const char endpoint[] = "tcp://127.0.0.1:5557";
  const uint8_t *p = data, *end = data + size;
  const uint8_t *bytes[4];
  gsize lengths[4] = { 0 };
  KvtFrame frames[4];
  gsize n_frames;
  guint8 control;
  g_autoptr (KvtMessage) json = NULL;
  g_autoptr (KvtMessage) text = NULL;

  if (size == 0)
    return 0;
  control = *p++;
  n_frames = control & 7;
  if (n_frames > 4)
    n_frames = 3;

  lengths[0] = take_frame (&p, end, &bytes[0]);
  lengths[1] = take_frame (&p, end, &bytes[1]);
  bytes[2] = p;
  lengths[2] = (gsize) (end - p);
  bytes[3] = end;
  lengths[3] = 0;

  for (guint i = 0; i < 4; i++)
    {
      frames[i].size = lengths[i];
      if (lengths[i] == 0 && (control & 0x20) != 0)
        frames[i].data = NULL;
      else
        {
          /* malloc (0) too is a pointer to nothing readable. */
          void *copy = malloc (lengths[i]);

          kvev_fuzz_assert (copy != NULL || lengths[i] == 0);
          if (lengths[i] > 0)
            memcpy (copy, bytes[i], lengths[i]);
          frames[i].data = copy;
        }
    }

  json = kvt_decode_message (frames, n_frames, KVT_FORMAT_JSON,
                             (control & 0x10) != 0 ? NULL : endpoint);
  check_message (json, n_frames, KVT_FORMAT_JSON, size);
  text = kvt_decode_message (frames, n_frames, KVT_FORMAT_TEXT,
                             (control & 0x10) != 0 ? NULL : endpoint);
  check_message (text, n_frames, KVT_FORMAT_TEXT, size);
  check_same_events (json, text);

  for (guint i = 0; i < 4; i++)
    free ((void *) frames[i].data);
  return 0;
}
