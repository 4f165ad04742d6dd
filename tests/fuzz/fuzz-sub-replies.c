/* fuzz-sub-replies.c: the library subscriber's replay and snapshot reply
 * parsers (libkvevents/sub/replay-client.c, snapshot-client.c) on any
 * frames, with the decoder on what they hand on.
 *
 * Input: a control byte (& 7: the number of frames, 0 to 5), then each
 * frame but the last as a length byte and its bytes, the last frame
 * being the rest.  Each frame is copied into a buffer of its own exact
 * size.
 *
 * Besides crashes and leaks it checks: a replay message hands on three
 * frames that are the reply's own, the sequence being the 8 bytes it
 * read; a snapshot reply's body is its last frame; a header that parses
 * has a backend_id of str or bin; an error's message is valid UTF-8.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include "fuzz.h"
#include "sub/decode.h"
#include "sub/replay-client.h"
#include "sub/snapshot-client.h"

#include <string.h>

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  kvev_fuzz_init ();
  return 0;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  KvevFrame frames[5], message[3], body;
  guint8 *copies[5] = { NULL };
  guint n_frames, i;
  gsize pos = 1;
  guint64 sequence = 0;
  KvevSnapshotHeader header;
  KvevBatch batch;

  if (size == 0)
    return 0;
  n_frames = MIN (data[0] & 7, 5);
  for (i = 0; i < n_frames; i++)
    {
      gsize len = size - MIN (pos, size);

      if (i + 1 < n_frames)
        {
          len = pos < size ? data[pos++] : 0;
          len = MIN (len, size - MIN (pos, size));
        }
      copies[i] = g_memdup2 (data + MIN (pos, size), len);
      frames[i].data = copies[i];
      frames[i].size = len;
      pos += len;
    }

  switch (kvev_replay_reply_parse (frames, n_frames, message, &sequence))
    {
    case KVEV_REPLAY_MESSAGE:
      kvev_fuzz_assert (message[1].size == 8);
      kvev_fuzz_assert (message[2].data == frames[n_frames - 1].data);
      kvev_batch_parse (&batch, message[2].data, message[2].size);
      break;
    case KVEV_REPLAY_END:
      kvev_fuzz_assert (message[2].size == 0);
      break;
    case KVEV_REPLAY_MALFORMED:
    default:
      break;
    }

  switch (kvev_snapshot_reply_parse (frames, n_frames, &body))
    {
    case KVEV_SNAPSHOT_HEADER:
      kvev_fuzz_assert (body.data == frames[2].data);
      if (kvev_snapshot_header_parse (&body, &header))
        kvev_fuzz_assert (header.backend_id.type == KVEV_VALUE_STR
                          || header.backend_id.type == KVEV_VALUE_BIN);
      break;
    case KVEV_SNAPSHOT_CHUNK:
      kvev_batch_parse (&batch, body.data, body.size);
      break;
    case KVEV_SNAPSHOT_END:
      {
        guint64 objects;

        kvev_snapshot_end_parse (&body, &objects);
        break;
      }
    case KVEV_SNAPSHOT_ERROR:
      {
        char *text = kvev_snapshot_error_parse (&body);

        kvev_fuzz_assert (text == NULL || g_utf8_validate (text, -1, NULL));
        g_free (text);
        break;
      }
    case KVEV_SNAPSHOT_MALFORMED:
    default:
      break;
    }
  for (i = 0; i < n_frames; i++)
    g_free (copies[i]);
  return 0;
}
