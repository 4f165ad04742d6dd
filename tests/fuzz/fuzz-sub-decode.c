/* fuzz-sub-decode.c: the library subscriber's decoder
 * (libkvevents/sub/decode.c) on any payload.
 *
 * Input: the payload, copied into a buffer of its own exact size, so
 * that a read past it is an AddressSanitizer report.
 *
 * Besides crashes and leaks it checks what decode.h promises: a payload
 * it accepts yields exactly its n_events events, each inside the payload
 * and decoded without a read outside it; every value it fills (raw bytes
 * and str or bin data) lies inside its event; a map lookup of the same
 * bytes never fails in another way than refusing them.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include "fuzz.h"
#include "sub/decode.h"

#include <stdlib.h>
#include <string.h>

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  kvev_fuzz_init ();
  return 0;
}

static void
check_inside (const KvevValue *value, const guint8 *start, gsize len)
{
  if (value->type == KVEV_VALUE_ABSENT)
    return;
  kvev_fuzz_assert (value->raw >= start && value->raw + value->raw_len <= start + len);
  if (value->type == KVEV_VALUE_STR || value->type == KVEV_VALUE_BIN
      || value->type == KVEV_VALUE_EXT)
    kvev_fuzz_assert ((const guint8 *) value->data >= start
                      && (const guint8 *) value->data + value->len <= start + len);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static const char *const names[] = { "barrier_event_id", "backend_id", "objects" };
  guint8 *copy = g_memdup2 (data, size);
  KvevSubscriberEvent event;
  KvevValue values[G_N_ELEMENTS (names)];
  const guint8 *bytes;
  KvevBatch batch;
  gsize pos, len;
  guint n = 0;

  memset (&event, 0, sizeof event);
  if (kvev_batch_parse (&batch, copy, size) == KVEV_PAYLOAD_OK)
    {
      pos = batch.events_pos;
      while (kvev_batch_next (&batch, &pos, &bytes, &len))
        {
          KvevEventError error = kvev_event_decode (&event, bytes, len);
          const KvevValue *member;

          kvev_fuzz_assert (bytes >= copy && bytes + len <= copy + size);
          kvev_fuzz_assert (error <= KVEV_EVENT_NOT_AN_EVENT);
          kvev_fuzz_assert (kvev_event_error_message (error) != NULL);
          for (member = &event.event_id_value; member <= &event.publisher_id; member++)
            check_inside (member, bytes, len);
          n++;
        }
      kvev_fuzz_assert (n == batch.n_events);
    }
  kvev_map_lookup (copy, size, names, values, G_N_ELEMENTS (names));
  g_free (copy);
  return 0;
}
