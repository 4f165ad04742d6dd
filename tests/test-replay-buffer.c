/* test-replay-buffer.c: the messages kept for replay, heartbeat runs and
 * the bounds (libkvevents/zmq/replay-buffer.h).
 * SPDX-License-Identifier: Apache-2.0
 */
#include "zmq/replay-buffer.h"

#include <string.h>

/* Keeps a message of size bytes, all of them fill. */
static void
keep (KvevReplayBuffer *buffer, guint64 sequence, gsize size, char fill, gboolean heartbeat)
{
  zmq_msg_t message;

  zmq_msg_init_size (&message, size);
  memset (zmq_msg_data (&message), fill, size);
  kvev_replay_buffer_keep (buffer, sequence, &message, heartbeat);
  zmq_msg_close (&message);
}

/* What a replay of start to until sends: "sequence:fill" for each. */
static char *
replay (KvevReplayBuffer *buffer, guint64 start, guint64 until)
{
  GString *out = g_string_new ("");
  zmq_msg_t message;
  guint64 sequence;

  while (start <= until && kvev_replay_buffer_get (buffer, start, until, &sequence, &message))
    {
      g_string_append_printf (out, "%s%" G_GUINT64_FORMAT ":%c", out->len > 0 ? " " : "", sequence,
                              zmq_msg_size (&message) > 0 ? *(char *) zmq_msg_data (&message)
                                                          : '-');
      zmq_msg_close (&message);
      start = sequence + 1;
    }
  return g_string_free (out, FALSE);
}

static void
assert_counts (KvevReplayBuffer *buffer, guint64 messages, guint64 bytes)
{
  guint64 m, b;

  kvev_replay_buffer_counts (buffer, &m, &b);
  g_assert_cmpuint (m, ==, messages);
  g_assert_cmpuint (b, ==, bytes);
}

static void
test_runs (void)
{
  KvevReplayBuffer *buffer = kvev_replay_buffer_new (2, 1000);
  g_autofree char *all = NULL, *middle = NULL, *tail = NULL;
  guint64 newest = 0;
  guint64 s;

  g_assert_false (kvev_replay_buffer_newest (buffer, &newest));
  keep (buffer, 10, 10, 'a', FALSE);
  /* Hundreds of heartbeats take no slot: the real message stays. */
  for (s = 11; s < 500; s++)
    keep (buffer, s, 5, 'b' + (s == 499), TRUE);
  keep (buffer, 500, 10, 'c', FALSE);
  assert_counts (buffer, 491, 20);
  g_assert_true (kvev_replay_buffer_newest (buffer, &newest));
  g_assert_cmpuint (newest, ==, 500);
  /* Every sequence of the run goes, with the newest heartbeat's bytes. */
  all = replay (buffer, 0, 500);
  g_assert_true (g_str_has_prefix (all, "10:a 11:c 12:c "));
  g_assert_true (g_str_has_suffix (all, " 498:c 499:c 500:c"));
  middle = replay (buffer, 250, 252);
  g_assert_cmpstr (middle, ==, "250:c 251:c 252:c");
  tail = replay (buffer, 501, 600);
  g_assert_cmpstr (tail, ==, "");
  kvev_replay_buffer_free (buffer);
}

static void
test_gaps (void)
{
  KvevReplayBuffer *buffer = kvev_replay_buffer_new (3, 1000);
  g_autofree char *all = NULL;

  /* Into an empty buffer, and after a gap, a heartbeat takes an entry. */
  keep (buffer, 1, 5, 'h', TRUE);
  keep (buffer, 2, 5, 'i', TRUE);
  keep (buffer, 3, 10, 'a', FALSE);
  keep (buffer, 6, 5, 'j', TRUE);
  keep (buffer, 7, 5, 'k', TRUE);
  assert_counts (buffer, 5, 20);
  all = replay (buffer, 0, 100);
  g_assert_cmpstr (all, ==, "1:h 2:i 3:a 6:j 7:k");
  kvev_replay_buffer_free (buffer);
}

static void
test_oversized (void)
{
  KvevReplayBuffer *buffer = kvev_replay_buffer_new (100, 64);
  g_autofree char *all = NULL;
  guint64 s;

  for (s = 1; s <= 6; s++)
    keep (buffer, s, 10, 'a' + (char) s, FALSE);
  /* Larger than the whole budget: skipped, and nothing else goes. */
  keep (buffer, 7, 65, 'x', FALSE);
  keep (buffer, 8, 10, 'i', FALSE);
  assert_counts (buffer, 6, 60);
  all = replay (buffer, 0, 100);
  g_assert_cmpstr (all, ==, "2:c 3:d 4:e 5:f 6:g 8:i");
  kvev_replay_buffer_free (buffer);
}

static void
test_bounds (void)
{
  KvevReplayBuffer *buffer = kvev_replay_buffer_new (2, 25);
  g_autofree char *all = NULL, *limited = NULL;

  keep (buffer, 1, 10, 'a', FALSE);
  keep (buffer, 2, 5, 'h', TRUE);
  keep (buffer, 3, 10, 'b', FALSE);
  keep (buffer, 4, 10, 'c', FALSE);
  /* Two slots: the oldest went with its run. */
  assert_counts (buffer, 2, 20);
  all = replay (buffer, 0, 100);
  g_assert_cmpstr (all, ==, "3:b 4:c");
  keep (buffer, 5, 20, 'd', FALSE);
  assert_counts (buffer, 1, 20);
  limited = replay (buffer, 0, 4);
  g_assert_cmpstr (limited, ==, "");
  kvev_replay_buffer_free (buffer);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/replay-buffer/runs", test_runs);
  g_test_add_func ("/replay-buffer/gaps", test_gaps);
  g_test_add_func ("/replay-buffer/oversized", test_oversized);
  g_test_add_func ("/replay-buffer/bounds", test_bounds);
  return g_test_run ();
}
