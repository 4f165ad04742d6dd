/* internal.h: what every source of the library shares.
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEV_INTERNAL_H
#define KVEV_INTERNAL_H

#include "config.h"

/* Before GLib's headers, which otherwise define it empty. */
#ifndef G_LOG_DOMAIN
#define G_LOG_DOMAIN "kvevents"
#endif

#define KVEVENTS_COMPILATION
#include <kvevents/kvevents.h>
#undef KVEVENTS_COMPILATION

#ifdef G_OS_UNIX
#include <signal.h>
#endif

G_BEGIN_DECLS

/* Messages a person reads go through the library's own domain; the
 * library binds it once and never touches the process locale. */
const char *kvev_gettext (const char *msgid) G_GNUC_FORMAT (1);
#define _(String) kvev_gettext (String)
#define N_(String) (String)

/* g_thread_try_new() for the library's own threads: see thread.c. */
GThread *kvev_thread_try_new (const char *name, GThreadFunc func, gpointer data,
                              GError **error);
#ifdef G_OS_UNIX
/* Blocks what kvev_thread_try_new() blocks in the calling thread, so the
 * threads it then creates start with it; pthread_sigmask (SIG_SETMASK,
 * saved, NULL) restores the mask. */
void kvev_thread_block_signals (sigset_t *saved);
#endif

/* Keys longer than this are refused: a Store key is a name, not a value. */
#define KVEV_MAX_KEY_LEN (1024 * 1024)

/* kv_events_non_utf8: what becomes of an event whose object key, tenant
 * or group is not UTF-8 (kvevents(7), "Strings that are not UTF-8").
 * The values index the flag's words in config.c. */
typedef enum
{
  KVEV_NON_UTF8_BIN = 0,  /* sent as msgpack bin, alone in its message */
  KVEV_NON_UTF8_SKIP = 1, /* not published, counted, no event_id */
} KvevNonUtf8;

struct _KvevConfig
{
  gboolean enable;
  char *bind_endpoint;
  char *backend_id;
  char *model_name;
  guint32 block_size;
  char *additional_salt;
  char *lora_name;
  guint32 dp_rank;
  gboolean emit_object_key;
  gboolean emit_legacy_compat;
  guint32 queue_capacity;
  guint32 max_batch_events;
  guint32 send_hwm;
  guint32 send_buffer_bytes;
  guint32 close_timeout_ms;
  char *topic;
  char *curve_secret_key_file;
  char *curve_allowed_clients_file;
  char *allowed_addresses;
  guint32 batch_wait_us;
  KvevNonUtf8 non_utf8;
  guint32 heartbeat_ms;
  gboolean emit_publisher_id;
  char *replay_endpoint;
  guint32 replay_buffer_messages;
  guint32 replay_buffer_bytes;
  guint32 replay_rate_bytes;
  char *snapshot_endpoint;
  guint32 send_wait_ms;
  guint32 io_threads;
  guint32 snapshot_duty_percent;
};

/* Defaults of the tuning flags. */
#define KVEV_DEFAULT_QUEUE_CAPACITY 65536
#define KVEV_DEFAULT_MAX_BATCH_EVENTS 64
#define KVEV_MAX_MAX_BATCH_EVENTS 4096
#define KVEV_DEFAULT_SEND_HWM 10000
/* What one subscriber that stops reading can make the publisher hold:
 * kv_events_send_hwm messages of at most this over kv_events_send_hwm
 * bytes each.  256 MiB leaves the default 64-event batches of 40-byte
 * keys (about 22.5 KB) whole. */
#define KVEV_DEFAULT_SEND_BUFFER_BYTES (256u * 1024 * 1024)
/* No message's payload is larger, however the budget divides: NVIDIA
 * Dynamo's Mooncake readers refuse a message over 1 MiB, and a message
 * they cannot read looks to them like loss. */
#define KVEV_MAX_MESSAGE_BYTES (1024 * 1024)
/* A budget that leaves less than this a message would send nearly every
 * event alone; the configuration is refused instead. */
#define KVEV_MIN_MESSAGE_BYTES 4096
/* A subscriber that stalls for a garbage collection or a page-in of
 * this long loses nothing; one that stays slow costs the others a tenth
 * of their time. */
#define KVEV_DEFAULT_SEND_WAIT_MS 100
#define KVEV_MAX_SEND_WAIT_MS 1000
/* ZeroMQ's default is 1.  A second one delivered 1.4x the events to 8
 * subscribers and 1.6x to 32, on two CPUs, and as much as one to a sole
 * subscriber (kvevents-bench, fan-out): one thread writes a connection,
 * and 8 of them at the worker's pace took more than one could write. */
#define KVEV_DEFAULT_IO_THREADS 2
#define KVEV_MAX_IO_THREADS 64
/* As vLLM's replay buffer_steps. */
#define KVEV_DEFAULT_REPLAY_BUFFER_MESSAGES 10000
/* 10000 of the default 64-event batches of 40-byte keys fit. */
#define KVEV_DEFAULT_REPLAY_BUFFER_BYTES (256u * 1024 * 1024)
/* Replies leave at most this many bytes a second, so that a subscriber
 * asking for the whole buffer again and again (about 380 MB/s unpaced on
 * two cores) cannot take the live stream's processor time: it cost the
 * live stream a third of its throughput, at 64 MiB/s still up to a
 * seventh, at 32 MiB/s up to a sixth in some runs.  At 16 MiB/s a full
 * default buffer takes about 14 s, a gap of a few messages none. */
#define KVEV_DEFAULT_REPLAY_RATE_BYTES (16u * 1024 * 1024)
/* Walks hold the master's locks object by object, and on two cores a walk
 * back to back with the next cut the master's publishing to a third; at
 * a tenth of the time the stream keeps over nine tenths of its rate,
 * and a walk of a second waits nine before the next. */
#define KVEV_DEFAULT_SNAPSHOT_DUTY_PERCENT 10
/* An hour: a subscriber that hears nothing for longer cannot tell a quiet
 * master from a dead one anyway. */
#define KVEV_MAX_HEARTBEAT_MS 3600000
#define KVEV_DEFAULT_CLOSE_TIMEOUT_MS 1000
#define KVEV_DEFAULT_BATCH_WAIT_US 50
#define KVEV_MAX_BATCH_WAIT_US 1000000

/* A value for a GError message: valid UTF-8 stays readable, anything
 * else becomes C escapes, and a long value is cut. */
char *kvev_escape_for_message (const char *text);

G_END_DECLS

#endif /* KVEV_INTERNAL_H */
