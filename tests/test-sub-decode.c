/* test-sub-decode.c: the subscriber's bytes alone: payloads into
 * KvevSubscriberEvent (every key of kvevents(7) WIRE FORMAT, str and bin
 * apart, the first of a repeated key, vLLM's tagged events, every way a
 * payload or an event is refused), and the replay and snapshot reply
 * parsers, with payloads made by msgpack-c.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "sub/decode.h"
#include "sub/replay-client.h"
#include "sub/snapshot-client.h"

#include <msgpack.h>
#include <string.h>

static void
pack_str (msgpack_packer *pk, const char *text)
{
  msgpack_pack_str (pk, strlen (text));
  msgpack_pack_str_body (pk, text, strlen (text));
}

static void
pack_bin (msgpack_packer *pk, const char *bytes, gsize len)
{
  msgpack_pack_bin (pk, len);
  msgpack_pack_bin_body (pk, bytes, len);
}

/* A stored map as the library sends it with the legacy names and a
 * publisher_id, its object_key as bin. */
static void
pack_stored (msgpack_packer *pk, guint64 event_id)
{
  msgpack_pack_map (pk, 21);
  pack_str (pk, "event_id");
  msgpack_pack_uint64 (pk, event_id);
  pack_str (pk, "timestamp");
  msgpack_pack_int64 (pk, 1700000000000);
  pack_str (pk, "event_type");
  pack_str (pk, "stored");
  pack_str (pk, "type");
  pack_str (pk, "BlockStored");
  pack_str (pk, "model_name");
  pack_str (pk, "m");
  pack_str (pk, "block_size");
  msgpack_pack_uint32 (pk, 16);
  pack_str (pk, "additional_salt");
  msgpack_pack_nil (pk);
  pack_str (pk, "lora_name");
  msgpack_pack_nil (pk);
  pack_str (pk, "tenant_id");
  pack_str (pk, "default");
  pack_str (pk, "backend_id");
  pack_str (pk, "be");
  pack_str (pk, "medium");
  pack_str (pk, "cpu");
  pack_str (pk, "dp_rank");
  msgpack_pack_uint32 (pk, 2);
  pack_str (pk, "group_id");
  msgpack_pack_nil (pk);
  pack_str (pk, "object_key");
  pack_bin (pk, "k\xff\0y", 4);
  pack_str (pk, "seq_hashes");
  msgpack_pack_array (pk, 0);
  pack_str (pk, "block_hashes");
  msgpack_pack_array (pk, 0);
  pack_str (pk, "base_block_idx");
  msgpack_pack_nil (pk);
  pack_str (pk, "parent_hash");
  msgpack_pack_nil (pk);
  pack_str (pk, "token_ids");
  msgpack_pack_nil (pk);
  pack_str (pk, "parent_block_hash");
  msgpack_pack_nil (pk);
  pack_str (pk, "publisher_id");
  pack_str (pk, "0123456789abcdef0123456789abcdef");
}

static void
test_stored_map (void)
{
  msgpack_sbuffer buffer;
  msgpack_packer pk;
  KvevSubscriberEvent event = { 0 };
  const guint8 *bytes;
  gsize pos, len;
  KvevBatch batch;
  guint n = 0;

  msgpack_sbuffer_init (&buffer);
  msgpack_packer_init (&pk, &buffer, msgpack_sbuffer_write);
  msgpack_pack_array (&pk, 3);
  msgpack_pack_uint64 (&pk, 1700000000000);
  msgpack_pack_array (&pk, 2);
  pack_stored (&pk, 7);
  pack_stored (&pk, 8);
  msgpack_pack_uint32 (&pk, 2);

  g_assert_cmpint (kvev_batch_parse (&batch, buffer.data, buffer.size), ==, KVEV_PAYLOAD_OK);
  g_assert_cmpuint (batch.n_events, ==, 2);
  g_assert_cmpint (batch.dp_rank.type, ==, KVEV_VALUE_UINT);
  g_assert_cmpint (batch.publisher_id.type, ==, KVEV_VALUE_STR);
  g_assert_cmpuint (batch.publisher_id.len, ==, 32);
  pos = batch.events_pos;
  while (kvev_batch_next (&batch, &pos, &bytes, &len))
    {
      g_assert_cmpint (kvev_event_decode (&event, bytes, len), ==, KVEV_EVENT_DECODED);
      g_assert_cmpint (event.kind, ==, KVEV_KIND_STORED);
      g_assert_false (event.tagged);
      g_assert_true (event.has_event_id);
      g_assert_cmpuint (event.event_id, ==, 7 + n);
      g_assert_true (event.has_timestamp);
      g_assert_cmpint (event.timestamp, ==, 1700000000000);
      g_assert_true (event.has_block_size);
      g_assert_cmpuint (event.block_size, ==, 16);
      g_assert_true (event.has_dp_rank);
      g_assert_cmpuint (event.dp_rank, ==, 2);
      g_assert_cmpint (event.tenant_id.type, ==, KVEV_VALUE_STR);
      g_assert_cmpmem (event.tenant_id.data, event.tenant_id.len, "default", 7);
      /* bin is bin, NUL and all. */
      g_assert_cmpint (event.object_key.type, ==, KVEV_VALUE_BIN);
      g_assert_cmpmem (event.object_key.data, event.object_key.len, "k\xff\0y", 4);
      g_assert_cmpint (event.additional_salt.type, ==, KVEV_VALUE_NIL);
      g_assert_cmpint (event.group_id.type, ==, KVEV_VALUE_NIL);
      g_assert_cmpint (event.seq_hashes.type, ==, KVEV_VALUE_ARRAY);
      g_assert_cmpuint (event.seq_hashes.raw_len, ==, 1);
      g_assert_cmpint (event.parent_block_hash.type, ==, KVEV_VALUE_NIL);
      g_assert_cmpint (event.publisher_id.type, ==, KVEV_VALUE_STR);
      g_assert_cmpint (event.type.type, ==, KVEV_VALUE_STR);
      /* The raw bytes are the event's, whole. */
      g_assert_true (event.raw == bytes);
      g_assert_cmpuint (event.raw_len, ==, len);
      n++;
    }
  /* Exactly the events: the dp_rank after them is none. */
  g_assert_cmpuint (n, ==, 2);
  msgpack_sbuffer_destroy (&buffer);
}

/* A map without the legacy names, with a key sent twice and keys this
 * structure does not name; then vLLM's tagged events. */
static void
test_other_shapes (void)
{
  msgpack_sbuffer buffer;
  msgpack_packer pk;
  KvevSubscriberEvent event = { 0 };
  const guint8 *bytes;
  gsize pos, len;
  KvevBatch batch;

  msgpack_sbuffer_init (&buffer);
  msgpack_packer_init (&pk, &buffer, msgpack_sbuffer_write);
  msgpack_pack_array (&pk, 2);
  msgpack_pack_double (&pk, 1700000000.5);
  msgpack_pack_array (&pk, 3);
  msgpack_pack_map (&pk, 6);
  pack_str (&pk, "event_type");
  pack_str (&pk, "removed");
  msgpack_pack_uint32 (&pk, 5); /* a key that is not a str */
  pack_str (&pk, "ignored");
  msgpack_pack_array (&pk, 2); /* nor is this one, of two elements */
  pack_str (&pk, "tenant_id");
  pack_str (&pk, "tenant_id");
  pack_str (&pk, "not-a-tenant");
  pack_str (&pk, "tenant_id");
  pack_str (&pk, "first");
  pack_str (&pk, "tenant_id");
  pack_str (&pk, "second");
  pack_str (&pk, "future_key");
  msgpack_pack_array (&pk, 1);
  msgpack_pack_map (&pk, 0);
  msgpack_pack_array (&pk, 4);
  pack_str (&pk, "BlockStored");
  msgpack_pack_array (&pk, 0);
  msgpack_pack_nil (&pk);
  msgpack_pack_uint32 (&pk, 16);
  msgpack_pack_array (&pk, 2);
  pack_str (&pk, "AllBlocksCleared");
  msgpack_pack_nil (&pk);

  g_assert_cmpint (kvev_batch_parse (&batch, buffer.data, buffer.size), ==, KVEV_PAYLOAD_OK);
  g_assert_cmpint (batch.timestamp.type, ==, KVEV_VALUE_FLOAT);
  g_assert_cmpint (batch.dp_rank.type, ==, KVEV_VALUE_ABSENT);
  pos = batch.events_pos;
  g_assert_true (kvev_batch_next (&batch, &pos, &bytes, &len));
  g_assert_cmpint (kvev_event_decode (&event, bytes, len), ==, KVEV_EVENT_DECODED);
  g_assert_cmpint (event.kind, ==, KVEV_KIND_REMOVED);
  g_assert_cmpmem (event.tenant_id.data, event.tenant_id.len, "first", 5);
  g_assert_false (event.has_event_id);
  g_assert_cmpint (event.object_key.type, ==, KVEV_VALUE_ABSENT);
  g_assert_true (kvev_batch_next (&batch, &pos, &bytes, &len));
  g_assert_cmpint (kvev_event_decode (&event, bytes, len), ==, KVEV_EVENT_DECODED);
  g_assert_true (event.tagged);
  g_assert_cmpint (event.kind, ==, KVEV_KIND_STORED);
  /* What the previous event filled is gone. */
  g_assert_cmpint (event.tenant_id.type, ==, KVEV_VALUE_ABSENT);
  g_assert_true (kvev_batch_next (&batch, &pos, &bytes, &len));
  g_assert_cmpint (kvev_event_decode (&event, bytes, len), ==, KVEV_EVENT_DECODED);
  g_assert_cmpint (event.kind, ==, KVEV_KIND_CLEARED);
  g_assert_false (kvev_batch_next (&batch, &pos, &bytes, &len));
  msgpack_sbuffer_destroy (&buffer);
}

static KvevEventError
decode_one (void (*pack) (msgpack_packer *pk))
{
  msgpack_sbuffer buffer;
  msgpack_packer pk;
  KvevSubscriberEvent event = { 0 };
  const guint8 *bytes;
  KvevEventError error;
  gsize pos, len;
  KvevBatch batch;

  msgpack_sbuffer_init (&buffer);
  msgpack_packer_init (&pk, &buffer, msgpack_sbuffer_write);
  msgpack_pack_array (&pk, 3);
  msgpack_pack_uint32 (&pk, 1);
  msgpack_pack_array (&pk, 1);
  pack (&pk);
  msgpack_pack_uint32 (&pk, 0);
  g_assert_cmpint (kvev_batch_parse (&batch, buffer.data, buffer.size), ==, KVEV_PAYLOAD_OK);
  pos = batch.events_pos;
  g_assert_true (kvev_batch_next (&batch, &pos, &bytes, &len));
  error = kvev_event_decode (&event, bytes, len);
  msgpack_sbuffer_destroy (&buffer);
  return error;
}

static void
pack_no_type (msgpack_packer *pk)
{
  msgpack_pack_map (pk, 1);
  pack_str (pk, "tenant_id");
  pack_str (pk, "t");
}

static void
pack_unknown_type (msgpack_packer *pk)
{
  msgpack_pack_map (pk, 1);
  pack_str (pk, "event_type");
  pack_str (pk, "moved");
}

static void
pack_bin_type (msgpack_packer *pk)
{
  msgpack_pack_map (pk, 1);
  pack_str (pk, "event_type");
  pack_bin (pk, "stored", 6);
}

static void
pack_untagged (msgpack_packer *pk)
{
  msgpack_pack_array (pk, 1);
  msgpack_pack_uint32 (pk, 1);
}

static void
pack_number (msgpack_packer *pk)
{
  msgpack_pack_uint32 (pk, 1);
}

static void
test_bad_events (void)
{
  g_assert_cmpint (decode_one (pack_no_type), ==, KVEV_EVENT_NO_TYPE);
  g_assert_cmpint (decode_one (pack_unknown_type), ==, KVEV_EVENT_UNKNOWN_TYPE);
  g_assert_cmpint (decode_one (pack_bin_type), ==, KVEV_EVENT_UNKNOWN_TYPE);
  g_assert_cmpint (decode_one (pack_untagged), ==, KVEV_EVENT_UNTAGGED_ARRAY);
  g_assert_cmpint (decode_one (pack_number), ==, KVEV_EVENT_NOT_AN_EVENT);
  g_assert_cmpstr (kvev_event_error_message (KVEV_EVENT_NO_TYPE), !=, "");
}

static void
test_bad_payloads (void)
{
  static const struct
  {
    const char *bytes;
    gsize len;
    KvevPayloadError error;
  } cases[] = {
    { "", 0, KVEV_PAYLOAD_TRUNCATED },
    { "\x93\x01\x90", 3, KVEV_PAYLOAD_TRUNCATED },
    { "\xc1", 1, KVEV_PAYLOAD_RESERVED_BYTE },
    { "\x93\x01\x90\x00\x00", 5, KVEV_PAYLOAD_TRAILING_BYTES },
    { "\x91\x01", 2, KVEV_PAYLOAD_NOT_A_BATCH },
    { "\x80", 1, KVEV_PAYLOAD_NOT_A_BATCH },
    { "\x93\xa1x\x90\x00", 5, KVEV_PAYLOAD_BAD_TIMESTAMP },
    { "\x93\x01\x80\x00", 4, KVEV_PAYLOAD_BAD_EVENT_LIST },
    { "\x93\x01\x90\xa1x", 5, KVEV_PAYLOAD_BAD_DP_RANK },
    /* An array that promises more elements than bytes are left. */
    { "\x93\x01\xdd\xff\xff\xff\xff\x00", 8, KVEV_PAYLOAD_TRUNCATED },
  };
  guint8 deep[200];
  KvevBatch batch;
  guint i;

  for (i = 0; i < G_N_ELEMENTS (cases); i++)
    g_assert_cmpint (kvev_batch_parse (&batch, cases[i].bytes, cases[i].len), ==, cases[i].error);
  g_assert_cmpint (kvev_batch_parse (&batch, NULL, 5), ==, KVEV_PAYLOAD_TRUNCATED);
  /* [1, [[[[...]]]]]: refused, not a deep recursion. */
  deep[0] = 0x92;
  deep[1] = 0x01;
  memset (deep + 2, 0x91, sizeof deep - 3);
  deep[sizeof deep - 1] = 0x90;
  g_assert_cmpint (kvev_batch_parse (&batch, deep, sizeof deep), ==, KVEV_PAYLOAD_TOO_DEEP);
  for (i = 1; i <= KVEV_PAYLOAD_BAD_DP_RANK; i++)
    g_assert_cmpstr (kvev_payload_error_message (i), !=, "");
}

static void
test_replay_parser (void)
{
  static const guint8 seq7[8] = { 0, 0, 0, 0, 0, 0, 0, 7 };
  static const guint8 end[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
  KvevFrame with_topic[4] = { { "", 0 }, { "topic", 5 }, { seq7, 8 }, { "\x93\x01\x90\x00", 4 } };
  KvevFrame without_topic[3] = { { "", 0 }, { seq7, 8 }, { "p", 1 } };
  KvevFrame end_marker[4] = { { "", 0 }, { "", 0 }, { end, 8 }, { "", 0 } };
  KvevFrame end_with_payload[3] = { { "", 0 }, { end, 8 }, { "x", 1 } };
  KvevFrame short_sequence[4] = { { "", 0 }, { "", 0 }, { seq7, 7 }, { "p", 1 } };
  KvevFrame no_delimiter[3] = { { "x", 1 }, { seq7, 8 }, { "p", 1 } };
  KvevFrame message[3];
  guint8 request[8];
  guint64 sequence = 0;

  g_assert_cmpint (kvev_replay_reply_parse (with_topic, 4, message, &sequence), ==,
                   KVEV_REPLAY_MESSAGE);
  g_assert_cmpuint (sequence, ==, 7);
  g_assert_cmpmem (message[0].data, message[0].size, "topic", 5);
  g_assert_cmpuint (message[2].size, ==, 4);
  g_assert_cmpint (kvev_replay_reply_parse (without_topic, 3, message, &sequence), ==,
                   KVEV_REPLAY_MESSAGE);
  g_assert_cmpuint (message[0].size, ==, 0);
  g_assert_cmpint (kvev_replay_reply_parse (end_marker, 4, message, &sequence), ==,
                   KVEV_REPLAY_END);
  g_assert_cmpint (kvev_replay_reply_parse (end_marker, 2, message, &sequence), ==,
                   KVEV_REPLAY_MALFORMED);
  g_assert_cmpint (kvev_replay_reply_parse (end_with_payload, 3, message, &sequence), ==,
                   KVEV_REPLAY_MALFORMED);
  g_assert_cmpint (kvev_replay_reply_parse (short_sequence, 4, message, &sequence), ==,
                   KVEV_REPLAY_MALFORMED);
  g_assert_cmpint (kvev_replay_reply_parse (no_delimiter, 3, message, &sequence), ==,
                   KVEV_REPLAY_MALFORMED);
  kvev_replay_request_encode (G_GUINT64_CONSTANT (0x0102030405060708), request);
  g_assert_cmpmem (request, 8, "\x01\x02\x03\x04\x05\x06\x07\x08", 8);
}

static void
test_snapshot_parser (void)
{
  msgpack_sbuffer buffer;
  msgpack_packer pk;
  KvevSnapshotHeader header;
  KvevFrame parts[3] = { { "", 0 }, { "header", 6 }, { NULL, 0 } };
  KvevFrame body;
  guint64 objects = 0;
  char *text;

  msgpack_sbuffer_init (&buffer);
  msgpack_packer_init (&pk, &buffer, msgpack_sbuffer_write);
  msgpack_pack_map (&pk, 4);
  pack_str (&pk, "barrier_event_id");
  msgpack_pack_uint64 (&pk, 42);
  pack_str (&pk, "publisher_id");
  pack_str (&pk, "abc");
  pack_str (&pk, "backend_id");
  pack_bin (&pk, "b\0e", 3);
  pack_str (&pk, "dp_rank");
  msgpack_pack_uint32 (&pk, 1);
  parts[2].data = buffer.data;
  parts[2].size = buffer.size;
  g_assert_cmpint (kvev_snapshot_reply_parse (parts, 3, &body), ==, KVEV_SNAPSHOT_HEADER);
  g_assert_true (kvev_snapshot_header_parse (&body, &header));
  g_assert_cmpuint (header.barrier_event_id, ==, 42);
  g_assert_cmpint (header.backend_id.type, ==, KVEV_VALUE_BIN);
  g_assert_cmpmem (header.backend_id.data, header.backend_id.len, "b\0e", 3);
  g_assert_true (header.has_dp_rank);
  g_assert_cmpmem (header.publisher_id.data, header.publisher_id.len, "abc", 3);
  g_assert_false (kvev_snapshot_end_parse (&body, &objects));
  g_assert_cmpint (kvev_snapshot_reply_parse (parts, 2, &body), ==, KVEV_SNAPSHOT_MALFORMED);
  parts[1].data = "state";
  parts[1].size = 5;
  g_assert_cmpint (kvev_snapshot_reply_parse (parts, 3, &body), ==, KVEV_SNAPSHOT_MALFORMED);

  msgpack_sbuffer_clear (&buffer);
  msgpack_pack_map (&pk, 1);
  pack_str (&pk, "objects");
  msgpack_pack_uint64 (&pk, 9);
  body.data = buffer.data;
  body.size = buffer.size;
  g_assert_true (kvev_snapshot_end_parse (&body, &objects));
  g_assert_cmpuint (objects, ==, 9);
  /* A header without its barrier. */
  g_assert_false (kvev_snapshot_header_parse (&body, &header));

  msgpack_sbuffer_clear (&buffer);
  msgpack_pack_map (&pk, 1);
  pack_str (&pk, "message");
  pack_str (&pk, "no snapshot function");
  body.data = buffer.data;
  body.size = buffer.size;
  text = kvev_snapshot_error_parse (&body);
  g_assert_cmpstr (text, ==, "no snapshot function");
  g_free (text);
  body.size = 0;
  g_assert_null (kvev_snapshot_error_parse (&body));
  msgpack_sbuffer_destroy (&buffer);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/sub-decode/stored-map", test_stored_map);
  g_test_add_func ("/sub-decode/other-shapes", test_other_shapes);
  g_test_add_func ("/sub-decode/bad-events", test_bad_events);
  g_test_add_func ("/sub-decode/bad-payloads", test_bad_payloads);
  g_test_add_func ("/sub-decode/replay-parser", test_replay_parser);
  g_test_add_func ("/sub-decode/snapshot-parser", test_snapshot_parser);
  return g_test_run ();
}
