/* publisher-private.h: the publisher's state, shared by its lifecycle,
 * its event calls and its transport.  Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEVENTS_PUBLISHER_PRIVATE_H
#define KVEVENTS_PUBLISHER_PRIVATE_H

#include "queue.h"
#include "transport.h"

G_BEGIN_DECLS

#define KVEV_N_SKIP_REASONS (KVEV_SKIP_OTHER + 1)
#define KVEV_CACHE_LINE 64

struct _KvevPublisher
{
  /* Read-only after creation. */
  KvevConfig *config;
  gboolean enabled;
  KvevQueue *queue;
  KvevTransport *transport;
  char *endpoint;
  gint accepting; /* atomic: 0 once kvev_publisher_free() began, or inherited */
  /* TRUE in a process forked from the one that created the publisher,
   * set there by fork.c's child handler before anything else runs. */
  gboolean inherited;
  /* fork.c's registry of running publishers, under its lock. */
  KvevPublisher *fork_prev;
  KvevPublisher *fork_next;

  /* Flush waits on the worker's progress. */
  GMutex progress_lock;
  GCond progress_cond;
  guint64 retired_event_id; /* every id <= this was sent or dropped */
  guint flush_waiters;

  /* The worker writes these for every message: a line of their own, so
   * producers pushing into the queue do not bounce it. */
  char pad0[KVEV_CACHE_LINE];
  guint64 published_events;
  guint64 published_batches;
  guint64 send_failures;
  guint64 send_failed_events;
  guint64 last_sequence;
  char pad1[KVEV_CACHE_LINE];

  /* Rare paths, bumped with atomic adds from any thread. */
  guint64 skipped_keyless_events;
  guint64 rejected_events;
  guint64 skipped_by_reason[KVEV_N_SKIP_REASONS];
  guint64 cleared_suppressed;
};

/* The worker reports that every event up to last_event_id has left (sent
 * or dropped), waking flushers. */
void kvev_publisher_retire (KvevPublisher *publisher, guint64 last_event_id);

G_END_DECLS

#endif /* KVEVENTS_PUBLISHER_PRIVATE_H */
