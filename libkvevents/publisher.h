/* publisher.h: what the event calls (event-calls.c) ask of the
 * publisher that owns the queue, and the testing build's seam into it.
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEV_PUBLISHER_H
#define KVEV_PUBLISHER_H

#include "precondition.h"
#include "events/queue.h"

G_BEGIN_DECLS

#define KVEV_N_SKIP_REASONS (KVEV_SKIP_OTHER + 1)

/* Queues a keyed call's events: removed for the tiers in removed, then
 * stored for the tiers in stored (not both empty), with strings whose
 * lengths the caller checked.  Does what the publisher's state and
 * settings say instead, when it must not queue: nothing for a disabled or
 * closing publisher, a count for a keyless or a skipped non-UTF-8 call. */
void kvev_publisher_queue_keyed (KvevPublisher *publisher, KvevMedia removed, KvevMedia stored,
                                 const char *tenant_id, gsize tenant_len, const char *object_key,
                                 gsize key_len, const char *group_id, gsize group_len);

/* Queues cleared for a tenant whose length the caller checked.  TRUE when
 * it is queued or, by a disabled publisher, would have been. */
gboolean kvev_publisher_queue_cleared (KvevPublisher *publisher, const char *tenant_id,
                                       gsize tenant_len);

/* A call refused for its arguments: a critical naming function, a few
 * per call site (precondition.h), and a count on a live publisher, where
 * operators see every one. */
void kvev_publisher_reject_at (KvevPublisher *publisher, KvevLogLimit *limit, const char *function,
                               const char *reason);
#define kvev_publisher_reject(publisher, function, reason)                                         \
  G_STMT_START                                                                                     \
  {                                                                                                \
    static KvevLogLimit kvev_limit_;                                                               \
    kvev_publisher_reject_at ((publisher), &kvev_limit_, (function), (reason));                    \
  }                                                                                                \
  G_STMT_END

/* An event call's check once its publisher is known: refused as the
 * checks of lengths and tiers are, counted with them in rejected_events.
 * G_DISABLE_CHECKS does not remove it: what the statistic counts does
 * not depend on how the library was built. */
#define kvev_publisher_return_if_fail(publisher, expr)                                             \
  G_STMT_START                                                                                     \
  {                                                                                                \
    if (G_UNLIKELY (!(expr)))                                                                      \
      {                                                                                            \
        kvev_publisher_reject ((publisher), G_STRFUNC, "assertion '" #expr "' failed");            \
        return;                                                                                    \
      }                                                                                            \
  }                                                                                                \
  G_STMT_END

/* RemoveAll's counts. */
void kvev_publisher_count_skip (KvevPublisher *publisher, KvevSkipReason reason);
void kvev_publisher_count_cleared_suppressed (KvevPublisher *publisher);

#ifdef KVEV_TESTING
/* The queue of an enabled publisher, for tests that hold its worker. */
KvevQueue *kvev_publisher_get_queue (const KvevPublisher *publisher);
#endif

G_END_DECLS

#endif /* KVEV_PUBLISHER_H */
