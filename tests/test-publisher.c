/* test-publisher.c: the publisher on real sockets, decoded by a
 * subscriber with msgpack-c, for every publication point of kvevents(7),
 * "PUBLICATION POINTS".
 * SPDX-License-Identifier: Apache-2.0
 */
#include "test-util.h"
#include "publisher.h"

#include <string.h>

/* A publisher on a fresh ipc endpoint with a subscriber in sync. */
typedef struct
{
  KvevPublisher *publisher;
  TestSub *sub;
  guint64 next_sequence;
  guint64 next_event_id;
} Fixture;

static void
fixture_start (Fixture *fixture, KvevConfig *config)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (TestMessage) first = NULL;

  fixture->publisher = kvev_publisher_new (config, &error);
  g_assert_no_error (error);
  g_assert_nonnull (fixture->publisher);
  fixture->sub = test_sub_new (kvev_publisher_get_endpoint (fixture->publisher));
  first = test_sync (fixture->publisher, fixture->sub);
  /* After the sync every probe and the end marker went one a message. */
  fixture->next_sequence = kvev_publisher_stat (fixture->publisher, KVEV_STAT_LAST_SEQUENCE) + 1;
  fixture->next_event_id
      = kvev_queue_last_event_id (kvev_publisher_get_queue (fixture->publisher)) + 1;
}

static void
fixture_stop (Fixture *fixture)
{
  g_clear_pointer (&fixture->publisher, kvev_publisher_free);
  g_clear_pointer (&fixture->sub, test_sub_free);
}

static KvevConfig *
config_for (const char *name)
{
  g_autofree char *endpoint = test_ipc_endpoint (name);

  return test_config_new (endpoint);
}

/* Receives exactly n events (in however many messages) after a flush,
 * checking the sequence and event ids run on without holes. */
static GPtrArray *
receive_events (Fixture *fixture, guint n)
{
  GPtrArray *messages = g_ptr_array_new_with_free_func ((GDestroyNotify) test_message_free);
  guint received = 0, i;

  g_assert_true (kvev_publisher_flush (fixture->publisher, 10000));
  while (received < n)
    {
      TestMessage *message = test_sub_recv (fixture->sub, 10000);

      g_assert_nonnull (message);
      g_assert_cmpuint (message->n_frames, ==, 3);
      g_assert_cmpuint (message->sequence_len, ==, 8);
      g_assert_true (message->decoded);
      g_assert_cmpuint (message->sequence, ==, fixture->next_sequence);
      fixture->next_sequence++;
      for (i = 0; i < message->n_events; i++)
        {
          g_assert_cmpuint (test_map_uint (&message->events[i], "event_id"), ==,
                            fixture->next_event_id);
          fixture->next_event_id++;
        }
      received += message->n_events;
      g_ptr_array_add (messages, message);
    }
  g_assert_cmpuint (received, ==, n);
  return messages;
}

/* The events of the received messages, in order. */
static GPtrArray *
events_of (GPtrArray *messages)
{
  GPtrArray *events = g_ptr_array_new ();
  guint i, j;

  for (i = 0; i < messages->len; i++)
    {
      TestMessage *message = g_ptr_array_index (messages, i);

      for (j = 0; j < message->n_events; j++)
        g_ptr_array_add (events, (gpointer) &message->events[j]);
    }
  return events;
}

static void
assert_no_message (Fixture *fixture)
{
  g_autoptr (TestMessage) message = NULL;

  g_assert_true (kvev_publisher_flush (fixture->publisher, 10000));
  message = test_sub_recv (fixture->sub, 100);
  g_assert_null (message);
}

/* Expected map layouts: key, then the msgpack type of its value. */
typedef struct
{
  const char *key;
  msgpack_object_type type;
} ExpectedKey;

#define U MSGPACK_OBJECT_POSITIVE_INTEGER
#define S MSGPACK_OBJECT_STR
#define N MSGPACK_OBJECT_NIL
#define A MSGPACK_OBJECT_ARRAY

/* With an empty model/salt/LoRA and block size 0, all nil. */
static const ExpectedKey stored_legacy[] = {
  { "event_id", U },        { "timestamp", U },
  { "event_type", S },      { "type", S },
  { "model_name", N },      { "block_size", N },
  { "additional_salt", N }, { "lora_name", N },
  { "tenant_id", S },       { "backend_id", S },
  { "medium", S },          { "dp_rank", U },
  { "group_id", N },        { "object_key", S },
  { "seq_hashes", A },      { "block_hashes", A },
  { "base_block_idx", N },  { "parent_hash", N },
  { "token_ids", N },       { "parent_block_hash", N },
};
static const ExpectedKey removed_legacy[] = {
  { "event_id", U },       { "timestamp", U },  { "event_type", S },      { "type", S },
  { "model_name", N },     { "block_size", N }, { "additional_salt", N }, { "lora_name", N },
  { "tenant_id", S },      { "backend_id", S }, { "medium", S },          { "dp_rank", U },
  { "group_id", N },       { "object_key", S }, { "seq_hashes", A },      { "block_hashes", A },
  { "base_block_idx", N },
};
static const ExpectedKey cleared_legacy[] = {
  { "event_id", U },   { "timestamp", U },  { "event_type", S },      { "type", S },
  { "model_name", N }, { "block_size", N }, { "additional_salt", N }, { "lora_name", N },
  { "tenant_id", S },  { "backend_id", S }, { "medium", N },          { "dp_rank", U },
};
static const ExpectedKey stored_plain[] = {
  { "event_id", U },   { "timestamp", U },       { "event_type", S },     { "model_name", N },
  { "block_size", N }, { "additional_salt", N }, { "lora_name", N },      { "tenant_id", S },
  { "backend_id", S }, { "medium", S },          { "dp_rank", U },        { "group_id", N },
  { "object_key", S }, { "seq_hashes", A },      { "base_block_idx", N }, { "parent_hash", N },
  { "token_ids", N },
};
static const ExpectedKey removed_plain[] = {
  { "event_id", U },   { "timestamp", U },       { "event_type", S },     { "model_name", N },
  { "block_size", N }, { "additional_salt", N }, { "lora_name", N },      { "tenant_id", S },
  { "backend_id", S }, { "medium", S },          { "dp_rank", U },        { "group_id", N },
  { "object_key", S }, { "seq_hashes", A },      { "base_block_idx", N },
};
static const ExpectedKey cleared_plain[] = {
  { "event_id", U },   { "timestamp", U },       { "event_type", S }, { "model_name", N },
  { "block_size", N }, { "additional_salt", N }, { "lora_name", N },  { "tenant_id", S },
  { "backend_id", S }, { "medium", N },          { "dp_rank", U },
};

static void
assert_layout (const msgpack_object *map, const ExpectedKey *expected, guint n)
{
  guint i;

  g_assert_cmpint (map->type, ==, MSGPACK_OBJECT_MAP);
  g_assert_cmpuint (map->via.map.size, ==, n);
  for (i = 0; i < n; i++)
    {
      const msgpack_object_kv *kv = &map->via.map.ptr[i];

      g_assert_cmpint (kv->key.type, ==, MSGPACK_OBJECT_STR);
      g_assert_cmpmem (kv->key.via.str.ptr, kv->key.via.str.size, expected[i].key,
                       strlen (expected[i].key));
      if (kv->val.type != expected[i].type)
        g_error ("key %s: type %d, expected %d", expected[i].key, kv->val.type, expected[i].type);
      if (kv->val.type == MSGPACK_OBJECT_ARRAY)
        g_assert_cmpuint (kv->val.via.array.size, ==, 0);
    }
}

static void
assert_str (const msgpack_object *map, const char *key, const char *expected)
{
  g_autofree char *value = test_map_dup_str (map, key);

  g_assert_cmpstr (value, ==, expected);
}

static void
assert_nil (const msgpack_object *map, const char *key)
{
  const msgpack_object *value = test_map_get (map, key);

  g_assert_nonnull (value);
  g_assert_cmpint (value->type, ==, MSGPACK_OBJECT_NIL);
}

static void
check_maps (gboolean legacy)
{
  g_autoptr (KvevConfig) config = config_for (legacy ? "maps-legacy" : "maps-plain");
  g_autoptr (GPtrArray) messages = NULL;
  g_autoptr (GPtrArray) events = NULL;
  Fixture fixture = { 0 };
  gint64 before_ms, after_ms;
  guint i;

  test_config_set (config, "kv_events_emit_legacy_compat", legacy ? "true" : "false");
  fixture_start (&fixture, config);
  before_ms = g_get_real_time () / 1000;
  kvev_publish_stored (fixture.publisher, "tenant-a", "key-1", -1, NULL, KVEV_MEDIA_CPU);
  kvev_publish_removed (fixture.publisher, "tenant-a", "key-1", -1, NULL, KVEV_MEDIA_DISK);
  kvev_publish_cleared (fixture.publisher, "tenant-a");
  messages = receive_events (&fixture, 3);
  after_ms = g_get_real_time () / 1000;
  events = events_of (messages);
  if (legacy)
    {
      assert_layout (events->pdata[0], stored_legacy, G_N_ELEMENTS (stored_legacy));
      assert_layout (events->pdata[1], removed_legacy, G_N_ELEMENTS (removed_legacy));
      assert_layout (events->pdata[2], cleared_legacy, G_N_ELEMENTS (cleared_legacy));
      assert_str (events->pdata[0], "type", "BlockStored");
      assert_str (events->pdata[1], "type", "BlockRemoved");
      assert_str (events->pdata[2], "type", "AllBlocksCleared");
    }
  else
    {
      assert_layout (events->pdata[0], stored_plain, G_N_ELEMENTS (stored_plain));
      assert_layout (events->pdata[1], removed_plain, G_N_ELEMENTS (removed_plain));
      assert_layout (events->pdata[2], cleared_plain, G_N_ELEMENTS (cleared_plain));
    }
  assert_str (events->pdata[0], "event_type", "stored");
  assert_str (events->pdata[1], "event_type", "removed");
  assert_str (events->pdata[2], "event_type", "cleared");
  assert_str (events->pdata[0], "medium", "cpu");
  assert_str (events->pdata[1], "medium", "disk");
  for (i = 0; i < 3; i++)
    {
      assert_str (events->pdata[i], "tenant_id", "tenant-a");
      assert_str (events->pdata[i], "backend_id", "backend-1");
      g_assert_cmpuint (test_map_uint (events->pdata[i], "dp_rank"), ==, 0);
    }
  assert_str (events->pdata[0], "object_key", "key-1");
  assert_str (events->pdata[1], "object_key", "key-1");

  /* Every event of a message carries the batch's timestamp: Unix time in
   * milliseconds, taken while the test waited. */
  for (i = 0; i < messages->len; i++)
    {
      TestMessage *message = g_ptr_array_index (messages, i);
      guint j;

      g_assert_cmpint (message->timestamp_ms, >=, before_ms);
      g_assert_cmpint (message->timestamp_ms, <=, after_ms);
      g_assert_cmpuint (message->dp_rank, ==, 0);
      g_assert_cmpuint (g_bytes_get_size (message->topic), ==, 0);
      for (j = 0; j < message->n_events; j++)
        g_assert_cmpuint (test_map_uint (&message->events[j], "timestamp"), ==,
                          (guint64) message->timestamp_ms);
    }
  fixture_stop (&fixture);
}

static void
test_maps_legacy (void)
{
  check_maps (TRUE);
}

static void
test_maps_plain (void)
{
  check_maps (FALSE);
}

/* A publisher numbers its messages from sequence 0 and its events from
 * event_id 1.  The sync's probes may go before the subscription arrives,
 * but each goes alone, so after them the counts say where the numbering
 * began: the next event's id is the number of events enqueued, and its
 * message's sequence the number of messages sent before it. */
static void
test_sequence_from_zero (void)
{
  g_autoptr (KvevConfig) config = config_for ("sequence");
  g_autoptr (GError) error = NULL;
  g_autoptr (KvevPublisher) publisher = kvev_publisher_new (config, &error);
  g_autoptr (TestMessage) first = NULL;
  g_autoptr (TestMessage) next = NULL;
  TestSub *sub;

  g_assert_no_error (error);
  sub = test_sub_new (kvev_publisher_get_endpoint (publisher));
  first = test_sync (publisher, sub);
  g_assert_cmpuint (first->sequence + 1, ==, test_map_uint (&first->events[0], "event_id"));
  g_assert_cmpuint (first->n_frames, ==, 3);

  kvev_publish_stored (publisher, "t", "after-sync", -1, NULL, KVEV_MEDIA_CPU);
  g_assert_true (kvev_publisher_flush (publisher, 10000));
  next = test_sub_recv (sub, 10000);
  g_assert_nonnull (next);
  g_assert_cmpuint (next->n_events, ==, 1);
  g_assert_cmpuint (test_map_uint (&next->events[0], "event_id"), ==,
                    kvev_publisher_stat (publisher, KVEV_STAT_ENQUEUED_EVENTS));
  g_assert_cmpuint (next->sequence + 1, ==,
                    kvev_publisher_stat (publisher, KVEV_STAT_PUBLISHED_BATCHES));
  g_assert_cmpuint (next->sequence, ==, kvev_publisher_stat (publisher, KVEV_STAT_LAST_SEQUENCE));
  test_sub_free (sub);
}

static void
test_context_fields (void)
{
  g_autoptr (KvevConfig) config = config_for ("context");
  g_autoptr (GPtrArray) messages = NULL;
  g_autoptr (GPtrArray) events = NULL;
  Fixture fixture = { 0 };
  TestMessage *message;
  guint i;

  test_config_set (config, "kv_events_model_name", "qwen-72b");
  test_config_set (config, "kv_events_block_size", "16");
  test_config_set (config, "kv_events_additional_salt", "salt");
  test_config_set (config, "kv_events_lora_name", "lora-a");
  test_config_set (config, "kv_events_dp_rank", "7");
  test_config_set (config, "kv_events_topic", "kv@");
  fixture_start (&fixture, config);
  kvev_publish_stored (fixture.publisher, "t", "k", -1, "group-9", KVEV_MEDIA_DISK);
  kvev_publish_cleared (fixture.publisher, "t");
  messages = receive_events (&fixture, 2);
  events = events_of (messages);
  for (i = 0; i < events->len; i++)
    {
      assert_str (events->pdata[i], "model_name", "qwen-72b");
      g_assert_cmpuint (test_map_uint (events->pdata[i], "block_size"), ==, 16);
      assert_str (events->pdata[i], "additional_salt", "salt");
      assert_str (events->pdata[i], "lora_name", "lora-a");
      g_assert_cmpuint (test_map_uint (events->pdata[i], "dp_rank"), ==, 7);
    }
  assert_str (events->pdata[0], "group_id", "group-9");
  g_assert_null (test_map_get (events->pdata[1], "group_id"));
  message = g_ptr_array_index (messages, 0);
  g_assert_cmpuint (message->dp_rank, ==, 7);
  g_assert_cmpmem (g_bytes_get_data (message->topic, NULL), g_bytes_get_size (message->topic),
                   "kv@", 3);
  fixture_stop (&fixture);
}

static void
test_tenant_and_group_defaults (void)
{
  g_autoptr (KvevConfig) config = config_for ("defaults");
  g_autoptr (GPtrArray) messages = NULL;
  g_autoptr (GPtrArray) events = NULL;
  Fixture fixture = { 0 };

  fixture_start (&fixture, config);
  kvev_publish_stored (fixture.publisher, NULL, "k1", -1, NULL, KVEV_MEDIA_CPU);
  kvev_publish_stored (fixture.publisher, "", "k2", -1, "", KVEV_MEDIA_CPU);
  kvev_publish_cleared (fixture.publisher, NULL);
  messages = receive_events (&fixture, 3);
  events = events_of (messages);
  assert_str (events->pdata[0], "tenant_id", "default");
  assert_str (events->pdata[1], "tenant_id", "default");
  assert_str (events->pdata[2], "tenant_id", "default");
  assert_nil (events->pdata[0], "group_id");
  assert_nil (events->pdata[1], "group_id");
  fixture_stop (&fixture);
}

/* Put commit with both tiers, offload, removal and every delta shape:
 * removed before stored, cpu before disk, nothing for equal sets. */
static void
test_media_expansion (void)
{
  g_autoptr (KvevConfig) config = config_for ("media");
  g_autoptr (GPtrArray) messages = NULL;
  g_autoptr (GPtrArray) events = NULL;
  Fixture fixture = { 0 };
  static const struct
  {
    const char *type;
    const char *medium;
  } expected[] = {
    { "stored", "cpu" },   { "stored", "disk" },  /* Put commit cpu|disk */
    { "removed", "cpu" },  { "stored", "disk" },  /* Move cpu -> disk */
    { "stored", "cpu" },                          /* promotion: disk -> cpu|disk */
    { "removed", "cpu" },  { "removed", "disk" }, /* Remove */
    { "removed", "disk" }, { "stored", "cpu" },   /* delta disk -> cpu */
  };
  guint64 enqueued;
  guint i;

  fixture_start (&fixture, config);
  kvev_publish_stored (fixture.publisher, "t", "k", -1, NULL, KVEV_MEDIA_CPU | KVEV_MEDIA_DISK);
  kvev_publish_delta (fixture.publisher, "t", "k", -1, NULL, KVEV_MEDIA_CPU, KVEV_MEDIA_DISK);
  kvev_publish_delta (fixture.publisher, "t", "k", -1, NULL, KVEV_MEDIA_DISK,
                      KVEV_MEDIA_CPU | KVEV_MEDIA_DISK);
  kvev_publish_removed (fixture.publisher, "t", "k", -1, NULL, KVEV_MEDIA_CPU | KVEV_MEDIA_DISK);
  kvev_publish_delta (fixture.publisher, "t", "k", -1, NULL, KVEV_MEDIA_DISK, KVEV_MEDIA_CPU);
  messages = receive_events (&fixture, G_N_ELEMENTS (expected));
  events = events_of (messages);
  for (i = 0; i < G_N_ELEMENTS (expected); i++)
    {
      assert_str (events->pdata[i], "event_type", expected[i].type);
      assert_str (events->pdata[i], "medium", expected[i].medium);
    }

  /* Equal sets, and empty ones, publish nothing at all. */
  enqueued = kvev_publisher_stat (fixture.publisher, KVEV_STAT_ENQUEUED_EVENTS);
  kvev_publish_delta (fixture.publisher, "t", "k", -1, NULL, KVEV_MEDIA_CPU, KVEV_MEDIA_CPU);
  kvev_publish_delta (fixture.publisher, "t", "k", -1, NULL, KVEV_MEDIA_NONE, KVEV_MEDIA_NONE);
  kvev_publish_stored (fixture.publisher, "t", "k", -1, NULL, KVEV_MEDIA_NONE);
  kvev_publish_removed (fixture.publisher, "t", "k", -1, NULL, KVEV_MEDIA_NONE);
  g_assert_cmpuint (kvev_publisher_stat (fixture.publisher, KVEV_STAT_ENQUEUED_EVENTS), ==,
                    enqueued);
  assert_no_message (&fixture);
  fixture_stop (&fixture);
}

static void
test_keyless (void)
{
  g_autoptr (KvevConfig) config = config_for ("keyless");
  g_autoptr (GPtrArray) messages = NULL;
  g_autoptr (GPtrArray) events = NULL;
  Fixture fixture = { 0 };
  KvevClearScope *scope;

  test_config_set (config, "kv_events_emit_object_key", "false");
  fixture_start (&fixture, config);
  kvev_publish_stored (fixture.publisher, "t", "k", -1, NULL, KVEV_MEDIA_CPU | KVEV_MEDIA_DISK);
  kvev_publish_removed (fixture.publisher, "t", "k", -1, NULL, KVEV_MEDIA_CPU);
  kvev_publish_delta (fixture.publisher, "t", "k", -1, NULL, KVEV_MEDIA_CPU, KVEV_MEDIA_DISK);
  scope = kvev_clear_begin (fixture.publisher, "t");
  kvev_clear_object_removed (scope, "k", -1, NULL, KVEV_MEDIA_DISK);
  g_assert_true (kvev_clear_end (scope));
  messages = receive_events (&fixture, 1);
  events = events_of (messages);
  assert_str (events->pdata[0], "event_type", "cleared");
  g_assert_cmpuint (kvev_publisher_stat (fixture.publisher, KVEV_STAT_SKIPPED_KEYLESS_EVENTS), ==,
                    6);
  assert_no_message (&fixture);
  fixture_stop (&fixture);
}

static void
test_empty_key_is_keyless (void)
{
  g_autoptr (KvevConfig) config = config_for ("empty-key");
  Fixture fixture = { 0 };
  guint64 last_id;

  fixture_start (&fixture, config);
  last_id = kvev_queue_last_event_id (kvev_publisher_get_queue (fixture.publisher));
  kvev_publish_stored (fixture.publisher, "t", "", -1, NULL, KVEV_MEDIA_CPU);
  kvev_publish_removed (fixture.publisher, "t", "ignored", 0, NULL, KVEV_MEDIA_DISK);
  g_assert_cmpuint (kvev_publisher_stat (fixture.publisher, KVEV_STAT_SKIPPED_KEYLESS_EVENTS), ==,
                    2);
  /* Suppressed events never get an id. */
  g_assert_cmpuint (kvev_queue_last_event_id (kvev_publisher_get_queue (fixture.publisher)), ==,
                    last_id);
  assert_no_message (&fixture);
  fixture_stop (&fixture);
}

/* data: the kv_events_non_utf8 value to set, or NULL for the default. */
static void
test_binary_keys (gconstpointer data)
{
  const char *policy = data;
  g_autoptr (KvevConfig) config = config_for ("binary");
  g_autoptr (GPtrArray) messages = NULL;
  Fixture fixture = { 0 };
  static const char nul_key[] = "a\0b";
  static const char bad_key[] = "\xff\xfe";
  const msgpack_object *value;
  TestMessage *message;

  if (policy != NULL)
    test_config_set (config, "kv_events_non_utf8", policy);
  fixture_start (&fixture, config);
  kvev_queue_hold (kvev_publisher_get_queue (fixture.publisher), TRUE);
  kvev_publish_stored (fixture.publisher, "t", "before", -1, NULL, KVEV_MEDIA_CPU);
  kvev_publish_stored (fixture.publisher, "t", nul_key, 3, NULL, KVEV_MEDIA_CPU);
  kvev_publish_stored (fixture.publisher, "t", bad_key, 2, NULL, KVEV_MEDIA_CPU);
  kvev_publish_stored (fixture.publisher, "t\x80", "k", -1, NULL, KVEV_MEDIA_CPU);
  kvev_publish_stored (fixture.publisher, "t", "k", -1, "g\xc3", KVEV_MEDIA_CPU);
  kvev_publish_stored (fixture.publisher, "t", "after", -1, NULL, KVEV_MEDIA_CPU);
  kvev_publish_stored (fixture.publisher, "t", bad_key, 2, NULL, KVEV_MEDIA_ALL);
  kvev_queue_hold (kvev_publisher_get_queue (fixture.publisher), FALSE);
  messages = receive_events (&fixture, 8);

  /* Valid UTF-8, NUL included, shares a message; each event with a
   * string that is not valid UTF-8 travels alone, also each tier of one
   * call. */
  g_assert_cmpuint (messages->len, ==, 7);
  message = g_ptr_array_index (messages, 0);
  g_assert_cmpuint (message->n_events, ==, 2);
  value = test_map_get (&message->events[1], "object_key");
  g_assert_cmpint (value->type, ==, MSGPACK_OBJECT_STR);
  g_assert_cmpmem (value->via.str.ptr, value->via.str.size, nul_key, 3);

  message = g_ptr_array_index (messages, 1);
  g_assert_cmpuint (message->n_events, ==, 1);
  value = test_map_get (&message->events[0], "object_key");
  g_assert_cmpint (value->type, ==, MSGPACK_OBJECT_BIN);
  g_assert_cmpmem (value->via.bin.ptr, value->via.bin.size, bad_key, 2);

  message = g_ptr_array_index (messages, 2);
  g_assert_cmpuint (message->n_events, ==, 1);
  g_assert_cmpint (test_map_get (&message->events[0], "tenant_id")->type, ==, MSGPACK_OBJECT_BIN);
  g_assert_cmpint (test_map_get (&message->events[0], "object_key")->type, ==, MSGPACK_OBJECT_STR);

  message = g_ptr_array_index (messages, 3);
  g_assert_cmpuint (message->n_events, ==, 1);
  g_assert_cmpint (test_map_get (&message->events[0], "group_id")->type, ==, MSGPACK_OBJECT_BIN);

  message = g_ptr_array_index (messages, 4);
  g_assert_cmpuint (message->n_events, ==, 1);
  assert_str (&message->events[0], "object_key", "after");

  message = g_ptr_array_index (messages, 5);
  g_assert_cmpuint (message->n_events, ==, 1);
  assert_str (&message->events[0], "medium", "cpu");
  message = g_ptr_array_index (messages, 6);
  g_assert_cmpuint (message->n_events, ==, 1);
  assert_str (&message->events[0], "medium", "disk");
  g_assert_cmpint (test_map_get (&message->events[0], "object_key")->type, ==, MSGPACK_OBJECT_BIN);
  g_assert_cmpuint (kvev_publisher_stat (fixture.publisher, KVEV_STAT_SKIPPED_NON_UTF8_EVENTS), ==,
                    0);
  fixture_stop (&fixture);
}

/* With kv_events_non_utf8 skip, an event whose key, tenant or group is
 * not UTF-8 never reaches the wire, and nothing shows that it existed:
 * sequences and event ids run on without a hole, so no reader sees a
 * loss, and the UTF-8 events around it arrive.  NUL is UTF-8. */
static void
test_non_utf8_skip (void)
{
  g_autoptr (KvevConfig) config = config_for ("skip");
  g_autoptr (GPtrArray) first = NULL;
  g_autoptr (GPtrArray) second = NULL;
  g_autoptr (GPtrArray) events = NULL;
  g_autofree char *json = NULL;
  Fixture fixture = { 0 };
  static const char nul_key[] = "a\0b";
  static const char bad_key[] = "\xff\xfe";
  KvevClearScope *scope;
  guint64 enqueued, last_id;
  const msgpack_object *value;

  test_config_set (config, "kv_events_non_utf8", "skip");
  fixture_start (&fixture, config);
  enqueued = kvev_publisher_stat (fixture.publisher, KVEV_STAT_ENQUEUED_EVENTS);

  kvev_publish_stored (fixture.publisher, "t", "before", -1, NULL, KVEV_MEDIA_CPU);
  kvev_publish_stored (fixture.publisher, "t", nul_key, 3, NULL, KVEV_MEDIA_CPU);
  first = receive_events (&fixture, 2);

  last_id = kvev_queue_last_event_id (kvev_publisher_get_queue (fixture.publisher));
  kvev_publish_stored (fixture.publisher, "t", bad_key, 2, NULL, KVEV_MEDIA_CPU);
  kvev_publish_stored (fixture.publisher, "t\x80", "k", -1, NULL, KVEV_MEDIA_CPU);
  kvev_publish_stored (fixture.publisher, "t", "k", -1, "g\xc3", KVEV_MEDIA_CPU);
  kvev_publish_delta (fixture.publisher, "t", bad_key, 2, NULL, KVEV_MEDIA_ALL, KVEV_MEDIA_NONE);
  kvev_publish_cleared (fixture.publisher, "t\xff");
  scope = kvev_clear_begin (fixture.publisher, "\xfe");
  kvev_clear_object_removed (scope, "k", -1, NULL, KVEV_MEDIA_DISK);
  /* Its cleared is skipped too, so the scope ends without one. */
  g_assert_false (kvev_clear_end (scope));
  /* None of them took an event id. */
  g_assert_cmpuint (kvev_queue_last_event_id (kvev_publisher_get_queue (fixture.publisher)), ==,
                    last_id);
  g_assert_cmpuint (kvev_publisher_stat (fixture.publisher, KVEV_STAT_SKIPPED_NON_UTF8_EVENTS), ==,
                    8);
  g_assert_cmpuint (kvev_publisher_stat (fixture.publisher, KVEV_STAT_CLEARED_SUPPRESSED), ==, 1);

  kvev_publish_stored (fixture.publisher, "t", "after", -1, NULL, KVEV_MEDIA_ALL);
  kvev_publish_cleared (fixture.publisher, "t");
  /* Checks that sequences and event ids follow on from the first batch. */
  second = receive_events (&fixture, 3);
  assert_no_message (&fixture);

  events = events_of (first);
  assert_str (events->pdata[0], "object_key", "before");
  value = test_map_get (events->pdata[1], "object_key");
  g_assert_cmpint (value->type, ==, MSGPACK_OBJECT_STR);
  g_assert_cmpmem (value->via.str.ptr, value->via.str.size, nul_key, 3);
  g_ptr_array_unref (events);
  events = events_of (second);
  assert_str (events->pdata[0], "object_key", "after");
  assert_str (events->pdata[0], "medium", "cpu");
  assert_str (events->pdata[1], "medium", "disk");
  assert_str (events->pdata[2], "event_type", "cleared");
  assert_str (events->pdata[2], "tenant_id", "t");

  g_assert_cmpuint (kvev_publisher_stat (fixture.publisher, KVEV_STAT_ENQUEUED_EVENTS) - enqueued,
                    ==, 5);
  g_assert_cmpuint (kvev_publisher_stat (fixture.publisher, KVEV_STAT_DROPPED_EVENTS), ==, 0);
  g_assert_cmpuint (kvev_publisher_stat (fixture.publisher, KVEV_STAT_REJECTED_EVENTS), ==, 0);
  g_assert_cmpuint (kvev_publisher_stat (fixture.publisher, KVEV_STAT_SKIPPED_KEYLESS_EVENTS), ==,
                    0);
  json = kvev_publisher_stats_json (fixture.publisher);
  g_assert_nonnull (strstr (json, "\"skipped_non_utf8_events\": 8,"));
  fixture_stop (&fixture);
}

static void
test_large_key (void)
{
  g_autoptr (KvevConfig) config = config_for ("large-key");
  g_autoptr (GPtrArray) messages = NULL;
  g_autofree char *key = g_malloc (KVEV_MAX_KEY_LEN + 1);
  g_autofree char *tenant = g_malloc (KVEV_MAX_KEY_LEN + 2);
  Fixture fixture = { 0 };
  KvevClearScope *scope;
  const msgpack_object *value;
  guint64 enqueued;

  memset (key, 'k', KVEV_MAX_KEY_LEN + 1);
  fixture_start (&fixture, config);
  kvev_publish_stored (fixture.publisher, "t", "k", 1, NULL, KVEV_MEDIA_CPU);
  kvev_publish_stored (fixture.publisher, "t", key, KVEV_MAX_KEY_LEN, NULL, KVEV_MEDIA_CPU);
  messages = receive_events (&fixture, 2);
  value = test_map_get (
      &((TestMessage *) messages->pdata[messages->len - 1])
           ->events[((TestMessage *) messages->pdata[messages->len - 1])->n_events - 1],
      "object_key");
  g_assert_cmpuint (value->via.str.size, ==, KVEV_MAX_KEY_LEN);

  enqueued = kvev_publisher_stat (fixture.publisher, KVEV_STAT_ENQUEUED_EVENTS);
  g_test_expect_message ("kvevents", G_LOG_LEVEL_CRITICAL, "*longer than 1 MiB*");
  kvev_publish_stored (fixture.publisher, "t", key, KVEV_MAX_KEY_LEN + 1, NULL, KVEV_MEDIA_CPU);
  g_test_assert_expected_messages ();
  g_assert_cmpuint (kvev_publisher_stat (fixture.publisher, KVEV_STAT_REJECTED_EVENTS), ==, 1);
  g_assert_cmpuint (kvev_publisher_stat (fixture.publisher, KVEV_STAT_ENQUEUED_EVENTS), ==,
                    enqueued);
  assert_no_message (&fixture);

  /* A cleared the library refuses was not published, and
   * kvev_clear_end() says so. */
  memset (tenant, 't', KVEV_MAX_KEY_LEN + 1);
  tenant[KVEV_MAX_KEY_LEN + 1] = '\0';
  scope = kvev_clear_begin (fixture.publisher, tenant);
  g_test_expect_message ("kvevents", G_LOG_LEVEL_CRITICAL,
                         "kvev_clear_object_removed: *longer than 1 MiB*");
  kvev_clear_object_removed (scope, "k", -1, NULL, KVEV_MEDIA_CPU);
  g_test_assert_expected_messages ();
  g_test_expect_message ("kvevents", G_LOG_LEVEL_CRITICAL, "kvev_clear_end: *longer than 1 MiB*");
  g_assert_false (kvev_clear_end (scope));
  g_test_assert_expected_messages ();
  g_assert_cmpuint (kvev_publisher_stat (fixture.publisher, KVEV_STAT_REJECTED_EVENTS), ==, 3);
  g_assert_cmpuint (kvev_publisher_stat (fixture.publisher, KVEV_STAT_CLEARED_SUPPRESSED), ==, 1);
  assert_no_message (&fixture);
  fixture_stop (&fixture);
}

static void
test_bad_arguments (void)
{
  g_autoptr (KvevConfig) config = config_for ("bad-arguments");
  Fixture fixture = { 0 };
  KvevClearScope *scope;
  guint64 enqueued;

  fixture_start (&fixture, config);
  kvev_publish_stored (fixture.publisher, "t", "queued", -1, NULL, KVEV_MEDIA_CPU);
  enqueued = kvev_publisher_stat (fixture.publisher, KVEV_STAT_ENQUEUED_EVENTS);

  g_test_expect_message ("kvevents", G_LOG_LEVEL_CRITICAL, "*publisher != NULL*");
  kvev_publish_stored (NULL, "t", "k", -1, NULL, KVEV_MEDIA_CPU);
  g_test_assert_expected_messages ();
  g_test_expect_message ("kvevents", G_LOG_LEVEL_CRITICAL, "*object_key != NULL*");
  kvev_publish_removed (fixture.publisher, "t", NULL, -1, NULL, KVEV_MEDIA_CPU);
  g_test_assert_expected_messages ();
  /* A missing key is a rejected call like a key too long: operators
   * see both in the statistics, not only in the log. */
  g_assert_cmpuint (kvev_publisher_stat (fixture.publisher, KVEV_STAT_REJECTED_EVENTS), ==, 1);
  scope = kvev_clear_begin (fixture.publisher, "t");
  g_test_expect_message ("kvevents", G_LOG_LEVEL_CRITICAL, "*object_key != NULL*");
  kvev_clear_object_removed (scope, NULL, -1, NULL, KVEV_MEDIA_CPU);
  g_test_assert_expected_messages ();
  g_assert_false (kvev_clear_end (scope));
  g_assert_cmpuint (kvev_publisher_stat (fixture.publisher, KVEV_STAT_REJECTED_EVENTS), ==, 2);
  g_test_expect_message ("kvevents", G_LOG_LEVEL_CRITICAL, "*outside KVEV_MEDIA_ALL*");
  kvev_publish_stored (fixture.publisher, "t", "k", -1, NULL, (KvevMedia) 4);
  g_test_assert_expected_messages ();
  g_test_expect_message ("kvevents", G_LOG_LEVEL_CRITICAL, "*outside KVEV_MEDIA_ALL*");
  kvev_publish_delta (fixture.publisher, "t", "k", -1, NULL, KVEV_MEDIA_CPU, (KvevMedia) 0x80);
  g_test_assert_expected_messages ();
  g_test_expect_message ("kvevents", G_LOG_LEVEL_CRITICAL, "*key_len*");
  kvev_publish_stored (fixture.publisher, "t", "k", -2, NULL, KVEV_MEDIA_CPU);
  g_test_assert_expected_messages ();

  g_assert_cmpuint (kvev_publisher_stat (fixture.publisher, KVEV_STAT_REJECTED_EVENTS), ==, 5);
  g_assert_cmpuint (kvev_publisher_stat (fixture.publisher, KVEV_STAT_ENQUEUED_EVENTS), ==,
                    enqueued);
  /* What was queued before the bad calls still arrives. */
  g_ptr_array_unref (receive_events (&fixture, 1));
  fixture_stop (&fixture);
}

static void
test_remove_all (void)
{
  g_autoptr (KvevConfig) config = config_for ("remove-all");
  g_autoptr (GPtrArray) messages = NULL;
  g_autoptr (GPtrArray) events = NULL;
  Fixture fixture = { 0 };
  KvevClearScope *scope;
  KvevSkipReason reason;

  fixture_start (&fixture, config);

  /* A tenant that never held anything gets no cleared. */
  scope = kvev_clear_begin (fixture.publisher, "empty");
  g_assert_false (kvev_clear_end (scope));
  assert_no_message (&fixture);

  /* One skip of any reason, before or after a removal, keeps cleared
   * back; the removals themselves are still published. */
  for (reason = KVEV_SKIP_LEASED; reason <= KVEV_SKIP_OTHER; reason++)
    {
      g_autoptr (GPtrArray) skipped = NULL;
      g_autoptr (GPtrArray) skipped_events = NULL;

      scope = kvev_clear_begin (fixture.publisher, "busy");
      if (reason % 2 == 0)
        kvev_clear_skipped (scope, reason);
      kvev_clear_object_removed (scope, "gone", -1, "g", KVEV_MEDIA_CPU);
      if (reason % 2 == 1)
        kvev_clear_skipped (scope, reason);
      g_assert_false (kvev_clear_end (scope));
      skipped = receive_events (&fixture, 1);
      skipped_events = events_of (skipped);
      assert_str (skipped_events->pdata[0], "event_type", "removed");
      g_assert_cmpuint (kvev_publisher_stat (fixture.publisher, KVEV_STAT_SKIPPED_LEASED + reason),
                        ==, 1);
      assert_no_message (&fixture);
    }
  g_assert_cmpuint (kvev_publisher_stat (fixture.publisher, KVEV_STAT_CLEARED_SUPPRESSED), ==,
                    1 + KVEV_SKIP_OTHER + 1);

  /* A reason from a newer header than this library's (the enum only
   * grows) still keeps cleared back, and counts as OTHER. */
  {
    g_autoptr (GPtrArray) skipped = NULL;

    scope = kvev_clear_begin (fixture.publisher, "busy");
    kvev_clear_object_removed (scope, "gone", -1, NULL, KVEV_MEDIA_CPU);
    kvev_clear_skipped (scope, (KvevSkipReason) (KVEV_SKIP_OTHER + 1));
    kvev_clear_skipped (scope, (KvevSkipReason) -1);
    g_assert_false (kvev_clear_end (scope));
    skipped = receive_events (&fixture, 1);
    assert_no_message (&fixture);
    g_assert_cmpuint (kvev_publisher_stat (fixture.publisher, KVEV_STAT_SKIPPED_OTHER), ==, 3);
    g_assert_cmpuint (kvev_publisher_stat (fixture.publisher, KVEV_STAT_CLEARED_SUPPRESSED), ==,
                      1 + KVEV_SKIP_OTHER + 2);
  }

  /* Every object removed: per-object removed events, then cleared. */
  scope = kvev_clear_begin (fixture.publisher, "tenant-r");
  kvev_clear_object_removed (scope, "a", -1, NULL, KVEV_MEDIA_CPU | KVEV_MEDIA_DISK);
  kvev_clear_object_removed (scope, "b", -1, "grp", KVEV_MEDIA_DISK);
  g_assert_true (kvev_clear_end (scope));
  messages = receive_events (&fixture, 4);
  events = events_of (messages);
  assert_str (events->pdata[0], "object_key", "a");
  assert_str (events->pdata[0], "medium", "cpu");
  assert_str (events->pdata[1], "object_key", "a");
  assert_str (events->pdata[1], "medium", "disk");
  assert_str (events->pdata[2], "object_key", "b");
  assert_str (events->pdata[2], "group_id", "grp");
  assert_str (events->pdata[3], "event_type", "cleared");
  assert_str (events->pdata[3], "tenant_id", "tenant-r");
  assert_nil (events->pdata[3], "medium");
  fixture_stop (&fixture);
}

#define PAIR_PRODUCERS 4
#define PAIR_CALLS 5000

typedef struct
{
  KvevPublisher *publisher;
  guint index;
} PairProducer;

static gpointer
produce_pairs (gpointer data)
{
  PairProducer *producer = data;
  guint i;

  for (i = 0; i < PAIR_CALLS; i++)
    {
      char key[32];

      g_snprintf (key, sizeof key, "p%u-%u", producer->index, i);
      kvev_publish_stored (producer->publisher, "t", key, -1, NULL,
                           KVEV_MEDIA_CPU | KVEV_MEDIA_DISK);
    }
  return NULL;
}

/* The events of one call enter the queue together: with producers racing,
 * a call's cpu and disk events still have consecutive ids. */
static void
test_call_events_together (void)
{
  g_autoptr (KvevConfig) config = config_for ("pairs");
  g_autoptr (GPtrArray) messages = NULL;
  g_autoptr (GPtrArray) events = NULL;
  PairProducer producers[PAIR_PRODUCERS];
  GThread *threads[PAIR_PRODUCERS];
  Fixture fixture = { 0 };
  guint i;

  fixture_start (&fixture, config);
  for (i = 0; i < PAIR_PRODUCERS; i++)
    {
      producers[i] = (PairProducer){ fixture.publisher, i };
      threads[i] = g_thread_new ("pairs", produce_pairs, &producers[i]);
    }
  for (i = 0; i < PAIR_PRODUCERS; i++)
    g_thread_join (threads[i]);
  /* receive_events checks that the ids run on without holes. */
  messages = receive_events (&fixture, PAIR_PRODUCERS * PAIR_CALLS * 2);
  events = events_of (messages);
  for (i = 0; i < events->len; i += 2)
    {
      g_autofree char *cpu_key = test_map_dup_str (events->pdata[i], "object_key");
      g_autofree char *disk_key = test_map_dup_str (events->pdata[i + 1], "object_key");

      assert_str (events->pdata[i], "medium", "cpu");
      assert_str (events->pdata[i + 1], "medium", "disk");
      g_assert_cmpstr (cpu_key, ==, disk_key);
    }
  fixture_stop (&fixture);
}

static void
test_batch_limit (void)
{
  g_autoptr (KvevConfig) config = config_for ("batch");
  g_autoptr (GPtrArray) messages = NULL;
  Fixture fixture = { 0 };
  guint64 batches;
  guint i;

  test_config_set (config, "kv_events_max_batch_events", "4");
  fixture_start (&fixture, config);
  batches = kvev_publisher_stat (fixture.publisher, KVEV_STAT_PUBLISHED_BATCHES);
  kvev_queue_hold (kvev_publisher_get_queue (fixture.publisher), TRUE);
  for (i = 0; i < 10; i++)
    kvev_publish_stored (fixture.publisher, "t", "k", -1, NULL, KVEV_MEDIA_CPU);
  kvev_queue_hold (kvev_publisher_get_queue (fixture.publisher), FALSE);
  messages = receive_events (&fixture, 10);
  g_assert_cmpuint (messages->len, ==, 3);
  g_assert_cmpuint (((TestMessage *) messages->pdata[0])->n_events, ==, 4);
  g_assert_cmpuint (((TestMessage *) messages->pdata[1])->n_events, ==, 4);
  g_assert_cmpuint (((TestMessage *) messages->pdata[2])->n_events, ==, 2);
  g_assert_cmpuint (kvev_publisher_stat (fixture.publisher, KVEV_STAT_PUBLISHED_BATCHES), ==,
                    batches + 3);
  fixture_stop (&fixture);
}

/* Publishes n stored events with keys of key_len bytes, queued while the
 * worker is held so they reach it together, and returns the messages. */
static GPtrArray *
publish_held_keys (Fixture *fixture, guint n, gsize key_len)
{
  g_autofree char *key = g_malloc (key_len);
  guint i;

  kvev_queue_hold (kvev_publisher_get_queue (fixture->publisher), TRUE);
  for (i = 0; i < n; i++)
    {
      memset (key, 'a' + (int) (i % 26), key_len);
      kvev_publish_stored (fixture->publisher, "t", key, (gssize) key_len, NULL, KVEV_MEDIA_CPU);
    }
  kvev_queue_hold (kvev_publisher_get_queue (fixture->publisher), FALSE);
  return receive_events (fixture, n);
}

/* kv_events_send_buffer_bytes / kv_events_send_hwm bounds every payload,
 * so send_hwm messages held for a subscriber that stops reading stay
 * within the budget; an event larger than that still goes, alone. */
static void
test_message_limit (void)
{
  g_autoptr (KvevConfig) config = config_for ("limit");
  g_autoptr (GPtrArray) messages = NULL;
  Fixture fixture = { 0 };
  guint i, full = 0;

  test_config_set (config, "kv_events_send_hwm", "100");
  test_config_set (config, "kv_events_send_buffer_bytes", "819200");
  fixture_start (&fixture, config);
  messages = publish_held_keys (&fixture, 200, 1024);
  for (i = 0; i < messages->len; i++)
    {
      TestMessage *message = messages->pdata[i];

      g_assert_cmpuint (g_bytes_get_size (message->payload), <=, 8192);
      /* Cut by bytes, not by kv_events_max_batch_events. */
      g_assert_cmpuint (message->n_events, <, 64);
      full += message->n_events > 1;
    }
  g_assert_cmpuint (full, >, 0);
  g_clear_pointer (&messages, g_ptr_array_unref);

  messages = publish_held_keys (&fixture, 3, 20000);
  g_assert_cmpuint (messages->len, ==, 3);
  for (i = 0; i < messages->len; i++)
    g_assert_cmpuint (((TestMessage *) messages->pdata[i])->n_events, ==, 1);
  fixture_stop (&fixture);
}

/* With no budget a payload still stays within 1 MiB, the most NVIDIA
 * Dynamo's readers take. */
static void
test_message_limit_unbounded (void)
{
  g_autoptr (KvevConfig) config = config_for ("limit-none");
  g_autoptr (GPtrArray) messages = NULL;
  Fixture fixture = { 0 };
  guint i;

  test_config_set (config, "kv_events_send_buffer_bytes", "0");
  fixture_start (&fixture, config);
  messages = publish_held_keys (&fixture, 64, 32 * 1024);
  g_assert_cmpuint (messages->len, >, 1);
  for (i = 0; i < messages->len; i++)
    g_assert_cmpuint (g_bytes_get_size (((TestMessage *) messages->pdata[i])->payload), <=,
                      1024 * 1024);
  fixture_stop (&fixture);
}

/* After a batch the worker waits kv_events_batch_wait_us for more: what
 * publish calls queue meanwhile leaves in one message, when the wait ends
 * or a flush ends it at once.  (That those calls do not wake the worker is
 * the queue's doorbell, tests/test-queue.c.)  The calls may meet the
 * worker before its wait begins, on a machine that stalled the test
 * between receiving the first message and publishing: then it tries
 * again, and a worker that never waits fails every try. */
static void
test_batch_wait (void)
{
  g_autoptr (KvevConfig) config = config_for ("batch-wait");
  Fixture fixture = { 0 };
  guint attempt, i;

  /* Far longer than a try, so that only the flush can end it. */
  test_config_set (config, "kv_events_batch_wait_us", "1000000");
  fixture_start (&fixture, config);
  for (attempt = 0;; attempt++)
    {
      g_autoptr (GPtrArray) first = NULL;
      g_autoptr (GPtrArray) gathered = NULL;
      g_autoptr (TestMessage) early = NULL;

      g_assert_cmpuint (attempt, <, 10);
      kvev_publish_stored (fixture.publisher, "t", "first", -1, NULL, KVEV_MEDIA_CPU);
      first = receive_events (&fixture, 1);
      for (i = 0; i < 3; i++)
        kvev_publish_stored (fixture.publisher, "t", "gathered", -1, NULL, KVEV_MEDIA_CPU);
      early = test_sub_recv (fixture.sub, 300);
      if (early == NULL)
        {
          gathered = receive_events (&fixture, 3);
          g_assert_cmpuint (gathered->len, ==, 1);
          g_assert_cmpuint (((TestMessage *) gathered->pdata[0])->n_events, ==, 3);
          break;
        }
      /* Sent before the wait: account for it, take the rest, try again. */
      g_assert_cmpuint (early->sequence, ==, fixture.next_sequence);
      fixture.next_sequence++;
      fixture.next_event_id += early->n_events;
      if (early->n_events < 3)
        gathered = receive_events (&fixture, 3 - early->n_events);
    }
  fixture_stop (&fixture);
}

static void
assert_accounting (KvevPublisher *publisher)
{
  g_assert_true (kvev_publisher_flush (publisher, 10000));
  g_assert_cmpuint (kvev_publisher_stat (publisher, KVEV_STAT_QUEUE_DEPTH), ==, 0);
  g_assert_cmpuint (kvev_publisher_stat (publisher, KVEV_STAT_ENQUEUED_EVENTS), ==,
                    kvev_publisher_stat (publisher, KVEV_STAT_PUBLISHED_EVENTS)
                        + kvev_publisher_stat (publisher, KVEV_STAT_DROPPED_EVENTS));
}

/* A full queue drops its oldest events, and the subscriber sees both a
 * sequence gap and event_id holes that add up to dropped_events. */
static void
test_drop_oldest (void)
{
  g_autoptr (KvevConfig) config = config_for ("drop");
  Fixture fixture = { 0 };
  guint64 sequence_before, id_before, holes = 0, expected_id;
  gboolean saw_gap = FALSE;
  guint received = 0, i;

  test_config_set (config, "kv_events_queue_capacity", "5");
  test_config_set (config, "kv_events_max_batch_events", "2");
  fixture_start (&fixture, config);
  sequence_before = fixture.next_sequence;
  id_before = fixture.next_event_id;

  kvev_queue_hold (kvev_publisher_get_queue (fixture.publisher), TRUE);
  for (i = 0; i < 12; i++)
    kvev_publish_stored (fixture.publisher, "t", "k", -1, NULL, KVEV_MEDIA_CPU);
  g_assert_cmpuint (kvev_publisher_stat (fixture.publisher, KVEV_STAT_QUEUE_DEPTH), ==, 5);
  g_assert_cmpuint (kvev_publisher_stat (fixture.publisher, KVEV_STAT_QUEUE_HIGH_WATER), ==, 5);
  g_assert_cmpuint (kvev_publisher_stat (fixture.publisher, KVEV_STAT_DROPPED_EVENTS), ==, 7);
  kvev_queue_hold (kvev_publisher_get_queue (fixture.publisher), FALSE);
  assert_accounting (fixture.publisher);

  expected_id = id_before;
  while (received < 5)
    {
      g_autoptr (TestMessage) message = test_sub_recv (fixture.sub, 10000);

      g_assert_nonnull (message);
      if (message->sequence != sequence_before)
        {
          /* One sequence number reserved per dropped event, right before
           * the first message after the drops. */
          g_assert_false (saw_gap);
          g_assert_cmpuint (message->sequence, ==, sequence_before + 7);
          saw_gap = TRUE;
        }
      sequence_before = message->sequence + 1;
      for (i = 0; i < message->n_events; i++)
        {
          guint64 id = test_map_uint (&message->events[i], "event_id");

          g_assert_cmpuint (id, >=, expected_id);
          holes += id - expected_id;
          expected_id = id + 1;
        }
      received += message->n_events;
    }
  g_assert_true (saw_gap);
  g_assert_cmpuint (received, ==, 5);
  g_assert_cmpuint (holes, ==, kvev_publisher_stat (fixture.publisher, KVEV_STAT_DROPPED_EVENTS));
  g_assert_cmpuint (expected_id, ==, id_before + 12);
  fixture_stop (&fixture);
}

/* Receives one message and checks its sequence and events: each event is
 * "key/medium/event_id". */
static void
expect_message (Fixture *fixture, guint64 sequence, const char *const *events)
{
  g_autoptr (TestMessage) message = test_sub_recv (fixture->sub, 10000);
  guint i;

  g_assert_nonnull (message);
  g_assert_cmpuint (message->sequence, ==, sequence);
  g_assert_cmpuint (message->n_events, ==, g_strv_length ((char **) events));
  for (i = 0; i < message->n_events; i++)
    {
      g_autofree char *key = test_map_dup_str (&message->events[i], "object_key");
      g_autofree char *medium = test_map_dup_str (&message->events[i], "medium");
      g_autofree char *got = g_strdup_printf ("%s/%s/%" G_GUINT64_FORMAT, key, medium,
                                              test_map_uint (&message->events[i], "event_id")
                                                  - fixture->next_event_id);

      g_assert_cmpstr (got, ==, events[i]);
    }
  fixture->next_sequence = sequence + 1;
}

/* A full queue drops single events, oldest first, also when that leaves
 * the oldest call with only its later tiers or drops the first tiers of
 * a call larger than the whole queue. */
typedef struct
{
  const char *name;
  const char *capacity;
  void (*publish) (KvevPublisher *publisher);
  guint64 dropped;
  const char *const kept[4]; /* NULL-terminated */
} PartialDrop;

static void
publish_two_tiers_first (KvevPublisher *publisher)
{
  kvev_publish_stored (publisher, "t", "a", -1, NULL, KVEV_MEDIA_ALL);
  kvev_publish_stored (publisher, "t", "b", -1, NULL, KVEV_MEDIA_CPU);
  kvev_publish_stored (publisher, "t", "c", -1, NULL, KVEV_MEDIA_CPU);
}

static void
publish_then_move (KvevPublisher *publisher)
{
  kvev_publish_stored (publisher, "t", "x", -1, NULL, KVEV_MEDIA_CPU);
  /* removed cpu, then stored disk */
  kvev_publish_delta (publisher, "t", "y", -1, NULL, KVEV_MEDIA_CPU, KVEV_MEDIA_DISK);
}

static const PartialDrop partial_drops[] = {
  { "drop-within-call", "3", publish_two_tiers_first, 1, { "a/disk/1", "b/cpu/2", "c/cpu/3" } },
  { "call-larger-than-queue", "1", publish_then_move, 2, { "y/disk/2" } },
};

static void
test_partial_drop (gconstpointer data)
{
  const PartialDrop *drop = data;
  g_autoptr (KvevConfig) config = config_for (drop->name);
  Fixture fixture = { 0 };

  test_config_set (config, "kv_events_queue_capacity", drop->capacity);
  fixture_start (&fixture, config);
  kvev_queue_hold (kvev_publisher_get_queue (fixture.publisher), TRUE);
  drop->publish (fixture.publisher);
  g_assert_cmpuint (kvev_publisher_stat (fixture.publisher, KVEV_STAT_QUEUE_DEPTH), ==,
                    g_strv_length ((char **) drop->kept));
  g_assert_cmpuint (kvev_publisher_stat (fixture.publisher, KVEV_STAT_DROPPED_EVENTS), ==,
                    drop->dropped);
  kvev_queue_hold (kvev_publisher_get_queue (fixture.publisher), FALSE);
  assert_accounting (fixture.publisher);
  expect_message (&fixture, fixture.next_sequence + drop->dropped, drop->kept);
  fixture_stop (&fixture);
}

/* A message holds whole calls: a call that would not fit waits for the
 * next message, and only a call larger than the limit is split. */
typedef struct
{
  const char *name;
  const char *max_batch_events;
  const char *const messages[5][3]; /* each NULL-terminated */
} WholeCalls;

static const WholeCalls whole_calls[] = {
  { "batch-keeps-calls",
    "2",
    { { "a/cpu/0" }, { "b/cpu/1", "b/disk/2" }, { "c/cpu/3", "c/disk/4" } } },
  { "batch-splits-large-call",
    "1",
    { { "a/cpu/0" }, { "b/cpu/1" }, { "b/disk/2" }, { "c/cpu/3" }, { "c/disk/4" } } },
};

static void
test_whole_calls (gconstpointer data)
{
  const WholeCalls *batch = data;
  g_autoptr (KvevConfig) config = config_for (batch->name);
  Fixture fixture = { 0 };
  guint i;

  test_config_set (config, "kv_events_max_batch_events", batch->max_batch_events);
  fixture_start (&fixture, config);
  kvev_queue_hold (kvev_publisher_get_queue (fixture.publisher), TRUE);
  kvev_publish_stored (fixture.publisher, "t", "a", -1, NULL, KVEV_MEDIA_CPU);
  kvev_publish_stored (fixture.publisher, "t", "b", -1, NULL, KVEV_MEDIA_ALL);
  kvev_publish_stored (fixture.publisher, "t", "c", -1, NULL, KVEV_MEDIA_ALL);
  kvev_queue_hold (kvev_publisher_get_queue (fixture.publisher), FALSE);
  g_assert_true (kvev_publisher_flush (fixture.publisher, 10000));
  for (i = 0; i < G_N_ELEMENTS (batch->messages) && batch->messages[i][0] != NULL; i++)
    expect_message (&fixture, fixture.next_sequence, batch->messages[i]);
  fixture_stop (&fixture);
}

typedef struct
{
  KvevPublisher *publisher;
  guint count;
  guint producer;
} Producer;

static gpointer
produce (gpointer data)
{
  Producer *producer = data;
  guint i;

  for (i = 0; i < producer->count; i++)
    {
      char key[32];

      g_snprintf (key, sizeof key, "p%u-%u", producer->producer, i);
      kvev_publish_stored (producer->publisher, "t", key, -1, NULL, KVEV_MEDIA_CPU);
    }
  return NULL;
}

/* Flush under load from two producers: nothing lost, nothing reordered
 * within a producer. */
static void
test_flush_under_load (void)
{
  g_autoptr (KvevConfig) config = config_for ("load");
  g_autoptr (GPtrArray) messages = NULL;
  g_autoptr (GPtrArray) events = NULL;
  Fixture fixture = { 0 };
  Producer producers[2];
  GThread *threads[2];
  guint next[2] = { 0, 0 };
  guint i;

  test_config_set (config, "kv_events_queue_capacity", "0");
  test_config_set (config, "kv_events_send_hwm", "0");
  test_config_set (config, "kv_events_send_buffer_bytes", "0");
  fixture_start (&fixture, config);
  for (i = 0; i < 2; i++)
    {
      producers[i] = (Producer){ fixture.publisher, 20000, i };
      threads[i] = g_thread_new ("producer", produce, &producers[i]);
    }
  for (i = 0; i < 2; i++)
    g_thread_join (threads[i]);
  messages = receive_events (&fixture, 40000);
  events = events_of (messages);
  for (i = 0; i < events->len; i++)
    {
      g_autofree char *key = test_map_dup_str (events->pdata[i], "object_key");
      guint producer, index;

      g_assert_cmpint (sscanf (key, "p%u-%u", &producer, &index), ==, 2);
      g_assert_cmpuint (index, ==, next[producer]);
      next[producer]++;
    }
  assert_accounting (fixture.publisher);
  g_assert_cmpuint (kvev_publisher_stat (fixture.publisher, KVEV_STAT_DROPPED_EVENTS), ==, 0);
  fixture_stop (&fixture);
}

/* Freeing right after publishing still delivers to a connected
 * subscriber: the queue drains and the socket lingers. */
static void
test_free_delivers (void)
{
  g_autoptr (KvevConfig) config = config_for ("free");
  Fixture fixture = { 0 };
  guint received = 0;

  test_config_set (config, "kv_events_queue_capacity", "0");
  test_config_set (config, "kv_events_send_hwm", "0");
  test_config_set (config, "kv_events_send_buffer_bytes", "0");
  test_config_set (config, "kv_events_close_timeout_ms", "10000");
  fixture_start (&fixture, config);
  produce (&(Producer){ fixture.publisher, 5000, 0 });
  g_clear_pointer (&fixture.publisher, kvev_publisher_free);
  while (received < 5000)
    {
      g_autoptr (TestMessage) message = test_sub_recv (fixture.sub, 10000);

      g_assert_nonnull (message);
      received += message->n_events;
    }
  g_assert_cmpuint (received, ==, 5000);
  fixture_stop (&fixture);
}

static void
test_bind_failure (void)
{
  g_autoptr (KvevConfig) config = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *endpoint = test_ipc_endpoint ("no-such-dir/x/y.sock");
  KvevPublisher *publisher;

  config = test_config_new (endpoint);
  publisher = kvev_publisher_new (config, &error);
  g_assert_null (publisher);
  g_assert_error (error, KVEV_ERROR, KVEV_ERROR_TRANSPORT);
  g_assert_nonnull (strstr (error->message, endpoint));
  g_assert_nonnull (strstr (error->message, "kv_events_bind_endpoint"));
}

/* Two publishers cannot share an endpoint: the second says why. */
static void
test_two_publishers_one_endpoint (void)
{
  g_autoptr (KvevConfig) config = test_config_new ("tcp://127.0.0.1:*");
  g_autoptr (KvevConfig) second_config = NULL;
  g_autoptr (KvevPublisher) publisher = NULL;
  g_autoptr (GError) error = NULL;
  const char *endpoint;
  KvevPublisher *second;

  publisher = kvev_publisher_new (config, &error);
  g_assert_no_error (error);
  endpoint = kvev_publisher_get_endpoint (publisher);
  g_assert_true (g_str_has_prefix (endpoint, "tcp://127.0.0.1:"));
  g_assert_cmpint (atoi (endpoint + strlen ("tcp://127.0.0.1:")), >, 0);

  second_config = test_config_new (endpoint);
  second = kvev_publisher_new (second_config, &error);
  g_assert_null (second);
  g_assert_error (error, KVEV_ERROR, KVEV_ERROR_TRANSPORT);
  g_assert_nonnull (strstr (error->message, endpoint));
  g_assert_nonnull (strstr (error->message, "in use"));
}

/* A subscriber over tcp on loopback sees the same stream. */
static void
test_tcp_loopback (void)
{
  g_autoptr (KvevConfig) config = test_config_new ("tcp://127.0.0.1:*");
  g_autoptr (GPtrArray) messages = NULL;
  g_autoptr (GPtrArray) events = NULL;
  Fixture fixture = { 0 };

  fixture_start (&fixture, config);
  kvev_publish_stored (fixture.publisher, "t", "tcp-key", -1, NULL, KVEV_MEDIA_DISK);
  messages = receive_events (&fixture, 1);
  events = events_of (messages);
  assert_str (events->pdata[0], "object_key", "tcp-key");
  fixture_stop (&fixture);
}

static void
test_stats_json (void)
{
  g_autoptr (KvevConfig) config = config_for ("stats");
  g_autoptr (KvevConfig) disabled_config = kvev_config_new ();
  g_autoptr (KvevPublisher) disabled = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *json = NULL;
  g_autofree char *disabled_json = NULL;
  Fixture fixture = { 0 };

  fixture_start (&fixture, config);
  kvev_publish_stored (fixture.publisher, "t", "k", -1, NULL, KVEV_MEDIA_CPU);
  g_ptr_array_unref (receive_events (&fixture, 1));
  json = kvev_publisher_stats_json (fixture.publisher);
  g_assert_true (g_str_has_prefix (json, "{\"enabled\": true, \"instance_id\": \""));
  g_assert_nonnull (strstr (json, kvev_publisher_get_instance_id (fixture.publisher)));
  g_assert_nonnull (strstr (json, "\", \"enqueued_events\": "));
  g_assert_nonnull (strstr (json, "\"dropped_events\": 0"));
  g_assert_nonnull (strstr (json, "\"queue_depth\": 0"));
  g_assert_nonnull (strstr (json, "\"skipped_keyless_events\": 0"));
  g_assert_nonnull (strstr (json, "\"cleared_suppressed\": 0, "));
  g_assert_nonnull (strstr (json, "\"skipped_non_utf8_events\": 0, "));
  /* The subscriber of the fixture, and no refusals; the newest statistic
   * is the last. */
  g_assert_nonnull (strstr (json, "\"subscriptions\": 1, "));
  g_assert_nonnull (strstr (json, "\"refused_keys\": 0, "));
  g_assert_nonnull (strstr (json, "\"replay_buffer_bytes\": 0, "));
  g_assert_nonnull (strstr (json, "\"hwm_dropped_events\": 0, \"version\": \""));
  g_assert_nonnull (strstr (json, kvev_publisher_get_endpoint (fixture.publisher)));
  g_assert_nonnull (strstr (json, "\"backend_id\": \"backend-1\", \"dp_rank\": 0}"));

  disabled = kvev_publisher_new (disabled_config, &error);
  g_assert_no_error (error);
  disabled_json = kvev_publisher_stats_json (disabled);
  g_assert_nonnull (strstr (disabled_json, "\"last_sequence\": 0, "));
  g_assert_nonnull (strstr (disabled_json, "\"endpoint\": null, "));
  g_assert_true (g_str_has_prefix (disabled_json, "{\"enabled\": false, \"instance_id\": \""));
  g_assert_nonnull (strstr (disabled_json, "\", \"enqueued_events\": 0"));
  fixture_stop (&fixture);
}

int
main (int argc, char **argv)
{
  guint i;

  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/kvevents/publisher/sequence-from-zero", test_sequence_from_zero);
  g_test_add_func ("/kvevents/publisher/maps-legacy", test_maps_legacy);
  g_test_add_func ("/kvevents/publisher/maps-plain", test_maps_plain);
  g_test_add_func ("/kvevents/publisher/context-fields", test_context_fields);
  g_test_add_func ("/kvevents/publisher/tenant-and-group-defaults", test_tenant_and_group_defaults);
  g_test_add_func ("/kvevents/publisher/media-expansion", test_media_expansion);
  g_test_add_func ("/kvevents/publisher/keyless", test_keyless);
  g_test_add_func ("/kvevents/publisher/empty-key-is-keyless", test_empty_key_is_keyless);
  g_test_add_data_func ("/kvevents/publisher/binary-keys", NULL, test_binary_keys);
  g_test_add_data_func ("/kvevents/publisher/non-utf8-bin", "bin", test_binary_keys);
  g_test_add_func ("/kvevents/publisher/non-utf8-skip", test_non_utf8_skip);
  g_test_add_func ("/kvevents/publisher/large-key", test_large_key);
  g_test_add_func ("/kvevents/publisher/bad-arguments", test_bad_arguments);
  g_test_add_func ("/kvevents/publisher/remove-all", test_remove_all);
  g_test_add_func ("/kvevents/publisher/call-events-together", test_call_events_together);
  g_test_add_func ("/kvevents/publisher/batch-limit", test_batch_limit);
  g_test_add_func ("/kvevents/publisher/message-limit", test_message_limit);
  g_test_add_func ("/kvevents/publisher/message-limit-unbounded", test_message_limit_unbounded);
  g_test_add_func ("/kvevents/publisher/batch-wait", test_batch_wait);
  g_test_add_func ("/kvevents/publisher/drop-oldest", test_drop_oldest);
  for (i = 0; i < G_N_ELEMENTS (partial_drops); i++)
    {
      g_autofree char *path = g_strdup_printf ("/kvevents/publisher/%s", partial_drops[i].name);

      g_test_add_data_func (path, &partial_drops[i], test_partial_drop);
    }
  for (i = 0; i < G_N_ELEMENTS (whole_calls); i++)
    {
      g_autofree char *path = g_strdup_printf ("/kvevents/publisher/%s", whole_calls[i].name);

      g_test_add_data_func (path, &whole_calls[i], test_whole_calls);
    }
  g_test_add_func ("/kvevents/publisher/flush-under-load", test_flush_under_load);
  g_test_add_func ("/kvevents/publisher/free-delivers", test_free_delivers);
  g_test_add_func ("/kvevents/publisher/bind-failure", test_bind_failure);
  g_test_add_func ("/kvevents/publisher/two-publishers-one-endpoint",
                   test_two_publishers_one_endpoint);
  g_test_add_func ("/kvevents/publisher/tcp-loopback", test_tcp_loopback);
  g_test_add_func ("/kvevents/publisher/stats-json", test_stats_json);

  return g_test_run ();
}
