/* config-private.h: what a KvevConfig holds, and the defaults and limits
 * of the flags.  Inside config/ only (and for the tests of the table):
 * the rest of the library reads KvevSettings, which carries what it
 * needs, so that a default changed here rebuilds config/ alone.
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEVENTS_CONFIG_PRIVATE_H
#define KVEVENTS_CONFIG_PRIVATE_H

#include "internal.h"
#include "flags.h"

G_BEGIN_DECLS

struct _KvevConfig
{
  /* kvev_flag_count values, one for each row of the table in its order:
   * a flag needs no field of its own here. */
  KvevFlagValue *values;
};

static inline const KvevFlagValue *
kvev_config_peek (const KvevConfig *config, const KvevFlag *flag)
{
  return &config->values[kvev_flag_index (flag)];
}

static inline KvevFlagValue *
kvev_config_slot (KvevConfig *config, const KvevFlag *flag)
{
  return &config->values[kvev_flag_index (flag)];
}

/* config.c: the one path from text to a stored value.  The setter, the
 * key file and the command line all end here, so they accept and refuse
 * the same things with the same words.  On failure @config is
 * unchanged. */
gboolean kvev_config_set_flag (KvevConfig *config, const KvevFlag *flag, const char *text,
                               GError **error);
/* Exchanges every value of @a and @b, which cannot fail: how the key file
 * and the command line apply all of their values or none. */
void kvev_config_exchange (KvevConfig *a, KvevConfig *b);

/* Defaults and limits of the flags, which flags.c puts in its rows.  What
 * the rest of the library needs of them travels in KvevSettings. */

#define KVEV_DEFAULT_QUEUE_CAPACITY 65536
#define KVEV_DEFAULT_MAX_BATCH_EVENTS 64
#define KVEV_MAX_MAX_BATCH_EVENTS 4096
#define KVEV_DEFAULT_SEND_HWM 10000
/* What one subscriber that stops reading can make the publisher hold:
 * kv_events_send_hwm messages of at most this over kv_events_send_hwm
 * bytes each.  256 MiB leaves the default 64-event batches of 40-byte
 * keys (about 22.5 KB) whole. */
#define KVEV_DEFAULT_SEND_BUFFER_BYTES (256u * 1024 * 1024)
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
/* Closing is bounded so a stuck subscriber cannot hold a master's
 * shutdown for more than ten minutes. */
#define KVEV_MAX_CLOSE_TIMEOUT_MS 600000
#define KVEV_DEFAULT_BATCH_WAIT_US 50
#define KVEV_MAX_BATCH_WAIT_US 1000000

G_END_DECLS

#endif /* KVEVENTS_CONFIG_PRIVATE_H */
