/* settings.h: a validated configuration, as the publisher runs on it.
 *
 * KvevConfig is what a master sets, flag by flag, as text; KvevSettings
 * is what one validation pass makes of it: typed, complete, with the
 * endpoints parsed and the security policy read once, and the derived
 * values worked out once.  The publisher, its worker, the encoder and the
 * transport read only these, and nobody changes them after
 * kvev_settings_new().
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEVENTS_SETTINGS_H
#define KVEVENTS_SETTINGS_H

#include "internal.h"
#include "endpoint.h"
#include "security.h"

G_BEGIN_DECLS

/* kv_events_non_utf8: what becomes of an event whose object key, tenant
 * or group is not UTF-8 (kvevents(7), "Strings that are not UTF-8").
 * The values index the flag's words in flags.c. */
typedef enum
{
  KVEV_NON_UTF8_BIN = 0,  /* sent as msgpack bin, alone in its message */
  KVEV_NON_UTF8_SKIP = 1, /* not published, counted, no event_id */
} KvevNonUtf8;

/* No message's payload is larger, however the budget divides: NVIDIA
 * Dynamo's Mooncake readers refuse a message over 1 MiB, and a message
 * they cannot read looks to them like loss. */
#define KVEV_MAX_MESSAGE_BYTES (1024 * 1024)

/* Every flag has a field here, which its row in flags.c names; the rest
 * is worked out from them once. */
typedef struct
{
  gboolean enable;

  /* Where and how the socket binds.  Endpoints are parsed once, here;
   * NULL when disabled, and replay's and the snapshots' when not set. */
  KvevEndpoint *bind_endpoint;
  char *topic;
  gsize topic_len;
  guint32 send_hwm;
  /* Read from the three security flags; an empty policy when none is
   * set, NULL when disabled. */
  KvevSecurity *security;
  char *curve_secret_key_file;
  char *curve_allowed_clients_file;
  char *allowed_addresses;

  /* What every event says. */
  char *backend_id;
  char *model_name;
  guint32 block_size;
  char *additional_salt;
  char *lora_name;
  guint32 dp_rank;
  gboolean emit_legacy_compat;

  /* What the event calls publish. */
  gboolean emit_object_key;
  KvevNonUtf8 non_utf8;

  /* How the queue and the worker run. */
  guint32 queue_capacity;
  guint32 max_batch_events;
  guint32 batch_wait_us;
  guint32 close_timeout_ms;
  guint32 send_buffer_bytes;
  /* The most bytes of payload in one message, from the send budget: see
   * kv_events_send_buffer_bytes in kvevents(7). */
  gsize message_limit;
  guint32 heartbeat_ms;
  guint32 send_wait_ms; /* zmq/send-budget.h */
  guint32 io_threads;   /* ZeroMQ's, for every socket of the publisher */

  /* This publisher's identity: random for each settings made. */
  guint8 instance_id[16];
  char instance_id_hex[33];
  gboolean emit_publisher_id;

  /* Replay: none when replay_endpoint is NULL. */
  KvevEndpoint *replay_endpoint;
  guint32 replay_buffer_messages;
  guint32 replay_buffer_bytes;
  guint32 replay_rate_bytes; /* 0: no limit */

  /* Snapshots: none when snapshot_endpoint is NULL. */
  KvevEndpoint *snapshot_endpoint;
  guint32 snapshot_duty_percent; /* 1 to 100 */
} KvevSettings;

/* Checks every flag of config together and makes the settings: NULL with
 * the first problem as a KVEV_ERROR otherwise.  A disabled configuration
 * is always valid: nothing of it is checked, and its security is NULL. */
KvevSettings *kvev_settings_new (const KvevConfig *config, GError **error);
void kvev_settings_free (KvevSettings *settings);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (KvevSettings, kvev_settings_free)

G_END_DECLS

#endif /* KVEVENTS_SETTINGS_H */
