/* kvevents-subscriber.h: the subscriber side of the protocol, for an
 * indexer that wants the master's exact state.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEVENTS_SUBSCRIBER_H
#define KVEVENTS_SUBSCRIBER_H

#if !defined(KVEVENTS_H_INSIDE) && !defined(KVEVENTS_COMPILATION)
#error "Only <kvevents/kvevents.h> can be included directly."
#endif

#include <kvevents/kvevents-common.h>

G_BEGIN_DECLS

/**
 * KvevSubscriber:
 *
 * An opaque subscriber: it follows one or more publishers (kvevents(7)),
 * each on a SUB socket of its own, asks their replay and snapshot
 * endpoints for what it missed, and hands the events to the caller's
 * callbacks in an order that rebuilds each master's state exactly
 * (kvevents(7), SNAPSHOTS, the bootstrap).
 *
 * Threads: a subscriber belongs to the thread that calls
 * kvev_subscriber_dispatch() (or runs its #GSource); it starts no thread
 * of its own beyond libzmq's I/O thread, and every callback runs inside
 * dispatch, on the caller's thread.  No call waits on the network longer
 * than the timeout it was given.  The functions are not thread-safe: one
 * thread at a time, and no call from a callback other than the getters
 * (kvev_subscriber_stat(), kvev_subscriber_get_state(), the statistics
 * texts).
 *
 * The bootstrap, for each publisher:
 *
 * 1. It waits for the first live message (with kv_events_heartbeat_ms a
 *    heartbeat comes within 100 ms of the subscription).
 * 2. With a snapshot endpoint, it holds the live messages and asks for a
 *    snapshot; when its end comes, the reset callback says to forget
 *    what is known of the header's backend_id and dp_rank, the event
 *    callback gets the snapshot's stored events, then every held and later
 *    live event whose event_id is above the barrier, in order.  A refused,
 *    failed, malformed or silent snapshot changes nothing; it is asked for
 *    again after 1, 2, 4, 8, 16 s, then every 30 s, and the live messages
 *    go on being held meanwhile.
 * 3. On a sequence gap it holds the message that showed it and asks the
 *    replay endpoint, when there is one, for what is missing; what the
 *    replay does not bring (the buffer no longer held it, it timed out,
 *    came from another publisher_id, or lied) is recovered with a new
 *    snapshot, or reported lost when there is no snapshot endpoint.
 * 4. A new publisher_id, or a sequence that goes back (a restarted master,
 *    or another one after a failover), takes a new snapshot.
 *
 * A publisher with neither replay nor snapshots is followed too: its
 * losses are reported (%KVEV_SUBSCRIBER_LOST) and counted.
 *
 * Held messages are bounded: at most
 * %KVEV_SUBSCRIBER_OPTION_HOLD_MAX_MESSAGES messages (default 100000) and
 * %KVEV_SUBSCRIBER_OPTION_HOLD_MAX_BYTES bytes of frames (default 256 MiB)
 * a publisher.  Past either, the held messages are dropped and counted as
 * lost (%KVEV_SUBSCRIBER_REASON_HOLD_LIMIT), the replay or snapshot in
 * flight is abandoned and a new snapshot is asked for: memory never grows
 * without bound, whatever the publisher or the network do.  A snapshot
 * is kept whole until its end (so that a failed one changes nothing), at
 * most %KVEV_SUBSCRIBER_OPTION_SNAPSHOT_MAX_BYTES bytes (default 1 GiB);
 * a larger one fails.
 *
 * Hostile or broken input never crashes it: a live message of other
 * than three frames, a sequence frame of other than 8 bytes or a payload
 * that is not the protocol's msgpack is counted in
 * %KVEV_SUBSCRIBER_STAT_DECODE_ERRORS and the SUB socket is connected
 * again (its pipe dropped); a replay or snapshot answer of another shape,
 * out of order, or whose end lies about what it sent ends that request as
 * failed, and its socket is made anew.
 *
 * Failover: two leaders of one backend have no order on the wire, so the
 * subscriber gives them one.  Once a snapshot has replaced a backend
 * (a backend_id and dp_rank), every answer to a replay or snapshot request
 * that was made before that replacement, from any endpoint, is stale: it
 * is counted (%KVEV_SUBSCRIBER_STAT_STALE_ANSWERS) and dropped, never
 * delivered.  And the live events of that backend from every other
 * endpoint, whose own last bootstrap came before that replacement, are not
 * delivered (%KVEV_SUBSCRIBER_STAT_STALE_EVENTS) until that endpoint is
 * bootstrapped again, which only a new instance there does (a new
 * publisher_id, or a sequence that goes back): the old leader is
 * %KVEV_SUBSCRIBER_REASON_SUPERSEDED, and its gaps ask nothing.  So the
 * snapshot that replaced a backend last, and the events of its endpoint,
 * make the state.  A master that becomes leader again creates a new
 * publisher (a new instance id) for it.
 */
typedef struct _KvevSubscriber KvevSubscriber;

/**
 * KvevEventKind:
 * @KVEV_KIND_STORED: an object's tier became available.
 * @KVEV_KIND_REMOVED: it went away.
 * @KVEV_KIND_CLEARED: every tier of a backend_id and tenant_id went away.
 *
 * What an event says.  Values are ABI.
 */
typedef enum
{
  KVEV_KIND_STORED = 0,
  KVEV_KIND_REMOVED = 1,
  KVEV_KIND_CLEARED = 2,
} KvevEventKind;

/**
 * KvevValueType:
 * @KVEV_VALUE_ABSENT: the key is not in the map.
 * @KVEV_VALUE_NIL: msgpack nil.
 * @KVEV_VALUE_BOOL: a boolean, in @uint_value (0 or 1).
 * @KVEV_VALUE_UINT: an integer that is not negative, in @uint_value (and
 *   @int_value when it fits).
 * @KVEV_VALUE_INT: a negative integer, in @int_value.
 * @KVEV_VALUE_FLOAT: a float 32 or 64, in @float_value.
 * @KVEV_VALUE_STR: a msgpack str: @data and @len.  UTF-8 is not checked.
 * @KVEV_VALUE_BIN: a msgpack bin: @data and @len.
 * @KVEV_VALUE_ARRAY: an array of @len elements, read from @raw.
 * @KVEV_VALUE_MAP: a map of @len pairs, read from @raw.
 * @KVEV_VALUE_EXT: an extension: @data and @len, its type in @int_value.
 *
 * The msgpack type of one value.  Values are ABI.
 */
typedef enum
{
  KVEV_VALUE_ABSENT = 0,
  KVEV_VALUE_NIL = 1,
  KVEV_VALUE_BOOL = 2,
  KVEV_VALUE_UINT = 3,
  KVEV_VALUE_INT = 4,
  KVEV_VALUE_FLOAT = 5,
  KVEV_VALUE_STR = 6,
  KVEV_VALUE_BIN = 7,
  KVEV_VALUE_ARRAY = 8,
  KVEV_VALUE_MAP = 9,
  KVEV_VALUE_EXT = 10,
} KvevValueType;

/**
 * KvevValue:
 * @type: its msgpack type; %KVEV_VALUE_ABSENT when the key was not sent,
 *   and then the other members mean nothing.
 * @data: the bytes of a str, bin or ext, not NUL-terminated.
 * @len: their length; the elements of an array, the pairs of a map.
 * @raw: the whole value as msgpack, inside the message.
 * @raw_len: its length.
 * @uint_value: see #KvevValueType.
 * @int_value: see #KvevValueType.
 * @float_value: see #KvevValueType.
 *
 * One value of an event map, pointing into the message: valid only during
 * the callback that received it.  str and bin are kept apart, as
 * kvevents(7) SUBSCRIBERS asks a reader to accept both for object_key,
 * tenant_id and group_id.
 */
typedef struct
{
  KvevValueType type;
  const char *data;
  gsize len;
  const guint8 *raw;
  gsize raw_len;
  guint64 uint_value;
  gint64 int_value;
  double float_value;
} KvevValue;

/**
 * KvevFrame:
 * @data: the frame's bytes.
 * @size: their length.
 *
 * One frame of a ZeroMQ message, as it came.
 */
typedef struct
{
  const void *data;
  gsize size;
} KvevFrame;

/**
 * KvevEventOrigin:
 * @KVEV_ORIGIN_LIVE: from the live stream.
 * @KVEV_ORIGIN_REPLAY: from a replay, in the place of a lost message.
 * @KVEV_ORIGIN_SNAPSHOT: from a snapshot, after its reset.
 *
 * Where an event came from.  Values are ABI.
 */
typedef enum
{
  KVEV_ORIGIN_LIVE = 0,
  KVEV_ORIGIN_REPLAY = 1,
  KVEV_ORIGIN_SNAPSHOT = 2,
} KvevEventOrigin;

/**
 * KvevSubscriberEvent:
 * @kind: what it says.
 * @origin: where it came from.
 * @publisher_index: the publisher, as kvev_subscriber_add_publisher()
 *   returned it.
 * @endpoint: that publisher's live endpoint.
 * @has_sequence: whether @sequence is set (not in a snapshot).
 * @sequence: the transport sequence of its message.
 * @index: its place in its message (or snapshot chunk), from 0.
 * @n_events: the events of that message.
 * @tagged: a vLLM or SGLang positional event (an array whose first
 *   element is "BlockStored", "BlockRemoved" or "AllBlocksCleared"): only
 *   @kind is decoded, the rest is in @raw.
 * @has_event_id: whether the map carries an event_id that is an integer.
 * @event_id: that event_id.
 * @has_timestamp: whether its timestamp is an integer.
 * @timestamp: that timestamp.
 * @has_dp_rank: whether the map carries a dp_rank that is an integer.
 * @dp_rank: that dp_rank.
 * @has_block_size: whether block_size is an integer.
 * @block_size: that block_size.
 * @batch_timestamp: the batch's timestamp_ms (a float of seconds from
 *   vLLM and SGLang).
 * @batch_dp_rank: the batch's dp_rank; absent when vLLM left it out.
 * @event_id_value: each key of the map of kvevents(7) WIRE FORMAT, as it
 *   came (the typed fields above are read from these).
 * @timestamp_value: see @event_id_value.
 * @event_type: see @event_id_value.
 * @type: the legacy name, see @event_id_value.
 * @model_name: see @event_id_value.
 * @block_size_value: see @event_id_value.
 * @additional_salt: see @event_id_value.
 * @lora_name: see @event_id_value.
 * @tenant_id: see @event_id_value.
 * @backend_id: see @event_id_value.
 * @medium: see @event_id_value.
 * @dp_rank_value: see @event_id_value.
 * @group_id: see @event_id_value.
 * @object_key: see @event_id_value.
 * @seq_hashes: see @event_id_value.
 * @block_hashes: see @event_id_value.
 * @base_block_idx: see @event_id_value.
 * @parent_hash: see @event_id_value.
 * @token_ids: see @event_id_value.
 * @parent_block_hash: see @event_id_value.
 * @publisher_id: see @event_id_value (kvevents(7), PUBLISHER IDENTITY).
 * @raw: the event's msgpack bytes: a renderer walks them for the keys
 *   this structure does not name, in map order.
 * @raw_len: their length.
 * @frames: the frames of its message: topic, sequence and payload, or
 *   the snapshot chunk's payload alone.
 * @n_frames: 3, or 1 in a snapshot.
 *
 * One event, read-only, handed to the event callback.  Everything points
 * into the message and is valid only during the callback; the subscriber
 * reuses the structure for the next event.  Of a key sent twice, the
 * first counts.  The library allocates it: members are only ever added at
 * its end.
 */
typedef struct
{
  KvevEventKind kind;
  KvevEventOrigin origin;
  guint publisher_index;
  const char *endpoint;
  gboolean has_sequence;
  guint64 sequence;
  guint index;
  guint n_events;
  gboolean tagged;

  gboolean has_event_id;
  guint64 event_id;
  gboolean has_timestamp;
  gint64 timestamp;
  gboolean has_dp_rank;
  guint64 dp_rank;
  gboolean has_block_size;
  guint64 block_size;

  KvevValue batch_timestamp;
  KvevValue batch_dp_rank;

  KvevValue event_id_value;
  KvevValue timestamp_value;
  KvevValue event_type;
  KvevValue type;
  KvevValue model_name;
  KvevValue block_size_value;
  KvevValue additional_salt;
  KvevValue lora_name;
  KvevValue tenant_id;
  KvevValue backend_id;
  KvevValue medium;
  KvevValue dp_rank_value;
  KvevValue group_id;
  KvevValue object_key;
  KvevValue seq_hashes;
  KvevValue block_hashes;
  KvevValue base_block_idx;
  KvevValue parent_hash;
  KvevValue token_ids;
  KvevValue parent_block_hash;
  KvevValue publisher_id;

  const guint8 *raw;
  gsize raw_len;
  const KvevFrame *frames;
  guint n_frames;
} KvevSubscriberEvent;

/**
 * KvevReset:
 * @publisher_index: the publisher whose snapshot follows.
 * @endpoint: its live endpoint.
 * @backend_id: the snapshot header's backend_id (a str, or a bin).
 * @has_dp_rank: whether the header names a dp_rank.
 * @dp_rank: that dp_rank.
 * @publisher_id: the header's publisher_id, or absent.
 * @barrier_event_id: the snapshot's barrier: the events at or below it
 *   are in it, and are not delivered again.
 * @objects: the objects the end of the snapshot counted.
 * @n_events: the stored events that follow.
 *
 * Handed to the reset callback before a snapshot's events: forget what
 * you hold of this backend_id and dp_rank (an indexer that keys its state
 * by backend_id alone forgets that backend), then apply the stored
 * events that follow.  Valid only during the callback.
 */
typedef struct
{
  guint publisher_index;
  const char *endpoint;
  KvevValue backend_id;
  gboolean has_dp_rank;
  guint64 dp_rank;
  KvevValue publisher_id;
  guint64 barrier_event_id;
  guint64 objects;
  guint64 n_events;
} KvevReset;

/**
 * KvevSubscriberState:
 * @KVEV_SUBSCRIBER_WAITING: no message yet.
 * @KVEV_SUBSCRIBER_FOLLOWING: every event since the bootstrap delivered.
 * @KVEV_SUBSCRIBER_RECOVERING: messages were missed; a replay or a
 *   snapshot is asked for, and live messages are held meanwhile.
 * @KVEV_SUBSCRIBER_LOST: messages were missed that nothing could recover
 *   (no replay held them, and there is no snapshot endpoint); events go
 *   on being delivered, but the state may differ from the master's.
 * @KVEV_SUBSCRIBER_SILENT: nothing, not even a heartbeat, came for 3
 *   intervals of %KVEV_SUBSCRIBER_OPTION_HEARTBEAT_MS.
 * @KVEV_SUBSCRIBER_SUPERSEDED: another endpoint's snapshot replaced this
 *   publisher's backend (a failover): its events are no longer
 *   delivered.
 *
 * A publisher's state.  Values are ABI.
 */
typedef enum
{
  KVEV_SUBSCRIBER_WAITING = 0,
  KVEV_SUBSCRIBER_FOLLOWING = 1,
  KVEV_SUBSCRIBER_RECOVERING = 2,
  KVEV_SUBSCRIBER_LOST = 3,
  KVEV_SUBSCRIBER_SILENT = 4,
  KVEV_SUBSCRIBER_SUPERSEDED = 5,
} KvevSubscriberState;

/**
 * KvevSubscriberReason:
 * @KVEV_SUBSCRIBER_REASON_NONE: none to tell.
 * @KVEV_SUBSCRIBER_REASON_JOINED: the first message: what came before is
 *   not known without a snapshot.
 * @KVEV_SUBSCRIBER_REASON_GAP: the sequence jumped.
 * @KVEV_SUBSCRIBER_REASON_SEQUENCE_BACK: the sequence went back: the
 *   publisher restarted.
 * @KVEV_SUBSCRIBER_REASON_NEW_PUBLISHER_ID: another publisher_id.
 * @KVEV_SUBSCRIBER_REASON_REPLAY_INCOMPLETE: a replay did not bring
 *   every missing message.
 * @KVEV_SUBSCRIBER_REASON_SNAPSHOT_FAILED: a snapshot was refused,
 *   failed, malformed or timed out; it is asked for again later.
 * @KVEV_SUBSCRIBER_REASON_HOLD_LIMIT: the held messages went past their
 *   bound.
 * @KVEV_SUBSCRIBER_REASON_BROKEN_STREAM: a message the protocol does not
 *   allow; the socket connects again.
 * @KVEV_SUBSCRIBER_REASON_SILENCE: nothing came for 3 heartbeat
 *   intervals.
 * @KVEV_SUBSCRIBER_REASON_SUPERSEDED: another endpoint's snapshot
 *   replaced its backend.
 * @KVEV_SUBSCRIBER_REASON_SNAPSHOT: a snapshot was applied.
 * @KVEV_SUBSCRIBER_REASON_REPLAY: a replay brought every missing message.
 *
 * Why a publisher's state changed.  Values are ABI.
 */
typedef enum
{
  KVEV_SUBSCRIBER_REASON_NONE = 0,
  KVEV_SUBSCRIBER_REASON_JOINED = 1,
  KVEV_SUBSCRIBER_REASON_GAP = 2,
  KVEV_SUBSCRIBER_REASON_SEQUENCE_BACK = 3,
  KVEV_SUBSCRIBER_REASON_NEW_PUBLISHER_ID = 4,
  KVEV_SUBSCRIBER_REASON_REPLAY_INCOMPLETE = 5,
  KVEV_SUBSCRIBER_REASON_SNAPSHOT_FAILED = 6,
  KVEV_SUBSCRIBER_REASON_HOLD_LIMIT = 7,
  KVEV_SUBSCRIBER_REASON_BROKEN_STREAM = 8,
  KVEV_SUBSCRIBER_REASON_SILENCE = 9,
  KVEV_SUBSCRIBER_REASON_SUPERSEDED = 10,
  KVEV_SUBSCRIBER_REASON_SNAPSHOT = 11,
  KVEV_SUBSCRIBER_REASON_REPLAY = 12,
} KvevSubscriberReason;

/**
 * KvevSubscriberStatus:
 * @publisher_index: the publisher.
 * @endpoint: its live endpoint.
 * @state: its new state.
 * @reason: why.
 * @lost_messages: with %KVEV_SUBSCRIBER_LOST, the messages that nothing
 *   recovered in this change.
 * @message: what happened, in the user's language, for a log.
 *
 * Handed to the status callback on every change of a publisher's state,
 * and again for each loss while it is lost.  Valid only during the
 * callback.
 */
typedef struct
{
  guint publisher_index;
  const char *endpoint;
  KvevSubscriberState state;
  KvevSubscriberReason reason;
  guint64 lost_messages;
  const char *message;
} KvevSubscriberStatus;

/**
 * KvevSubscriberNoticeCode:
 * @KVEV_NOTICE_MALFORMED_MESSAGE: a live or replayed message was not the
 *   protocol's, and was skipped.
 * @KVEV_NOTICE_BAD_EVENT: an event of a message could not be decoded (no
 *   event type, an unknown one, not a map nor a tagged array), and was
 *   skipped; the others of its message were delivered.
 * @KVEV_NOTICE_GAP: the sequence jumped.
 * @KVEV_NOTICE_EVENT_ID_HOLE: event_id jumped: events the publisher lost.
 * @KVEV_NOTICE_RESTART: a new publisher_id or a sequence that went back.
 * @KVEV_NOTICE_REPLAY: how a replay ended.
 * @KVEV_NOTICE_SNAPSHOT: a snapshot applied, with its size.
 * @KVEV_NOTICE_SNAPSHOT_FAILED: why a snapshot failed.
 * @KVEV_NOTICE_STALE: an answer or events dropped by the failover rule.
 * @KVEV_NOTICE_RECONNECT: a socket connected again.
 *
 * What a notice tells.  Values are ABI.
 */
typedef enum
{
  KVEV_NOTICE_MALFORMED_MESSAGE = 0,
  KVEV_NOTICE_BAD_EVENT = 1,
  KVEV_NOTICE_GAP = 2,
  KVEV_NOTICE_EVENT_ID_HOLE = 3,
  KVEV_NOTICE_RESTART = 4,
  KVEV_NOTICE_REPLAY = 5,
  KVEV_NOTICE_SNAPSHOT = 6,
  KVEV_NOTICE_SNAPSHOT_FAILED = 7,
  KVEV_NOTICE_STALE = 8,
  KVEV_NOTICE_RECONNECT = 9,
} KvevSubscriberNoticeCode;

/**
 * KvevSubscriberNotice:
 * @publisher_index: the publisher.
 * @endpoint: its live endpoint.
 * @code: what it tells.
 * @has_sequence: whether @sequence is set.
 * @sequence: the message it is about.
 * @message: the text, in the user's language, for a log.
 *
 * Handed to the notice callback: what a tool logs, apart from the state.
 * Valid only during the callback.
 */
typedef struct
{
  guint publisher_index;
  const char *endpoint;
  KvevSubscriberNoticeCode code;
  gboolean has_sequence;
  guint64 sequence;
  const char *message;
} KvevSubscriberNotice;

/**
 * KvevSubscriberEventFunc:
 * @subscriber: the subscriber.
 * @event: the event.
 * @user_data: as given to kvev_subscriber_set_event_func().
 *
 * Receives each event that belongs in the state, in order.
 */
typedef void (*KvevSubscriberEventFunc) (KvevSubscriber *subscriber,
                                         const KvevSubscriberEvent *event, gpointer user_data);

/**
 * KvevSubscriberResetFunc:
 * @subscriber: the subscriber.
 * @reset: what to forget.
 * @user_data: as given to kvev_subscriber_set_reset_func().
 *
 * Receives a reset before the stored events of a snapshot.
 */
typedef void (*KvevSubscriberResetFunc) (KvevSubscriber *subscriber, const KvevReset *reset,
                                         gpointer user_data);

/**
 * KvevSubscriberStatusFunc:
 * @subscriber: the subscriber.
 * @status: the change.
 * @user_data: as given to kvev_subscriber_set_status_func().
 *
 * Receives each change of a publisher's state.
 */
typedef void (*KvevSubscriberStatusFunc) (KvevSubscriber *subscriber,
                                          const KvevSubscriberStatus *status, gpointer user_data);

/**
 * KvevSubscriberNoticeFunc:
 * @subscriber: the subscriber.
 * @notice: what happened.
 * @user_data: as given to kvev_subscriber_set_notice_func().
 *
 * Receives what a tool logs.
 */
typedef void (*KvevSubscriberNoticeFunc) (KvevSubscriber *subscriber,
                                          const KvevSubscriberNotice *notice, gpointer user_data);

/**
 * KvevSubscriberOption:
 * @KVEV_SUBSCRIBER_OPTION_HEARTBEAT_MS: the publishers' heartbeat
 *   interval; 3 intervals without a message are reported
 *   (%KVEV_SUBSCRIBER_SILENT).  0 (the default): never.
 * @KVEV_SUBSCRIBER_OPTION_REPLAY_TIMEOUT_MS: how long a replay may send
 *   nothing before what it did not bring is lost; default 5000.
 * @KVEV_SUBSCRIBER_OPTION_SNAPSHOT_TIMEOUT_MS: how long a snapshot may
 *   send nothing before it failed; default 30000.
 * @KVEV_SUBSCRIBER_OPTION_HOLD_MAX_MESSAGES: live messages a publisher
 *   may hold during a replay or snapshot; default 100000.
 * @KVEV_SUBSCRIBER_OPTION_HOLD_MAX_BYTES: their bytes; default 256 MiB.
 * @KVEV_SUBSCRIBER_OPTION_RCVHWM: ZMQ_RCVHWM of the SUB sockets of
 *   publishers added afterwards; default 0, no limit, as a subscriber
 *   that reads slower than the publisher writes is better told by gaps
 *   than by libzmq's silent drops.
 * @KVEV_SUBSCRIBER_OPTION_SNAPSHOT_MAX_BYTES: the bytes of one snapshot
 *   kept until its end; default 1 GiB.
 *
 * Options of kvev_subscriber_set_option().  Values are ABI.
 */
typedef enum
{
  KVEV_SUBSCRIBER_OPTION_HEARTBEAT_MS = 0,
  KVEV_SUBSCRIBER_OPTION_REPLAY_TIMEOUT_MS = 1,
  KVEV_SUBSCRIBER_OPTION_SNAPSHOT_TIMEOUT_MS = 2,
  KVEV_SUBSCRIBER_OPTION_HOLD_MAX_MESSAGES = 3,
  KVEV_SUBSCRIBER_OPTION_HOLD_MAX_BYTES = 4,
  KVEV_SUBSCRIBER_OPTION_RCVHWM = 5,
  KVEV_SUBSCRIBER_OPTION_SNAPSHOT_MAX_BYTES = 6,
} KvevSubscriberOption;

/**
 * KvevSubscriberStat:
 * @KVEV_SUBSCRIBER_STAT_MESSAGES: live and replayed messages taken.
 * @KVEV_SUBSCRIBER_STAT_EVENTS: events delivered, snapshots' included.
 * @KVEV_SUBSCRIBER_STAT_HEARTBEATS: messages without events.
 * @KVEV_SUBSCRIBER_STAT_GAPS: sequence jumps.
 * @KVEV_SUBSCRIBER_STAT_RECOVERED_BY_REPLAY: missing messages a replay
 *   brought.
 * @KVEV_SUBSCRIBER_STAT_RECOVERED_BY_SNAPSHOT: missing messages a
 *   snapshot then made up for.
 * @KVEV_SUBSCRIBER_STAT_LOST: missing messages nothing recovered.
 * @KVEV_SUBSCRIBER_STAT_SNAPSHOTS: snapshots applied.
 * @KVEV_SUBSCRIBER_STAT_SNAPSHOT_FAILURES: snapshots refused, failed,
 *   malformed, too large or timed out.
 * @KVEV_SUBSCRIBER_STAT_SNAPSHOT_EVENTS: stored events of the snapshots.
 * @KVEV_SUBSCRIBER_STAT_REPLAY_REQUESTS: replays asked for.
 * @KVEV_SUBSCRIBER_STAT_REPLAY_FAILURES: replays that timed out or sent
 *   an answer of another shape.
 * @KVEV_SUBSCRIBER_STAT_DECODE_ERRORS: messages, events and answers the
 *   protocol does not allow.
 * @KVEV_SUBSCRIBER_STAT_RESETS: resets delivered.
 * @KVEV_SUBSCRIBER_STAT_RESTARTS: new publisher_ids and sequences that
 *   went back.
 * @KVEV_SUBSCRIBER_STAT_LOST_EVENTS: holes in event_id.
 * @KVEV_SUBSCRIBER_STAT_SUPERSEDED_EVENTS: live events at or below a
 *   snapshot's barrier, so already in it.
 * @KVEV_SUBSCRIBER_STAT_STALE_ANSWERS: replay and snapshot answers
 *   dropped by the failover rule.
 * @KVEV_SUBSCRIBER_STAT_STALE_EVENTS: events dropped by the failover rule.
 * @KVEV_SUBSCRIBER_STAT_RECONNECTS: sockets connected again after input
 *   the protocol does not allow.
 * @KVEV_SUBSCRIBER_STAT_SILENCES: silences past 3 heartbeat intervals.
 * @KVEV_SUBSCRIBER_STAT_HOLD_OVERFLOWS: times the held messages went past
 *   their bound.
 * @KVEV_SUBSCRIBER_STAT_HELD_MESSAGES: messages held now.
 * @KVEV_SUBSCRIBER_STAT_HELD_BYTES: their bytes.
 *
 * Statistics, per publisher and in all.  Values are ABI: new ones are
 * only ever appended.
 */
typedef enum
{
  KVEV_SUBSCRIBER_STAT_MESSAGES = 0,
  KVEV_SUBSCRIBER_STAT_EVENTS = 1,
  KVEV_SUBSCRIBER_STAT_HEARTBEATS = 2,
  KVEV_SUBSCRIBER_STAT_GAPS = 3,
  KVEV_SUBSCRIBER_STAT_RECOVERED_BY_REPLAY = 4,
  KVEV_SUBSCRIBER_STAT_RECOVERED_BY_SNAPSHOT = 5,
  KVEV_SUBSCRIBER_STAT_LOST = 6,
  KVEV_SUBSCRIBER_STAT_SNAPSHOTS = 7,
  KVEV_SUBSCRIBER_STAT_SNAPSHOT_FAILURES = 8,
  KVEV_SUBSCRIBER_STAT_SNAPSHOT_EVENTS = 9,
  KVEV_SUBSCRIBER_STAT_REPLAY_REQUESTS = 10,
  KVEV_SUBSCRIBER_STAT_REPLAY_FAILURES = 11,
  KVEV_SUBSCRIBER_STAT_DECODE_ERRORS = 12,
  KVEV_SUBSCRIBER_STAT_RESETS = 13,
  KVEV_SUBSCRIBER_STAT_RESTARTS = 14,
  KVEV_SUBSCRIBER_STAT_LOST_EVENTS = 15,
  KVEV_SUBSCRIBER_STAT_SUPERSEDED_EVENTS = 16,
  KVEV_SUBSCRIBER_STAT_STALE_ANSWERS = 17,
  KVEV_SUBSCRIBER_STAT_STALE_EVENTS = 18,
  KVEV_SUBSCRIBER_STAT_RECONNECTS = 19,
  KVEV_SUBSCRIBER_STAT_SILENCES = 20,
  KVEV_SUBSCRIBER_STAT_HOLD_OVERFLOWS = 21,
  KVEV_SUBSCRIBER_STAT_HELD_MESSAGES = 22,
  KVEV_SUBSCRIBER_STAT_HELD_BYTES = 23,
} KvevSubscriberStat;

/**
 * kvev_event_kind_name:
 * @kind: an event kind.
 *
 * Names an event kind as the wire does, for a log or a renderer.
 *
 * Returns: (transfer none): "stored", "removed" or "cleared", as
 *   event_type says it; "unknown" for another value.
 * Thread-safe.
 */
KVEV_API const char *kvev_event_kind_name (KvevEventKind kind);

/**
 * kvev_subscriber_new:
 * @error: return location for a #GError, or %NULL.
 *
 * Creates a subscriber that follows no publisher yet; add them with
 * kvev_subscriber_add_publisher(), set the callbacks, then call
 * kvev_subscriber_dispatch() or attach kvev_subscriber_create_source().
 * It holds a ZeroMQ context (one I/O thread) and an epoll descriptor.
 *
 * Returns: (transfer full): a subscriber, or %NULL with a
 *   %KVEV_ERROR_TRANSPORT when the context cannot be made.  In a build
 *   --without-zmq it is made, and can do nothing else:
 *   kvev_subscriber_add_publisher() and kvev_subscriber_dispatch() fail.
 */
KVEV_API KvevSubscriber *kvev_subscriber_new (GError **error);

/**
 * kvev_subscriber_free:
 * @subscriber: (nullable): a subscriber.
 *
 * Closes every socket without waiting (ZMQ_LINGER 0), drops what is held,
 * and frees the subscriber.  Calls the destroy functions of the callbacks'
 * data.  Not from a callback.
 */
KVEV_API void kvev_subscriber_free (KvevSubscriber *subscriber);

/**
 * kvev_subscriber_set_option:
 * @subscriber: a subscriber.
 * @option: which option.
 * @value: its value, at least 0 (and at most %G_MAXINT for the times and
 *   %KVEV_SUBSCRIBER_OPTION_RCVHWM).
 * @error: return location for a #GError, or %NULL.
 *
 * Sets one option (see #KvevSubscriberOption); each takes effect at once,
 * %KVEV_SUBSCRIBER_OPTION_RCVHWM for the publishers added afterwards.
 *
 * Returns: %TRUE, or %FALSE with a %KVEV_ERROR_INVALID_VALUE for a value
 *   out of range or an option this library does not know.
 */
KVEV_API gboolean kvev_subscriber_set_option (KvevSubscriber *subscriber,
                                              KvevSubscriberOption option, gint64 value,
                                              GError **error);

/**
 * kvev_subscriber_set_curve:
 * @subscriber: a subscriber.
 * @server_public_key: the publishers' public key, 40 characters of Z85.
 * @secret_key_file: the file of this subscriber's secret key, as
 *   kvevents-keygen(1) writes it.  It is checked as the publisher checks
 *   its own: a regular file, not accessible by group or others, no NUL
 *   byte, small, holding a Z85 key.
 * @public_key: (nullable): this subscriber's public key, checked against
 *   the secret one; %NULL derives it.
 * @error: return location for a #GError, or %NULL.
 *
 * Makes the sockets of publishers added afterwards CURVE clients of
 * @server_public_key, the replay and snapshot sockets too (kvevents(7),
 * REPLAY: the live socket's keys).
 *
 * Returns: %TRUE, or %FALSE with a %KVEV_ERROR_INVALID_VALUE saying what
 *   is wrong with a key or the file (the keys are then as before), or a
 *   %KVEV_ERROR_TRANSPORT without ZeroMQ.
 */
KVEV_API gboolean kvev_subscriber_set_curve (KvevSubscriber *subscriber,
                                             const char *server_public_key,
                                             const char *secret_key_file, const char *public_key,
                                             GError **error);

/**
 * kvev_subscriber_add_publisher:
 * @subscriber: a subscriber.
 * @endpoint: the publisher's kv_events_bind_endpoint, as a ZeroMQ
 *   endpoint to connect to.
 * @replay_endpoint: (nullable): its kv_events_replay_endpoint, or %NULL.
 * @snapshot_endpoint: (nullable): its kv_events_snapshot_endpoint, or
 *   %NULL.
 * @topic: (nullable): the topic prefix to subscribe to; %NULL or "" for
 *   every message.
 * @error: return location for a #GError, or %NULL.
 *
 * Follows one more publisher, on a SUB socket of its own (kvevents(7),
 * DEPLOYMENT: sequences belong to one publisher), with a DEALER for each
 * of its replay and snapshot endpoints.  ZeroMQ connects in the
 * background and retries until the publisher is there.  Nothing is
 * received before the next kvev_subscriber_dispatch().
 *
 * Returns: the publisher's index (0 for the first, then 1, 2...), as
 *   the callbacks and kvev_subscriber_stat() name it; or -1 with a
 *   %KVEV_ERROR_INVALID_VALUE for an endpoint ZeroMQ does not take, or a
 *   %KVEV_ERROR_TRANSPORT when a socket cannot be made or in a build
 *   --without-zmq.
 */
KVEV_API gint kvev_subscriber_add_publisher (KvevSubscriber *subscriber, const char *endpoint,
                                             const char *replay_endpoint,
                                             const char *snapshot_endpoint, const char *topic,
                                             GError **error);

/**
 * kvev_subscriber_get_n_publishers:
 * @subscriber: a subscriber.
 *
 * Counts the publishers added with kvev_subscriber_add_publisher(); their
 * indexes run from 0 to one less than this.
 *
 * Returns: how many publishers it follows.
 */
KVEV_API guint kvev_subscriber_get_n_publishers (const KvevSubscriber *subscriber);

/**
 * kvev_subscriber_get_state:
 * @subscriber: a subscriber.
 * @publisher_index: a publisher's index.
 *
 * Tells where a publisher stands in its bootstrap (#KvevSubscriberState).
 *
 * Returns: that publisher's state, as the last status callback told it;
 *   %KVEV_SUBSCRIBER_WAITING for an index it does not have.
 */
KVEV_API KvevSubscriberState kvev_subscriber_get_state (const KvevSubscriber *subscriber,
                                                        guint publisher_index);

/**
 * kvev_subscriber_set_event_func:
 * @subscriber: a subscriber.
 * @func: (nullable): the callback, or %NULL for none.
 * @user_data: handed to it.
 * @destroy: (nullable): called on @user_data when the callback is
 *   replaced or the subscriber freed.
 *
 * Sets the callback that receives every event that belongs in the state
 * (#KvevSubscriberEvent), in order: a snapshot's stored events after its reset,
 * then the live and replayed events above its barrier.  Events of a
 * message the protocol does not allow are never delivered.
 */
KVEV_API void kvev_subscriber_set_event_func (KvevSubscriber *subscriber,
                                              KvevSubscriberEventFunc func, gpointer user_data,
                                              GDestroyNotify destroy);

/**
 * kvev_subscriber_set_reset_func:
 * @subscriber: a subscriber.
 * @func: (nullable): the callback, or %NULL for none.
 * @user_data: handed to it.
 * @destroy: (nullable): called on @user_data when the callback is
 *   replaced or the subscriber freed.
 *
 * Sets the callback that receives a #KvevReset before each snapshot's
 * events.
 */
KVEV_API void kvev_subscriber_set_reset_func (KvevSubscriber *subscriber,
                                              KvevSubscriberResetFunc func, gpointer user_data,
                                              GDestroyNotify destroy);

/**
 * kvev_subscriber_set_status_func:
 * @subscriber: a subscriber.
 * @func: (nullable): the callback, or %NULL for none.
 * @user_data: handed to it.
 * @destroy: (nullable): called on @user_data when the callback is
 *   replaced or the subscriber freed.
 *
 * Sets the callback that receives each change of a publisher's state
 * (#KvevSubscriberStatus).
 */
KVEV_API void kvev_subscriber_set_status_func (KvevSubscriber *subscriber,
                                               KvevSubscriberStatusFunc func, gpointer user_data,
                                               GDestroyNotify destroy);

/**
 * kvev_subscriber_set_notice_func:
 * @subscriber: a subscriber.
 * @func: (nullable): the callback, or %NULL for none.
 * @user_data: handed to it.
 * @destroy: (nullable): called on @user_data when the callback is
 *   replaced or the subscriber freed.
 *
 * Sets the callback that receives what a tool logs
 * (#KvevSubscriberNotice): skipped messages and events, gaps, replays,
 * snapshots, answers dropped as stale.
 */
KVEV_API void kvev_subscriber_set_notice_func (KvevSubscriber *subscriber,
                                               KvevSubscriberNoticeFunc func, gpointer user_data,
                                               GDestroyNotify destroy);

/**
 * kvev_subscriber_dispatch:
 * @subscriber: a subscriber.
 * @timeout_ms: how long to wait for something to do: 0 not at all, -1
 *   as long as it takes.
 * @error: return location for a #GError, or %NULL.
 *
 * Takes what the sockets hold, runs the timers (replay and snapshot
 * timeouts, snapshot retries, silences) and runs the callbacks, on this
 * thread.  When nothing is ready it waits up to @timeout_ms, and no
 * longer, for a message or a timer.  It takes at most a bounded run of
 * messages from each socket, so that one busy publisher does not starve
 * the others; what is left makes the descriptor of
 * kvev_subscriber_get_fd() readable at once.
 *
 * Returns: %TRUE; %FALSE with a %KVEV_ERROR_TRANSPORT when ZeroMQ failed
 *   to wait (interrupted by a signal is no failure), or in a build
 *   --without-zmq.
 */
KVEV_API gboolean kvev_subscriber_dispatch (KvevSubscriber *subscriber, int timeout_ms,
                                            GError **error);

/**
 * kvev_subscriber_get_fd:
 * @subscriber: a subscriber.
 *
 * A descriptor for poll(), select() or epoll (an epoll descriptor itself):
 * readable when kvev_subscriber_dispatch() has something to do, a
 * message or a timer that is due.  Wait for POLLIN, then call
 * kvev_subscriber_dispatch (subscriber, 0, ...).  Owned by the
 * subscriber: do not read or close it.
 *
 * Returns: the descriptor; -1 in a build --without-zmq.
 */
KVEV_API int kvev_subscriber_get_fd (const KvevSubscriber *subscriber);

/**
 * kvev_subscriber_create_source:
 * @subscriber: a subscriber.
 *
 * A #GSource that calls kvev_subscriber_dispatch (subscriber, 0, ...)
 * whenever it has something to do, for a #GMainContext: attach it with
 * g_source_attach().  A failed dispatch is logged (g_warning()) and the
 * source goes on.  Its callback, if one is set with
 * g_source_set_callback(), is a #GSourceFunc run after each dispatch;
 * returning %G_SOURCE_REMOVE removes it.  The source must be destroyed
 * before the subscriber is freed.
 *
 * Returns: (transfer full): a new source.
 */
KVEV_API GSource *kvev_subscriber_create_source (KvevSubscriber *subscriber);

/**
 * kvev_subscriber_stat:
 * @subscriber: a subscriber.
 * @publisher_index: a publisher's index, or -1 for the sum over all.
 * @stat: which statistic.
 *
 * Reads one statistic (#KvevSubscriberStat) of one publisher, or their
 * sum.  Callable from a callback.
 *
 * Returns: its value; 0 for an index or a @stat this library does not
 *   have.
 */
KVEV_API guint64 kvev_subscriber_stat (const KvevSubscriber *subscriber, gint publisher_index,
                                       KvevSubscriberStat stat);

/**
 * kvev_subscriber_stats_json:
 * @subscriber: a subscriber.
 *
 * Every statistic as one JSON object: the sums as members named as the
 * #KvevSubscriberStat values in lower case without the prefix
 * ("messages", "recovered_by_replay"...), and "publishers", an array of
 * one object per publisher with its "endpoint", "state" and the same
 * members.
 *
 * Returns: (transfer full): a NUL-terminated string; free with g_free().
 */
KVEV_API char *kvev_subscriber_stats_json (const KvevSubscriber *subscriber);

/**
 * kvev_subscriber_stats_openmetrics:
 * @subscriber: a subscriber.
 *
 * Every statistic in the OpenMetrics text format: one family per
 * statistic, kvevents_subscriber_NAME (counters with _total), with one
 * sample per publisher labelled endpoint="...", ending with "# EOF".
 *
 * Returns: (transfer full): a NUL-terminated string; free with g_free().
 */
KVEV_API char *kvev_subscriber_stats_openmetrics (const KvevSubscriber *subscriber);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (KvevSubscriber, kvev_subscriber_free)

G_END_DECLS

#endif /* KVEVENTS_SUBSCRIBER_H */
