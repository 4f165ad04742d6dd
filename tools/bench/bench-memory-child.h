/* bench-memory-child.h: the processes the memory sections start (this
 * program again, with --memory-child KIND), one a run of a figure, so
 * that no earlier allocation is reused and the growth is the one
 * measured.
 *
 * kvevents-bench's (bench_memory_child_main ()): KIND "replay" fills the
 * replay buffer of a publisher with replay on
 * (kv_events_replay_buffer_messages n_events, endpoints in tmp_dir) with
 * n_events messages of up to BENCH_REPLAY_BATCH_EVENTS events
 * (bench-replay.h); "replay_off" sends as many messages from a publisher
 * without replay, for what publishing alone leaves behind.
 *
 * kvevents-bench-internal's (bench_memory_queue_child_main ()): KIND
 * "kvev" fills the queue of a publisher whose worker is held (the
 * testing build's seam, hold) to its capacity, n_events, with one stored
 * event per object, distinct keys of key_len bytes; "bare" queues as
 * many malloc()ed 128-byte items in a bare GAsyncQueue.
 *
 * Before and after, the child reads its resident set (/proc/self/statm)
 * and heap in use (mallinfo2, -1 without it), and at the end its peak
 * RSS (VmHWM), and prints one line:
 *
 *   RSS_BEFORE RSS_AFTER HEAP_BEFORE HEAP_AFTER PEAK_KIB COUNT HELD
 *
 * bytes, then KiB, then events queued (messages the replay buffer holds
 * for "replay", messages sent for "replay_off"), then the payload bytes
 * the replay buffer holds (0 for the other kinds).  Returns the exit
 * status.
 *
 * KIND "snapshot" is bench-snapshot.c's (bench_snapshot_child_main ()),
 * with a protocol of its own: a publisher whose snapshots walk n_events
 * objects, its client the parent.
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEV_BENCH_MEMORY_CHILD_H
#define KVEV_BENCH_MEMORY_CHILD_H

#include "bench-util.h"

G_BEGIN_DECLS

int bench_memory_child_main (const char *kind, guint n_events, guint key_len, const char *tmp_dir);
int bench_memory_queue_child_main (const char *kind, guint n_events, guint key_len,
                                   BenchHoldFunc hold);

G_END_DECLS

#endif /* KVEV_BENCH_MEMORY_CHILD_H */
