/* test-wire.c: the bytes on the wire, compared with a recording.
 *
 * Publishers with a fixed clock run scenarios through every publication
 * point and context setting; a subscriber writes what arrives, one line a
 * message: the topic, the sequence counted from the scenario's first
 * message, and the payload, in hexadecimal.  tests/wire/NAME.hex holds
 * what an earlier version sent, and every byte must match, so a change of
 * the encoder, the batching or the socket that alters the stream shows
 * here.  KVEV_WIRE_RECORD=DIR writes the files instead of comparing, for
 * a release that changes the wire on purpose.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "test-util.h"
#include "publisher.h"
#include "fault.h"

#include <string.h>

/* Every scenario starts at this event_id, whatever the sync took, so the
 * ids in the payloads do not depend on how many probes it sent. */
#define FIRST_EVENT_ID 1001

typedef void (*Scenario) (KvevPublisher *publisher);

static void
scenario_points (KvevPublisher *publisher)
{
  static const char nul_key[] = "nul\0key";
  KvevClearScope *scope;

  kvev_publish_stored (publisher, "tenant-a", "obj-1", -1, "group-1",
                       KVEV_MEDIA_CPU | KVEV_MEDIA_DISK);
  kvev_publish_stored (publisher, NULL, "obj-2", -1, NULL, KVEV_MEDIA_DISK);
  kvev_publish_delta (publisher, "tenant-a", "obj-3", -1, NULL, KVEV_MEDIA_CPU, KVEV_MEDIA_DISK);
  kvev_publish_delta (publisher, "tenant-a", "obj-1", -1, "group-1",
                      KVEV_MEDIA_CPU | KVEV_MEDIA_DISK, KVEV_MEDIA_DISK);
  kvev_publish_stored (publisher, "tenant-a", nul_key, sizeof nul_key - 1, NULL, KVEV_MEDIA_CPU);
  kvev_publish_stored (publisher, "tenant-a", "\xff\xfe", 2, NULL, KVEV_MEDIA_CPU);
  kvev_publish_stored (publisher, "t\xc3", "k", -1, "g\xff", KVEV_MEDIA_DISK);
  kvev_publish_stored (publisher, "tenant-a", "\xe4\xb8\xad\xe6\x96\x87", -1, NULL, KVEV_MEDIA_CPU);
  kvev_publish_removed (publisher, NULL, "obj-2", -1, NULL, KVEV_MEDIA_DISK);
  kvev_publish_removed (publisher, "tenant-a", "obj-1", -1, "group-1",
                        KVEV_MEDIA_CPU | KVEV_MEDIA_DISK);
  kvev_publish_cleared (publisher, NULL);
  scope = kvev_clear_begin (publisher, "tenant-b");
  kvev_clear_object_removed (scope, "obj-b", -1, NULL, KVEV_MEDIA_CPU);
  kvev_clear_object_removed (scope, "obj-c", -1, "g", KVEV_MEDIA_CPU | KVEV_MEDIA_DISK);
  kvev_clear_end (scope);
}

/* Enough events for several messages, with keys for every msgpack str
 * header: fixstr, str8, str16 and, when huge, one str32. */
static void
publish_many (KvevPublisher *publisher, gboolean huge)
{
  guint i;

  for (i = 0; i < 90; i++)
    {
      gsize len = i < 70 ? 1 + i % 40 : 300;
      g_autofree char *key = g_malloc (len);

      memset (key, 'a' + (int) (i % 26), len);
      kvev_publish_delta (publisher, i % 2 ? "tenant-x" : NULL, key, (gssize) len,
                          i % 5 ? NULL : "group-y", i % 3 ? KVEV_MEDIA_CPU : KVEV_MEDIA_NONE,
                          KVEV_MEDIA_DISK | (i % 4 ? KVEV_MEDIA_NONE : KVEV_MEDIA_CPU));
    }
  if (huge)
    {
      g_autofree char *key = g_malloc (66000);

      memset (key, 'z', 66000);
      kvev_publish_stored (publisher, NULL, key, 66000, NULL, KVEV_MEDIA_DISK);
    }
}

static void
scenario_batches (KvevPublisher *publisher)
{
  publish_many (publisher, TRUE);
}

static void
scenario_small_batches (KvevPublisher *publisher)
{
  publish_many (publisher, FALSE);
}

/* Brings the queue's last event_id to FIRST_EVENT_ID - 1 with cleared
 * events the subscriber reads and forgets, and returns the sequence the
 * next message takes. */
static guint64
align (KvevPublisher *publisher, TestSub *sub)
{
  guint64 last;

  while ((last = kvev_queue_last_event_id (kvev_publisher_get_queue (publisher)))
         < FIRST_EVENT_ID - 1)
    kvev_publish_cleared (publisher, "kvev-test-filler");
  g_assert_cmpuint (last, ==, FIRST_EVENT_ID - 1);
  g_assert_true (kvev_publisher_flush (publisher, 10000));
  for (;;)
    {
      g_autoptr (TestMessage) message = NULL;
      guint64 id;

      message = test_sub_recv (sub, 10000);
      g_assert_nonnull (message);
      g_assert_true (message->decoded);
      id = test_map_uint (&message->events[message->n_events - 1], "event_id");
      if (id == FIRST_EVENT_ID - 1)
        return message->sequence + 1;
    }
}

static void
append_hex (GString *out, GBytes *bytes)
{
  gsize len, i;
  const guint8 *data = g_bytes_get_data (bytes, &len);

  for (i = 0; i < len; i++)
    g_string_append_printf (out, "%02x", data[i]);
}

static char *
record (KvevConfig *config, Scenario scenario)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (TestMessage) first = NULL;
  GString *out = g_string_new (NULL);
  KvevPublisher *publisher;
  TestSub *sub;
  guint64 base, expected;

  publisher = kvev_publisher_new (config, &error);
  g_assert_no_error (error);
  sub = test_sub_new (kvev_publisher_get_endpoint (publisher));
  first = test_sync (publisher, sub);
  base = align (publisher, sub);
  expected = kvev_queue_last_event_id (kvev_publisher_get_queue (publisher));

  /* One pop takes the whole scenario: the batching does not depend on how
   * fast the worker runs. */
  kvev_queue_hold (kvev_publisher_get_queue (publisher), TRUE);
  scenario (publisher);
  expected = kvev_queue_last_event_id (kvev_publisher_get_queue (publisher)) - expected;
  kvev_queue_hold (kvev_publisher_get_queue (publisher), FALSE);
  g_assert_true (kvev_publisher_flush (publisher, 10000));

  while (expected > 0)
    {
      g_autoptr (TestMessage) message = test_sub_recv (sub, 10000);

      g_assert_nonnull (message);
      g_assert_cmpuint (message->n_frames, ==, 3);
      append_hex (out, message->topic);
      g_string_append_printf (out, " %" G_GUINT64_FORMAT " ", message->sequence - base);
      append_hex (out, message->payload);
      g_string_append_c (out, '\n');
      g_assert_true (message->decoded);
      g_assert_cmpuint (message->n_events, <=, expected);
      expected -= message->n_events;
    }
  g_assert_false (test_sub_receives_anything (sub));
  test_sub_free (sub);
  kvev_publisher_free (publisher);
  return g_string_free (out, FALSE);
}

typedef struct
{
  const char *name;
  Scenario scenario;
  const char *flags[8][2];
} WireCase;

static const WireCase cases[] = {
  { "points-default", scenario_points, { { NULL } } },
  { "points-context",
    scenario_points,
    { { "kv_events_model_name", "model-x" },
      { "kv_events_block_size", "32" },
      { "kv_events_additional_salt", "salt" },
      { "kv_events_lora_name", "lora-1" },
      { "kv_events_dp_rank", "3" },
      { "kv_events_topic", "kv@backend-1" },
      { NULL } } },
  { "points-plain", scenario_points, { { "kv_events_emit_legacy_compat", "false" }, { NULL } } },
  { "batches", scenario_small_batches, { { NULL } } },
  { "batches-of-5",
    scenario_batches,
    { { "kv_events_max_batch_events", "5" },
      { "kv_events_emit_legacy_compat", "false" },
      { NULL } } },
};

static void
test_wire (gconstpointer data)
{
  const WireCase *wire = data;
  g_autofree char *endpoint = test_ipc_endpoint (wire->name);
  g_autoptr (KvevConfig) config = test_config_new (endpoint);
  g_autofree char *name = g_strconcat (wire->name, ".hex", NULL);
  g_autofree char *got = NULL;
  const char *record_dir = g_getenv ("KVEV_WIRE_RECORD");
  guint i;

  for (i = 0; wire->flags[i][0] != NULL; i++)
    test_config_set (config, wire->flags[i][0], wire->flags[i][1]);
  kvev_fault_set_clock (1767225600123);
  got = record (config, wire->scenario);
  kvev_fault_set_clock (0);

  if (record_dir != NULL)
    {
      g_autofree char *path = g_build_filename (record_dir, name, NULL);
      g_autoptr (GError) error = NULL;

      g_assert_true (g_file_set_contents (path, got, -1, &error));
      g_assert_no_error (error);
    }
  else
    {
      g_autofree char *path = g_test_build_filename (G_TEST_DIST, "wire", name, NULL);
      g_autofree char *want = NULL;
      g_autoptr (GError) error = NULL;

      g_assert_true (g_file_get_contents (path, &want, NULL, &error));
      g_assert_no_error (error);
      g_assert_cmpstr (got, ==, want);
    }
}

int
main (int argc, char **argv)
{
  guint i;

  g_test_init (&argc, &argv, NULL);
  for (i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *path = g_strconcat ("/kvevents/wire/", cases[i].name, NULL);

      g_test_add_data_func (path, &cases[i], test_wire);
    }
  return g_test_run ();
}
