/* kvevents-publisher.h: the publisher and its event calls.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEVENTS_PUBLISHER_H
#define KVEVENTS_PUBLISHER_H

#if !defined(KVEVENTS_H_INSIDE) && !defined(KVEVENTS_COMPILATION)
#error "Only <kvevents/kvevents.h> can be included directly."
#endif

#include <kvevents/kvevents-common.h>
#include <kvevents/kvevents-config.h>
#include <kvevents/kvevents-media.h>

G_BEGIN_DECLS

/**
 * KvevPublisher:
 *
 * An opaque event publisher: one bounded queue, one worker thread and one
 * ZeroMQ socket that subscribers connect to (an XPUB socket: the wire of a
 * PUB socket, and it sees subscriptions).  The event calls are thread-safe
 * and never wait on the network; the worker alone touches the socket.
 */
typedef struct _KvevPublisher KvevPublisher;

/**
 * kvev_publisher_new:
 * @config: a configuration; it is copied, so it may be freed afterwards.
 * @error: return location for a #GError, or %NULL.
 *
 * Creates a publisher.  When @config has enable_kv_events false, or the
 * library was built --without-zmq, the publisher is disabled: every event
 * call on it is a no-op and every statistic is 0, so the master's code
 * runs unchanged.  Otherwise the socket is bound and the worker
 * started before this returns.
 *
 * An enabled publisher holds up to 9 file descriptors and runs up to 4
 * threads, 2 of them libzmq's.  libzmq aborts the process when it cannot
 * get one, so this first checks that the process can still open 4 more
 * descriptors than that and start all the threads at once, and fails
 * with a %KVEV_ERROR_TRANSPORT naming what is short.  Another thread
 * taking the last descriptors or address space between that check and
 * libzmq's calls can still make libzmq abort.
 *
 * fork(): in a process forked from the one that called this (to run a
 * helper, or to daemonise), the publisher is an inert copy: the child has
 * none of its threads, and whatever lock one of them held at the fork
 * stays held there.  Every call on the copy returns at once and does
 * nothing: the event calls publish nothing, kvev_clear_end() returns
 * %FALSE, kvev_publisher_flush() returns %TRUE (the copy accepted
 * nothing, so nothing of the child's is waiting), every statistic is 0,
 * kvev_publisher_stats_json() reports "enabled": false,
 * kvev_publisher_is_enabled() returns %FALSE and kvev_publisher_free()
 * returns without freeing.  kvev_publisher_get_endpoint() still tells the
 * parent's endpoint.  The parent's publisher is not affected.  A child that
 * publishes makes a publisher of its own, on another endpoint.  The child
 * holds copies of the publisher's descriptors, its listening socket
 * among them, until it execs (they are close-on-exec).  Only fork() runs
 * the library's fork handlers: after _Fork() or a raw clone() nothing
 * on the copy may be called.
 *
 * Returns: (transfer full) (nullable): a publisher, to free with
 *   kvev_publisher_free(); %NULL when @config does not validate (the
 *   errors of kvev_config_validate()) or with %KVEV_ERROR_TRANSPORT when
 *   the process has too few file descriptors, threads or address space
 *   left, the socket cannot be bound or the worker cannot start, with the
 *   reason.  Nothing is left behind on failure.
 */
KVEV_API KvevPublisher *kvev_publisher_new (const KvevConfig *config, GError **error);

/**
 * kvev_publisher_is_enabled:
 * @publisher: a publisher.
 *
 * Tells whether the event calls on @publisher publish.
 *
 * Returns: %TRUE when the publisher puts events on the wire; %FALSE
 *   also in a process forked from the one that created it.
 * Thread-safe.
 */
KVEV_API gboolean kvev_publisher_is_enabled (const KvevPublisher *publisher);

/**
 * kvev_publisher_get_endpoint:
 * @publisher: a publisher.
 *
 * The endpoint actually bound, with wildcards resolved, so a publisher
 * bound to tcp://127.0.0.1:* tells its port.
 *
 * Returns: (transfer none) (nullable): owned by @publisher, valid until
 *   it is freed; %NULL for a disabled publisher; in a forked child (see
 *   kvev_publisher_new()), the endpoint the parent's publisher is bound to.
 * Thread-safe.
 */
KVEV_API const char *kvev_publisher_get_endpoint (const KvevPublisher *publisher);

/**
 * kvev_publisher_flush:
 * @publisher: a publisher.
 * @timeout_ms: how long to wait at most; negative waits without bound.
 *
 * Waits until every event accepted before the call has been handed to
 * ZeroMQ (or dropped and counted).  A subscriber whose pipe is full is
 * waited for as kv_events_send_wait_ms says: a sole one as long as it
 * does not read (kvevents(7), SLOW SUBSCRIBERS).
 *
 * Returns: %TRUE when that happened within @timeout_ms (always, and at
 *   once, for a disabled publisher and in a forked child, see
 *   kvev_publisher_new()), %FALSE at the timeout.
 * Thread-safe.
 */
KVEV_API gboolean kvev_publisher_flush (KvevPublisher *publisher, gint64 timeout_ms);

/**
 * kvev_publisher_free:
 * @publisher: (nullable) (transfer full): a publisher, or %NULL.
 *
 * Frees a publisher: it stops intake, publishes what is queued for at most
 * kv_events_close_timeout_ms, closes the socket with a linger of that same
 * bound (so sent messages still reach connected subscribers), joins the
 * worker and frees everything.  Events still queued at the deadline are
 * counted as dropped.  Calling an event function on @publisher while or
 * after it is freed is a caller error.
 *
 * In a process forked from the one that created @publisher, this returns
 * at once and frees nothing: the copy's queue, locks and socket are in
 * whatever state the parent's threads left them, so its memory stays
 * allocated (a one-time leak of what fork() copied) and no warning is
 * given.  See kvev_publisher_new().
 */
KVEV_API void kvev_publisher_free (KvevPublisher *publisher);

/* Events.
 *
 * Every event call is thread-safe and never blocks on the network: it
 * validates, copies the strings once and queues.  A KvevMedia argument is a
 * set: one event per tier in it, cpu first.  tenant_id NULL or "" is sent
 * as "default"; group_id NULL or "" is sent as nil; key_len -1 means
 * object_key is NUL-terminated, otherwise it is taken byte for byte (NULs
 * included).  Keys longer than 1 MiB are refused with a critical and counted
 * in KVEV_STAT_REJECTED_EVENTS.  An empty key, or kv_events_emit_object_key
 * false, suppresses stored and removed events (counted in
 * KVEV_STAT_SKIPPED_KEYLESS_EVENTS).  With kv_events_non_utf8 skip, a call
 * whose key, tenant or group is not UTF-8 publishes nothing and takes no
 * event_id (counted in KVEV_STAT_SKIPPED_NON_UTF8_EVENTS); by default such
 * strings go out as msgpack bin.  A disabled publisher accepts every
 * call and does nothing.  NULL publisher, NULL key or media bits outside
 * KVEV_MEDIA_ALL are caller errors (a GLib critical, nothing queued);
 * every one but a NULL publisher counts in KVEV_STAT_REJECTED_EVENTS.
 */

/**
 * kvev_publish_stored:
 * @publisher: a publisher.
 * @tenant_id: (nullable): the Store operation's tenant.
 * @object_key: the Store key, forwarded verbatim.
 * @key_len: length of @object_key in bytes, or -1 if NUL-terminated.
 * @group_id: (nullable): the Store group identity.
 * @media: the tiers now available.
 *
 * Publishes stored events: the object became readable on @media.
 *
 * Put, BatchPut or Upsert commit: @media is every completed tier.
 * Offload or promotion: @media is only the tier that appeared; or call
 * kvev_publish_delta() with the tiers before and after, which works
 * that out.
 *
 * Errors: A %NULL @publisher or @object_key, @key_len below -1, bits of
 *   @media outside %KVEV_MEDIA_ALL, or a key, tenant or group longer
 *   than 1 MiB: the call is refused with a critical (kvevents(7),
 *   LOGGING) and queues nothing; a live publisher counts it in
 *   %KVEV_STAT_REJECTED_EVENTS.
 */
KVEV_API void kvev_publish_stored (KvevPublisher *publisher, const char *tenant_id,
                                   const char *object_key, gssize key_len, const char *group_id,
                                   KvevMedia media);

/**
 * kvev_publish_removed:
 * @publisher: a publisher.
 * @tenant_id: (nullable): the Store operation's tenant.
 * @object_key: the Store key.
 * @key_len: length of @object_key in bytes, or -1 if NUL-terminated.
 * @group_id: (nullable): the Store group identity.
 * @media: the tiers no longer available.
 *
 * Publishes removed events: the object is no longer readable on @media.
 *
 * Remove, BatchRemove, regex remove: @media is the set before the removal.
 * Upsert: the old value's tiers when it becomes unreadable.
 *
 * Errors: As for kvev_publish_stored().
 */
KVEV_API void kvev_publish_removed (KvevPublisher *publisher, const char *tenant_id,
                                    const char *object_key, gssize key_len, const char *group_id,
                                    KvevMedia media);

/**
 * kvev_publish_delta:
 * @publisher: a publisher.
 * @tenant_id: (nullable): the Store operation's tenant.
 * @object_key: the Store key.
 * @key_len: length of @object_key in bytes, or -1 if NUL-terminated.
 * @group_id: (nullable): the Store group identity.
 * @media_before: the tiers the caller captured before the mutation.
 * @media_after: the tiers after it.
 *
 * Publishes the difference between two sets of tiers of one object.
 *
 * Copy, Move, eviction, replica clear, stale handle cleanup: removed for
 * every tier in before but not after, then stored for every tier in after
 * but not before, all queued together; nothing when the sets are equal.
 * The publisher keeps no per-object state: the caller's snapshot is the
 * "before".
 *
 * Errors: As for kvev_publish_stored(), either set of tiers with bits
 *   outside %KVEV_MEDIA_ALL included.
 */
KVEV_API void kvev_publish_delta (KvevPublisher *publisher, const char *tenant_id,
                                  const char *object_key, gssize key_len, const char *group_id,
                                  KvevMedia media_before, KvevMedia media_after);

/**
 * kvev_publish_cleared:
 * @publisher: a publisher.
 * @tenant_id: (nullable): the tenant whose every tier is cleared.
 *
 * Publishes one cleared event (medium nil: every tier of backend_id +
 * tenant_id).  It needs no object identity, so kv_events_emit_object_key
 * does not suppress it.  RemoveAll should use the kvev_clear_* scope,
 * which decides whether cleared is true.
 *
 * Errors: A %NULL @publisher, or a tenant longer than 1 MiB: the call is
 *   refused with a critical (kvevents(7), LOGGING) and queues nothing; a
 *   live publisher counts the long tenant in %KVEV_STAT_REJECTED_EVENTS.
 */
KVEV_API void kvev_publish_cleared (KvevPublisher *publisher, const char *tenant_id);

/**
 * KvevClearScope:
 *
 * One RemoveAll of one tenant.  A scope is used from one thread.
 */
typedef struct _KvevClearScope KvevClearScope;

/**
 * KvevSkipReason:
 * @KVEV_SKIP_LEASED: the object is leased.
 * @KVEV_SKIP_INCOMPLETE_REPLICAS: not every replica is completed.
 * @KVEV_SKIP_PENDING_REPLICATION: a replication task is pending.
 * @KVEV_SKIP_OPLOG_RESERVE_FAILED: the oplog slot could not be reserved.
 * @KVEV_SKIP_OPLOG_APPEND_FAILED: the oplog append failed.
 * @KVEV_SKIP_OTHER: any other reason the object stayed.
 *
 * Why RemoveAll left an object behind.  Values are ABI, only appended.
 */
typedef enum
{
  KVEV_SKIP_LEASED = 0,
  KVEV_SKIP_INCOMPLETE_REPLICAS = 1,
  KVEV_SKIP_PENDING_REPLICATION = 2,
  KVEV_SKIP_OPLOG_RESERVE_FAILED = 3,
  KVEV_SKIP_OPLOG_APPEND_FAILED = 4,
  KVEV_SKIP_OTHER = 5,
} KvevSkipReason;

/**
 * kvev_clear_begin:
 * @publisher: a publisher.
 * @tenant_id: (nullable): the tenant being removed.
 *
 * Begins the events of one RemoveAll: kvev_clear_object_removed() for
 * each object removed, kvev_clear_skipped() for each left behind, then
 * kvev_clear_end().
 *
 * Returns: (transfer full): a scope, ended (and freed) by
 *   kvev_clear_end().  Never %NULL, also for a disabled publisher.
 */
KVEV_API KvevClearScope *kvev_clear_begin (KvevPublisher *publisher, const char *tenant_id);

/**
 * kvev_clear_object_removed:
 * @scope: a scope.
 * @object_key: the removed object's key.
 * @key_len: length of @object_key in bytes, or -1 if NUL-terminated.
 * @group_id: (nullable): its group.
 * @media_before: the tiers it had.
 *
 * The removal loop accepted this object: its removed events are queued now.
 *
 * Errors: A %NULL @scope or @object_key, @key_len below -1, bits of
 *   @media_before outside %KVEV_MEDIA_ALL, or a key or group longer
 *   than 1 MiB: the call is refused with a critical (kvevents(7),
 *   LOGGING) and queues nothing; a live publisher counts it in
 *   %KVEV_STAT_REJECTED_EVENTS.
 */
KVEV_API void kvev_clear_object_removed (KvevClearScope *scope, const char *object_key,
                                         gssize key_len, const char *group_id,
                                         KvevMedia media_before);

/**
 * kvev_clear_skipped:
 * @scope: a scope.
 * @reason: why the object stayed.
 *
 * The removal loop skipped an object; cleared will not be published.
 * Counted per reason in the statistics; a reason this library does not
 * know (from a newer header) counts as %KVEV_SKIP_OTHER.
 */
KVEV_API void kvev_clear_skipped (KvevClearScope *scope, KvevSkipReason reason);

/**
 * kvev_clear_end:
 * @scope: (transfer full): a scope; freed by this call.
 *
 * Publishes cleared when the scope removed at least one object and
 * skipped none, so a tenant that held nothing, or a RemoveAll that left an
 * object behind, publishes no cleared.
 *
 * Returns: %TRUE when cleared was published (for a disabled publisher:
 *   when it would have been); %FALSE also when the library refused it, as
 *   for a tenant longer than 1 MiB, or skipped it, as for a tenant that
 *   is not UTF-8 under kv_events_non_utf8 skip.
 */
KVEV_API gboolean kvev_clear_end (KvevClearScope *scope);

/**
 * KvevStat:
 * @KVEV_STAT_ENQUEUED_EVENTS: events accepted into the queue.
 * @KVEV_STAT_PUBLISHED_EVENTS: events handed to ZeroMQ.
 * @KVEV_STAT_PUBLISHED_BATCHES: messages handed to ZeroMQ.
 * @KVEV_STAT_DROPPED_EVENTS: events lost: dropped by the full queue, in a
 *   message that failed to send, or still queued at close.
 * @KVEV_STAT_SKIPPED_KEYLESS_EVENTS: stored/removed events suppressed for
 *   want of a key.
 * @KVEV_STAT_SEND_FAILURES: messages ZeroMQ refused.
 * @KVEV_STAT_QUEUE_DEPTH: events queued now.
 * @KVEV_STAT_QUEUE_HIGH_WATER: the most events ever queued at once.
 * @KVEV_STAT_LAST_SEQUENCE: the transport sequence of the last message
 *   sent or attempted (0 before the first).
 * @KVEV_STAT_REJECTED_EVENTS: calls refused for bad arguments.
 * @KVEV_STAT_SKIPPED_LEASED: RemoveAll skips for %KVEV_SKIP_LEASED.
 * @KVEV_STAT_SKIPPED_INCOMPLETE_REPLICAS: ... %KVEV_SKIP_INCOMPLETE_REPLICAS.
 * @KVEV_STAT_SKIPPED_PENDING_REPLICATION: ... %KVEV_SKIP_PENDING_REPLICATION.
 * @KVEV_STAT_SKIPPED_OPLOG_RESERVE_FAILED: ... %KVEV_SKIP_OPLOG_RESERVE_FAILED.
 * @KVEV_STAT_SKIPPED_OPLOG_APPEND_FAILED: ... %KVEV_SKIP_OPLOG_APPEND_FAILED.
 * @KVEV_STAT_SKIPPED_OTHER: ... %KVEV_SKIP_OTHER.
 * @KVEV_STAT_CLEARED_SUPPRESSED: RemoveAll scopes that ended without
 *   cleared.
 * @KVEV_STAT_SKIPPED_NON_UTF8_EVENTS: events not published because
 *   kv_events_non_utf8 is skip and their key, tenant or group is not
 *   UTF-8.
 * @KVEV_STAT_SUBSCRIPTIONS: subscriptions present now that can receive
 *   events (to the topic, or to a prefix of it); a subscriber usually has
 *   one.  Since 1.1.
 * @KVEV_STAT_SUBSCRIBE_MESSAGES: subscribe messages received, any prefix.
 *   Since 1.1.
 * @KVEV_STAT_UNSUBSCRIBE_MESSAGES: unsubscriptions, a subscriber that
 *   leaves counting for each of its subscriptions.  Since 1.1.
 * @KVEV_STAT_REFUSED_ADDRESSES: connections refused because their address
 *   is not in kv_events_allowed_addresses.  Since 1.1.
 * @KVEV_STAT_REFUSED_KEYS: CURVE subscribers refused because their key is
 *   not in kv_events_curve_allowed_clients_file.  Since 1.1.
 * @KVEV_STAT_HEARTBEATS: empty messages sent (kv_events_heartbeat_ms).
 *   Since 1.1.
 * @KVEV_STAT_REPLAY_REQUESTS: replay requests answered.  Since 1.1.
 * @KVEV_STAT_REPLAY_MALFORMED_REQUESTS: replay requests of another shape,
 *   left unanswered.  Since 1.1.
 * @KVEV_STAT_REPLAY_MESSAGES: messages sent again by replay.  Since 1.1.
 * @KVEV_STAT_REPLAY_BUFFER_MESSAGES: messages kept for replay now.
 *   Since 1.1.
 * @KVEV_STAT_REPLAY_BUFFER_BYTES: their payload bytes.  Since 1.1.
 * @KVEV_STAT_SNAPSHOT_REQUESTS: snapshot requests received.  Since 1.1.
 * @KVEV_STAT_SNAPSHOTS_REFUSED: requests refused: no snapshot function,
 *   or another shape.  Since 1.1.
 * @KVEV_STAT_SNAPSHOTS_FAILED: walks that returned an error, or whose
 *   subscriber went away.  Since 1.1.
 * @KVEV_STAT_SNAPSHOT_OBJECTS: objects sent in snapshots.  Since 1.1.
 * @KVEV_STAT_HWM_DROPPED_MESSAGES: messages that a subscriber's full
 *   pipe refused once kv_events_send_wait_ms was spent: ZeroMQ dropped
 *   each for that subscriber and delivered it to the others.  Since 1.1.
 * @KVEV_STAT_HWM_DROPPED_EVENTS: the events of those messages.  Since 1.1.
 *
 * Statistics.  Values are ABI: new ones are only ever appended.
 */
typedef enum
{
  KVEV_STAT_ENQUEUED_EVENTS = 0,
  KVEV_STAT_PUBLISHED_EVENTS = 1,
  KVEV_STAT_PUBLISHED_BATCHES = 2,
  KVEV_STAT_DROPPED_EVENTS = 3,
  KVEV_STAT_SKIPPED_KEYLESS_EVENTS = 4,
  KVEV_STAT_SEND_FAILURES = 5,
  KVEV_STAT_QUEUE_DEPTH = 6,
  KVEV_STAT_QUEUE_HIGH_WATER = 7,
  KVEV_STAT_LAST_SEQUENCE = 8,
  KVEV_STAT_REJECTED_EVENTS = 9,
  KVEV_STAT_SKIPPED_LEASED = 10,
  KVEV_STAT_SKIPPED_INCOMPLETE_REPLICAS = 11,
  KVEV_STAT_SKIPPED_PENDING_REPLICATION = 12,
  KVEV_STAT_SKIPPED_OPLOG_RESERVE_FAILED = 13,
  KVEV_STAT_SKIPPED_OPLOG_APPEND_FAILED = 14,
  KVEV_STAT_SKIPPED_OTHER = 15,
  KVEV_STAT_CLEARED_SUPPRESSED = 16,
  KVEV_STAT_SKIPPED_NON_UTF8_EVENTS = 17,
  KVEV_STAT_SUBSCRIPTIONS = 18,
  KVEV_STAT_SUBSCRIBE_MESSAGES = 19,
  KVEV_STAT_UNSUBSCRIBE_MESSAGES = 20,
  KVEV_STAT_REFUSED_ADDRESSES = 21,
  KVEV_STAT_REFUSED_KEYS = 22,
  KVEV_STAT_HEARTBEATS = 23,
  KVEV_STAT_REPLAY_REQUESTS = 24,
  KVEV_STAT_REPLAY_MALFORMED_REQUESTS = 25,
  KVEV_STAT_REPLAY_MESSAGES = 26,
  KVEV_STAT_REPLAY_BUFFER_MESSAGES = 27,
  KVEV_STAT_REPLAY_BUFFER_BYTES = 28,
  KVEV_STAT_SNAPSHOT_REQUESTS = 29,
  KVEV_STAT_SNAPSHOTS_REFUSED = 30,
  KVEV_STAT_SNAPSHOTS_FAILED = 31,
  KVEV_STAT_SNAPSHOT_OBJECTS = 32,
  KVEV_STAT_HWM_DROPPED_MESSAGES = 33,
  KVEV_STAT_HWM_DROPPED_EVENTS = 34,
} KvevStat;

/**
 * kvev_publisher_stat:
 * @publisher: a publisher.
 * @stat: which statistic.
 *
 * Reads one statistic.
 *
 * Returns: its current value; 0 for a disabled publisher, in a forked
 *   child (see kvev_publisher_new()) or for a @stat newer than this
 *   library.  Read without stopping the worker.
 * Thread-safe.
 */
KVEV_API guint64 kvev_publisher_stat (const KvevPublisher *publisher, KvevStat stat);

/**
 * kvev_publisher_get_instance_id:
 * @publisher: a publisher.
 *
 * This publisher's identity: 128 bits from the system's random source,
 * drawn when it was created, as 32 lowercase hexadecimal digits.  Two
 * publishers, or a master and the same master restarted, never share
 * one, so a subscriber that sees the sequence go back, or a gap, can
 * tell a restart from loss.  It is sent as every event's publisher_id
 * with kv_events_emit_publisher_id, and is in kvev_publisher_stats_json().
 *
 * Returns: (transfer none): the id, valid as long as @publisher.
 * Thread-safe.  Since: 1.1
 */
KVEV_API const char *kvev_publisher_get_instance_id (const KvevPublisher *publisher);

/**
 * kvev_publisher_get_replay_endpoint:
 * @publisher: a publisher.
 *
 * The replay endpoint actually bound (kv_events_replay_endpoint), with
 * wildcards resolved.
 *
 * Returns: (transfer none) (nullable): the endpoint, or %NULL without
 *   replay or for a disabled publisher.
 * Thread-safe.  Since: 1.1
 */
KVEV_API const char *kvev_publisher_get_replay_endpoint (const KvevPublisher *publisher);

/**
 * kvev_publisher_get_snapshot_endpoint:
 * @publisher: a publisher.
 *
 * The snapshot endpoint actually bound (kv_events_snapshot_endpoint).
 *
 * Returns: (transfer none) (nullable): the endpoint, or %NULL without
 *   snapshots or for a disabled publisher.
 * Thread-safe.  Since: 1.1
 */
KVEV_API const char *kvev_publisher_get_snapshot_endpoint (const KvevPublisher *publisher);

/**
 * KvevSnapshot:
 *
 * A snapshot in the making: what a #KvevSnapshotFunc fills for one
 * subscriber that asked for the master's state.  Opaque; valid only
 * during the call.
 */
typedef struct _KvevSnapshot KvevSnapshot;

/**
 * KvevSnapshotFunc:
 * @snapshot: the snapshot to fill with kvev_snapshot_add().
 * @user_data: what kvev_publisher_set_snapshot_func() was given.
 * @error: return location for a #GError, set on failure.
 *
 * Walks the master's objects and calls kvev_snapshot_add() once for each,
 * with its completed tiers.  For each object it takes the lock it takes
 * when it publishes for that object: that is what makes the snapshot
 * exact (kvevents(7), SNAPSHOTS).  Between objects or shards, wherever
 * it holds none of its locks, it calls kvev_snapshot_pause(): only there
 * does the library wait for a slow subscriber.  It stops as soon as
 * either call returns %FALSE.  It runs on a thread of the library's, one
 * walk at a time, while event calls go on from the master's threads.
 *
 * Returns: %TRUE when the walk is complete, or stopped because a call
 *   returned %FALSE; %FALSE with @error set when it failed, and the
 *   subscriber is told.
 */
typedef gboolean (*KvevSnapshotFunc) (KvevSnapshot *snapshot, gpointer user_data, GError **error);

/**
 * kvev_publisher_set_snapshot_func:
 * @publisher: a publisher.
 * @func: (nullable): the walk, or %NULL for none.
 * @user_data: passed to @func.
 * @destroy: (nullable): frees @user_data when the function is replaced or
 *   the publisher freed.
 *
 * Sets what answers snapshot requests on kv_events_snapshot_endpoint.
 * Without a function, requests are refused with an error reply.  A walk
 * in progress is told to stop (its next kvev_snapshot_add() or
 * kvev_snapshot_pause() returns %FALSE), and this waits for it to
 * return.  On a publisher inherited by a forked child it does nothing
 * and keeps @user_data (kvevents(7), THE MASTER'S PROCESS).
 *
 * Errors: Called from inside a walk, where it would wait for itself: the
 *   call is refused with a critical (kvevents(7), LOGGING) and changes
 *   nothing.
 *
 * Thread-safe.  Since: 1.1
 */
KVEV_API void kvev_publisher_set_snapshot_func (KvevPublisher *publisher, KvevSnapshotFunc func,
                                                gpointer user_data, GDestroyNotify destroy);

/**
 * kvev_snapshot_add:
 * @snapshot: the snapshot being made.
 * @tenant_id: (nullable): the object's tenant; %NULL is "default".
 * @object_key: the object's key.
 * @key_len: its length, or -1 when NUL-terminated.
 * @group_id: (nullable): the object's group.
 * @media: its completed tiers; %KVEV_MEDIA_NONE adds nothing.
 *
 * Adds one object: one stored event per tier, sent to the subscriber as
 * the walk goes, in chunks, so memory does not grow with the number of
 * objects.  It never waits for the subscriber, so the master may call it
 * holding its own locks: a chunk the subscriber has no room for yet is
 * held, up to a bound (kvevents(7), SNAPSHOTS), which only
 * kvev_snapshot_pause() waits to drain.
 *
 * Returns: %TRUE to go on; %FALSE when the walk should stop: the
 *   subscriber went away, or is too far behind for what is held, or the
 *   publisher is being freed or its function replaced.  Once it returned
 *   %FALSE, every later call does too and adds nothing.
 *
 * Errors: Arguments are checked as kvev_publish_stored() checks them; a
 *   refused call is a critical (kvevents(7), LOGGING), adds nothing and
 *   returns %TRUE, or %FALSE for a %NULL @snapshot.
 *
 * Since: 1.1
 */
KVEV_API gboolean kvev_snapshot_add (KvevSnapshot *snapshot, const char *tenant_id,
                                     const char *object_key, gssize key_len, const char *group_id,
                                     KvevMedia media);

/**
 * kvev_snapshot_pause:
 * @snapshot: the snapshot being made.
 *
 * A point of the walk where the master holds none of its locks: call it
 * between objects or between shards.  Here, and only here, the library
 * waits for a subscriber that reads more slowly than the walk goes, until
 * what kvev_snapshot_add() holds has drained, and here it paces the walk
 * to kv_events_snapshot_duty_percent.  Every wait of one snapshot shares
 * one budget of 5 seconds; a walk that never calls this does not wait,
 * and stops when its subscriber falls too far behind.
 *
 * Returns: %TRUE to go on; %FALSE when the walk should stop, as for
 *   kvev_snapshot_add(), or when the budget is spent.
 *
 * Since: 1.1
 */
KVEV_API gboolean kvev_snapshot_pause (KvevSnapshot *snapshot);

/**
 * kvev_publisher_wait_subscribers:
 * @publisher: a publisher.
 * @n: how many subscriptions to wait for.
 * @timeout_ms: the longest wait in milliseconds; negative: no limit.
 *
 * Waits until at least @n subscriptions that can receive events are
 * present (%KVEV_STAT_SUBSCRIPTIONS).  A subscriber connected to a
 * ZeroMQ publisher receives nothing sent before its subscription arrived;
 * once this returns %TRUE, the next message reaches those subscribers.
 * Event calls from other threads go on meanwhile and never wait for it.
 *
 * Returns: %TRUE once they are present; %FALSE after @timeout_ms, or at
 *   once for a disabled publisher when @n is not 0.
 * Thread-safe.  Since: 1.1
 */
KVEV_API gboolean kvev_publisher_wait_subscribers (KvevPublisher *publisher, guint n,
                                                   gint64 timeout_ms);

/**
 * kvev_publisher_stats_json:
 * @publisher: a publisher.
 *
 * Every statistic as one JSON object, for a status endpoint:
 * {"enabled": true, "instance_id": "...", "enqueued_events": N, ...},
 * each counter by its snake_case name, then what tells this publisher
 * apart on a page of several: "version", "endpoint" (null when
 * disabled), "backend_id" and "dp_rank".  "last_sequence" is null while
 * no message has gone out.  Unlike separate kvev_publisher_stat() calls,
 * one snapshot adds up: enqueued_events is at least published_events +
 * dropped_events + queue_depth (the rest are in the worker's hands).
 *
 * Returns: (transfer full): a NUL-terminated string; free with g_free().
 * Thread-safe.
 */
KVEV_API char *kvev_publisher_stats_json (const KvevPublisher *publisher);

/**
 * kvev_publisher_stats_openmetrics:
 * @publisher: a publisher.
 *
 * Every statistic in the OpenMetrics text format, for a master's
 * /metrics endpoint: each as kvevents_NAME, counters with the _total
 * suffix, gauges for what goes down as well as up (queue_depth,
 * subscriptions, the replay buffer), all labelled with backend_id,
 * dp_rank and instance_id, a kvevents_publisher info metric with the
 * version and the endpoint, and the closing "# EOF".  One snapshot, as
 * kvev_publisher_stats_json().
 *
 * Returns: (transfer full): a NUL-terminated string; free with g_free().
 * Thread-safe.  Since: 1.1
 */
KVEV_API char *kvev_publisher_stats_openmetrics (const KvevPublisher *publisher);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (KvevPublisher, kvev_publisher_free)

G_END_DECLS

#endif /* KVEVENTS_PUBLISHER_H */
