/* subscriber.h: what the files of the subscriber share: the object, its
 * publishers (sources), and the calls between the rooms of sub/.
 *
 * subscriber.c  the public object, options, callbacks, dispatch, the
 *               descriptor and the GSource;
 * source.c      one publisher's sockets: open, reconnect, receive;
 * bootstrap.c   the state machine of kvevents(7)'s bootstrap, and the
 *               failover rule;
 * stats.c       the statistics, as numbers, JSON and OpenMetrics;
 * decode.c, replay-client.c, snapshot-client.c   the bytes.
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEVENTS_SUB_SUBSCRIBER_H
#define KVEVENTS_SUB_SUBSCRIBER_H

#include "internal.h"
#include "snapshot-client.h"

G_BEGIN_DECLS

#define KVEV_SUB_N_STATS (KVEV_SUBSCRIBER_STAT_HELD_BYTES + 1)

/* The first retry of a snapshot that failed, and the longest wait. */
#define KVEV_SUB_SNAPSHOT_RETRY_MS G_GINT64_CONSTANT (1000)
#define KVEV_SUB_SNAPSHOT_RETRY_MAX_MS G_GINT64_CONSTANT (30000)
/* Messages taken from one socket in one dispatch, so that a busy
 * publisher does not starve the others. */
#define KVEV_SUB_BATCH 256

typedef struct _KvevSubSource KvevSubSource;

/* One live message held during a replay or a snapshot: the frames
 * themselves (zmq_msg_t, moved, not copied). */
typedef struct _KvevSubHeld KvevSubHeld;

struct _KvevSubSource
{
  KvevSubscriber *subscriber;
  guint index;
  char *endpoint;
  char *replay_endpoint;
  char *snapshot_endpoint;
  char *topic;
  void *socket;
  void *replay_socket;
  void *snapshot_socket;
  KvevSubscriberState state;
  KvevSubscriberState state_before_silence;
  gboolean started; /* a first live message came */
  guint64 counts[KVEV_SUB_N_STATS];

  gboolean have_sequence;
  guint64 last_sequence;
  gboolean have_event_id;
  guint64 last_event_id;
  GByteArray *publisher_id; /* the last one seen, or NULL */

  /* The subscriber's clock when this endpoint last took a snapshot (0:
   * never); see the failover rule in kvevents-subscriber.h. */
  guint64 bootstrap_clock;
  gboolean superseded;
  gboolean have_barrier;
  guint64 barrier;
  GQueue held; /* KvevSubHeld, in order */
  guint64 held_bytes;
  /* Missing messages that only a snapshot can make up for now. */
  guint64 pending_loss;

  gboolean replaying;
  guint64 replay_from; /* [replay_from, replay_until) are missing */
  guint64 replay_until;
  guint64 replay_recovered;
  gint64 replay_deadline; /* monotonic µs */
  guint64 replay_asked_at;

  gboolean snapshot_wanted;
  gboolean snapshotting;
  gint64 snapshot_deadline;
  gint64 snapshot_retry_at; /* 0: none */
  guint snapshot_failures_in_row;
  guint64 snapshot_asked_at;
  /* The snapshot so far: its header's message, and its chunks' payloads,
   * kept until the end says whether it came whole. */
  void *snapshot_header_msg; /* a zmq_msg_t, or NULL */
  KvevSnapshotHeader header;
  GPtrArray *chunks; /* zmq_msg_t * */
  guint64 snapshot_bytes;
  guint64 snapshot_events;
  guint64 snapshot_objects;

  gint64 last_arrival; /* monotonic µs */
  guint64 test_arrived;
};

/* A backend that a snapshot replaced: backend_id bytes (str and bin
 * apart) and dp_rank. */
typedef struct
{
  KvevValueType type;
  GByteArray *backend_id;
  gboolean has_dp_rank;
  guint64 dp_rank;
  guint64 replaced_at; /* the subscriber's clock then */
  guint replaced_by;   /* the source */
} KvevSubBackend;

struct _KvevSubscriber
{
  void *context;
  int epoll_fd;
  int wake_fd;  /* an eventfd: work left for the next dispatch */
  int timer_fd; /* the next timer */
  GPtrArray *sources;
  GPtrArray *backends; /* KvevSubBackend *; few: one per leader */
  /* Counts requests and replacements: what orders two leaders of one
   * backend, which the wire does not. */
  guint64 clock;

  KvevSubscriberEventFunc event_func;
  gpointer event_data;
  GDestroyNotify event_destroy;
  KvevSubscriberResetFunc reset_func;
  gpointer reset_data;
  GDestroyNotify reset_destroy;
  KvevSubscriberStatusFunc status_func;
  gpointer status_data;
  GDestroyNotify status_destroy;
  KvevSubscriberNoticeFunc notice_func;
  gpointer notice_data;
  GDestroyNotify notice_destroy;

  gint64 options[KVEV_SUBSCRIBER_OPTION_SNAPSHOT_MAX_BYTES + 1];

  gboolean curve;
  guint8 curve_server_key[32];
  guint8 curve_public_key[32];
  guint8 curve_secret_key[32];

  /* Reused for every event: no allocation on the way to the callback. */
  KvevSubscriberEvent event;

  /* The testing build's loss on purpose: after test_drop_skip more live
   * messages with events, the next test_drop_count live messages of
   * source test_drop_source are dropped as if the network lost them. */
  gint test_drop_source;
  guint64 test_drop_skip;
  guint64 test_drop_count;
};

/* stats.c */
const char *kvev_sub_stat_name (KvevSubscriberStat stat);
const char *kvev_sub_state_name (KvevSubscriberState state);

/* subscriber.c: the callbacks, so that every file calls them alike. */
void kvev_sub_notice (KvevSubSource *source, KvevSubscriberNoticeCode code, gboolean has_sequence,
                      guint64 sequence, const char *format, ...) G_GNUC_PRINTF (5, 6);
void kvev_sub_set_state (KvevSubSource *source, KvevSubscriberState state,
                         KvevSubscriberReason reason, guint64 lost, const char *format, ...)
    G_GNUC_PRINTF (5, 6);

#ifdef HAVE_ZMQ
/* source.c */
gboolean kvev_sub_source_open (KvevSubSource *source, GError **error);
void kvev_sub_source_close (KvevSubSource *source);
/* Connects the SUB socket again, its pipe dropped. */
void kvev_sub_source_reconnect (KvevSubSource *source);
/* Makes a DEALER anew, so that what the old one still receives is not
 * taken for the next answer. */
void kvev_sub_source_reset_dealer (KvevSubSource *source, gboolean replay);
gboolean kvev_sub_source_request_replay (KvevSubSource *source, guint64 start);
gboolean kvev_sub_source_request_snapshot (KvevSubSource *source);
/* Takes up to KVEV_SUB_BATCH messages from each socket; TRUE when some
 * socket may still hold more. */
gboolean kvev_sub_source_read (KvevSubSource *source, gboolean *took);
void kvev_sub_watch (KvevSubscriber *subscriber, void *socket, gboolean watch);

/* bootstrap.c */
void kvev_sub_take_live (KvevSubSource *source, void *parts, guint n_parts);
void kvev_sub_take_replay (KvevSubSource *source, void *parts, guint n_parts);
void kvev_sub_take_snapshot (KvevSubSource *source, void *parts, guint n_parts);
/* Timeouts, retries and silences; returns the ms until the next one, at
 * most wait_ms (-1: none). */
gint64 kvev_sub_check_timers (KvevSubSource *source, gint64 now, gint64 wait_ms);
void kvev_sub_source_clear_state (KvevSubSource *source);
#endif

#ifdef KVEV_TESTING
/* After skip more live messages with events from a publisher, drops its
 * next count live messages before anything looks at them: the loss of a
 * network, at a point the test chooses by what it publishes. */
void kvev_subscriber_test_drop (KvevSubscriber *subscriber, guint publisher_index, guint64 skip,
                                guint64 count);
#endif

G_END_DECLS

#endif /* KVEVENTS_SUB_SUBSCRIBER_H */
