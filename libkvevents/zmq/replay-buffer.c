/* replay-buffer.c: the messages kept for replay; see replay-buffer.h.
 *
 * Heartbeats take no slot of kv_events_replay_buffer_messages and none
 * of kv_events_replay_buffer_bytes: an idle stream, or a peer that makes
 * the publisher beat by subscribing in a loop, would otherwise push
 * every real message out.  A heartbeat that directly follows the newest
 * entry (its sequence, or the last of its run, plus one) extends that
 * entry's run of trailing heartbeats, which keeps the run's newest
 * heartbeat message and sends its bytes for every sequence of the run:
 * heartbeats carry no event, so a replay still has no hole, and each
 * replayed heartbeat of a run carries the timestamp of the newest one.
 * That message is outside the byte budget: one heartbeat,
 * [timestamp_ms, [], dp_rank], at most 16 bytes an entry.  Only after a
 * gap (a message not kept, a sequence the queue skipped) or into an empty
 * buffer does a heartbeat take an entry of its own, counted as any
 * message.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "replay-buffer.h"

#include "counter.h"

typedef struct
{
  guint64 sequence;
  zmq_msg_t message;
  guint64 run;    /* the heartbeats of sequence + 1 to sequence + run */
  zmq_msg_t beat; /* the newest of them, when run > 0 */
} Entry;

struct _KvevReplayBuffer
{
  guint32 max_messages;
  guint32 max_bytes;

  /* A ring that grows up to max_messages, under lock. */
  GMutex lock;
  Entry *entries;
  gsize capacity;
  gsize first;
  gsize length;
  guint64 bytes;     /* the entries' own messages: the runs' are outside */
  guint64 sequences; /* entries and their runs: what a whole replay sends */

  /* Copies of bytes and sequences, for kvev_replay_buffer_counts(). */
  guint64 counted_bytes;
  guint64 counted_sequences;
};

KvevReplayBuffer *
kvev_replay_buffer_new (guint32 max_messages, guint32 max_bytes)
{
  KvevReplayBuffer *buffer = g_new0 (KvevReplayBuffer, 1);

  g_assert (max_messages > 0 && max_bytes > 0);
  buffer->max_messages = max_messages;
  buffer->max_bytes = max_bytes;
  g_mutex_init (&buffer->lock);
  return buffer;
}

static Entry *
entry_at (KvevReplayBuffer *buffer, gsize i)
{
  return &buffer->entries[(buffer->first + i) % buffer->capacity];
}

static void
drop_oldest_locked (KvevReplayBuffer *buffer)
{
  Entry *oldest = entry_at (buffer, 0);

  buffer->bytes -= zmq_msg_size (&oldest->message);
  buffer->sequences -= 1 + oldest->run;
  zmq_msg_close (&oldest->message);
  if (oldest->run > 0)
    zmq_msg_close (&oldest->beat);
  buffer->first = (buffer->first + 1) % buffer->capacity;
  buffer->length--;
}

void
kvev_replay_buffer_free (KvevReplayBuffer *buffer)
{
  if (buffer == NULL)
    return;
  while (buffer->length > 0)
    drop_oldest_locked (buffer);
  g_free (buffer->entries);
  g_mutex_clear (&buffer->lock);
  g_free (buffer);
}

static void
grow_locked (KvevReplayBuffer *buffer)
{
  gsize capacity = MIN (MAX (buffer->capacity * 2, 64), buffer->max_messages);
  Entry *entries = g_new (Entry, capacity);
  gsize i;

  /* Moved field by field: a zmq_msg_t must not be copied as bytes. */
  for (i = 0; i < buffer->length; i++)
    {
      Entry *from = entry_at (buffer, i);

      entries[i].sequence = from->sequence;
      entries[i].run = from->run;
      zmq_msg_init (&entries[i].message);
      zmq_msg_move (&entries[i].message, &from->message);
      zmq_msg_init (&entries[i].beat);
      if (from->run > 0)
        zmq_msg_move (&entries[i].beat, &from->beat);
    }
  g_free (buffer->entries);
  buffer->entries = entries;
  buffer->capacity = capacity;
  buffer->first = 0;
}

static Entry *
newest_locked (KvevReplayBuffer *buffer)
{
  return buffer->length > 0 ? entry_at (buffer, buffer->length - 1) : NULL;
}

static void
extend_run_locked (Entry *entry, zmq_msg_t *message)
{
  if (entry->run == 0)
    zmq_msg_init (&entry->beat);
  zmq_msg_move (&entry->beat, message);
  entry->run++;
}

static void
append_locked (KvevReplayBuffer *buffer, guint64 sequence, zmq_msg_t *message)
{
  gsize size = zmq_msg_size (message);
  Entry *entry;

  while (buffer->length > 0
         && (buffer->length >= buffer->max_messages || buffer->bytes + size > buffer->max_bytes))
    drop_oldest_locked (buffer);
  if (buffer->length == buffer->capacity)
    grow_locked (buffer);
  entry = entry_at (buffer, buffer->length);
  entry->sequence = sequence;
  entry->run = 0;
  zmq_msg_init (&entry->message);
  zmq_msg_move (&entry->message, message);
  buffer->length++;
  buffer->bytes += size;
}

void
kvev_replay_buffer_keep (KvevReplayBuffer *buffer, guint64 sequence, zmq_msg_t *message,
                         gboolean heartbeat)
{
  Entry *newest;

  g_mutex_lock (&buffer->lock);
  newest = newest_locked (buffer);
  if (heartbeat && newest != NULL && sequence == newest->sequence + newest->run + 1)
    extend_run_locked (newest, message);
  /* A message larger than the whole budget is not kept, and drops
   * nothing: a replay shows its sequence missing, as a loss, rather than
   * losing every message before it too. */
  else if (zmq_msg_size (message) <= buffer->max_bytes)
    append_locked (buffer, sequence, message);
  else
    goto unlock;
  buffer->sequences++;
  kvev_counter_set (&buffer->counted_sequences, buffer->sequences);
  kvev_counter_set (&buffer->counted_bytes, buffer->bytes);
unlock:
  g_mutex_unlock (&buffer->lock);
}

/* The index of the first entry that holds a sequence of at least start,
 * its run included. */
static gsize
find_locked (KvevReplayBuffer *buffer, guint64 start)
{
  gsize low = 0, high = buffer->length;

  while (low < high)
    {
      gsize middle = low + (high - low) / 2;
      Entry *entry = entry_at (buffer, middle);

      if (entry->sequence + entry->run < start)
        low = middle + 1;
      else
        high = middle;
    }
  return low;
}

gboolean
kvev_replay_buffer_newest (KvevReplayBuffer *buffer, guint64 *newest)
{
  Entry *entry;

  g_mutex_lock (&buffer->lock);
  entry = newest_locked (buffer);
  if (entry != NULL)
    *newest = entry->sequence + entry->run;
  g_mutex_unlock (&buffer->lock);
  return entry != NULL;
}

gboolean
kvev_replay_buffer_get (KvevReplayBuffer *buffer, guint64 start, guint64 until, guint64 *sequence,
                        zmq_msg_t *message)
{
  gboolean found = FALSE;
  gsize i;

  g_mutex_lock (&buffer->lock);
  i = find_locked (buffer, start);
  if (i < buffer->length)
    {
      Entry *entry = entry_at (buffer, i);

      *sequence = MAX (start, entry->sequence);
      found = *sequence <= until;
      if (found)
        {
          zmq_msg_init (message);
          zmq_msg_copy (message, *sequence == entry->sequence ? &entry->message : &entry->beat);
        }
    }
  g_mutex_unlock (&buffer->lock);
  return found;
}

void
kvev_replay_buffer_counts (const KvevReplayBuffer *buffer, guint64 *messages, guint64 *bytes)
{
  *messages = kvev_counter_get (&buffer->counted_sequences);
  *bytes = kvev_counter_get (&buffer->counted_bytes);
}
